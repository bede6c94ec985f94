"""A table row as evidence: quoted whole, and first when the question names one of its cells."""

from __future__ import annotations

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.synthesis.evidence import extract_evidence
from engine.synthesis.quotable import MAX_QUOTE_CHARS, quotable_spans, table_row_spans
from engine.text.table_rows import asked_cells
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
    assert asked_cells("In SPECTER, what is the MAG F1 of Random?", ROW)
    assert not asked_cells("What is the MAG F1 of SPECTER?", ROW)  # another row's name
    assert not asked_cells("How random are the embeddings?", ROW)  # its name, but no header
    assert not asked_cells("What is the MAG F1 of Random?", PROSE)  # not a row


def test_the_cells_asked_are_the_rows_name_and_the_cells_whose_headers_the_question_names() -> None:
    name, mag = (0, len("Table 3, row Random")), (ROW.index("MAG"), ROW.index(", MeSH"))
    assert asked_cells("In SPECTER, what is the MAG F1 of Random?", ROW) == (name, mag)
    assert asked_cells("Which F1 does Random reach?", ROW) == (name, mag, (ROW.index("MeSH"), len(ROW)))
    assert asked_cells("How random are the embeddings?", ROW) == ()
    row = "Table 5, row JNLPBA: Task NER, SCIBERT 77.28, S2ORC- SCIBERT 77.70 ± 0.25"
    scibert, s2orc = (row.index("SCIBERT"), row.index(", S2ORC")), (row.index("S2ORC"), len(row))
    # The quoted title's "S2ORC" names the paper: both SciBERT columns, not the S2ORC one alone.
    assert asked_cells("In “S2ORC: The Semantic Scholar Open Research Corpus”, what is the SciBERT of JNLPBA?",
                       row) == ((0, len("Table 5, row JNLPBA")), scibert, s2orc)


def test_the_row_whose_cell_is_asked_opens_the_evidence_over_prose_on_the_topic() -> None:
    question = f"In \u201c{TITLE}\u201d, what is the MAG F1 of Random?"
    evidence = extract_evidence(question, [reference(PROSE, 1), reference(ROW, 2)], SupportScorer(HashingEmbedder()),
                                read=False)
    best = max((quote for item in evidence for quote in item.quotes), key=lambda quote: quote.answer)
    assert best.text == ROW



def test_the_row_whose_cell_is_asked_addresses_the_question_whatever_its_topic_score() -> None:
    """A row of symbols and numbers scores under the relevance floor by its topic (with the bundled embedder),
    so it was left out of the answer though it holds the cell asked for."""
    from engine.embed import SentenceTransformerEmbedder
    from engine.synthesis.evidence import RELEVANCE_THRESHOLD, relevant

    title = ("Novel insights into the role of translesion synthesis polymerase in DNA incorporation and bypass of "
             "5-fluorouracil in colorectal cancer")
    row = "Table 1, row dA:5FdUTP: Km (μM) 8.3 ± 0.6, kcat (10−3 s−1 ) 84.7 ± 4.2, kcat /Km (10−3 s−1 μM−1 ) 10.3, fa 1"
    found = Reference(n=1, passage_id="p1", doc_id="d1", source="library", bib=Bibliography(title), text=row, page=3)
    scorer = SupportScorer(SentenceTransformerEmbedder(None, quantize=True))
    named = extract_evidence(f"In “{title}”, what is the Km of dA:5FdUTP?", [found], scorer, read=False)
    assert named[0].relevance >= RELEVANCE_THRESHOLD and relevant(named) == named
    unnamed = extract_evidence(f"In “{title}”, what is the melting point of quartz?", [found], scorer, read=False)
    assert unnamed[0].relevance < RELEVANCE_THRESHOLD  # a row the question does not name is judged by its topic
