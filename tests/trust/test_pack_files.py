"""Pack files that are not what they claim: cut short, with a lying PAX size header, or not a file at all.

Each is refused with a clear message and no traceback, and nothing is installed. CI spot checks:
none of these is slow (a pack of 30 records).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
import threading
from pathlib import Path

import pytest

from engine.datastore.files import DATABASE_FILE
from engine.datastore.manifest import MANIFEST_NAME, PackError
from engine.datastore.pack import EXPANSION_FLOOR
from engine.progress import Progress
from tests.trust.test_datastore_faults import RECORDS, make_engine, nothing_installed, quire, write_jsonl


@pytest.mark.parametrize("keep", [400, 0.5], ids=["first-400-bytes", "half"])
def test_a_pack_cut_short_is_refused_clearly(good_pack: Path, tmp_path: Path, keep: float) -> None:
    data = good_pack.read_bytes()
    cut = tmp_path / "cut.quirepack"
    cut.write_bytes(data[:int(keep if keep >= 1 else len(data) * keep)])  # as `head -c` would
    home = tmp_path / "user"
    done = quire(home, "datastore", "install", str(cut), "--reembed", "--no-embed")
    assert done.returncode == 1, done.stderr
    assert "damaged or incomplete" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert nothing_installed(home)


def test_a_pack_with_a_lying_pax_size_header_is_refused_clearly(good_pack: Path, tmp_path: Path) -> None:
    with tarfile.open(good_pack) as archive:
        members = [(m.name, archive.extractfile(m).read()) for m in archive.getmembers()]  # type: ignore[union-attr]
    crafted = tmp_path / "pax.quirepack"
    with tarfile.open(crafted, "w:gz", format=tarfile.PAX_FORMAT) as out:
        for number, (name, data) in enumerate(members):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            if number == 1:  # the database: its PAX header says it is 1,000 times longer than it is
                info.pax_headers = {"size": str(len(data) * 1000)}
            out.addfile(info, io.BytesIO(data))
    home = tmp_path / "user"
    with make_engine(home) as engine, pytest.raises(PackError, match="damaged or incomplete"):
        engine.install_datastore(crafted)
    assert nothing_installed(home)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_installing_something_that_is_not_a_file_returns_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "pack.quirepack"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    home = tmp_path / "user"
    outcome: list[BaseException | None] = []

    def install() -> None:
        try:
            with make_engine(home) as engine:
                engine.install_datastore(path)
            outcome.append(None)
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=install, daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive() and kind == "fifo":
        with open(path, "wb"):  # let a hung open() return so the thread ends
            pass
    assert not worker.is_alive() or kind == "fifo", "the install never returned"
    assert outcome, "the install hung on the named pipe"
    assert isinstance(outcome[0], PackError) and "not a regular file" in str(outcome[0])
    assert nothing_installed(home)


def test_packing_into_a_missing_folder_named_with_a_trailing_slash_makes_the_folder(tmp_path: Path) -> None:
    home = tmp_path / "builder"
    with make_engine(home) as engine:
        engine.add_datastore(write_jsonl(tmp_path / "records.jsonl", RECORDS[:3]), "graphs", embed=False)
    done = quire(home, "datastore", "pack", "graphs", str(tmp_path / "packs") + "/", "--version", "1")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "packs").is_dir()  # not a file named "packs"
    assert [p.name for p in (tmp_path / "packs").iterdir()] == ["graphs-1.quirepack"]


class _Padded:
    """``head`` followed by zeros up to ``size`` bytes, read as a file, never held whole."""

    def __init__(self, head: bytes, size: int) -> None:
        self._head, self._left, self._at = head, size, 0

    def read(self, count: int = -1) -> bytes:
        count = self._left if count < 0 else min(count, self._left)
        chunk = self._head[self._at:self._at + count]
        chunk += bytes(count - len(chunk))
        self._at += count
        self._left -= count
        return chunk


def test_a_pack_that_unpacks_to_far_more_than_its_size_is_refused_before_writing(good_pack: Path,
                                                                                 tmp_path: Path) -> None:
    """Honestly declared (sizes and hashes true) but a compression bomb: 320 MB of mostly zeros in a small pack."""
    size = EXPANSION_FLOOR + (64 << 20)
    if shutil.disk_usage(tmp_path).free < 2 * size:
        pytest.skip("the free-space check would refuse the pack first")
    with tarfile.open(good_pack) as archive:
        members = {m.name: archive.extractfile(m).read() for m in archive.getmembers()}  # type: ignore[union-attr]
    manifest = json.loads(members.pop(MANIFEST_NAME))
    digest = hashlib.sha256()
    padded = _Padded(members[DATABASE_FILE], size)
    while chunk := padded.read(1 << 20):
        digest.update(chunk)
    for entry in manifest["files"]:
        if entry["path"] == DATABASE_FILE:
            entry.update(size=size, sha256=digest.hexdigest())
    bomb = tmp_path / "bomb.quirepack"
    with tarfile.open(bomb, "w:gz", compresslevel=1) as out:
        raw = json.dumps(manifest).encode("utf-8")
        info = tarfile.TarInfo(MANIFEST_NAME)
        info.size = len(raw)
        out.addfile(info, io.BytesIO(raw))
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = size if name == DATABASE_FILE else len(data)
            out.addfile(info, _Padded(data, info.size))  # type: ignore[arg-type]
    assert bomb.stat().st_size * 20 < size

    home = tmp_path / "user"
    written: list[Progress] = []
    with make_engine(home) as engine, pytest.raises(PackError, match=r"unpacks to .* more than 20 times its size"):
        engine.install_datastore(bomb, reembed=True, progress=written.append)
    assert [p for p in written if p.stage == "install" and p.done > 0] == []  # refused before a byte was written
    assert nothing_installed(home)
