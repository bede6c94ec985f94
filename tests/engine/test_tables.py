"""Tables as tables: rows, cells and boxes from real PDFs written with PyMuPDF, a real corpus table,
the catalog round trip, and bad input (a 1,000-row table, a page of ruling lines, unreadable cells)."""

from __future__ import annotations

import re
from pathlib import Path

import pymupdf
import pytest

from engine.ingest import parse_pdf
from engine.ingest.layout import layout_page
from engine.ingest.regions import classify_blocks
from engine.ingest.tables import TABLE_ROW, find_tables
from engine.service import Engine
from tests.fixtures.table_pdfs import (
    NOTES,
    RULED,
    UNRULED,
    grid_only_pdf,
    long_table_pdf,
    table_with_notes_pdf,
    tables_and_figure_pdf,
)


def rows_of(passages: list) -> list:
    return [p for p in passages if p.kind == TABLE_ROW]


def words_in(path: Path, page_number: int, text: str) -> pymupdf.Rect:
    """Where PyMuPDF itself finds ``text`` on the page: what a cell's box must hold."""
    with pymupdf.open(path) as document:
        found = document[page_number - 1].search_for(text)
    assert found, text
    return found[0]


def test_a_ruled_and_an_unruled_table_become_rows_with_their_headers(tmp_path: Path) -> None:
    path = tables_and_figure_pdf(tmp_path / "tables.pdf")
    rows = rows_of(parse_pdf(path).passages)
    assert [p.text for p in rows] == [
        "Table 1, row SciBERT: co-view MAP 79.7, co-read MAP 80.7",
        "Table 1, row SPECTER: co-view MAP 83.8, co-read MAP 84.5",
        "Table 1, row Citeomatic: co-view MAP 81.1, co-read MAP 80.5",
        "Table 2, row 10 mg: Patients 42, Response 31%",
        "Table 2, row 20 mg: Patients 40, Response 48%",
        "Table 2, row 40 mg: Patients 38, Response 61%",
    ]
    first = rows[0].table
    assert first is not None and first.label == "Table 1" and first.table == 0
    assert first.caption == "Table 1: Citation prediction scores of the three models."
    assert first.headers == tuple(RULED[0])
    assert rows[3].table is not None and rows[3].table.headers == tuple(UNRULED[0]) and rows[3].table.table == 1
    # Every cell's box holds its text where PyMuPDF finds it on the page.
    for passage, expected in zip(rows, RULED[1:] + UNRULED[1:], strict=True):
        assert passage.table is not None
        assert [cell.text for cell in passage.table.cells] == expected
        for cell in passage.table.cells:
            found = words_in(path, 1, cell.text)
            assert pymupdf.Rect(cell.rect).intersects(found)
        assert len(passage.rects) == len(expected)  # the passage outlines its cells, one box each
    assert rows[1].table is not None and rows[1].table.pairs() == [("co-view MAP", "83.8"), ("co-read MAP", "84.5")]


def test_a_quote_of_one_value_outlines_that_cell_only(tmp_path: Path) -> None:
    passage = rows_of(parse_pdf(tables_and_figure_pdf(tmp_path / "tables.pdf")).passages)[1]
    start = passage.text.index("co-read MAP 84.5")
    rects = passage.rects_for_span(start, start + len("co-read MAP 84.5"))
    assert passage.table is not None
    cell = next(c for c in passage.table.cells if c.text == "84.5")
    assert [r.rect for r in rects] == [cell.rect]


def test_the_table_text_is_not_kept_twice_and_the_figure_stays_a_figure(tmp_path: Path) -> None:
    parsed = parse_pdf(tables_and_figure_pdf(tmp_path / "tables.pdf"))
    everything = " ".join(p.text for p in parsed.passages if p.kind not in (TABLE_ROW, "caption"))
    assert "83.8" not in everything and "SPECTER" not in everything
    figure = " ".join(p.text for p in parsed.passages if p.kind == "figure")
    assert "Time (h)" in figure and "Mutant" in figure
    assert any(p.kind == "caption" and p.text.startswith("Figure 1:") for p in parsed.passages)


