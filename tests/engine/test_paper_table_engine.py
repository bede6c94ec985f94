"""The table of papers through the Engine and `quire table`: real PDFs, real search within each paper."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from fixtures.pdfs import text_pdf

from engine.cli.main import main
from engine.service import Engine
from engine.table_types import TableColumn

SPECTER = ("SPECTER trains scientific document embeddings with a triplet loss over citations between papers.\n"
           "The training data are 146K query papers sampled from the Semantic Scholar corpus.\n"
           "Our main result is that SPECTER outperforms every baseline on the SciDocs benchmark.")
SCINCL = ("SciNCL trains scientific document embeddings with neighbourhood contrastive learning on citations.\n"
          "The training data are 684K triplets sampled from the S2ORC citation graph of papers.\n"
          "The main finding is that sampling from citation graph neighbours beats SPECTER on SciDocs.")
BREAD = ("Sourdough bread rises because wild yeast ferments the flour and water mixture overnight.\n"
         "A longer proof gives the crumb an open structure and a sour taste that bakers prize.")
QUESTION = "How are scientific document embeddings trained?"


@pytest.fixture
def library(engine: Engine, tmp_path: Path) -> dict[str, str]:
    ids = {}
    for name, text in (("specter", SPECTER), ("scincl", SCINCL), ("bread", BREAD)):
        result = next(iter(engine.add_documents([text_pdf(tmp_path / f"{name}.pdf", [text])])))
        ids[name] = result.doc_id
    return ids


def test_rows_are_the_papers_that_address_the_question_with_quotes_on_the_page(
        engine: Engine, library: dict[str, str]) -> None:
    table = engine.table(QUESTION, [TableColumn("Answer", ""), TableColumn("Data", "What training data is used?")],
                         mode="quotes")
    assert {row.doc_id for row in table.rows} == {library["specter"], library["scincl"]}
    for row in table.rows:
        data = row.cells[1]
        assert "training data" in data.text and data.page == 1 and data.rects  # highlightable in the viewer
        assert engine.passage(data.passage_id).text[data.quote_start:data.quote_end] == data.quote


def test_a_scope_with_no_paper_gives_an_empty_table_not_an_error(engine: Engine) -> None:
    table = engine.table(QUESTION, mode="quotes")
    assert table.rows == () and table.papers_in_scope == 0 and "No paper is in scope" in table.notice


def test_the_scope_limits_the_rows(engine: Engine, library: dict[str, str]) -> None:
    table = engine.table(QUESTION, doc_ids=[library["scincl"]], mode="quotes")
    assert [row.doc_id for row in table.rows] == [library["scincl"]] and table.papers_in_scope == 1


def test_quire_table_prints_csv_with_a_quote_and_page_per_field(
        engine: Engine, library: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    home = str(engine.paths.home)
    engine.close()
    code = main(["--home", home, "table", QUESTION, "--quotes", "--csv",
                 "--column", "Data=What training data is used?"])
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert code == 0
    assert rows[0] == ["paper", "authors", "year", "Data", "Data quote", "Data page"]
    assert len(rows) == 3 and all(row[5] == "1" for row in rows[1:])


@pytest.mark.slow
def test_cells_written_by_the_bundled_model_are_backed_by_their_quote(engine: Engine,
                                                                        library: dict[str, str]) -> None:
    """With a real (tiny) writer, a written cell is kept only with a quote of its own paper behind it."""
    from engine.models import default_lm_path

    if default_lm_path() is None:
        pytest.skip("the bundled SmolLM2 is not installed")
    table = engine.table(QUESTION, [TableColumn("Answer", ""), TableColumn("Data", "What training data is used?")],
                         doc_ids=[library["specter"]], mode="write")
    assert table.model and len(table.rows) == 1
    for cell in table.rows[0].cells:
        assert cell.stated  # written, or the quote it fell back to
        assert engine.passage(cell.passage_id).doc_id == library["specter"]
        assert engine.passage(cell.passage_id).text[cell.quote_start:cell.quote_end] == cell.quote


def test_a_quote_on_the_second_page_of_a_passage_shows_that_page_everywhere(engine: Engine, tmp_path: Path) -> None:
    # One short passage runs over the page break: it starts on page 1, the data sentence is on page 2.
    first = ("SPECTER trains scientific document embeddings with a triplet loss over citations between papers.\n"
             "Author manuscript; available in PMC 2024 November 06.")
    second = ("The training data are 146K query papers sampled from the Semantic Scholar corpus.\n"
              "Our main result is that SPECTER outperforms every baseline on the SciDocs benchmark.")
    doc_id = next(iter(engine.add_documents([text_pdf(tmp_path / "split.pdf", [first, second])]))).doc_id
    table = engine.table(QUESTION, [TableColumn("Data", "What training data is used?")], doc_ids=[doc_id],
                         mode="quotes")
    [row] = table.rows
    [data] = row.cells
    passage = engine.passage(data.passage_id)
    assert "146K query papers" in data.quote and passage.page_start == 1
    assert data.page == 2 and {rect.page for rect in data.rects} == {2}  # where the viewer opens it
    from engine.render.paper_table import to_csv, to_markdown
    assert "(p. 2)" in to_markdown(table)
    [csv_row] = list(csv.DictReader(io.StringIO(to_csv(table))))
    assert csv_row["Data page"] == "2"
    for cell in (c for r in table.rows for c in r.cells):  # page furniture never enters a cell
        assert "Author manuscript" not in cell.text and "Author manuscript" not in cell.quote


@pytest.mark.slow
def test_a_real_paper_gets_its_row_before_its_passages_are_embedded(engine: Engine, papers_dir: Path) -> None:
    # Keyword search alone ranks SPECTER's table rows (short, full of its title's words) above its prose;
    # the row's cells quote running text, so the table must look past them.
    added = next(iter(engine.add_documents([papers_dir / "2020.acl-main.207.pdf"])))
    assert any(p.kind == "table row" for p in engine.passages(added.doc_id))
    table = engine.table("How does SPECTER use citations?", mode="quotes")
    assert [row.doc_id for row in table.rows] == [added.doc_id]
    answer = table.rows[0].cells[0]
    assert engine.passage(answer.passage_id).kind == "text" and "citation" in answer.quote.lower()
