"""Figures as figures: each captioned figure's region found at ingest, stored with its caption, pictured in exports."""

from __future__ import annotations

import base64
import re
from dataclasses import replace
from pathlib import Path

import pymupdf
import pytest

from engine.ingest import parse_pdf
from engine.render.html import to_html
from engine.service import Engine
from engine.types import (
    LIBRARY_SOURCE,
    Answer,
    AnswerMode,
    AnswerSentence,
    Citation,
    PaperReference,
    Passage,
    Reference,
)
from tests.fixtures.pdfs import figure_labels

BODY = ("The mutant strain grew more slowly than the wild type in every condition we tested, and the difference "
        "grew with time. ") * 3


def _body(page: pymupdf.Page, top: float, x: float = 72, width: float = 468) -> None:
    page.insert_textbox(pymupdf.Rect(x, top, x + width, top + 120), BODY, fontsize=10)


def _caption_passages(path: Path) -> list[Passage]:
    return [p for p in parse_pdf(path).passages if p.kind == "caption"]


def _covers(outer: tuple[float, ...], inner: pymupdf.Rect, slack: float = 2.0) -> bool:
    return (outer[0] <= inner.x0 + slack and outer[1] <= inner.y0 + slack
            and outer[2] >= inner.x1 - slack and outer[3] >= inner.y1 - slack)


def vector_figure_pdf(path: Path) -> tuple[Path, pymupdf.Rect]:
    """Body text, a drawn plot with its labels, its caption below, more body text."""
    document = pymupdf.open()
    page = document.new_page()
    _body(page, 60)
    plot = pymupdf.Rect(150, 200, 420, 380)
    figure_labels(page, plot)
    page.insert_text((72, 410), "Figure 1. Growth of the mutant strain over time.", fontsize=8)
    _body(page, 440)
    document.save(path)
    return path, plot


def test_a_drawn_figure_is_found_above_its_caption_with_its_labels(tmp_path: Path) -> None:
    path, plot = vector_figure_pdf(tmp_path / "vector.pdf")
    [caption] = _caption_passages(path)
    assert caption.text.startswith("Figure 1.")
    assert caption.figure is not None and caption.figure.page == 1
    region = caption.figure.rect
    assert _covers(region, plot)
    assert region[1] > 150 and region[3] < 405  # neither the text above nor the caption below
    assert region[0] < plot.x0 - 8  # the tick labels left of the frame are the figure's own
    text = [p for p in parse_pdf(path).passages if p.kind == "text"]
    assert all("Growth of the mutant" not in p.text for p in text)


def test_an_image_figure_is_found(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    _body(page, 60)
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 40), False)
    pixmap.set_rect(pixmap.irect, (30, 120, 200))
    image = pymupdf.Rect(120, 200, 480, 440)
    page.insert_image(image, pixmap=pixmap)
    page.insert_text((72, 465), "Figure 2: A micrograph of the mutant colony.", fontsize=8)
    _body(page, 500)
    document.save(tmp_path / "image.pdf")
    [caption] = _caption_passages(tmp_path / "image.pdf")
    assert caption.figure is not None
    assert _covers(caption.figure.rect, image)
    assert caption.figure.rect[3] < 460


