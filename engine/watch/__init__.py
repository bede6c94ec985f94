"""Watched folders: the library kept in step with folders of PDFs (catch-up passes and live events)."""

from __future__ import annotations

from engine.watch.state import MissingFile, WatchedFolder
from engine.watch.sync import SETTLE_S, SyncReport

__all__ = ["SETTLE_S", "MissingFile", "SyncReport", "WatchedFolder"]
