"""What `quire check` prints for a passage: the quote as a reader sees it, footnote numbers left out."""

from __future__ import annotations

import pytest

from engine.cite.claims import CheckedPassage
from engine.cli.check_commands import _print_passage, passage_json


def test_a_glued_footnote_number_is_printed_without_and_kept_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    quote = "12For SGC, we remove development and test set citations and co-citations during training."
    read = CheckedPassage("unsupported", 0.0, 0.0, quote, 40, 40 + len(quote), "p1", "d1", "library",
                          "SPECTER: Document-level Representation Learning", 6,
                          "the passage does not give the number 10")
    _print_passage(read)
    printed = capsys.readouterr().out
    assert "“For SGC, we remove" in printed and "12For" not in printed
    assert "not stated here: the passage does not give the number 10" in printed
    assert passage_json(read)["quote"] == quote  # the machine-readable span is the passage's text as it is
