"""Bad input: every broken, locked, scanned, huge, vanishing or oddly named file gets a clear outcome.

The rule under test: one bad file costs that file only. It is reported ``failed`` with a reason
that says what to do, it is remembered in the catalog as failed, and the rest of the batch is added.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.pdfs import encrypted_pdf, many_pages_pdf, paper_text, scanned_pdf, text_pdf, truncated_copy

from engine.config import IngestSettings, Settings
from engine.importer import IngestResult, Outcome
from engine.ingest import ocr
from engine.ingest.pipeline import PdfParse
from engine.progress import Progress
from engine.service import Engine
from engine.types import DocumentStatus

PNG_HEADER = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
TRUNCATED_PHRASES = ("PDF is incomplete", "interrupted download", "download it again")

def page_tree_claiming_a_million_pages() -> bytes:
    """A one-page PDF whose page tree says it holds 1,000,000 pages (MuPDF: "Invalid number of pages")."""
    import pymupdf

    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "The only page of a paper whose page tree lies.")
    whole = document.tobytes()
    assert b"/Count 1" in whole
    return whole.replace(b"/Count 1", b"/Count 1000000", 1)


# name -> (the bad file's bytes, made from a real paper's bytes; phrases its failure reason must contain)
BAD_FILES: dict[str, tuple[Callable[[bytes], bytes], tuple[str, ...]]] = {
    "truncated to 30%": (lambda paper: paper[: len(paper) * 3 // 10], TRUNCATED_PHRASES),
    "truncated to 1 KB": (lambda paper: paper[:1024], TRUNCATED_PHRASES),
    "complete PDF, damaged inside": (lambda _: b"%PDF-1.7\n" + bytes(range(256)) * 16 + b"\n%%EOF\n",
                                     ("damaged", "download it again")),
    "text file renamed .pdf": (lambda _: b"My notes on the paper.\n",
                               ("not a PDF", "plain text", "export or download the paper as PDF")),
    "PNG renamed .pdf": (lambda _: PNG_HEADER, ("not a PDF", "PNG image", "export or download the paper as PDF")),
    "web page saved as .pdf": (lambda _: b"<!DOCTYPE html><html>Paywall</html>", ("not a PDF", "web page")),
    "0-byte file": (lambda _: b"", ("empty (0 bytes)", "download or export")),
    "page tree claiming a million pages": (lambda _: page_tree_claiming_a_million_pages(),
                                           ("page tree is damaged", "re-save it")),
}


def outcomes(results: list[IngestResult]) -> list[Outcome]:
    return [result.outcome for result in results]


def good_pdf(folder: Path, name: str) -> Path:
    return text_pdf(folder / name, [paper_text(name.removesuffix(".pdf"))])


# --- corrupt, truncated and non-PDF files -------------------------------------------------


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_bad_file_fails_with_advice_and_the_batch_goes_on(kind: str, engine: Engine, tmp_path: Path,
                                                         real_paper: Path) -> None:
    make, phrases = BAD_FILES[kind]
    bad = tmp_path / "b-bad.pdf"
    bad.write_bytes(make(real_paper.read_bytes()))
    batch = [good_pdf(tmp_path, "a-before.pdf"), bad, good_pdf(tmp_path, "c-after.pdf")]

    results = list(engine.add_documents(batch))

    assert outcomes(results) == [Outcome.ADDED, Outcome.FAILED, Outcome.ADDED]
    failed = results[1]
    assert failed.path == str(bad)
    for phrase in phrases:
        assert phrase in failed.reason, f"{kind}: {failed.reason!r} lacks {phrase!r}"
    assert "unexpected error" not in failed.reason
    # The failure is remembered with its reason, so the library view can show it.
    remembered = engine.document(failed.doc_id)
    assert remembered.status == DocumentStatus.FAILED
    assert remembered.error == failed.reason
    assert all(engine.passages(result.doc_id) for result in (results[0], results[2]))
    assert engine.library.check_integrity() == []


@pytest.mark.slow
def test_every_corpus_paper_cut_short_fails_as_incomplete(engine: Engine, tmp_path: Path, papers_dir: Path) -> None:
    # MuPDF rebuilds some cut-off files into every page with most text missing; none may pass as whole.
    papers = sorted(papers_dir.glob("*.pdf"))
    for paper in papers:
        data = paper.read_bytes()
        for percent in (30, 70, 95):
            (tmp_path / f"{paper.stem}-{percent}.pdf").write_bytes(data[: len(data) * percent // 100])

    results = list(engine.add_documents([tmp_path]))

    assert len(results) == 3 * len(papers)
    wrongly_added = [(Path(r.path).name, r.pages, r.passages) for r in results if r.outcome != Outcome.FAILED]
    assert wrongly_added == []
    assert all("PDF is incomplete" in r.reason for r in results), {r.reason for r in results}


@pytest.mark.slow
def test_intact_corpus_papers_are_not_mistaken_for_incomplete(engine: Engine, papers_dir: Path,
                                                               hostile_dir: Path) -> None:
    results = list(engine.add_documents([papers_dir, hostile_dir]))

    assert [(Path(r.path).name, r.reason) for r in results if r.outcome != Outcome.ADDED] == []
    assert engine.library.check_integrity() == []


def test_a_failed_file_is_retried_once_it_is_fixed(engine: Engine, tmp_path: Path, real_paper: Path) -> None:
    target = truncated_copy(real_paper, tmp_path / "download.pdf", fraction=0.3)
    [first] = engine.add_documents([target])
    assert first.outcome == Outcome.FAILED

    shutil.copyfile(real_paper, target)  # the download finished
    [second] = engine.add_documents([target])

    assert second.outcome == Outcome.ADDED
    assert second.passages > 0
    assert [d.status for d in engine.documents()] == [DocumentStatus.INDEXED]  # the failure record is gone
    assert engine.library.check_integrity() == []


# --- encrypted PDFs -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def locked_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("locked")
    return encrypted_pdf(folder / "locked.pdf", "Confidential findings about zebrafish regeneration.",
                         user_password="open-sesame")


def test_encrypted_pdf_without_password_says_how_to_give_one(engine: Engine, locked_pdf: Path) -> None:
    [result] = engine.add_documents([locked_pdf])

    assert result.outcome == Outcome.FAILED
    assert "password-protected" in result.reason
    assert "--password" in result.reason
    assert engine.document(result.doc_id).status == DocumentStatus.FAILED


def test_encrypted_pdf_with_wrong_password_says_so(engine: Engine, locked_pdf: Path) -> None:
    [result] = engine.add_documents([locked_pdf], password="guess")

    assert result.outcome == Outcome.FAILED
    assert "password given does not open this PDF" in result.reason


def test_encrypted_pdf_with_right_password_is_added(engine: Engine, locked_pdf: Path) -> None:
    [result] = engine.add_documents([locked_pdf], password="open-sesame")

    assert result.outcome == Outcome.ADDED
    assert "zebrafish" in " ".join(p.text for p in engine.passages(result.doc_id))


def test_retrying_an_encrypted_pdf_with_its_password_replaces_the_failure(engine: Engine, locked_pdf: Path) -> None:
    [failed] = engine.add_documents([locked_pdf])
    [added] = engine.add_documents([locked_pdf], password="open-sesame")

    assert (failed.outcome, added.outcome) == (Outcome.FAILED, Outcome.ADDED)
    [document] = engine.documents()
    assert document.status == DocumentStatus.INDEXED
    assert document.error == ""
    assert engine.library.check_integrity() == []


def test_pdf_with_only_an_owner_password_opens_without_one(engine: Engine, tmp_path: Path) -> None:
    # Permission-only encryption (printing/copying limits) must not ask the reader for a password.
    path = encrypted_pdf(tmp_path / "restricted.pdf", "Open to read, closed to edit.", user_password="")

    [result] = engine.add_documents([path])

    assert result.outcome == Outcome.ADDED
    assert result.passages == 1


# --- pages without a text layer -----------------------------------------------------------


@pytest.fixture
def without_tesseract(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behave as on a machine with no Tesseract, whether or not this one has it."""
    monkeypatch.setattr(ocr, "tesseract_available", lambda: False)
    # Parse in-process: worker processes (forked from a server started earlier) would not see the patch.
    monkeypatch.setenv("QUIRE_PARSE_WORKERS", "0")


