"""Golden and quality tests on the 24 real papers of the shared corpus.

The corpus is parsed once per session. Expectations live in golden/corpus.json (written by
golden/regenerate.py and reviewed by eye against each paper's first page); the rectangle
checks re-read the words inside a passage's rectangles straight from the PDF with PyMuPDF,
independently of the ingest code, and compare them with the passage's text.
"""

from __future__ import annotations

import json
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher
from pathlib import Path

import pymupdf
import pytest

from engine.ingest import ParsedDocument, parse_pdf
from engine.types import PageRect, Passage

GOLDEN: dict[str, dict] = json.loads((Path(__file__).parent / "golden" / "corpus.json").read_text(encoding="utf-8"))

pytestmark = pytest.mark.slow  # the whole corpus; ``papers_dir`` (tests/conftest.py) skips when it is absent

# Tolerances for re-reading text from the page (``normalise`` already evens out whitespace,
# hyphenation, ligatures and accents). What remains are real differences between two readings of
# one page: math symbols (∈, ←, ∑) whose boxes are taller than their line, so a rectangle of an
# algorithm listing also takes in a word of the line above or below; and mooney05, whose formulas
# use a font that MuPDF sizes ten times too tall, so neither reading can place those glyphs
# exactly. Prose sentences read back exactly (ratio 1.0 on every sample today); the floor leaves
# room for a stray symbol. Whole passages, tables and formulas included, read back at >= 0.87,
# except mooney05's formula-heavy passages (>= 0.75).
SENTENCE_MIN_RATIO = 0.9  # difflib ratio on the normalised characters of one sentence
PASSAGE_MIN_OVERLAP = 0.7  # trigram Jaccard for every single passage
DOCUMENT_MIN_MEAN_OVERLAP = 0.95  # ... and on average over a document's passages (lowest today: 0.96)
SCATTERED_MIN_OVERLAP = 0.2  # table and figure-text passages (formulas drawn glyph by glyph are lowest)


# --- fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def corpus(papers_dir: Path) -> dict[str, ParsedDocument]:
    """Every paper of the corpus, parsed once for the whole session."""
    return {path.name: parse_pdf(path) for path in sorted(papers_dir.glob("*.pdf"))}


