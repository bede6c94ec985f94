"""The viewer outlines the region of a cited figure on its page."""

from __future__ import annotations

from pathlib import Path

import pymupdf
from pytestqt.qtbot import QtBot

from engine.ingest import parse_pdf
from ui.page_canvas import QUOTE_EDGE
from ui.pdf_viewer import PdfViewer


def test_a_cited_figure_caption_opens_with_its_figure_outlined(qtbot: QtBot, tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    page.draw_rect(pymupdf.Rect(150, 150, 420, 330), color=(0, 0, 0))
    page.draw_polyline([(160 + i * 25, 320 - (i * i) % 150) for i in range(10)], color=(0, 0, 1))
    page.insert_text((72, 360), "Figure 1. Growth of the mutant strain over time.", fontsize=8)
    path = tmp_path / "figure.pdf"
    document.save(path)
    [caption] = [p for p in parse_pdf(path).passages if p.kind == "caption"]
    assert caption.figure is not None

    viewer = PdfViewer()
    qtbot.addWidget(viewer)
    viewer.resize(900, 1000)
    assert viewer.show_passage(str(path), 1, caption.rects, caption.rects[:1], figure_rects=(caption.figure,))
    assert viewer.canvas.figure_rects == (caption.figure.rect,)
    image = viewer.canvas.grab().toImage()
    edge = viewer.canvas.widget_rect(caption.figure.rect)
    ratio = image.width() / max(viewer.canvas.width(), 1)
    # Along the outline's left edge the pixels take the outline's colour somewhere (it is dashed).
    x = int(edge.left() * ratio)
    colours = {image.pixelColor(x + dx, int(y * ratio)).name() for dx in (0, 1) for y in range(int(edge.top()),
                                                                                                int(edge.bottom()))}
    assert any(_near(name, QUOTE_EDGE.name()) for name in colours)

    viewer.open_document(str(path))  # a plain page shows no figure outline
    assert viewer.canvas.figure_rects == ()


def _near(name: str, target: str, slack: int = 40) -> bool:
    a = [int(name[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(target[i:i + 2], 16) for i in (1, 3, 5)]
    return all(abs(x - y) <= slack for x, y in zip(a, b, strict=True))
