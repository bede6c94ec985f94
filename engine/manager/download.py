"""Downloading one large file safely: resume, progress, cancel, sha256, atomic install.

``download(url, dest)`` is the only code in Quire that reaches the network, and only a command
the user gave calls it (``quire models download``, ``quire datastore install URL``, the Models
dialog). The file grows as ``.<name>.part`` beside ``dest`` (same folder, so the final rename is
atomic); an interrupted download resumes from there with an HTTP Range request; nothing appears
under ``dest`` until every byte arrived, the size and sha256 match, and the data is fsynced.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from engine.errors import ChecksumMismatchError, DownloadError, NotEnoughSpaceError
from engine.progress import CancelToken, Progress, ProgressCallback, human_size, no_progress

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 20
SPACE_RESERVE_BYTES = 64 << 20  # leave this much free after the download, so the OS and SQLite can breathe
PROGRESS_INTERVAL_S = 0.1
HF_DEFAULT_ENDPOINT = "https://huggingface.co"
# Only Quire's own switch: the embedder sets HF_HUB_OFFLINE for the whole process once it loads
# (so sentence-transformers never reaches for the hub), which must not block downloads the user asked for.
OFFLINE_VARIABLES = ("QUIRE_OFFLINE",)
USER_AGENT = "quire-downloader/1"
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<?xml")


def hf_endpoint() -> str:
    """The Hugging Face base URL: ``QUIRE_HF_ENDPOINT``, then ``HF_ENDPOINT``, then huggingface.co.

    Tests point this at a server they run on 127.0.0.1; mirrors work the same way.
    """
    for variable in ("QUIRE_HF_ENDPOINT", "HF_ENDPOINT"):
        value = os.environ.get(variable, "").strip()
        if value:
            return value.rstrip("/")
    return HF_DEFAULT_ENDPOINT


def hf_url(repo: str, filename: str, revision: str = "main", endpoint: str | None = None) -> str:
    """The direct-download ("resolve") URL of one file in a Hugging Face repository."""
    return f"{(endpoint or hf_endpoint()).rstrip('/')}/{repo}/resolve/{revision}/{filename}"


def partial_path(dest: Path) -> Path:
    """Where the bytes of an unfinished download of ``dest`` are kept (same folder, hidden)."""
    return dest.with_name(f".{dest.name}.part")


def _meta_path(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.part.json")


@dataclass
class _Transfer:
    """State of one download while it runs."""

    url: str
    dest: Path
    sha256: str | None
    expected_size: int | None
    progress: ProgressCallback
    cancel: CancelToken | None
    verify: Callable[[Path], None] | None = None
    total: int | None = None
    last_report: float = 0.0

    @property
    def part(self) -> Path:
        return partial_path(self.dest)

    def report(self, done: int, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last_report >= PROGRESS_INTERVAL_S:
            self.last_report = now
            total = self.total or self.expected_size or 0
            self.progress(Progress("download", done, total, self.dest.name))


def download(url: str, dest: str | Path, *, sha256: str | None = None, expected_size: int | None = None,
             progress: ProgressCallback = no_progress, cancel: CancelToken | None = None,
             verify: Callable[[Path], None] | None = None, retries: int = 3, timeout_s: float = 30.0,
             client: httpx.Client | None = None) -> Path:
    """Download ``url`` to ``dest`` (a file path) and return ``dest``.

    Resumes a previous partial download, retries dropped connections ``retries`` times from where
    they stopped, checks free space first, refuses an HTML page served in place of the file,
    verifies ``expected_size`` and ``sha256`` (hex), runs ``verify(partial_file)`` (e.g. a GGUF
    header and architecture check; it raises to refuse the file) and installs atomically. Raises
    :class:`DownloadError` (or its children :class:`ChecksumMismatchError`,
    :class:`NotEnoughSpaceError`) and :class:`Cancelled`; a cancelled or dropped download keeps its
    partial file so the next call resumes, a bad checksum or a full disk deletes it.
    """
    dest = Path(dest)
    _refuse_when_offline(url)
    dest.parent.mkdir(parents=True, exist_ok=True)
    expected_hash = sha256.lower().strip() if sha256 else None
    if dest.exists() and _already_installed(dest, expected_hash, expected_size):
        log.info("%s is already installed and verified", dest)
        return dest
    transfer = _Transfer(url, dest, expected_hash, expected_size, progress, cancel, verify)
    _forget_stale_partial(transfer)
    if expected_size is not None:
        ensure_free_space(dest.parent, expected_size - _size(transfer.part), dest.name)
    owns_client = client is None
    http = client or httpx.Client(follow_redirects=True, timeout=httpx.Timeout(timeout_s),
                                  headers={"User-Agent": USER_AGENT})
    try:
        _fetch_with_retries(http, transfer, retries)
        _verify_and_install(transfer)
    except BaseException:
        if not transfer.part.exists():  # nothing to resume: leave no bookkeeping behind either
            _meta_path(dest).unlink(missing_ok=True)
        raise
    finally:
        if owns_client:
            http.close()
    return dest


def _refuse_when_offline(url: str) -> None:
    for variable in OFFLINE_VARIABLES:
        if os.environ.get(variable, "").strip().lower() in {"1", "true", "yes", "on"}:
            raise DownloadError(f"Not downloading {url}: {variable} is set, so Quire stays offline. "
                                f"Unset {variable} to allow this download.")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _already_installed(dest: Path, sha256: str | None, expected_size: int | None) -> bool:
    if expected_size is not None and dest.stat().st_size != expected_size:
        return False
    if sha256 is not None:
        return _file_sha256(dest) == sha256
    return expected_size is not None


def _file_sha256(path: Path, limit: int | None = None) -> str:
    digest = hashlib.sha256()
    remaining = limit
    with path.open("rb") as handle:
        while remaining is None or remaining > 0:
            block = handle.read(CHUNK_BYTES if remaining is None else min(CHUNK_BYTES, remaining))
            if not block:
                break
            digest.update(block)
            if remaining is not None:
                remaining -= len(block)
    return digest.hexdigest()


def _forget_stale_partial(transfer: _Transfer) -> None:
    """A partial file from a different URL or checksum is not ours to resume."""
    meta = _meta_path(transfer.dest)
    wanted = {"url": transfer.url, "sha256": transfer.sha256}
    try:
        recorded = json.loads(meta.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        recorded = None
    if recorded is not None and {k: recorded.get(k) for k in wanted} != wanted:
        log.info("discarding a partial download of %s from another source", transfer.dest.name)
        transfer.part.unlink(missing_ok=True)
        recorded = None
    if recorded is None and transfer.part.exists() and not meta.exists():
        transfer.part.unlink()
    meta.write_text(json.dumps({**wanted, "validator": (recorded or {}).get("validator")}), encoding="utf-8")


def _remember_validator(transfer: _Transfer, response: httpx.Response) -> str | None:
    validator = response.headers.get("ETag") or response.headers.get("Last-Modified")
    meta = _meta_path(transfer.dest)
    meta.write_text(json.dumps({"url": transfer.url, "sha256": transfer.sha256, "validator": validator}),
                    encoding="utf-8")
    return validator


def _recorded_validator(transfer: _Transfer) -> str | None:
    try:
        value = json.loads(_meta_path(transfer.dest).read_text(encoding="utf-8")).get("validator")
    except (FileNotFoundError, ValueError):
        return None
    # Weak ETags are not allowed in If-Range; without a strong validator we trust the checksum.
    return value if isinstance(value, str) and not value.startswith("W/") else None


def _fetch_with_retries(http: httpx.Client, transfer: _Transfer, retries: int) -> None:
    failures = 0
    while True:
        before = _size(transfer.part)
        try:
            _fetch_once(http, transfer)
            return
        except (httpx.TransportError, _RetryableStatus) as exc:
            gained = _size(transfer.part) - before
            failures = 0 if gained > 0 else failures + 1
            if failures > retries:
                raise DownloadError(
                    f"Downloading {transfer.dest.name} failed: {_describe(exc)}. "
                    f"{_size(transfer.part):,} bytes are kept; run the same download again to resume."
                ) from exc
            log.warning("download of %s interrupted (%s); resuming at byte %d",
                        transfer.dest.name, _describe(exc), _size(transfer.part))
            time.sleep(min(0.2 * 2 ** failures, 5.0))


class _RetryableStatus(Exception):
    """A 5xx answer: the server may recover, so try again."""


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _fetch_once(http: httpx.Client, transfer: _Transfer) -> None:
    have = _size(transfer.part)
    if transfer.expected_size is not None and have == transfer.expected_size and have > 0:
        return  # every byte arrived last time; only verification is left
    headers = {"Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
        validator = _recorded_validator(transfer)
        if validator:
            headers["If-Range"] = validator
    with http.stream("GET", transfer.url, headers=headers) as response:
        if response.status_code == 416 and have:
            # Our partial is as long as (or longer than) the file: start over rather than guess.
            transfer.part.unlink(missing_ok=True)
            raise _RetryableStatus("the server refused to resume; restarting")
        if response.status_code >= 500:
            raise _RetryableStatus(f"the server answered {response.status_code}")
        if response.status_code >= 400:
            raise DownloadError(f"{transfer.url} answered {response.status_code} "
                                f"{response.reason_phrase}; check the address (and that the file is public).")
        _refuse_html(transfer, response)
        offset = _resume_offset(response, have)
        transfer.total = _total_size(response, offset) or transfer.expected_size
        if transfer.expected_size is not None and transfer.total not in (None, transfer.expected_size):
            raise DownloadError(f"{transfer.url} serves {transfer.total:,} bytes but {transfer.dest.name} should be "
                                f"{transfer.expected_size:,}; the catalog entry or the address is out of date.")
        if transfer.total is not None:
            ensure_free_space(transfer.dest.parent, transfer.total - offset, transfer.dest.name)
        _remember_validator(transfer, response)
        _write_body(response, transfer, offset)
    if transfer.total is not None and _size(transfer.part) < transfer.total:
        raise httpx.RemoteProtocolError("the connection closed before the whole file arrived")


def _refuse_html(transfer: _Transfer, response: httpx.Response) -> None:
    content_type = response.headers.get("Content-Type", "").lower()
    if "text/html" in content_type:
        raise DownloadError(
            f"{transfer.url} returned a web page (HTML) instead of the file. Use the file's direct "
            f"download link (on Hugging Face: .../resolve/main/FILE, not .../blob/main/FILE); a login "
            f"or licence page also looks like this.")


def _resume_offset(response: httpx.Response, have: int) -> int:
    """Where the body starts in the file: ``have`` for a 206 that honours our Range, else 0."""
    if response.status_code != 206:
        return 0
    content_range = response.headers.get("Content-Range", "")
    try:
        start = int(content_range.split()[1].split("-")[0])
    except (IndexError, ValueError) as exc:
        raise DownloadError(f"{response.url} sent a malformed Content-Range ({content_range!r}).") from exc
    if start != have:
        raise DownloadError(f"{response.url} resumed at byte {start} instead of {have}; delete the partial "
                            f"file and download again.")
    return start


def _total_size(response: httpx.Response, offset: int) -> int | None:
    if response.status_code == 206:
        total = response.headers.get("Content-Range", "").rpartition("/")[2]
        return int(total) if total.isdigit() else None
    length = response.headers.get("Content-Length")
    return offset + int(length) if length and length.isdigit() else None


def _write_body(response: httpx.Response, transfer: _Transfer, offset: int) -> None:
    mode = "ab" if offset else "wb"
    done = offset
    try:
        with transfer.part.open(mode) as handle:
            handle.truncate(offset)  # bytes past a dropped connection's last full write are suspect
            first = offset == 0
            for block in response.iter_bytes():  # as they arrive, so a drop loses nothing received
                if transfer.cancel is not None and transfer.cancel.cancelled:
                    handle.flush()
                    transfer.report(done, force=True)
                    transfer.cancel.check()
                if first and block:
                    _refuse_html_bytes(transfer, block)
                    first = False
                handle.write(block)
                done += len(block)
                transfer.report(done)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            _discard(transfer)
            raise NotEnoughSpaceError(
                f"The disk filled up while downloading {transfer.dest.name} into {transfer.dest.parent} "
                f"({done:,} of {transfer.total or 0:,} bytes); nothing was installed. Free some space and "
                f"download again.") from exc
        raise DownloadError(f"Could not write {transfer.part}: {exc}") from exc
    transfer.report(done, force=True)


def _refuse_html_bytes(transfer: _Transfer, first_block: bytes) -> None:
    if first_block.lstrip()[:64].lower().startswith(_HTML_STARTS):
        _discard(transfer)
        raise DownloadError(
            f"{transfer.url} returned a web page (HTML) instead of the file. Use the file's direct "
            f"download link (on Hugging Face: .../resolve/main/FILE, not .../blob/main/FILE).")


def ensure_free_space(folder: Path, needed: int, what: str) -> None:
    """Raise :class:`NotEnoughSpaceError` unless ``folder`` has ``needed`` bytes plus a reserve free."""
    free = shutil.disk_usage(folder).free
    if needed > 0 and free < needed + SPACE_RESERVE_BYTES:
        raise NotEnoughSpaceError(
            f"{what} needs {human_size(needed)} but {folder} has only {human_size(free)} free "
            f"(Quire keeps {human_size(SPACE_RESERVE_BYTES)} spare). Free some space or choose another folder.")


def _discard(transfer: _Transfer) -> None:
    transfer.part.unlink(missing_ok=True)
    _meta_path(transfer.dest).unlink(missing_ok=True)


def _verify_and_install(transfer: _Transfer) -> None:
    size = _size(transfer.part)
    if transfer.expected_size is not None and size != transfer.expected_size:
        _discard(transfer)
        raise DownloadError(f"{transfer.dest.name} arrived with {size:,} bytes, expected "
                            f"{transfer.expected_size:,}; nothing was installed. Try again.")
    if transfer.sha256 is not None:
        transfer.progress(Progress("verify", 0, 1, transfer.dest.name))
        actual = _file_sha256(transfer.part)
        if actual != transfer.sha256:
            _discard(transfer)
            raise ChecksumMismatchError(
                f"{transfer.dest.name} failed its checksum (sha256 {actual[:16]}…, expected "
                f"{transfer.sha256[:16]}…): the file is damaged or not the published one, so it was "
                f"deleted and nothing was installed. Try again; if it repeats, the source changed.")
    if transfer.verify is not None:
        try:
            transfer.verify(transfer.part)
        except Exception:
            _discard(transfer)  # a file that fails its own checks is never installed, nor resumed
            raise
    os.replace(transfer.part, transfer.dest)
    _fsync_directory(transfer.dest.parent)
    _meta_path(transfer.dest).unlink(missing_ok=True)
    transfer.progress(Progress("download", size, size, transfer.dest.name))


def _fsync_directory(folder: Path) -> None:
    """Make the rename itself durable (POSIX); Windows has no directory handles to sync."""
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