@pytest.mark.usefixtures("without_tesseract")
def test_image_only_pdf_is_flagged_with_how_to_enable_ocr(engine: Engine, tmp_path: Path) -> None:
    path = scanned_pdf(tmp_path / "scan.pdf", ["Scanned text about glacier retreat."])

    [result] = engine.add_documents([path])

    assert result.outcome == Outcome.ADDED
    document = engine.document(result.doc_id)
    assert document.status == DocumentStatus.SCANNED
    assert document.status.value == "scanned pages"
    assert "pages 1 of 1 have no text layer" in document.error
    assert "install Tesseract" in document.error and "add the file again" in document.error
    assert document.error in result.reason
    assert [page.has_text_layer for page in engine.pages(document.id)] == [False]
    assert engine.passages(document.id) == []


@pytest.mark.usefixtures("without_tesseract")
def test_scanned_pages_in_a_text_pdf_are_named_and_the_rest_is_indexed(engine: Engine, tmp_path: Path) -> None:
    texts = [paper_text("citations"), "A scanned appendix.", paper_text("conclusions")]
    path = scanned_pdf(tmp_path / "mixed.pdf", texts, scanned=[False, True, False])

    [result] = engine.add_documents([path])

    document = engine.document(result.doc_id)
    assert document.status == DocumentStatus.SCANNED
    assert "pages 2 of 3" in document.error
    assert [page.has_text_layer for page in engine.pages(document.id)] == [True, False, True]
    text = " ".join(p.text for p in engine.passages(document.id))
    assert "citations" in text and "conclusions" in text