def test_rows_and_cells_survive_the_catalog(tmp_path: Path) -> None:
    path = tables_and_figure_pdf(tmp_path / "tables.pdf")
    parsed = rows_of(parse_pdf(path).passages)
    with Engine(home=tmp_path / "home") as engine:
        [result] = list(engine.add_documents([path]))
        stored = rows_of(engine.passages(result.doc_id))
        assert [(p.text, p.table, p.rects) for p in stored] == [(p.text, p.table, p.rects) for p in parsed]
        assert [p.kind for p in stored] == [TABLE_ROW] * 6
        # The row is what keyword search finds for the value's words.
        hits = engine.library.query("SELECT p.text FROM passages_fts f JOIN passages p ON p.rowid = f.rowid "
                                    "WHERE passages_fts MATCH 'SPECTER'")
        assert ("Table 1, row SPECTER: co-view MAP 83.8, co-read MAP 84.5",) in hits


def test_a_real_corpus_table(papers_dir: Path) -> None:
    rows = rows_of(parse_pdf(papers_dir / "2020.acl-main.447.pdf").passages)
    texts = [p.text for p in rows]
    assert "Table 3, row Papers w/ PDF: 28.9M (35.6%)" in texts
    assert "Table 4, row Paragraphs (body): GROBID 9.9, LATEX 93.3*" in texts
    row = next(p for p in rows if p.text.startswith("Table 6, row Paper clustering"))
    assert row.page_start == 6 and row.table is not None and row.table.headers[1:] == ("Title", "Authors")


# --- bad input ---------------------------------------------------------------------------


def test_a_table_of_a_thousand_rows_over_many_pages_keeps_every_value(tmp_path: Path) -> None:
    parsed = parse_pdf(long_table_pdf(tmp_path / "long.pdf", 1000))
    text = " ".join(p.text for p in parsed.passages)
    assert all(re.search(rf"\bS{n}\b", text) for n in range(0, 1000, 37))
    rows = rows_of(parsed.passages)
    # The first page has its caption and becomes rows; later pages have none and stay table text.
    assert rows and all(p.page_start == 1 for p in rows)
    assert rows[0].text == "Table 1, row S0: Mass 0.0, Length 3.0"


def test_a_page_of_ruling_lines_with_no_text_keeps_its_prose(tmp_path: Path) -> None:
    parsed = parse_pdf(grid_only_pdf(tmp_path / "grid.pdf"))
    assert not rows_of(parsed.passages)
    assert "held-out papers" in " ".join(p.text for p in parsed.passages if p.kind == "text")


def _word(x: float, y: float, text: str, block: int, line: int) -> tuple:
    return (x, y, x + 6 * len(text), y + 8, text, block, line, 0)


@pytest.mark.parametrize("unreadable", [False, True])
def test_cells_in_a_font_without_a_unicode_map_stay_text(unreadable: bool) -> None:
    # The words as PyMuPDF gives them: a caption, then a header and three rows of three cells.
    garbled = "\ufffd\ufffd\ufffd" if unreadable else None
    words = [_word(72, 100, "Table", 0, 0), _word(110, 100, "1:", 0, 0), _word(130, 100, "Scores.", 0, 0)]
    cells = [["Model", "MAP", "nDCG"], ["A", "79.7", "80.7"], ["B", "83.8", "84.5"], ["C", "81.1", "80.5"]]
    for row, texts in enumerate(cells):
        for col, text in enumerate(texts):
            words.append(_word(72 + 120 * col, 120 + 12 * row, garbled if garbled and row else text, 1 + col, row))
    words.sort(key=lambda word: (word[5], word[6]))  # PyMuPDF gives them block by block
    layout = layout_page(1, 612, 792, words, classify_blocks)
    found = find_tables(layout)
    if unreadable:
        assert found == []
    else:
        assert [[cell.text for cell in row] for row in found[0].rows] == cells[1:]


def test_a_page_turned_by_rotate_keeps_its_tables(tmp_path: Path) -> None:
    # A landscape table page is often an upright page with /Rotate 90: its words come in the unrotated
    # page's coordinates, and its tables must be read in those.
    with pymupdf.open(tables_and_figure_pdf(tmp_path / "upright.pdf")) as document:
        document[0].set_rotation(90)
        document.save(tmp_path / "turned.pdf")
    turned = [p.text for p in rows_of(parse_pdf(tmp_path / "turned.pdf").passages)]
    upright = [p.text for p in rows_of(parse_pdf(tmp_path / "upright.pdf").passages)]
    assert turned == upright and "Table 2, row 20 mg: Patients 40, Response 48%" in turned


