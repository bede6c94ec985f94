"""The references save dialog: a typed suffix decides the format, else the chosen filter (whose suffix
is added, as not every platform's dialog adds it)."""

from __future__ import annotations

import pytest

from ui.reference_export import FILTERS, format_for

BIBTEX, RIS, CSL = FILTERS


@pytest.mark.parametrize(("path", "chosen", "expected"), [
    ("/tmp/refs.ris", BIBTEX, ("ris", "/tmp/refs.ris")),  # the typed suffix wins over the filter
    ("/tmp/refs.JSON", RIS, ("csl-json", "/tmp/refs.JSON")),
    ("/tmp/refs", CSL, ("csl-json", "/tmp/refs.json")),
    ("/tmp/refs.txt", RIS, ("ris", "/tmp/refs.txt.ris")),
    ("/tmp/refs", "", ("bibtex", "/tmp/refs.bib")),  # a dialog that reports no filter
])
def test_the_format_and_path_written(path: str, chosen: str, expected: tuple[str, str]) -> None:
    assert format_for(path, chosen) == expected
