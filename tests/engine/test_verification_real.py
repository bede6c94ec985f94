"""Verification of real written sentences against a real paper's passages (slow: ingests a LitQA2 PDF).

The sentences are what the 1.5B writer (../shared/models/fetch-writer) wrote for LitQA2 questions:
for each, a sentence the paper states (in other words than the paper's) and the sentence the writer
invented next to it. The judge must keep the first with a citation to the passage that says it,
wherever the writer pointed its marker, and must not call the second supported.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.models import minilm

from engine.cite.support import SupportScorer
from engine.cite.verify import verify_text
from engine.service import Engine
from engine.types import Reference

LITQA = Path(__file__).resolve().parents[3] / "shared" / "eval" / "litqa2-dev" / "pdfs"

# (paper, question, the writer's true sentence, a phrase of the passage that states it, invented sentence)
CASES = [
    ("10.1093%2Fnar%2Fgkae167.pdf",
     "Which metal ion coordinates binding of cyclic tetra-adenylate to Csx23 in Vibrio cholerae?",
     "The metal ion that coordinates binding of cyclic tetra-adenylate to Csx23 in Vibrio cholerae is sodium.",
     "coordinating sodium ion",
     "The sodium ion is crucial for the activation of the catalytic Cas10 subunit."),
]


@pytest.mark.slow
@pytest.mark.parametrize(("paper", "question", "true", "phrase", "invented"), CASES)
def test_a_true_written_sentence_keeps_a_citation_and_an_invented_one_does_not(
        tmp_path: Path, paper: str, question: str, true: str, phrase: str, invented: str) -> None:
    pdf = LITQA / paper
    if not pdf.is_file():
        pytest.skip(f"the LitQA2 dev papers are not here ({pdf.parent})")
    with Engine(home=tmp_path / "home") as engine:
        engine.add_documents([pdf])
        hits = engine.search(question, k=8, source="library", rewrite=False)
    sources = {n: Reference(n, h.passage_id, h.doc_id, h.source, h.title, h.text, page=h.page)
               for n, h in enumerate(hits, start=1)}
    stating = [n for n, r in sources.items() if phrase in " ".join(r.text.split())]
    assert stating, f"no passage found for the question states {phrase!r}"
    wrong = next(n for n in sources if n not in stating)  # the writer's marker points elsewhere
    first, second = verify_text(f"{true[:-1]} [{wrong}]. {invented[:-1]} [{wrong}].", sources,
                                SupportScorer(minilm()))
    assert first.support == "supported", (first.support, first.text)
    assert [c.n for c in first.citations] and all(c.n in stating for c in first.citations), first.citations
    assert second.support != "supported" and not second.citations, (second.support, second.citations)