def test_scanned_pdf_with_ocr_switched_off_says_how_to_switch_it_on(tmp_path: Path) -> None:
    path = scanned_pdf(tmp_path / "scan.pdf", ["Scanned text."])
    settings = Settings(ingest=IngestSettings(ocr=False))
    with Engine(home=tmp_path / "home", settings=settings) as engine:
        [result] = engine.add_documents([path])
        document = engine.document(result.doc_id)

    assert document.status == DocumentStatus.SCANNED
    assert "OCR is switched off" in document.error
    assert "ocr = true" in document.error


@pytest.mark.skipif(not ocr.tesseract_available(), reason="Tesseract is not installed here")
def test_scanned_page_is_read_by_ocr_when_tesseract_is_installed(engine: Engine, tmp_path: Path) -> None:
    path = scanned_pdf(tmp_path / "scan.pdf", ["Retrieval augmented generation cites its sources."], dpi=200)

    [result] = engine.add_documents([path])

    document = engine.document(result.doc_id)
    assert document.status == DocumentStatus.INDEXED
    assert [page.ocr_used for page in engine.pages(document.id)] == [True]
    assert "Retrieval" in " ".join(p.text for p in engine.passages(document.id))


# --- a 1,000-page PDF ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def long_pdfs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    folder = tmp_path_factory.mktemp("long")
    return {pages: many_pages_pdf(folder / f"{pages}-pages.pdf", pages) for pages in (100, 1000)}


# Runs in a fresh interpreter so its peak RSS is its own; measured after imports, around the ingest only.
_MEASURE_INGEST = textwrap.dedent("""
    import json, resource, sys
    from engine.service import Engine

    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    with Engine(home=sys.argv[2]) as engine:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        [result] = engine.add_documents([sys.argv[1]])
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"outcome": result.outcome.value, "pages": result.pages, "passages": result.passages,
                      "growth_mb": (after - before) * scale / 2**20}))
""")


def _ingest_in_subprocess(pdf: Path, home: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _MEASURE_INGEST, str(pdf), str(home)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="peak RSS is read with the resource module")
def test_thousand_page_pdf_ingests_in_bounded_memory(long_pdfs: dict[int, Path], tmp_path: Path) -> None:
    short = _ingest_in_subprocess(long_pdfs[100], tmp_path / "short")
    long = _ingest_in_subprocess(long_pdfs[1000], tmp_path / "long")

    assert (short["outcome"], short["pages"]) == ("added", 100)
    assert (long["outcome"], long["pages"]) == ("added", 1000)
    assert long["passages"] >= 9 * short["passages"]
    # Holding every page or passage of the long file costs ~100 MB more than the short one (measured);
    # streaming costs about the same for both.
    assert long["growth_mb"] < short["growth_mb"] + 40, (short, long)
    assert long["growth_mb"] < 80, long


@pytest.mark.slow
def test_thousand_page_pdf_yields_passages_before_reading_every_page(long_pdfs: dict[int, Path]) -> None:
    with PdfParse(long_pdfs[1000]) as parse:
        stream = parse.passages()
        first = next(stream)
        pages_read_at_first = len(parse.pages)
        for _ in range(149):
            hundred_fiftieth = next(stream)
        pages_read_at_hundred_fiftieth = len(parse.pages)

    assert first.page_start == 1
    assert pages_read_at_first < 10
    # ~1.4 passages per page: the reader stays a few pages ahead of the passages, never the whole file.
    assert hundred_fiftieth.page_end - 10 < pages_read_at_hundred_fiftieth < hundred_fiftieth.page_end + 10


