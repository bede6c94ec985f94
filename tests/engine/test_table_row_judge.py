"""The judge reads a table row as header-value pairs: the named cell supports, another column's number does not."""

from __future__ import annotations

from engine.cite.judge import default_judge
from engine.cite.table_rows import other_column
from engine.text.table_rows import read_row

ROW = "Table 3, row SPECTER: CLS 84.2, USR 88.4, CITE 91.5, REC 36.9, All 80.0"
METRICS = "Table 4, row Random: Classification MAG F1 4.8, MeSH F1 9.4, Ranking MAP 25.2"


def test_a_row_reads_back_as_its_name_and_its_cells() -> None:
    row = read_row(ROW)
    assert row is not None
    assert row.stub == "SPECTER" and row.prefix == "Table 3, row SPECTER: "
    assert [row.cell_text(i) for i in range(len(row.cells))] == ["CLS 84.2", "USR 88.4", "CITE 91.5", "REC 36.9",
                                                                  "All 80.0"]
    assert read_row("SPECTER is trained with a triplet loss.") is None
    assert read_row("Table 3, row SPECTER") is None  # a row of its name alone has no cells


def test_a_number_from_another_column_is_caught_and_the_right_one_passes() -> None:
    assert other_column("The USR of SPECTER is 84.2.", ROW) is not None
    assert other_column("The USR of SPECTER is 88.4.", ROW) is None
    assert other_column("The All of SPECTER is 84.2.", ROW) is not None  # a header that is a function word
    assert other_column("SPECTER scores 88.4 on USR and 84.2 on CLS.", ROW) is None  # each number where it says
    assert other_column("SPECTER is fast at 84.2.", ROW) is None  # names no column: nothing to hold it against
    # "MAG F1" matches its own cell better than "MeSH F1", which shares only "F1".
    assert other_column("The MAG F1 of Random is 9.4.", METRICS) is not None
    assert other_column("The MAG F1 of Random is 4.8.", METRICS) is None
    assert other_column("The USR of SPECTER is 84.2.", "SPECTER reaches CLS 84.2 and USR 88.4.") is None


def test_the_judge_supports_the_named_cell_and_quotes_that_cell_alone() -> None:
    judge = default_judge()
    true = judge.judge("The USR of SPECTER is 88.4.", ROW)
    assert true.verdict == "supported"
    assert true.quote == "USR 88.4"  # what the citation outlines: the cell, not the whole row
    wrong = judge.judge("The USR of SPECTER is 84.2.", ROW)
    assert wrong.verdict != "supported"


def test_a_claim_on_two_cells_is_judged_against_the_whole_row() -> None:
    judgement = default_judge().judge("SPECTER scores 88.4 on USR and 91.5 on CITE.", ROW)
    assert judgement.verdict == "supported"
    assert "88.4" in judgement.quote and "91.5" in judgement.quote
