"""Downloads against a real HTTP server on 127.0.0.1: resume, cancel, checksums, HTML, full disks."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixtures.http_server import FileServer

from engine.errors import Cancelled, ChecksumMismatchError, DownloadError, NotEnoughSpaceError
from engine.manager.download import download, hf_endpoint, hf_url, partial_path
from engine.progress import CancelToken, Progress

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = os.urandom(3 * 1024 * 1024 + 123)  # not a multiple of any chunk size
SHA = hashlib.sha256(DATA).hexdigest()


@pytest.fixture
def server():
    with FileServer() as running:
        yield running


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


def test_a_download_is_verified_and_installed_with_progress(server: FileServer, tmp_path: Path) -> None:
    server.add("/model.gguf", DATA)
    reports: list[Progress] = []
    dest = download(server.url("/model.gguf"), tmp_path / "model.gguf", sha256=SHA, expected_size=len(DATA),
                    progress=reports.append)
    assert dest.read_bytes() == DATA
    assert leftovers(tmp_path) == [], "no partial or bookkeeping file is left behind"
    done = [report.done for report in reports if report.stage == "download"]
    assert done == sorted(done) and done[-1] == len(DATA)
    assert reports[-1].total == len(DATA)


def test_a_dropped_connection_resumes_with_a_range_request(server: FileServer, tmp_path: Path) -> None:
    server.add("/model.gguf", DATA, drop_after=1_000_000, drops=1)
    dest = download(server.url("/model.gguf"), tmp_path / "model.gguf", sha256=SHA)
    assert dest.read_bytes() == DATA
    assert [rng for _, _, rng in server.requests] == [None, "bytes=1000000-"]


def test_an_interrupted_download_resumes_in_the_next_call(server: FileServer, tmp_path: Path) -> None:
    route = server.add("/model.gguf", DATA, drop_after=1_500_000, drops=10)
    dest = tmp_path / "model.gguf"
    with pytest.raises(DownloadError, match="run the same download again to resume"):
        download(server.url("/model.gguf"), dest, sha256=SHA, retries=0)
    assert not dest.exists(), "nothing is installed until every byte arrived and was verified"
    assert partial_path(dest).stat().st_size == 1_500_000
    route.drops = 0  # the network is back
    download(server.url("/model.gguf"), dest, sha256=SHA)
    assert dest.read_bytes() == DATA
    assert server.requests[-1][2] == "bytes=1500000-", "the second call fetched only the missing bytes"


def test_cancel_keeps_the_partial_file_and_a_later_call_resumes(server: FileServer, tmp_path: Path) -> None:
    server.add("/model.gguf", DATA, delay_per_chunk_s=0.005)
    dest = tmp_path / "model.gguf"
    cancel = CancelToken()

    def cancel_midway(progress: Progress) -> None:
        if progress.done > 1_000_000:
            cancel.cancel()

    with pytest.raises(Cancelled):
        download(server.url("/model.gguf"), dest, sha256=SHA, progress=cancel_midway, cancel=cancel)
    kept = partial_path(dest).stat().st_size
    assert 1_000_000 < kept < len(DATA) and not dest.exists()
    download(server.url("/model.gguf"), dest, sha256=SHA)
    assert dest.read_bytes() == DATA
    assert server.requests[-1][2] == f"bytes={kept}-"


def test_a_wrong_checksum_installs_nothing(server: FileServer, tmp_path: Path) -> None:
    server.add("/model.gguf", DATA)
    dest = tmp_path / "model.gguf"
    with pytest.raises(ChecksumMismatchError, match="failed its checksum"):
        download(server.url("/model.gguf"), dest, sha256=hashlib.sha256(b"the published file").hexdigest())
    assert not dest.exists() and leftovers(tmp_path) == [], "a damaged file is deleted, not resumed"


def test_a_web_page_instead_of_the_file_is_refused(server: FileServer, tmp_path: Path) -> None:
    server.add_html("/blob/main/model.gguf")
    with pytest.raises(DownloadError, match=r"web page \(HTML\) instead of the file.*resolve"):
        download(server.url("/blob/main/model.gguf"), tmp_path / "model.gguf")
    assert list(tmp_path.iterdir()) == [], "nothing is left: no file, no partial, no bookkeeping"


def test_a_web_page_served_as_binary_is_recognised_by_its_first_bytes(server: FileServer, tmp_path: Path) -> None:
    server.add("/model.gguf", b"\n  <!DOCTYPE html><html><body>Please log in</body></html>")
    with pytest.raises(DownloadError, match="web page"):
        download(server.url("/model.gguf"), tmp_path / "model.gguf")
    assert not (tmp_path / "model.gguf").exists() and not partial_path(tmp_path / "model.gguf").exists()


def test_http_errors_name_the_status(server: FileServer, tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="404"):
        download(server.url("/missing.gguf"), tmp_path / "missing.gguf")
    assert list(tmp_path.iterdir()) == []


def test_free_space_is_checked_before_anything_is_fetched(server: FileServer, tmp_path: Path) -> None:
    server.add("/huge.gguf", DATA)
    with pytest.raises(NotEnoughSpaceError, match=r"needs .* free"):
        download(server.url("/huge.gguf"), tmp_path / "huge.gguf", expected_size=10**17)
    assert server.requests == [], "the network was not touched"


def test_a_size_that_disagrees_with_the_catalog_is_refused_before_writing(server: FileServer, tmp_path: Path) -> None:
    server.add("/model.gguf", DATA)
    with pytest.raises(DownloadError, match="out of date"):
        download(server.url("/model.gguf"), tmp_path / "model.gguf", expected_size=len(DATA) - 1)
    assert not partial_path(tmp_path / "model.gguf").exists()


def test_a_server_without_range_support_restarts_from_zero(server: FileServer, tmp_path: Path) -> None:
    server.add("/model.gguf", DATA, ranges=False, drop_after=800_000, drops=1)
    dest = download(server.url("/model.gguf"), tmp_path / "model.gguf", sha256=SHA)
    assert dest.read_bytes() == DATA


def test_a_partial_file_from_another_source_is_not_resumed(server: FileServer, tmp_path: Path) -> None:
    other = os.urandom(2_000_000)
    server.add("/old.gguf", other, drop_after=500_000, drops=10)
    server.add("/new.gguf", DATA)
    dest = tmp_path / "model.gguf"
    with pytest.raises(DownloadError):
        download(server.url("/old.gguf"), dest, retries=0)
    assert partial_path(dest).exists()
    download(server.url("/new.gguf"), dest, sha256=SHA)
    assert dest.read_bytes() == DATA
    assert server.requests[-1] == ("GET", "/new.gguf", None), "the other file's bytes were discarded"


def test_an_installed_file_is_not_fetched_again(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "model.gguf"
    dest.write_bytes(DATA)
    assert download(server.url("/model.gguf"), dest, sha256=SHA) == dest
    assert server.requests == []


def test_hugging_face_offline_mode_set_by_the_embedder_does_not_block_asked_downloads(
        server: FileServer, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # what the CLI and the app set for their whole process
    server.add("/model.gguf", DATA)
    assert download(server.url("/model.gguf"), tmp_path / "model.gguf", sha256=SHA).exists()


def test_offline_mode_refuses_to_download(server: FileServer, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("QUIRE_OFFLINE", "1")
    server.add("/model.gguf", DATA)
    with pytest.raises(DownloadError, match="QUIRE_OFFLINE"):
        download(server.url("/model.gguf"), tmp_path / "model.gguf")
    assert server.requests == []


def test_a_verify_hook_can_refuse_the_file_before_it_is_installed(server: FileServer, tmp_path: Path) -> None:
    server.add("/model.gguf", DATA)
    seen: list[Path] = []

    def refuse(path: Path) -> None:
        seen.append(path)
        raise DownloadError("not a model")

    with pytest.raises(DownloadError, match="not a model"):
        download(server.url("/model.gguf"), tmp_path / "model.gguf", verify=refuse)
    assert seen and seen[0].name == ".model.gguf.part", "the check ran on the temporary file"
    assert list(tmp_path.iterdir()) == []


def test_the_hugging_face_endpoint_can_point_at_a_local_server(monkeypatch) -> None:
    monkeypatch.delenv("QUIRE_HF_ENDPOINT", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9/")
    assert hf_endpoint() == "http://127.0.0.1:9"
    assert hf_url("org/repo", "a.gguf") == "http://127.0.0.1:9/org/repo/resolve/main/a.gguf"
    monkeypatch.setenv("QUIRE_HF_ENDPOINT", "http://mirror.example")
    assert hf_url("org/repo", "a.gguf", revision="abc") == "http://mirror.example/org/repo/resolve/abc/a.gguf"


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_the_disk_filling_up_mid_download_leaves_no_install(server: FileServer, tmp_path: Path) -> None:
    """A child process may write at most 1 MB per file (RLIMIT_FSIZE), like a disk that fills up."""
    server.add("/model.gguf", DATA)
    dest = tmp_path / "model.gguf"
    script = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))
        from engine.errors import NotEnoughSpaceError
        from engine.manager.download import download
        try:
            download({server.url('/model.gguf')!r}, {str(dest)!r}, sha256={SHA!r})
        except NotEnoughSpaceError as exc:
            print(exc)
            sys.exit(3)
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 3, result.stderr
    assert "disk filled up" in result.stdout and "nothing was installed" in result.stdout
    assert not dest.exists()
    assert not partial_path(dest).exists(), "the partial file is deleted to give the space back"