def test_a_caption_beside_its_figure(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    _body(page, 60)
    plot = pymupdf.Rect(90, 220, 330, 400)
    figure_labels(page, plot)
    page.insert_textbox(pymupdf.Rect(350, 230, 540, 330), "Figure 3. Growth of both strains, measured "
                        "every hour over two days in rich medium.", fontsize=8)
    _body(page, 440)
    document.save(tmp_path / "beside.pdf")
    [caption] = _caption_passages(tmp_path / "beside.pdf")
    assert caption.figure is not None and _covers(caption.figure.rect, plot)
    assert caption.figure.rect[2] < 345  # the caption itself is not part of the figure


def test_two_figures_side_by_side_each_get_their_own(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    left, right = pymupdf.Rect(80, 100, 290, 260), pymupdf.Rect(325, 100, 535, 260)
    figure_labels(page, left)
    figure_labels(page, right)
    # Two columns, as in a paper: each caption in its own (captions set on one baseline read as one line).
    page.insert_textbox(pymupdf.Rect(66, 280, 296, 320), "Figure 1. The wild type, grown in rich medium.", fontsize=8)
    page.insert_textbox(pymupdf.Rect(320, 268, 550, 320), "Figure 2. The mutant, grown in rich medium.", fontsize=8)
    _body(page, 330, x=66, width=230)
    _body(page, 330, x=320, width=230)
    document.save(tmp_path / "pair.pdf")
    regions = {p.text.split(".")[0]: p.figure for p in _caption_passages(tmp_path / "pair.pdf")}
    assert regions["Figure 1"] is not None and regions["Figure 2"] is not None
    assert _covers(regions["Figure 1"].rect, left) and regions["Figure 1"].rect[2] < right.x0
    assert _covers(regions["Figure 2"].rect, right) and regions["Figure 2"].rect[0] > left.x1


def test_a_figure_without_a_caption_is_no_figure_passage(tmp_path: Path) -> None:
    """Nothing names an uncaptioned figure, so nothing can cite it: its labels stay figure text, with no region."""
    document = pymupdf.open()
    page = document.new_page()
    figure_labels(page, pymupdf.Rect(100, 100, 300, 300))
    figure_labels(page, pymupdf.Rect(340, 100, 540, 300))
    document.save(tmp_path / "uncaptioned.pdf")
    passages = parse_pdf(tmp_path / "uncaptioned.pdf").passages
    assert passages and all(p.figure is None for p in passages)
    assert any(p.kind == "figure" and "Wild type" in p.text for p in passages)


def _answer_citing(caption: Passage, doc_id: str) -> Answer:
    quote = caption.text[:40]
    reference = Reference(1, caption.id, doc_id, LIBRARY_SOURCE, _bib(), caption.text, caption.page_start)
    sentence = AnswerSentence("The mutant grows more slowly [1].",
                              (Citation(1, caption.id, quote, 0, len(quote), 0.9),), supported=True)
    return Answer("How does the mutant grow?", sentence.text, (sentence,), (reference,), AnswerMode.WRITTEN,
                  papers=(PaperReference(1, doc_id, LIBRARY_SOURCE, _bib(), (caption.page_start,), (caption.id,)),))


def _bib():
    from engine.bibliography import Bibliography

    return Bibliography(title="Growth of a mutant")


def test_the_region_is_stored_and_the_html_export_pictures_the_cited_figure(tmp_path: Path) -> None:
    path, plot = vector_figure_pdf(tmp_path / "vector.pdf")
    with Engine(tmp_path / "home") as engine:
        list(engine.add_documents([path]))
        document = engine.documents()[0]
        [caption] = [p for p in engine.passages(document.id) if p.kind == "caption"]
        assert caption.figure is not None and _covers(caption.figure.rect, plot)
        assert engine.passage(caption.id).figure == caption.figure
        answer = _answer_citing(caption, document.id)
        pictures = engine.figure_images(answer)
    assert list(pictures) == [caption.id]
    markup = to_html(answer, figures=pictures)
    found = re.search(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', markup)
    assert found is not None
    assert markup.index("grows more slowly") < found.start() < markup.index("References")
    picture = pymupdf.Pixmap(base64.b64decode(found.group(1)))
    assert 0 < picture.width <= 320 and picture.height > 0
    assert "data:image" not in to_html(answer)  # without pictures, the export is as before


@pytest.mark.slow
def test_a_real_papers_figure_is_found(papers_dir: Path) -> None:
    """S2ORC's Figure 1 on its first page, as read off the rendered page."""
    captions = [p for p in parse_pdf(papers_dir / "2020.acl-main.447.pdf").passages
                if p.kind == "caption" and p.text.startswith("Figure 1")]
    assert captions and captions[0].figure is not None and captions[0].figure.page == 1
    x0, y0, x1, y1 = captions[0].figure.rect
    assert abs(x0 - 306) < 8 and abs(y0 - 222) < 8 and abs(x1 - 527) < 8 and abs(y1 - 342) < 8


def test_a_quoted_sentence_that_names_a_figure_shows_it(tmp_path: Path) -> None:
    """The digest quotes running text, never captions: "As Figure 1 shows, ..." brings Figure 1's picture along."""
    path, _ = vector_figure_pdf(tmp_path / "vector.pdf")
    with Engine(tmp_path / "home") as engine:
        list(engine.add_documents([path]))
        document = engine.documents()[0]
        body = next(p for p in engine.passages(document.id) if p.kind == "text")
        said = "As Figure 1 shows, the mutant strain grew more slowly than the wild type."
        reference = Reference(1, body.id, document.id, LIBRARY_SOURCE, _bib(), body.text, body.page_start)
        naming = AnswerSentence(f"“{said}” [1]", (Citation(1, body.id, body.text[:40], 0, 40, 0.9),), supported=True)
        plain = AnswerSentence("“The mutant strain grew more slowly.” [1]",
                               (Citation(1, body.id, body.text[:40], 0, 40, 0.9),), supported=True)
        answer = Answer("How does the mutant grow?", "", (naming, plain), (reference,), AnswerMode.DIGEST,
                        papers=(PaperReference(1, document.id, LIBRARY_SOURCE, _bib(), (1,), (body.id,)),))
        pictures = engine.figure_images(answer)
        other = Answer("How does the mutant grow?", "", (naming,), (reference,), AnswerMode.DIGEST,
                       papers=answer.papers)
        assert list(engine.figure_images(replace(other, sentences=(replace(naming, text=naming.text.replace(
            "Figure 1", "Figure 7")),)))) == []  # a figure the paper does not have: no picture
    assert list(pictures) == [f"{body.id}#figure-1"]
    twice = replace(answer, sentences=(naming, plain, naming))
    markup = to_html(twice, figures=pictures)
    assert markup.count("<img") == 1  # once an answer, after the first sentence that names it
    assert markup.index("As Figure 1 shows") < markup.index("<img") < markup.index("grew more slowly.”")
