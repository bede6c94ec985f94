"""Watched folders: the part of the Engine facade that keeps the library in step with folders papers land in.

Part of the service layer, kept out of engine/service.py so the facade stays one screenful per concern:
:class:`EngineWatch` adds, removes and syncs watched folders (engine/watch/), follows their file events and
reports the papers whose files went away. It names no other part of the Engine but ``add_documents``, and
nothing below the service layer names it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from engine.config import Paths
from engine.progress import CancelToken, ProgressCallback, no_progress
from engine.store import Library
from engine.types import Answer

if TYPE_CHECKING:
    from engine.importer import IngestResult
    from engine.watch import MissingFile, SyncReport, WatchedFolder
    from engine.watch.events import FolderEvents
    from engine.watch.state import WatchState


class EngineWatch:
    """The watched folders of one library: the Engine facade's watching methods."""

    # Set by Engine.__init__, and the Engine's own ingest.
    paths: Paths
    library: Library
    add_documents: Callable[..., Iterator[IngestResult]]

    @cached_property
    def watch_state(self) -> WatchState:
        """The watched folders and the papers whose files went away (``<home>/watch.db``)."""
        from engine.watch.state import open_state

        return open_state(self.paths.home)

    def _has_watch_state(self) -> bool:
        """Whether this library has a watch file; a command that only reads must not create one (it works on
        a full disk, and a library nobody watches gets no file)."""
        return "watch_state" in self.__dict__ or (self.paths.home / "watch.db").exists()

    def watched_folders(self) -> list[WatchedFolder]:
        return self.watch_state.folders() if self._has_watch_state() else []

    def watch_folder(self, folder: str | Path) -> WatchedFolder:
        """Watch a folder (WatchError when it is a file, a link loop, or inside or around a watched one);
        its PDFs come in at the next :meth:`sync_watched`."""
        from engine.watch.rules import refuse_overlap, resolve_folder

        resolved = resolve_folder(folder)
        refuse_overlap(resolved, [watched.path for watched in self.watch_state.folders()])
        return self.watch_state.add_folder(resolved, os.stat(resolved).st_dev)

    def unwatch_folder(self, folder: str | Path) -> bool:
        """Stop watching a folder (its papers stay); whether it was watched."""
        given = Path(folder).expanduser()
        return self.watch_state.remove_folder(str(given.resolve())) or self.watch_state.remove_folder(str(given))

    def sync_watched(self, *, prune: bool = False, settle_s: float | None = None,
                     progress: ProgressCallback = no_progress, cancel: CancelToken | None = None) -> SyncReport:
        """Bring the library in step with the watched folders (engine/watch/sync.py); ``prune`` removes the
        papers whose files are missing."""
        from engine.watch.sync import SETTLE_S, sync_folders

        return sync_folders(self.library, self.watch_state, lambda paths, report, token: self.add_documents(
            paths, report, token), settle_s=SETTLE_S if settle_s is None else settle_s, prune=prune,
            progress=progress, cancel=cancel)

    def follow_watched(self, stop: CancelToken, on_report: Callable[[SyncReport], None], *,
                       settle_s: float | None = None, progress: ProgressCallback = no_progress) -> None:
        """Catch up, then follow the watched folders' file events until ``stop`` is set (on this thread)."""
        from engine.watch.follow import follow

        follow(lambda: self.sync_watched(settle_s=settle_s, progress=progress, cancel=stop),
               lambda: [folder.path for folder in self.watch_state.folders()], stop, on_report)

    def folder_events(self, on_change: Callable[[], None]) -> FolderEvents:
        """Live file events of the watched folders for a program that runs its own passes (the app): call
        ``.follow(folders)``; ``on_change`` then hears each burst, once quiet, on a thread of the events'
        own; thread-safe, and independent of this engine (``.stop()`` ends it)."""
        from engine.watch.events import FolderEvents

        return FolderEvents(on_change)

    def missing_files(self) -> list[MissingFile]:
        """Watched PDFs that are gone; their papers stay (and their answers open) until pruned."""
        return self.watch_state.missing() if self._has_watch_state() else []

    def answer_file_notices(self, answer: Answer) -> list[str]:
        """What to show above a past answer whose cited papers' files are missing or were removed."""
        from engine.watch.notices import file_notices

        known = {document.id for document in self.library.documents()}
        return file_notices(answer.papers, self.missing_files(), known.__contains__)
