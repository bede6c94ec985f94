"""The engine client's requests of the Models & Datastores and Settings dialogs: the model and
datastore lists, downloads and installs, and the settings.

A mixin of :class:`~ui.engine_client.EngineClient`, which runs each on the lane its kind names
(see :meth:`EngineClient.call`); kept apart so the client itself stays about the lanes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from engine.progress import CancelToken, Progress
from engine.service import Engine
from ui.engine_tasks import is_small_model_file
from ui.engine_worker import DATASTORE, DOWNLOAD, MODELS, SETTINGS

if TYPE_CHECKING:
    from engine.manager.setup import ModelChoice


class _Lanes(Protocol):
    """What these requests need of the client."""

    def call(self, kind: str, work: Callable[[Engine], Any], on_result: Callable[[Any], None] | None = None,
             on_failure: Callable[[], None] | None = None) -> None: ...

    def _announce_settings(self, settings: Any) -> None: ...


class ModelRequests:
    """Requests about models, datastores and settings (mixed into the engine client)."""

    def models_snapshot(self: _Lanes, on_result: Callable[[dict[str, Any]], None]) -> None:
        """Everything the models dialog shows, gathered in one worker call: the catalog, the installed
        models, the datastores, the hardware report and the models in use."""
        def work(engine: Engine) -> dict[str, Any]:
            return {"catalog": engine.model_catalog(), "installed": engine.installed_models(),
                    "datastores": engine.datastores(), "report": engine.hardware_report(),
                    "current_model": engine.settings.generation.model,
                    "current_embedder": engine.settings.retrieval.embedder}
        self.call(MODELS, work, on_result)

    def use_model(self: _Lanes, name: str, on_result: Callable[[ModelChoice], None]) -> None:
        """Validate installed model ``name`` and save it in the settings."""
        def chosen(choice: ModelChoice) -> None:
            self._announce_settings(choice.settings)
            on_result(choice)
        self.call(MODELS, lambda engine: engine.use_model(name), chosen)

    def remove_datastore(self: _Lanes, name: str, on_done: Callable[[object], None] | None = None) -> None:
        # The long lane's engine may have the datastore open (an answer searching it), so it removes it.
        self.call(DATASTORE, lambda engine: engine.remove_datastore(name), on_done)

    def download_model(self: _Lanes, name: str, progress: Callable[[Progress], None], cancel: CancelToken,
                       on_done: Callable[[object], None], on_stopped: Callable[[], None]) -> None:
        """Download, verify and install catalog model ``name``; ``progress`` is called on the worker."""
        self.call(DOWNLOAD, lambda engine: engine.download_model(name, progress, cancel), on_done, on_stopped)

    def install_datastore(self: _Lanes, location: str, progress: Callable[[Progress], None], cancel: CancelToken,
                          on_done: Callable[[object], None], on_stopped: Callable[[], None]) -> None:
        """Verify and install a datastore pack from a file or URL."""
        self.call(DOWNLOAD, lambda engine: engine.install_datastore(location, progress=progress, cancel=cancel),
                  on_done, on_stopped)

    def embed_datastore(self: _Lanes, name: str, progress: Callable[[Progress], None], cancel: CancelToken,
                        on_done: Callable[[object], None], on_stopped: Callable[[], None]) -> None:
        """Embed datastore ``name``'s passages not embedded yet (resumable)."""
        self.call(DOWNLOAD, lambda engine: engine.embed_datastore(name, progress=progress, cancel=cancel),
                  on_done, on_stopped)

    def load_settings(self: _Lanes, on_result: Callable[[Any], None],
                      on_failure: Callable[[], None] | None = None) -> None:
        self.call(SETTINGS, lambda engine: engine.settings, on_result, on_failure)

    def model_is_small(self: _Lanes, on_result: Callable[[bool], None]) -> None:
        """Whether the language model in the settings is too small to write answers."""
        self.call(SETTINGS, lambda engine: is_small_model_file(engine.settings.generation.model), on_result)

    def save_settings(self: _Lanes, settings: Any, on_saved: Callable[[Any], None] | None = None) -> None:
        def work(engine: Engine) -> Any:
            engine.save_settings(settings)
            return settings

        def saved(value: Any) -> None:
            self._announce_settings(value)
            if on_saved is not None:
                on_saved(value)
        self.call(SETTINGS, work, saved)
