"""Datastores: the part of the Engine facade that installs, embeds, packs, publishes and connects them.

Part of the service layer, kept out of engine/service.py so the facade stays one screenful per concern:
:class:`EngineDatastores` holds the registry of a library's datastores (``<home>/datastores``,
engine/datastore/) and hands each job to engine/datastore/manage.py or server_manage.py. It names no
other part of the Engine but its embedder, and nothing below the service layer names it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import Paths, Settings
from engine.datastore.registry import DatastoreRegistry
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.retrieve.source import PassageSource

if TYPE_CHECKING:
    from engine.datastore.importer import ImportReport
    from engine.datastore.manage import DatastoreInfo
    from engine.datastore.manifest import Manifest
    from engine.datastore.server.publish import PublishReport
    from engine.embed import Embedder


class EngineDatastores:
    """The datastores of one library: the Engine facade's datastore methods."""

    # Set by Engine.__init__, and the Engine's own embedder.
    paths: Paths
    settings: Settings

    if TYPE_CHECKING:
        @property
        def embedder(self) -> Embedder: ...

    @cached_property
    def datastore_registry(self) -> DatastoreRegistry:
        """The datastores under ``<home>/datastores``; opened lazily, closed with the engine."""
        # The embedder is looked up only when a datastore embeds or searches densely.
        return DatastoreRegistry(self.paths.datastores, lambda: self.embedder)

    def datastore_sources(self) -> list[PassageSource]:
        """Every installed datastore as a PassageSource (what search fans out to besides the library)."""
        return list(self.datastore_registry.sources())

    def add_datastore(self, path: str | Path, name: str, *, embed: bool = True,
                      progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> ImportReport:
        """Import a peS2o-style JSON-lines file (.jsonl or .jsonl.gz) as datastore ``name``; a rerun resumes.
        Then embeds its passages unless ``embed`` is False (BM25 search works either way)."""
        from engine.datastore.manage import add_datastore

        return add_datastore(self.datastore_registry, Path(path).expanduser(), name,
                             passage_words=self.settings.ingest.passage_words, embed=embed, progress=progress,
                             cancel=cancel)

    def embed_datastore(self, name: str, progress: ProgressCallback = no_progress,
                        cancel: CancelToken | None = None) -> int:
        """Embed the passages of datastore ``name`` not embedded yet; returns how many."""
        from engine.datastore.manage import embed_datastore

        return embed_datastore(self.datastore_registry, name, progress, cancel)

    def datastores(self) -> list[DatastoreInfo]:
        """Installed datastores, then connected server datastores (each asked whether it answers now)."""
        from engine.datastore.manage import datastore_infos
        from engine.datastore.server_manage import server_infos

        return datastore_infos(self.datastore_registry) + server_infos(self.datastore_registry)

    def publish_datastore(self, what: str, url: str, *, schema: str = "quire", reader: str | None = None,
                          replace: bool = False, progress: ProgressCallback = no_progress,
                          cancel: CancelToken | None = None) -> PublishReport:
        """Load an installed datastore (or a pack file) into a PostgreSQL + pgvector server; a rerun resumes."""
        from engine.datastore.server_manage import publish_to_server

        return publish_to_server(self.datastore_registry, what, url, schema=schema, reader=reader, replace=replace,
                                 progress=progress, cancel=cancel)

    def connect_datastore(self, name: str, url: str, *, schema: str = "quire",
                          timeout_s: float | None = None) -> DatastoreInfo:
        """Search the datastore a server holds as ``name`` (checked first; the password goes to a libpq file)."""
        from engine.datastore.server.connection import STATEMENT_TIMEOUT_S
        from engine.datastore.server_manage import connect_server

        return connect_server(self.datastore_registry, name, url, schema=schema,
                              statement_timeout_s=timeout_s or STATEMENT_TIMEOUT_S)

    def remove_datastore(self, name: str) -> None:
        self.datastore_registry.remove(name)

    def pack_datastore(self, name: str, out: str | Path, *, version: str | None = None,
                       progress: ProgressCallback = no_progress,
                       cancel: CancelToken | None = None) -> tuple[Path, Manifest]:
        """Write datastore ``name`` as a verified pack (manifest + database + index) to ``out``."""
        from engine.datastore.manage import pack_datastore

        return pack_datastore(self.datastore_registry, name, out, version=version, progress=progress, cancel=cancel)

    def install_datastore(self, location: str | Path, *, reembed: bool = False, replace: bool = False,
                          sha256: str | None = None, progress: ProgressCallback = no_progress,
                          cancel: CancelToken | None = None) -> Manifest:
        """Verify and install a datastore pack from a file, folder or URL; a pack embedded with another
        model than the configured one is refused unless ``reembed``."""
        from engine.datastore.manage import install_datastore

        return install_datastore(self.datastore_registry, str(location),
                                 configured_model=lambda: self.embedder.model_id, reembed=reembed,
                                 replace=replace, sha256=sha256, progress=progress, cancel=cancel)
