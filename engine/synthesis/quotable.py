"""What of a passage may be quoted: whole prose sentences, never a caption, a table's numbers, a page stamp or a
title line run into the text; a table row whole.

The digest and the writer quote only these spans (engine/synthesis/evidence.py scores them), so every quote is a
verbatim span of its passage by construction.
"""

from __future__ import annotations

import re

from engine.cite.sentences import split_spans
from engine.cite.windows import content_words, not_prose, prose_like
from engine.synthesis.run_in import sentence_start
from engine.text.addressed import addresses_the_model
from engine.text.back_matter import back_matter_flags
from engine.text.furniture import has_page_furniture
from engine.text.keywords import UNSPACED_TEXT
from engine.text.table_rows import TABLE_ROW
from engine.types import LIBRARY_SOURCE, Reference

MIN_QUOTE_CHARS = 40
MAX_QUOTE_CHARS = 500

_CAPTION = re.compile(r"(^|\n)\s*\(?(fig(ure)?s?\.?|tables?|supplementary\s+(fig(ure)?|table)s?\.?|extended data "
                      r"fig(ure)?\.?)\s*S?\d+[A-Za-z]?\b", re.IGNORECASE)
_PANEL = re.compile(r"^\s*\(?[A-H]\)\s")
_NUMERIC = re.compile(r"^[\d.,%±()+\-–−]+$")


def is_caption(text: str) -> bool:
    """A figure/table caption, a panel label, or prose that runs into one."""
    return bool(_CAPTION.search(text) or _PANEL.match(text))


def tabular(text: str) -> bool:
    """A table row that reads like a sentence: a third or more of its tokens are numbers; or text that is not
    prose at all (:func:`not_prose`)."""
    tokens = text.split()
    return sum(bool(_NUMERIC.match(t)) for t in tokens) >= max(3, len(tokens) / 3) or not_prose(text)


def sentence_spans(text: str, screen: bool = True) -> list[tuple[int, int]]:
    """Whole prose sentences of ``text`` fit to quote; an over-long one is cut at its last clause break.
    ``screen``: False keeps the sentences that carry a page stamp or address a model reading the PDF (what
    benchmarks/quote_filters.py counts the filters on)."""
    spans = []
    for start, end in split_spans(text):
        start = sentence_start(text, start, end)  # the quote starts after a heading run into the sentence
        if end - start > MAX_QUOTE_CHARS:
            limit = start + MAX_QUOTE_CHARS
            cut = max(text.rfind("; ", start, limit), text.rfind(", ", start, limit))
            if cut - start < MAX_QUOTE_CHARS // 2:
                continue
            end = cut
        piece = text[start:end]
        # A repository's page stamp or an instruction planted for a model reading the PDF is never a quote.
        if (quote_length(piece) >= MIN_QUOTE_CHARS and prose_like(piece) and not is_caption(piece)
                and not tabular(piece) and not (screen and (addresses_the_model(piece) or has_page_furniture(piece)))):
            spans.append((start, end))
    return spans


def quote_length(piece: str) -> int:
    """A quote's length as ``MIN_QUOTE_CHARS`` counts it: a letter of a script written without spaces (a
    Chinese character is about a word) counts twice, so a Chinese sentence is not too short to quote."""
    return len(piece) + len(UNSPACED_TEXT.findall(piece))


def restates_title(sentence: str, title: str) -> bool:
    """Whether ``sentence`` is the paper's title (a first page's title line runs into the next line as one
    "sentence"): it names what the paper is about, which is why it scores high for any question on the
    topic, but it is shown with the reference already and answers nothing the paper's own sentences do not."""
    title_words = content_words(title)
    if len(title_words) < 3:
        return False
    words = content_words(sentence)
    return len(title_words & words) >= 0.8 * len(title_words) and len(words - title_words) <= max(3, 0.3 * len(words))


# A title is found in a sentence only when it is long enough not to be a phrase of the paper's own prose.
_TITLE_WORDS = 5
_URL_LIKE = re.compile(r"\S*[/@]\S*|\S+\.\S+")
_PROSE_RUN = re.compile(r"\b[a-z]{2,}\s+[a-z]{2,}\b")
_CITES = re.compile(r"\bet\s+al\b")


def after_title(text: str, start: int, end: int, title: str) -> int | None:
    """Where the sentence ``text[start:end]`` goes on after the paper's title, when the title opens it: a first
    page's header, title and byline run together ("Article https://doi.org/... Autoregulation of the LIM kinases by
    their PDZ domain LIM domain kinases (LIMK) are important regulators ...", "<title> Jameson R. Averill† , ...").
    None when the title is not there, or prose comes before it ("we introduce S2ORC, the Semantic Scholar Open
    Research Corpus, a ...": the paper naming itself)."""
    words = re.findall(r"\w+", title)
    if len(words) < _TITLE_WORDS:
        return None
    found = re.search(r"\W+".join(re.escape(w) for w in words), text[start:end], re.IGNORECASE)
    if found is None:
        return None
    before = text[start:start + found.start()]
    if _PROSE_RUN.search(_URL_LIKE.sub(" ", before)) or _CITES.search(before):
        return None  # prose, or a citation of the paper ("C. A. Horton et al., Data for: <title>, Zenodo (2023)")
    position = start + found.end()
    while position < end and not text[position].isalnum():
        position += 1
    return position


def quotable_spans(reference: Reference, back_matter_asked: bool) -> list[tuple[int, int, bool]]:
    """The sentences of a passage that may answer, each as (start, end, whether it is back matter): a title line
    run into the text is a PDF's, left out, and a sentence it opens is quoted from where it goes on (a datastore
    record's text is what its datastore chose to keep); thanks, funding and who-did-what answer only a question
    about them."""
    text = reference.text
    if reference.source == LIBRARY_SOURCE and TABLE_ROW.match(text):
        return [(start, end, False) for start, end in table_row_spans(text)]
    spans = sentence_spans(text)
    if reference.source == LIBRARY_SOURCE:
        spans = [span for span in (_after_title_line(text, start, end, reference.bib.title) for start, end in spans)
                 if span is not None and not restates_title(text[span[0]:span[1]], reference.bib.title)]
    return [(start, end, back_matter)
            for (start, end), back_matter in zip(spans, back_matter_flags(text, spans), strict=True)
            if back_matter_asked or not back_matter]


def table_row_spans(text: str) -> list[tuple[int, int]]:
    """A table row is quoted whole: its stub names the row and each value follows its column's header, so it
    reads as header-value pairs, and its boxes are the cells'. A row too long to quote ends after its last
    whole cell that fits."""
    if len(text) <= MAX_QUOTE_CHARS:
        return [(0, len(text))]
    cut = text.rfind(", ", 0, MAX_QUOTE_CHARS)
    return [(0, cut)] if cut > 0 else []


def _after_title_line(text: str, start: int, end: int, title: str) -> tuple[int, int] | None:
    """The sentence, begun after the title line that opens it (``after_title``); None when what follows the title
    is no sentence to quote (a byline, or nothing)."""
    after = after_title(text, start, end, title)
    if after is None:
        return start, end
    piece = text[after:end]
    if quote_length(piece) >= MIN_QUOTE_CHARS and prose_like(piece) and not tabular(piece):
        return after, end
    return None