def test_the_facade_gives_a_files_paper_and_its_tables(tmp_path: Path) -> None:
    path = tables_and_figure_pdf(tmp_path / "tables.pdf")
    with Engine(home=tmp_path / "home") as engine:
        [result] = list(engine.add_documents([path]))
        document = engine.document_at(path)
        assert document is not None and document.id == result.doc_id
        assert engine.document_at(tmp_path / "elsewhere.pdf") is None
        tables = engine.tables(result.doc_id)
        assert [(t.label, t.page, t.headers) for t in tables] == [("Table 1", 1, tuple(RULED[0])),
                                                                  ("Table 2", 1, tuple(UNRULED[0]))]
        assert [list(row) for row in tables[0].rows] == RULED[1:]


def test_a_digest_citing_a_row_for_the_cell_asked_outlines_that_cell_and_the_rows_name(tmp_path: Path) -> None:
    from engine.embed import HashingEmbedder
    from engine.request import AskRequest, RequestOptions

    path = tables_and_figure_pdf(tmp_path / "tables.pdf")
    with Engine(home=tmp_path / "home") as engine:
        engine.__dict__["embedder"] = HashingEmbedder()
        engine.__dict__["support_embedder"] = HashingEmbedder()
        [result] = list(engine.add_documents([path]))
        row = next(p for p in rows_of(engine.passages(result.doc_id)) if "SPECTER" in p.text)
        assert row.table is not None
        answer = engine.ask(AskRequest("What is the co-read MAP of SPECTER?", mode="digest",
                                       options=RequestOptions(save=False)))
        cited = [c for s in answer.sentences for c in s.citations if c.passage_id == row.id]
        assert cited, [s.text for s in answer.sentences]
        name, value = (next(c.rect for c in row.table.cells if c.text == text) for text in ("SPECTER", "84.5"))
        # The quote is the whole row; what it cites, and the viewer outlines, is the row's name and the asked cell.
        assert cited[0].quote == row.text
        assert [r.rect for r in cited[0].rects] == [name, value]


# --- footnotes ------------------------------------------------------------------------------


def test_a_tables_footnotes_are_tied_to_it_and_kept_out_of_the_prose(tmp_path: Path) -> None:
    parsed = parse_pdf(table_with_notes_pdf(tmp_path / "notes.pdf"))
    rows = rows_of(parsed.passages)
    first = [p for p in rows if p.table is not None and p.table.table == 0]
    assert [p.text for p in first][-1] == "Table 1, row 20 mg: Patients 40, Response 48%a"
    assert all(p.table is not None and p.table.notes == NOTES for p in first)
    # The notes are searchable as the table's legend (a caption passage), never spliced into the prose.
    captions = [p.text for p in parsed.passages if p.kind == "caption"]
    assert " ".join(NOTES) in captions
    prose = " ".join(p.text for p in parsed.passages if p.kind == "text")
    assert "placebo (p < 0.05)" not in prose and "two assessors" not in prose
    # Prose under a table at a paragraph's distance is not a note, though it opens with "a".
    second = [p for p in rows if p.table is not None and p.table.table == 1]
    assert second and all(p.table is not None and p.table.notes == () for p in second)
    assert "a second trial is under way at both sites" in prose


def test_a_tables_notes_survive_the_catalog_and_print_under_its_markdown(tmp_path: Path) -> None:
    from engine.render.tables import table_csv, table_markdown

    path = table_with_notes_pdf(tmp_path / "notes.pdf")
    with Engine(home=tmp_path / "home") as engine:
        [result] = list(engine.add_documents([path]))
        table = engine.tables(result.doc_id)[0]
    assert table.notes == NOTES
    markdown = table_markdown(table)
    assert markdown.rstrip().endswith(NOTES[0] + "  \n" + NOTES[1])
    assert "assessors" not in table_csv(table)  # CSV holds cells only


def test_a_real_corpus_tables_footnote(papers_dir: Path) -> None:
    parsed = parse_pdf(papers_dir / "2206.10883v3.pdf")
    row = next(p for p in rows_of(parsed.passages) if p.table is not None and p.table.label == "Table 2")
    assert row.table is not None and len(row.table.notes) == 1
    assert row.table.notes[0].startswith("1 The BookSum number might be slightly different")
    prose = " ".join(p.text for p in parsed.passages if p.kind == "text")
    assert "BookSum number might be slightly different" not in prose
