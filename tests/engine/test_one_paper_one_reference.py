"""References a researcher can use: one paper, one reference, described as fully as its records allow; a title
set in capitals re-cased, any other kept as printed; a PDF without a title named by its file, marked as such."""

from __future__ import annotations

from pathlib import Path

from fixtures.pdfs import text_pdf

from engine.bibliography import FILE_NAME_MARK, Bibliography
from engine.datastore.reader import record_from_json
from engine.render.bibtex import to_bibtex
from engine.service import Engine
from engine.synthesis.numbering import number_by_paper
from engine.types import Answer, AnswerMode, AnswerSentence, Citation, Reference

GAT = "We present graph attention networks (GATs), novel neural network architectures that operate on graphs."


def _reference(n: int, doc_id: str, bib: Bibliography) -> Reference:
    return Reference(n, f"{doc_id}-0", doc_id, "cs-sample", bib, GAT)


def _citing(n: int) -> AnswerSentence:
    return AnswerSentence(f"GATs attend over neighbours [{n}].", (Citation(n, "", GAT, 0, 10, 0.9),), True)


def test_two_records_of_one_paper_are_one_reference_from_the_fuller_record() -> None:
    caps = _reference(1, "scirex:33998aff", Bibliography("GRAPH ATTENTION NETWORKS"))
    other = _reference(2, "scitldr:BJxWx0NYPr", Bibliography("Adaptive Structural Fingerprints for Graph Attention "
                                                            "Networks", url="https://openreview.net/forum?id=BJx"))
    titled = _reference(3, "scitldr:rJXMpikCZ", Bibliography("Graph Attention Networks", year=2018,
                                                            url="https://openreview.net/forum?id=rJXMpikCZ"))
    sentences = [replace_n(_citing(1), 1), replace_n(_citing(2), 2), replace_n(_citing(3), 3)]
    numbered = number_by_paper(sentences, [caps, other, titled])
    assert [p.n for p in numbered.papers] == [1, 2]
    assert numbered.papers[0].bib.title == "Graph Attention Networks" and numbered.papers[0].bib.year == 2018
    assert [s.text for s in numbered.sentences] == ["GATs attend over neighbours [1].",
                                                    "GATs attend over neighbours [2].",
                                                    "GATs attend over neighbours [1]."]
    answer = Answer("q", "", numbered.sentences, numbered.references, AnswerMode.DIGEST, papers=numbered.papers)
    bibtex = to_bibtex(answer)
    assert bibtex.count("@") == 2 and "{GRAPH}" not in bibtex
    assert 'title = "Graph {Attention} {Networks}"' in bibtex and 'year = "2018"' in bibtex


def replace_n(sentence: AnswerSentence, n: int) -> AnswerSentence:
    citation = sentence.citations[0]
    return AnswerSentence(sentence.text, (Citation(n, f"p{n}", citation.quote, 0, 10, 0.9),), True)


def test_a_record_title_in_capitals_is_recased_and_any_other_kept_as_printed() -> None:
    caps = record_from_json(1, {"id": "a", "title": "GRAPH ATTENTION NETWORKS", "text": GAT})
    bert = record_from_json(2, {"id": "b", "title": "BERT: PRE-TRAINING OF DEEP BIDIRECTIONAL TRANSFORMERS",
                                "text": "We introduce BERT. BERT is conceptually simple."})
    kept = record_from_json(3, {"id": "c", "title": "SciBERT: A Pretrained Language Model for Scientific Text",
                                "text": "We release SCIBERT."})
    assert not isinstance(caps, Exception) and caps.bib.title == "Graph Attention Networks"  # type: ignore[union-attr]
    assert bert.bib.title == "BERT: Pre-Training of Deep Bidirectional Transformers"  # type: ignore[union-attr]
    assert kept.bib.title == "SciBERT: A Pretrained Language Model for Scientific Text"  # type: ignore[union-attr]


def test_a_pdf_without_a_title_is_found_under_its_file_name_until_the_title_is_edited(tmp_path: Path,
                                                                                    engine: Engine) -> None:
    # A page of table cells in one small type: nothing on it is a title.
    cells = "\n".join(f"Dataset {n}   F1 {80 + n}.{n}   Recall {70 + n}.{n}   glacier sliding" for n in range(20))
    pdf = text_pdf(tmp_path / "results-table.pdf", [cells], fontsize=8)
    list(engine.add_documents([pdf]))
    (document,) = engine.documents()
    assert document.bib.title == ""  # nothing printed is taken for a title
    hits = engine.search("glacier sliding", k=3, source="library")
    assert hits and hits[0].bib.title == "results-table.pdf" + FILE_NAME_MARK
    engine.update_metadata(document.id, title="Glacier Sliding Results")
    assert engine.search("glacier sliding", k=3, source="library")[0].bib.title == "Glacier Sliding Results"
