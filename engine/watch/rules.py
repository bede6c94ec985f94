"""Which folders can be watched and which files in them count as papers."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from engine.errors import WatchError

# Names browsers and copy tools give a file while it is still arriving, and Office's lock files.
_PARTIAL_SUFFIXES = (".part", ".crdownload", ".download", ".partial", ".tmp")
# A copy Quire wrote with an answer's highlights (engine.render.highlights): the paper is already in.
_QUIRE_COPY = ".quire.pdf"


def is_candidate(name: str) -> bool:
    """Whether a file name can be a finished paper: a PDF, not hidden, not a partial download or lock file."""
    lowered = name.lower()
    if name.startswith((".", "~$")) or lowered.endswith(_PARTIAL_SUFFIXES) or lowered.endswith(_QUIRE_COPY):
        return False
    return lowered.endswith(".pdf")


def is_candidate_path(path: str, folder: str) -> bool:
    """Whether ``path`` inside ``folder`` counts: a candidate name, and no hidden folder on the way."""
    relative = Path(path).relative_to(folder).parts if path.startswith(folder) else Path(path).parts
    return bool(relative) and is_candidate(relative[-1]) and not any(part.startswith(".") for part in relative[:-1])


def resolve_folder(given: str | Path) -> str:
    """The absolute, link-free path of a folder to watch, or a :class:`WatchError` saying why it cannot be."""
    path = Path(given).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports a symbolic-link loop so
        raise WatchError(f"{path} is a symbolic link that leads back to itself (a link loop); fix or delete the "
                         "link, or watch the folder it should point to.") from None
    except FileNotFoundError:
        raise WatchError(f"{path} does not exist; give a folder that holds (or will hold) your PDFs.") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WatchError(f"{path} is a symbolic link that leads back to itself (a link loop); fix or delete "
                             "the link, or watch the folder it should point to.") from None
        raise WatchError(f"{path} cannot be read ({exc.strerror}); check its permissions.") from None
    if not resolved.is_dir():
        raise WatchError(f"{path} is a file, not a folder; watch the folder it is in, or add the file once with "
                         "`quire ingest`.")
    if not os.access(resolved, os.R_OK | os.X_OK):
        raise WatchError(f"Quire may not read the folder {path}; check its permissions.")
    return str(resolved)


def refuse_overlap(folder: str, watched: Iterable[str]) -> None:
    """A folder inside a watched one (or holding one) would be scanned twice: refuse it, naming the other."""
    for other in watched:
        if folder == other:
            continue
        if _inside(folder, other):
            raise WatchError(f"{folder} is inside the watched folder {other}, which already covers it; nothing to "
                             "add.")
        if _inside(other, folder):
            raise WatchError(f"{folder} holds the watched folder {other}; remove that one first "
                             f"(`quire library watch remove {other}`), then add {folder}.")


def _inside(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


def walk_candidates(folder: str) -> Iterator[Path]:
    """Every candidate PDF under ``folder``; hidden folders are skipped and links to folders not followed
    (a link loop cannot trap the walk)."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(name for name in dirs if not name.startswith("."))
        for name in sorted(files):
            if is_candidate(name):
                yield Path(root) / name
