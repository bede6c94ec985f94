"""Text as printed: micro signs read as "m", lost drop caps and words run together, before and after
the repairs of engine/ingest/as_printed.py, over the 66 real papers (24 corpus, 42 LitQA2 dev).

Each page is read as the ingest reads it (PyMuPDF's words, the font repairs of engine/ingest/glyphs.py);
"before" is the same code with this change's repairs switched off (the fonts it added to the table, the
micro-sign rule, the splitting of run-together words, the drop caps), "after" the code as it is.

- **μ read as m**: a lone "m" set in a font of its own between a number and a unit ("10-[m]m",
  "200 [m]g/ml"), in any font but a math italic one; counted where the repaired text still says "m".
- **lost drop caps**: a single capital over 2.5 times the page's usual word height with a word that
  starts with a small letter just right of its top; counted while it is still a word of its own.
- **words run together**: a run of 14 or more letters that is no English word but reads as two or
  more common ones ("throughputmicrofluidicbindingassays"). Real compounds ("autoregulation") count
  too, so this is an upper bound; the change is what it measures.

Usage:

    python benchmarks/printed_text.py [--json benchmarks/results/printed_text.json] [--limit N] [-v]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine  # noqa: F401 - before PyMuPDF, which loads ONNX Runtime: engine switches off its telemetry first

# isort: split
import pymupdf

from benchmarks.common import emit
from engine.ingest import as_printed, glyphs
from engine.ingest.pdf import TEXT_FLAGS
from engine.ingest.wordlist import english_counts

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
PAPERS = [*sorted((SHARED / "corpus" / "papers").glob("*.pdf")),
          *sorted((SHARED / "eval" / "litqa2-dev" / "pdfs").glob("*.pdf"))]
ADDED_FONTS = {"AdvP7DA6": None, "AdvTTcd7bcd39": None, "AdvPS7DA6": {"$": "≥", "#": "≤"}}
_MATH_ITALIC = re.compile(r"^(?:CMMI|MT2MI|.*(?:Italic|\.I$|-It$|MathItalic))", re.I)
_NUMBER = re.compile(r"\d[\s\u00a0\-\u2010\u2013]*$")
_UNIT = re.compile(r"^(?:mol|Pa|[mMgLlsAV])(?![a-z])")
_RUN = re.compile(r"[^\W\d_]{14,}")
_COMMON = 1000


class Switch:
    """The change's repairs off (``before``) or on, swapped in the modules the ingest calls."""

    def __init__(self) -> None:
        self.table = dict(glyphs._BY_FONT)
        self.micro = glyphs.micro_fixes

    def off(self) -> None:
        for font, fixes in ADDED_FONTS.items():
            if fixes is None:
                glyphs._BY_FONT.pop(font, None)
            else:
                glyphs._BY_FONT[font] = fixes
        glyphs.micro_fixes = lambda spans, fonts, fixes: fixes  # type: ignore[assignment]

    def on(self) -> None:
        glyphs._BY_FONT.clear()
        glyphs._BY_FONT.update(self.table)
        glyphs.micro_fixes = self.micro  # type: ignore[assignment]


def read_words(page: Any, textpage: Any, page_dict: dict[str, Any], repaired: bool) -> list[Any]:
    words = page.get_text("words", textpage=textpage)
    words = glyphs.repair_words(page, textpage, words, page_dict)
    if repaired:
        words = as_printed.attach_drop_caps(words)
    return words


def micro_suspects(page_dict: dict[str, Any]) -> list[tuple[str, str]]:
    """(font, context) of each lone "m" between a number and a unit that the font repairs leave an "m"."""
    found = []
    for block in page_dict.get("blocks", []):
        for line in block.get("lines", []):
            spans = line.get("spans", [])
            fonts = [glyphs.base_font_name(span.get("font", "")) for span in spans]
            fixes = glyphs.micro_fixes(spans, fonts, [glyphs.font_fixes(font) for font in fonts])
            for index in range(1, len(spans) - 1):
                text = spans[index]["text"]
                if text.strip() != "m" or _MATH_ITALIC.match(fonts[index]) or fonts[index] == fonts[index + 1]:
                    continue
                if (_NUMBER.search(spans[index - 1]["text"] + text[:-1]) and _UNIT.match(spans[index + 1]["text"])
                        and fixes[index].get("m", "m") == "m"):
                    context = spans[index - 1]["text"][-12:] + "[m]" + spans[index + 1]["text"][:8]
                    found.append((fonts[index], context))
    return found


