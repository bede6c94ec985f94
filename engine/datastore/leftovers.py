"""What an install killed mid-way leaves in the datastores folder, put right on the next start.

Installing unpacks into ``.installing-<name>-<pid>`` and replacing first renames the old datastore
to ``.replaced-<name>-<pid>``. A process killed in between leaves the staging folder (as large as
the pack) or, worse, the old datastore under its hidden name with nothing at ``<name>``: a datastore
the user had would seem gone. A folder whose process is no longer running is finished here: the old
datastore goes back where it was, staging folders are deleted.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from pathlib import Path

from engine.datastore.files import DATABASE_FILE
from engine.disk import process_running

log = logging.getLogger(__name__)

_LEFTOVER = re.compile(r"^\.(installing|replaced)-(.+)-(\d+)$")


def recover_interrupted_installs(root: Path) -> list[str]:
    """Restore datastores a killed replace left hidden and delete dead installs' staging folders;
    returns what was done, one line each (also logged)."""
    if not root.is_dir():
        return []
    done: list[str] = []
    for folder in sorted(root.iterdir()):
        match = _LEFTOVER.match(folder.name)
        if match is None or not folder.is_dir() or process_running(int(match.group(3))):
            continue
        kind, name = match.group(1), match.group(2)
        target = root / name
        if kind == "replaced" and not (target / DATABASE_FILE).is_file() and (folder / DATABASE_FILE).is_file():
            if target.exists():
                shutil.rmtree(target, ignore_errors=True)  # a half-moved replacement, never a whole datastore
            os.replace(folder, target)
            done.append(f"restored datastore {name!r}, which an interrupted replace had set aside")
        else:
            shutil.rmtree(folder, ignore_errors=True)
            done.append(f"deleted {folder.name}, left by an interrupted datastore install")
    for line in done:
        log.warning("%s", line)
    return done