# --- files that vanish --------------------------------------------------------------------


def test_file_deleted_mid_batch_is_reported_and_the_others_are_added(engine: Engine, tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    _, second, third = (good_pdf(folder, name) for name in ("a.pdf", "b.pdf", "c.pdf"))

    def delete_third_when_second_starts(progress: Progress) -> None:
        # A sync client or the user removes c.pdf after the folder was listed, before it is read.
        if progress.stage == "ingest" and progress.label == second.name and third.exists():
            third.unlink()

    results = list(engine.add_documents([folder], progress=delete_third_when_second_starts))

    assert [Path(r.path).name for r in results] == ["a.pdf", "b.pdf", "c.pdf"]
    assert outcomes(results) == [Outcome.ADDED, Outcome.ADDED, Outcome.FAILED]
    assert "file not found" in results[2].reason
    assert "moved or deleted" in results[2].reason
    assert engine.document(results[2].doc_id).status == DocumentStatus.FAILED
    assert engine.library.check_integrity() == []


def test_missing_path_given_explicitly_is_reported(engine: Engine, tmp_path: Path) -> None:
    good = good_pdf(tmp_path, "real.pdf")

    results = list(engine.add_documents([tmp_path / "typo.pdf", good]))

    assert outcomes(results) == [Outcome.FAILED, Outcome.ADDED]
    assert "file not found" in results[0].reason


# --- odd file names -----------------------------------------------------------------------

ODD_NAMES = [
    "with spaces in the name.pdf",
    "Émile Zola – accentué, naïve.pdf",
    "emoji 📄🔬 paper.pdf",
    "quote's \"double\" `back`.pdf",
    "-leading-dash.pdf",
    "--looks-like-an-option.pdf",
    "日本語の論文.pdf",
    "semi;colon & ampersand $HOME *.pdf",
    "tab\tand\nnewline.pdf",
    "UPPERCASE.PDF",
    "x" * 240 + ".pdf",  # 244 bytes: near the 255-byte limit of most file systems
    "é" * 120 + ".pdf",  # 244 bytes in UTF-8, 124 characters
]


@pytest.mark.skipif(sys.platform == "win32", reason="these names are legal on POSIX file systems only")
@pytest.mark.parametrize("name", ODD_NAMES, ids=lambda name: name[:24])
def test_odd_file_name_round_trips(name: str, engine: Engine, tmp_path: Path) -> None:
    path = text_pdf(tmp_path / name, [paper_text("odd names")])

    [result] = engine.add_documents([path])
    [again] = engine.add_documents([path])

    assert result.outcome == Outcome.ADDED, result.reason
    assert again.outcome == Outcome.UNCHANGED  # the stored path matches the file byte for byte
    document = engine.document(result.doc_id)
    assert document.path == str(path.resolve())
    assert Path(document.path).read_bytes() == path.read_bytes()


@pytest.mark.skipif(sys.platform == "win32", reason="these names are legal on POSIX file systems only")
def test_folder_of_odd_names_is_discovered_whole(engine: Engine, tmp_path: Path) -> None:
    for index, name in enumerate(ODD_NAMES):
        text_pdf(tmp_path / name, [paper_text(f"subject number {index}")])

    results = list(engine.add_documents([tmp_path]))

    assert sorted(Path(r.path).name for r in results) == sorted(ODD_NAMES)
    assert set(outcomes(results)) == {Outcome.ADDED}
    assert len(engine.documents()) == len(ODD_NAMES)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="only Linux allows non-UTF-8 bytes in names")
def test_file_name_that_is_not_utf8_fails_cleanly(engine: Engine, tmp_path: Path) -> None:
    good_pdf(tmp_path, "good.pdf")
    raw_name = os.fsencode(tmp_path) + b"/latin1-caf\xe9.pdf"  # "café" written by an old Latin-1 system
    with open(raw_name, "wb") as handle:
        handle.write(text_pdf(tmp_path / "source.bin", [paper_text("coffee")]).read_bytes())

    results = list(engine.add_documents([tmp_path]))

    by_name = {Path(r.path).name: r for r in results}
    assert by_name["good.pdf"].outcome == Outcome.ADDED
    [odd] = [r for name, r in by_name.items() if name != "good.pdf"]
    assert odd.outcome == Outcome.FAILED
    assert "not valid UTF-8" in odd.reason and "rename the file" in odd.reason
    assert engine.library.check_integrity() == []
