"""Pack files that are not what they claim: cut short, with a lying PAX size header, or not a file at all.

Each is refused with a clear message and no traceback, and nothing is installed. CI spot checks:
none of these is slow (a pack of 30 records).
"""

from __future__ import annotations

import io
import os
import tarfile
import threading
from pathlib import Path

import pytest

from engine.datastore.manifest import PackError
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
