"""Section headings that a PDF's text runs into the first sentence of their paragraph.

A heading has no full stop, so the sentence splitter reads "Training Data To train our model, we use
..." or "Statistical analysis\\nStatistical tests (t-tests) were performed ..." as one sentence, and a
quote would open with the heading. :func:`sentence_start` says where the sentence itself starts. Three
shapes are told apart from text alone (a heading's font is not kept in a passage):

- a heading in capitalised words, or with the small words of a title, before a word a sentence opens
  with and then a small letter ("Comparison with Task Specific Fine-Tuning While the fact that ...");
- a numbered heading in any case, before such a word ("3.1 Representing and manipulating visually-rich
  documents with magelib In this section, ...");
- a heading on a line of its own: a short line that ends without punctuation or a word that needs a
  next one ("of", "the"), followed by a line that opens with a capital ("Low-affinity ETS sites are
  necessary for tissue-specific expression\\nTo determine if ...").
"""

from __future__ import annotations

import re

# The small words of a title besides capitalised ones; "A" and "An" are not openers below, since "Region A
# consists of ..." and "Appendix A contains ..." name a thing, not a heading.
_HEADING_WORD = r"(?:[A-Z0-9][\w-]*|of|with|and|for|on|in|the|to|from|between|via|by|under|at|as|vs\.?)"
_OPENER_WORDS = ("To|We|In|The|Our|This|These|Here|For|Since|Using|As|After|While|Although|When|Unlike|Because|"
                 "Given|Following|Each|All|Most|Both|Despite|It|Its|There|Many|Several|Some")
_SENTENCE_OPENER = f"(?:{_OPENER_WORDS})"
_SECTION_NUMBER = r"\d+(?:\.\d+)*\.?\s"
_CAPITALISED = re.compile(r"(?:" + _SECTION_NUMBER + r")?[A-Z0-9][\w-]*\s(?:" + _HEADING_WORD + r"\s){0,6}"
                          r"(?=" + _SENTENCE_OPENER + r"\s[a-z])")
# With its section number a heading is one whatever its case: up to ten words, to the first opener.
_NUMBERED = re.compile(_SECTION_NUMBER + r"[A-Z][\w-]*(?:\s[\w-]+){0,9}?\s(?=" + _SENTENCE_OPENER + r"\s[a-z])")

MAX_LINE_HEADING_WORDS = 15
# A line that opens with one of these and has a comma is a sentence's first clause, not a heading ("For DNA
# Library 1, which contains", "Therefore, we explored whether ..."); "In vitro pull-down assay" stays a heading.
_OPENS_A_CLAUSE = re.compile(r"(?:" + _OPENER_WORDS + r"|That|Thus|Therefore|Hence|However|Moreover|"
                             r"Furthermore|Similar|Similarly|Finally|First|Second|Notably|Together|Consistent|"
                             r"Before|Next|Indeed|Overall|Interestingly|Importantly|Specifically)\b")
# A heading names a topic; a line that opens with a pronoun is a sentence stopped by a page break or an equation.
_POINTS = re.compile(r"(?:This|These|Those|We|It|Its|They|There|Such)\b")
# The next line opens as prose does ("To determine if ...", "Statistical tests were ..."), not as a page's
# furniture ("Dev Cell. Author manuscript ...", "Submitted November 15, ...") or a table's cells.
_PROSE_OPENING = re.compile(_SENTENCE_OPENER + r"\s|[A-Z][a-z]+(?:-[a-z]+)?\s[a-z(]|[A-Z][\w-]*\s[a-z]{2,}\s")
# A line that ends with one of these stops mid-phrase: the sentence goes on (often past a page break). A theme's
# heading that ends with one was cut mid-phrase too (engine/synthesis/plan.py).
NEEDS_MORE = frozenset("a an the of in on at to for with by from and or but nor as that which whose our their its "
                       "is are was were be been this these those than via into within between using".split())


def sentence_start(text: str, start: int, end: int) -> int:
    """Where the sentence ``text[start:end]`` begins after a section heading run into it (``start`` if none)."""
    for pattern in (_CAPITALISED, _NUMBERED):
        heading = pattern.match(text, start, end)
        if heading:
            return heading.end()
    return _after_heading_line(text, start, end)


def _after_heading_line(text: str, start: int, end: int) -> int:
    """After the sentence's first line when that line is a heading of its own, else ``start``."""
    line_end = text.find("\n", start, end)
    if line_end < 0:
        return start
    line = text[start:line_end].strip()
    words = line.split()
    rest = text[line_end + 1:end].lstrip()
    is_heading = (0 < len(words) <= MAX_LINE_HEADING_WORDS and re.match(r"\d|[A-Z][\w-]", line) is not None
                  and not (_OPENS_A_CLAUSE.match(line) and "," in line)  # "Thus, human ... share many" goes on
                  and not _POINTS.match(line)  # "This suggests a ... procedure of the form" [an equation]
                  and not re.search(r"[.:;,!?\-–—(\[]\d{0,2}$", line)  # a sentence or a lead-in goes on ("...:2")
                  and not line.startswith("To ")  # "To enable\nLLMs to follow ...": a purpose clause goes on
                  and not re.search(r"[a-z]\.", line)  # "tilings.17" is a sentence's end, not a heading's
                  and words[-1].lower() not in NEEDS_MORE
                  and _PROSE_OPENING.match(rest) is not None)
    return end - len(rest) if is_heading else start
