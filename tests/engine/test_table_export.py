"""A paper's tables exported as CSV and Markdown: from the catalog's rows, and through `quire library show --tables`."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.render.tables import DocumentTable, document_tables, find_table, table_csv, table_markdown
from engine.service import Engine
from tests.fixtures.table_pdfs import RULED, UNRULED, tables_and_figure_pdf


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("tables")
    path = tables_and_figure_pdf(folder / "tables.pdf")
    with Engine(home=folder / "home") as engine:
        [result] = list(engine.add_documents([path]))
    return folder / "home", result.doc_id


def test_the_stored_rows_give_back_each_table_with_its_headers(library: tuple[Path, str]) -> None:
    home, doc_id = library
    with Engine(home=home) as engine:
        tables = document_tables(engine.passages(doc_id))
    assert [(t.label, t.page) for t in tables] == [("Table 1", 1), ("Table 2", 1)]
    assert list(csv.reader(io.StringIO(table_csv(tables[0])))) == RULED
    assert list(csv.reader(io.StringIO(table_csv(tables[1])))) == UNRULED
    markdown = table_markdown(tables[1])
    assert markdown.splitlines()[0] == "**Table 2 (page 1)** Table 2: Response by dose in the trial."
    assert "| Dose | Patients | Response |" in markdown and "| 20 mg | 40 | 48% |" in markdown
    assert find_table(tables, "table 2") is tables[1] and find_table(tables, "2") is tables[1]
    assert find_table(tables, "7") is None


def test_the_cli_prints_one_table_as_csv(library: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    home, doc_id = library
    assert main(["--home", str(home), "library", "show", doc_id[:8], "--tables", "csv", "--table", "Table 1"]) == 0
    assert list(csv.reader(io.StringIO(capsys.readouterr().out))) == RULED


def test_the_cli_prints_every_table_as_markdown(library: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    home, doc_id = library
    assert main(["--home", str(home), "library", "show", doc_id, "--tables"]) == 0
    out = capsys.readouterr().out
    assert "| SPECTER | 83.8 | 84.5 |" in out and "| 40 mg | 38 | 61% |" in out


def test_an_unknown_table_names_the_tables_there_are(library: tuple[Path, str],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    home, doc_id = library
    assert main(["--home", str(home), "library", "show", doc_id, "--table", "9"]) == 1
    err = capsys.readouterr().err
    assert "no table '9'" in err and "its tables: Table 1, Table 2" in err


def test_csv_cells_cannot_run_as_formulas_but_numbers_stay_numbers() -> None:
    table = DocumentTable(0, "Table 1", "", 3, ("Model", "Delta"), (("=HYPERLINK(1)", "-0.344"), ("@x", "+1.5%")))
    rows = list(csv.reader(io.StringIO(table_csv(table))))
    assert rows[1:] == [["'=HYPERLINK(1)", "-0.344"], ["'@x", "+1.5%"]]
    assert table_markdown(DocumentTable(0, "", "a | b", 2, ("x|y",), (("1",),))).splitlines()[2] == "| x\\|y |"