class PageWords:
    """The words PyMuPDF reads on each page, with its own boxes, cached per page."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._documents: dict[str, pymupdf.Document] = {}
        self._pages: dict[tuple[str, int], tuple[list[float], list[tuple[float, float, str]]]] = {}

    def close(self) -> None:
        for document in self._documents.values():
            document.close()

    def _anchors(self, name: str, page: int) -> tuple[list[float], list[tuple[float, float, str]]]:
        """(y, x, text) anchor points of the page's words, sorted by y for range queries."""
        key = (name, page)
        if key not in self._pages:
            if name not in self._documents:
                self._documents[name] = pymupdf.open(self.folder / name)
            document = self._documents[name]
            words = document[page - 1].get_text("words")
            heights = sorted(w[3] - w[1] for w in words)
            usual = heights[len(heights) // 2] if heights else 0.0
            anchors: dict[tuple[str, int, int], tuple[float, float, str]] = {}
            for x0, y0, x1, y1, text, *_ in words:
                # A word's anchor is the centre of its box, measured up from the baseline at most
                # 1.5 usual line heights: fonts with broken size matrices report boxes ten times
                # too tall, whose centre floats lines above the word. Text drawn twice at the
                # same spot (fake bold, figure labels) is read once, as a reader sees it.
                anchor_y = y1 - min(y1 - y0, 1.5 * usual) / 2
                anchors.setdefault((text, round(x0), round(y1)), (anchor_y, (x0 + x1) / 2, text))
            ordered = sorted(anchors.values())
            self._pages[key] = ([a[0] for a in ordered], ordered)
        return self._pages[key]

    def inside(self, name: str, rects: Sequence[PageRect], slack: float = 0.5) -> str:
        """The page's words whose anchor lies in one of ``rects``, rectangle by rectangle, left to right."""
        taken: set[tuple[float, float, str]] = set()
        out: list[str] = []
        for page, rect in rects:
            ys, anchors = self._anchors(name, page)
            lo, hi = bisect_left(ys, rect.y0 - slack), bisect_right(ys, rect.y1 + slack)
            row = [a for a in anchors[lo:hi] if rect.x0 - slack <= a[1] <= rect.x1 + slack and a not in taken]
            taken.update(row)
            out.extend(a[2] for a in sorted(row, key=lambda a: a[1]))
        return " ".join(out)


@pytest.fixture(scope="session")
def page_words(papers_dir: Path) -> Iterator[PageWords]:
    reader = PageWords(papers_dir)
    yield reader
    reader.close()


# --- comparing two readings of the same text --------------------------------------------


def normalise(text: str) -> str:
    """Letters and digits only, lower case, accents and ligatures undone.

    Whitespace, punctuation and hyphenation differ between the page's words ("represen-",
    "tation") and the passage ("representation"); comparing the bare character stream makes
    those differences vanish instead of counting them as errors.
    """
    decomposed = unicodedata.normalize("NFKD", text.replace("ı", "i")).lower()
    return "".join(ch for ch in decomposed if ch.isalnum() and not unicodedata.combining(ch))


def trigram_overlap(a: str, b: str) -> float:
    """Jaccard overlap of character trigram multisets: order-insensitive beyond three characters."""
    grams_a = Counter(a[i:i + 3] for i in range(len(a) - 2))
    grams_b = Counter(b[i:i + 3] for i in range(len(b) - 2))
    union = sum((grams_a | grams_b).values())
    return sum((grams_a & grams_b).values()) / union if union else 1.0


def find_sentence(passages: list[Passage], sample: dict) -> tuple[Passage, int, int]:
    """The golden sentence's passage and span; searched across passages if chunking moved it."""
    sentence = sample["sentence"]
    ordered = sorted(passages, key=lambda p: p.ordinal != sample["ordinal"])
    for passage in ordered:
        start = passage.text.find(sentence)
        if start >= 0:
            return passage, start, start + len(sentence)
    raise AssertionError(f"golden sentence not found in any passage: {sentence!r}")


def passages_with(parsed: ParsedDocument, needle: str) -> list[Passage]:
    return [p for p in parsed.passages if needle in p.text]


# --- golden expectations ------------------------------------------------------------------


def test_golden_file_covers_the_corpus(papers_dir: Path) -> None:
    assert sorted(GOLDEN) == sorted(path.name for path in papers_dir.glob("*.pdf"))


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_title_pages_and_passage_count(corpus: dict[str, ParsedDocument], name: str) -> None:
    parsed, golden = corpus[name], GOLDEN[name]
    assert parsed.meta.bib.title == golden["title"]
    assert len(parsed.pages) == golden["page_count"]
    count = sum(p.kind == "text" for p in parsed.passages)
    assert golden["passages"]["min"] <= count <= golden["passages"]["max"]
    captions = sum(p.kind == "caption" for p in parsed.passages)
    assert golden["captions"]["min"] <= captions <= golden["captions"]["max"]
    assert any(p.is_reference for p in parsed.passages) == golden["has_references"]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_authors(corpus: dict[str, ParsedDocument], name: str, request: pytest.FixtureRequest) -> None:
    golden = GOLDEN[name]
    if "known_issue" in golden:
        request.applymarker(pytest.mark.xfail(reason=golden["known_issue"], strict=True))
    assert list(corpus[name].meta.bib.authors) == golden["authors"]


def test_a_paper_without_a_printed_title_keeps_it_empty(corpus: dict[str, ParsedDocument]) -> None:
    # 1903.10676 is one page cut from the middle of a paper: tables and a discussion, no title.
    # The file name or the first table row must not be passed off as one.
    assert corpus["1903.10676.pdf"].meta.bib.title == ""
    assert corpus["1903.10676.pdf"].meta.bib.authors == ()


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_sampled_sentence_rects_cover_the_sentence(corpus: dict[str, ParsedDocument], page_words: PageWords,
                                                   name: str) -> None:
    passage, start, end = find_sentence(corpus[name].passages, GOLDEN[name]["sample"])
    rects = passage.rects_for_span(start, end)
    assert rects, "a sentence must be highlightable"
    assert all(passage.page_start <= r.page <= passage.page_end for r in rects)
    on_page = normalise(page_words.inside(name, rects))
    expected = normalise(passage.text[start:end])
    ratio = SequenceMatcher(None, expected, on_page, autojunk=False).ratio()
    assert ratio >= SENTENCE_MIN_RATIO, f"{expected!r}\nread back as\n{on_page!r}"


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_passage_rects_reproduce_passage_text(corpus: dict[str, ParsedDocument], page_words: PageWords,
                                              name: str) -> None:
    overlaps = []
    for passage in corpus[name].passages:
        overlap = trigram_overlap(normalise(passage.text), normalise(page_words.inside(name, passage.rects)))
        if passage.kind == "table row" and passage.table is not None:
            # A row's text names its table and headers ("Table 2, row REL: Dataset ChemProt, ...");
            # its boxes are its cells', so the cells' own words are what they must hold. A cell can
            # wrap over lines, which the left-to-right re-reading interleaves: words, not trigrams.
            cells = Counter(normalise(word) for cell in passage.table.cells for word in cell.text.split())
            inside = Counter(normalise(word) for word in page_words.inside(name, passage.rects).split())
            overlap = sum((cells & inside).values()) / max(1, sum((cells | inside).values()))
            assert overlap >= PASSAGE_MIN_OVERLAP, f"table row passage {passage.ordinal}: overlap {overlap:.2f}"
            continue
        if passage.kind in ("table", "figure"):
            # Cells and figure labels are kept in the order PyMuPDF reads them; the re-reading goes
            # row by row, left to right. Trigrams still overlap, less: the box must hold the words.
            assert overlap >= SCATTERED_MIN_OVERLAP, f"{passage.kind} passage {passage.ordinal}: overlap {overlap:.2f}"
            continue
        assert overlap >= PASSAGE_MIN_OVERLAP, f"{passage.kind} passage {passage.ordinal}: overlap {overlap:.2f}"
        overlaps.append(overlap)
    assert sum(overlaps) / len(overlaps) >= DOCUMENT_MIN_MEAN_OVERLAP


# --- invariants over every passage of the corpus -------------------------------------------


def test_passage_spans_words_and_pages_are_consistent(corpus: dict[str, ParsedDocument]) -> None:
    for name, parsed in corpus.items():
        previous_end = -1
        for ordinal, passage in enumerate(parsed.passages):
            where = f"{name} passage {ordinal}"
            assert passage.ordinal == ordinal, where
            assert passage.char_start > previous_end, f"{where}: overlaps the passage before"
            assert passage.char_end - passage.char_start == len(passage.text), where
            previous_end = passage.char_end
            assert passage.words and passage.rects, where
            assert 1 <= passage.page_start <= passage.page_end <= len(parsed.pages), where
            last = 0
            for word in passage.words:
                token = passage.text[word.start:word.end]
                assert word.start >= last and token and not any(ch.isspace() for ch in token), where
                assert passage.page_start <= word.page <= passage.page_end, where
                last = word.end
            # Between two words only a separator, so the words account for all of the text.
            assert sum(w.end - w.start for w in passage.words) >= len(passage.text) - 2 * len(passage.words)


def test_ligatures_are_expanded_everywhere(corpus: dict[str, ParsedDocument]) -> None:
    ligatures = re.compile("[\ufb00-\ufb06]")
    found = {name: m.group() for name, parsed in corpus.items() for p in parsed.passages
             if (m := ligatures.search(p.text))}
    assert not found
    # ... and the words they stood for are whole: "ﬁ" in "scientiﬁc" became "fi".
    assert passages_with(corpus["2020.acl-main.207.pdf"], "scientific documents")
    assert passages_with(corpus["bohnet09.pdf"], "Efficient")


# --- running headers, footers and page numbers ---------------------------------------------

# Text printed in the margins of every page (or every other page) of these papers.
RUNNING_FURNITURE = {
    "0807.3577.pdf": ["Journal of Cosmology and Astroparticle Physics 10 (2008) 003", "(stacks.iop.org/JCAP"],
    "2020.acl-main.207.pdf": ["Proceedings of the 58th Annual Meeting", "July 5 - 10, 2020"],
    "2020.acl-main.447.pdf": ["Proceedings of the 58th Annual Meeting", "July 5 - 10, 2020"],
    "2302.07302v1.pdf": ["Chang et al."],
    "2304.02623v1.pdf": ["Shen, et al."],
    "map-reduce.pdf": ["To appear in OSDI 2004"],
    "mooney05.pdf": ["Ann Arbor, June 2005"],
}


@pytest.mark.parametrize("name", sorted(RUNNING_FURNITURE))
def test_running_headers_and_footers_are_removed(corpus: dict[str, ParsedDocument], name: str) -> None:
    for text in RUNNING_FURNITURE[name]:
        assert not passages_with(corpus[name], text), text


def test_a_running_title_is_removed_but_the_title_kept(corpus: dict[str, ParsedDocument]) -> None:
    # Paper Plain repeats its title over every odd page, a little lower than most templates.
    parsed = corpus["2203.00130v1.pdf"]
    head = "Approachable to Healthcare Consumers with Natural Language Processing"
    first_text = next(p.ordinal for p in parsed.passages if p.kind == "text")
    assert [p.ordinal for p in passages_with(parsed, head)] == [first_text]
    # CiteSee's running title is a shortened form of its title.
    assert not passages_with(corpus["2302.07302v1.pdf"], "Scientific Papers with Personalized Context")


@pytest.mark.parametrize("name", ["2020.acl-main.207.pdf", "2020.acl-main.447.pdf", "2023.eacl-main.121.pdf",
                                  "N18-3011.pdf", "P07-1088.pdf", "P14-1059.pdf", "dyer12.pdf",
                                  "2203.00130v1.pdf", "0807.3577.pdf", "map-reduce.pdf"])
def test_no_word_from_the_page_margins_in_body_text(corpus: dict[str, ParsedDocument], name: str) -> None:
    """Page numbers ("2271", "3") and running lines sit in the top and bottom 7% of every page."""
    parsed = corpus[name]
    heights = {page.number: page.height for page in parsed.pages}
    strays = [(w.page, p.text[w.start:w.end]) for p in parsed.passages for w in p.words
              if w.page > 1 and not 0.07 < (w.rect.y0 + w.rect.y1) / 2 / heights[w.page] < 0.93]
    assert not strays


def test_no_bare_page_number_line_in_body_text(corpus: dict[str, ParsedDocument]) -> None:
    # ACL proceedings number SPECTER's pages 2270-2282 at the foot of the page.
    for passage in corpus["2020.acl-main.207.pdf"].passages:
        lines = {line.strip() for line in passage.text.split("\n")}
        assert not lines & {str(n) for n in range(2270, 2283)}, passage.ordinal
    # Paper Plain prints its page number beside the running head, lower than most templates.
    # (Pages 1-5 are skipped: figure 1 on page 2 has callouts numbered 1 to 5.)
    for passage in corpus["2203.00130v1.pdf"].passages:
        lines = {line.strip() for line in passage.text.split("\n")}
        assert not lines & {str(n) for n in passage.pages if n > 5}, passage.ordinal


# --- words, sections and reading order ---------------------------------------------------


def test_end_of_line_hyphenation_is_repaired(corpus: dict[str, ParsedDocument]) -> None:
    # "in-" / "frequently" at a line end in P07-1088's abstract; "uninfor-" / "mative" in fader11.
    assert passages_with(corpus["P07-1088.pdf"], "extractions appear infrequently")
    assert not passages_with(corpus["P07-1088.pdf"], "in- frequently")
    assert passages_with(corpus["fader11.pdf"], "rife with uninformative and incoherent extractions")
    # A compound broken at its own hyphen keeps it: "state-" / "of-the-art" in SPECTER.
    assert passages_with(corpus["2020.acl-main.207.pdf"], "have yet to incorporate state-of-the-art pretrained")


def test_hyphenated_word_split_across_columns_is_joined(corpus: dict[str, ParsedDocument]) -> None:
    # LongEval's left column ends "model-generated sum-", a footnote follows it in the column,
    # and the right column goes on "maries": the footnote must not come between the halves.
    assert passages_with(corpus["2023.eacl-main.121.pdf"], "model-generated summaries")


REFERENCE_HEADS = ("References", "REFERENCES")


@pytest.mark.parametrize("name", sorted(name for name, golden in GOLDEN.items() if golden["has_references"]))
def test_reference_list_is_marked_and_body_is_not(corpus: dict[str, ParsedDocument], name: str) -> None:
    # Captions and tables are passages of their own kind; the list is a run of the running text.
    passages = [p for p in corpus[name].passages if p.kind == "text"]
    flags = [p.is_reference for p in passages]
    first = flags.index(True)
    assert not any(flags[:first]), "body passages before the reference list"
    assert first > 0 or len(passages) <= 3, "the paper's opening is not a reference list"
    # The list is one run; only an appendix may follow it.
    end = first + flags[first:].count(True)
    assert all(flags[first:end])
    opening = passages[first].text
    assert opening.startswith(REFERENCE_HEADS) or opening.startswith("[1]") or name.startswith("submission_")


def test_headingless_reference_list_is_found(corpus: dict[str, ParsedDocument]) -> None:
    # RevTeX papers print "[1] Hu W., Barkana R., ..." after the conclusions with no heading.
    parsed = corpus["1001._0908.0054.pdf"]
    first = next(p for p in parsed.passages if p.is_reference)
    assert first.text.startswith("[1] Hu W.")
    assert not any(p.is_reference for p in passages_with(parsed, "Ultra Light Bosonic Dark Matter"))


def test_appendix_after_references_is_body_again(corpus: dict[str, ParsedDocument]) -> None:
    for name, heading in [("map-reduce.pdf", "A Word Frequency"), ("2023.eacl-main.121.pdf", "Appendix"),
                          ("2206.10883v3.pdf", "Multi-LexSum release"), ("2203.00130v1.pdf", "A INTERVIEWS")]:
        appendix = passages_with(corpus[name], heading)
        assert appendix and not any(p.is_reference for p in appendix), name


def test_early_references_heading_in_a_long_paper(corpus: dict[str, ParsedDocument]) -> None:
    # Multi-LexSum's references start on page 10 of 37, before a long appendix.
    first = next(p for p in corpus["2206.10883v3.pdf"].passages if p.is_reference)
    assert first.page_start == 10 and first.text.startswith("References\n[1] Iz Beltagy")


def test_two_column_reading_order(corpus: dict[str, ParsedDocument]) -> None:
    """SPECTER (ACL, two columns): abstract, then Introduction, then the rest of the left column,
    and only then the top of the right column."""
    text = "\n".join(p.text for p in corpus["2020.acl-main.207.pdf"].passages)
    abstract_end = text.index("competitive baselines on the benchmark.")
    introduction = text.index("1 Introduction")
    first_sentence = text.index("As the pace of scientific publication continues to increase")
    left_column_end = text.index("(Radford et al., 2018; Devlin et al., 2019; Yang et al., 2019).")
    right_column_start = text.index("While such models are widely used for representing individual words")
    assert abstract_end < introduction < first_sentence < left_column_end < right_column_start
    assert text[introduction + len("1 Introduction"):first_sentence].strip() == ""
    # The paragraph goes on across the column break, with no footnote in between.
    assert "representing individual words\nor sentences, extensions to whole-document" in text


def test_two_column_reading_order_when_the_first_page_has_a_wide_title(corpus: dict[str, ParsedDocument]) -> None:
    # P07-1088: title and authors span both columns; the abstract heads the left column.
    parsed = corpus["P07-1088.pdf"]
    opening = parsed.passages[0].text
    assert opening.startswith("Sparse Information Extraction:")
    assert opening.index("Abstract") < opening.index("Even in a massive corpus such as the Web")
    body = "\n".join(p.text for p in parsed.passages)
    assert body.index("1 Introduction") > body.index("Even in a massive corpus such as the Web")


def test_footnotes_do_not_split_sentences(corpus: dict[str, ParsedDocument]) -> None:
    text = "\n".join(p.text for p in corpus["2020.acl-main.207.pdf"].passages)
    footnote = text.index("∗Equal contribution")
    # Placed after the paragraph it interrupted on the page, which ends "...incidental supervision".
    assert text.index("at inference time, our model does not require any citation information.") < footnote