def drop_caps(words: list[Any]) -> list[str]:
    """The drop caps still read as words of their own, with the word beside them."""
    if not words:
        return []
    heights = sorted(word[3] - word[1] for word in words)
    typical = heights[len(heights) // 2]
    found = []
    for index, word in enumerate(words):
        if len(word[4]) == 1 and word[4].isupper() and word[3] - word[1] >= as_printed.DROP_CAP_HEIGHT * typical > 0:
            target = as_printed._capped_word(words, index, typical)
            if target is not None:
                found.append(f"{word[4]} | {words[target][4]}")
    return found


@cache
def _segments(run: str) -> bool:
    """True when ``run`` (lower case) reads as two or more common English words."""
    counts = english_counts()
    ends = {0}
    for end in range(1, len(run) + 1):
        if any(start in ends and counts.get(run[start:end], 0) > _COMMON and end - start >= 2
               and (start, end) != (0, len(run)) for start in range(max(0, end - 20), end)):
            ends.add(end)
    return len(run) in ends


def run_together(words: list[Any]) -> list[str]:
    counts = english_counts()
    found = []
    for word in words:
        for run in _RUN.findall(word[4]):
            low = run.lower()
            if low not in counts and not run.isupper() and _segments(low):
                found.append(run)
    return found


def measure(papers: list[Path], verbose: bool) -> dict[str, Any]:
    switch = Switch()
    totals = {side: Counter() for side in ("before", "after")}
    per_paper: dict[str, dict[str, Any]] = {}
    examples: dict[str, list[str]] = {"micro": [], "drop_caps": [], "run_together": []}
    for pdf in papers:
        row: dict[str, Any] = {}
        with pymupdf.open(pdf) as document:
            for page in document:
                textpage = page.get_textpage(flags=TEXT_FLAGS)
                page_dict = page.get_text("dict", textpage=textpage)
                for side in ("before", "after"):
                    (switch.off if side == "before" else switch.on)()
                    words = read_words(page, textpage, page_dict, side == "after")
                    micro, caps, runs = micro_suspects(page_dict), drop_caps(words), run_together(words)
                    counts = {"micro_as_m": len(micro), "lost_drop_caps": len(caps), "run_together": len(runs)}
                    totals[side].update(counts)
                    for key, value in counts.items():
                        row[f"{key}_{side}"] = row.get(f"{key}_{side}", 0) + value
                    if side == "after":
                        examples["micro"] += [f"{pdf.name} p{page.number + 1} {f}: {c}" for f, c in micro]
                        examples["drop_caps"] += [f"{pdf.name} p{page.number + 1}: {c}" for c in caps]
                        examples["run_together"] += [f"{pdf.name} p{page.number + 1}: {r}" for r in runs]
        switch.on()
        per_paper[pdf.name] = {key: value for key, value in row.items() if value}
        if verbose:
            print(pdf.name, per_paper[pdf.name], file=sys.stderr)
    return {"papers": len(papers), "before": dict(totals["before"]), "after": dict(totals["after"]),
            "per_paper": {name: row for name, row in per_paper.items() if row},
            "remaining_examples": {key: values[:60] for key, values in examples.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=0, help="only the first N papers (a quick look)")
    parser.add_argument("--only", default="", help="only papers whose file name contains this")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    papers = [pdf for pdf in PAPERS if args.only in pdf.name]
    emit(measure(papers[:args.limit] if args.limit else papers, args.verbose), args.json)


if __name__ == "__main__":
    main()
