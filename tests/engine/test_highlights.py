"""An answer's quotes written back into the papers: real answers, read back with PyMuPDF."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
from fixtures.pdfs import text_pdf

from engine.cli.main import main
from engine.render.highlights import COPY_SUFFIX
from engine.request import AskRequest, RequestOptions
from engine.service import Engine
from engine.types import Answer

# Real models answer (the digest: the answer reader and MiniLM), a few seconds on two cores.
pytestmark = pytest.mark.slow

PAGES = ["Coral bleaching and ocean heat.\nCoral reefs bleach when ocean water stays too warm for weeks.\n"
         "Bleached corals expel the algae that feed them, and many die within months.\n"
         "The 2016 event killed about a third of the corals on the northern Great Barrier Reef.",
         "Recovery of reefs.\nReefs recover from bleaching within ten to fifteen years when heat waves stop.\n"
         "Fast-growing branching corals return first, and slow massive corals take decades."]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, Answer, Path]]:
    folder = tmp_path_factory.mktemp("highlights")
    paper = text_pdf(folder / "reefs.pdf", PAGES)
    with pymupdf.open(paper) as document:  # the reader's own note, which annotating must keep
        document[1].add_text_annot((300, 400), "my own note")
        document.saveIncr()
    with Engine(home=folder / "home") as engine:
        list(engine.add_documents([paper]))
        answer = engine.ask(AskRequest("Why do corals bleach and how fast do reefs recover?", mode="digest",
                                       options=RequestOptions(rewrite=False, feedback=False)))
        assert sum(len(s.citations) for s in answer.sentences) >= 2, answer.text
        yield engine, answer, paper


def _middle(word: tuple) -> pymupdf.Point:  # type: ignore[type-arg]
    return pymupdf.Point((word[0] + word[2]) / 2, (word[1] + word[3]) / 2)


def _quire_highlights(path: Path) -> list[tuple[int, str, str, list[pymupdf.Rect]]]:
    """(page, words under the highlight, note, quads' rectangles) of every Quire highlight in ``path``."""
    found = []
    with pymupdf.open(path) as document:
        for page in document:
            words = page.get_text("words")
            for annot in page.annots([pymupdf.PDF_ANNOT_HIGHLIGHT]):
                vertices = annot.vertices
                quads = [pymupdf.Quad(*vertices[i:i + 4]).rect for i in range(0, len(vertices), 4)]
                under = [w[4] for w in words if any(q.contains(_middle(w)) for q in quads)]
                found.append((page.number + 1, " ".join(under), annot.info["content"], quads))
    return found


def _expected(answer: Answer) -> list[tuple[int, str, str]]:
    return sorted({(c.rects[0].page, " ".join(c.quote.split()), s.text) for s in answer.sentences
                   for c in s.citations})


def test_copy_mode_highlights_each_quote_on_its_page_and_leaves_the_original(answered) -> None:  # type: ignore[no-untyped-def]
    engine, answer, paper = answered
    before = _sha(paper)
    [result] = engine.annotate_answer(answer.id)
    copy = paper.with_name("reefs" + COPY_SUFFIX)
    assert result.written == str(copy) and result.added == len(_expected(answer)) and not result.problem
    assert _sha(paper) == before  # the original's bytes are untouched

    highlights = _quire_highlights(copy)
    assert sorted((page, words, note.split("\n\n")[1]) for page, words, note, _ in highlights) == _expected(answer)
    assert all(note.startswith(answer.question + "\n\n") for _, _, note, _ in highlights)
    quote_boxes = {(c.rects[0].page, " ".join(c.quote.split())): [pymupdf.Rect(*r.rect) for r in c.rects]
                   for s in answer.sentences for c in s.citations}
    for page, words, _, quads in highlights:
        for quad, box in zip(quads, quote_boxes[(page, words)], strict=True):  # the quote's own word boxes
            assert abs(quad.x0 - box.x0) < 1 and abs(quad.x1 - box.x1) < 1 and abs(quad.y0 - box.y0) < 2
    with pymupdf.open(copy) as document:
        assert [a.info["content"] for a in document[1].annots([pymupdf.PDF_ANNOT_TEXT])] == ["my own note"]

    [again] = engine.annotate_answer(answer.id)  # re-annotating adds nothing
    assert again.added == 0 and again.already_there == result.added
    assert len(_quire_highlights(copy)) == len(highlights)


def test_in_place_keeps_other_annotations_and_refuses_a_read_only_file(  # type: ignore[no-untyped-def]
        answered, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    engine, answer, paper = answered
    os.chmod(paper, stat.S_IRUSR | stat.S_IRGRP)
    before = _sha(paper)
    try:
        [refused] = engine.annotate_answer(answer.id, in_place=True)
        assert "read-only" in refused.problem and not refused.written and _sha(paper) == before
        assert main(["--home", str(engine.paths.home), "answer", "annotate", answer.id, "--in-place"]) == 1
        assert "read-only" in capsys.readouterr().err
    finally:
        os.chmod(paper, stat.S_IRUSR | stat.S_IWUSR)

    [result] = engine.annotate_answer(answer.id, in_place=True)
    assert result.written == str(paper) and result.added == len(_expected(answer))
    assert sorted((p, w, n.split("\n\n")[1]) for p, w, n, _ in _quire_highlights(paper)) == _expected(answer)
    with pymupdf.open(paper) as document:
        assert [a.info["content"] for a in document[1].annots([pymupdf.PDF_ANNOT_TEXT])] == ["my own note"]
    assert [n.name for n in paper.parent.iterdir() if n.name.endswith(".tmp")] == []  # no temporary file left

    out = tmp_path / "copies"
    out.mkdir()
    assert main(["--home", str(engine.paths.home), "answer", "annotate", answer.id, "--to", str(out)]) == 0
    assert "highlights ->" in capsys.readouterr().out and (out / ("reefs" + COPY_SUFFIX)).is_file()
