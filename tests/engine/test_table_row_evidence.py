"""A table row as evidence: quoted whole, and first when the question names one of its cells."""

from __future__ import annotations

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.synthesis.evidence import (
    MAX_QUOTE_CHARS,
    extract_evidence,
    names_the_cell,
    quotable_spans,
    table_row_spans,
)
from engine.types import Reference

ROW = "Table 3, row Random: MAG F1 4.8, MeSH F1 9.4"
PROSE = ("We propose SPECTER, a new method to generate document-level embedding of scientific documents based "
         "on pretraining a Transformer language model on a powerful signal of document-level relatedness.")
TITLE = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"


def reference(text: str, n: int = 1, source: str = "library") -> Reference:
    return Reference(n=n, passage_id=f"p{n}", doc_id="d1", source=source, bib=Bibliography(TITLE), text=text, page=1)


def test_a_row_is_one_quote_and_prose_is_still_split_into_sentences() -> None:
    assert quotable_spans(reference(ROW), back_matter_asked=False) == [(0, len(ROW), False)]
    assert len(quotable_spans(reference(PROSE + " " + PROSE), back_matter_asked=False)) == 2


def test_a_row_of_its_name_alone_or_a_datastore_text_is_not_read_as_a_row() -> None:
    assert quotable_spans(reference("Table 1, row DEP"), back_matter_asked=False) == []
    assert quotable_spans(reference(ROW, source="datastore:s2"), back_matter_asked=False) != [(0, len(ROW), False)]


def test_a_long_row_ends_after_its_last_whole_cell() -> None:
    long_row = "Table 9, row Model: " + ", ".join(f"column {i} {i}.5" for i in range(60))
    (start, end), = table_row_spans(long_row)
    assert start == 0 and end <= MAX_QUOTE_CHARS and long_row[end:].startswith(", column")


def test_the_question_names_a_cell_by_the_rows_name_and_a_header_word() -> None:
    assert names_the_cell("In SPECTER, what is the MAG F1 of Random?", ROW)
    assert not names_the_cell("What is the MAG F1 of SPECTER?", ROW)  # another row's name
    assert not names_the_cell("How random are the embeddings?", ROW)  # its name, but no header
    assert not names_the_cell("What is the MAG F1 of Random?", PROSE)  # not a row


def test_the_row_whose_cell_is_asked_opens_the_evidence_over_prose_on_the_topic() -> None:
    question = f"In \u201c{TITLE}\u201d, what is the MAG F1 of Random?"
    evidence = extract_evidence(question, [reference(PROSE, 1), reference(ROW, 2)], SupportScorer(HashingEmbedder()),
                                read=False)
    best = max((quote for item in evidence for quote in item.quotes), key=lambda quote: quote.answer)
    assert best.text == ROW


def test_the_row_a_question_names_joins_the_hits_of_its_paper_first() -> None:
    from engine.synthesis.named_rows import with_named_rows
    from engine.types import Passage, SearchHit, TableRow

    def hit(n: int, doc: str, source: str = "library") -> SearchHit:
        return SearchHit(passage_id=f"{doc}:{n}", doc_id=doc, source=source, bib=Bibliography(TITLE), text=PROSE)

    def row(doc: str, text: str) -> Passage:
        return Passage(id=f"{doc}:row", doc_id=doc, ordinal=9, text=text, title=TITLE, page_start=6, page_end=6,
                       char_start=0, char_end=len(text), rects=(), content_hash="h",
                       table=TableRow(table=0, label="Table 3", caption="", page=6, row=1, headers=(), cells=()))

    rows = {"d1": [row("d1", ROW), row("d1", "Table 3, row SPECTER: MAG F1 82.0")], "d3": [row("d3", ROW)]}
    hits = [hit(1, "d1"), hit(2, "d2"), hit(3, "d1"), hit(4, "d3")]
    found = with_named_rows("what is the MeSH F1 of Random?", hits, lambda doc: rows.get(doc, []))
    # d1's row named by the question comes first; d3 is past the first two papers; the list keeps its length.
    assert [h.passage_id for h in found] == ["d1:row", "d1:1", "d2:2", "d1:3"]
    assert found[0].page == 6 and found[0].ranks == (("named row", 1),) and found[0].text == ROW
    assert with_named_rows("How is SPECTER trained?", hits, lambda doc: rows.get(doc, [])) == hits
