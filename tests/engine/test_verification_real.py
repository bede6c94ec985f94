"""Verification of real written sentences against a real paper's passages (slow: ingests LitQA2 PDFs).

Every sentence is one the 1.5B writer (../shared/models/fetch-writer) wrote for a LitQA2 question,
in other words than the paper's. A sentence the paper states must keep a citation to the passage
that states it, wherever the writer put its marker; a sentence the writer made up (or turned into
its opposite) must not be called supported.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.cite.verify import Verifier, verify_text
from engine.service import Engine
from engine.types import Reference

LITQA = Path(__file__).resolve().parents[3] / "shared" / "eval" / "litqa2-dev" / "pdfs"
CSX23 = ("10.1093%2Fnar%2Fgkae167.pdf",
         "Which metal ion coordinates binding of cyclic tetra-adenylate to Csx23 in Vibrio cholerae?")
KIR = ("10.1126%2Fscience.abi9591.pdf",
       "Which symptoms of COVID-19 are associated with the highest levels of KIR+ CD8+ T cells?")
KATE = ("10.1128%2Fjb.00479-21.pdf", "How much more sensitive to desiccation is a katE mutant strain of "
        "Acinetobacter baumanii, relative to the wild-type strain?")
EEF2 = ("10.7554%2FeLife.91357.3.pdf", "The gene EEF2 has introns 1 and 2, do they splice in a specific order?")

# (paper and question, the writer's sentence, a phrase of the passage that states it or None when nothing does)
CASES = [
    (CSX23, "The metal ion that coordinates binding of cyclic tetra-adenylate to Csx23 in Vibrio cholerae is sodium.",
     "coordinating sodium ion"),
    (CSX23, "The sodium ion is crucial for the activation of the catalytic Cas10 subunit.", None),
    (KIR, "KIR+CD8+ T cells were substantially elevated in many of these patients and higher levels correlated with "
          "more severe disease.", "substantially elevated in many of these patients"),
    (KIR, "The symptoms of COVID-19 associated with the highest levels of KIR+ CD8+ T cells include fever, cough, "
          "shortness of breath, and fatigue.", None),
    (KATE, "A katE mutant strain of Acinetobacter baumannii is about 5-fold more sensitive to desiccation than the "
           "wild-type.", "5-fold more sensitive to desiccation"),
    (EEF2, "Yes, the gene EEF2 has introns 1 and 2 that splice in a specific order.", None),
]


@pytest.mark.slow
@pytest.mark.parametrize(("paper", "sentence", "phrase"), CASES,
                         ids=[f"{case[0][0][:14]}-{index}" for index, case in enumerate(CASES)])
def test_a_stated_sentence_keeps_a_citation_to_its_passage_and_an_invented_one_does_not(
        tmp_path: Path, paper: tuple[str, str], sentence: str, phrase: str | None) -> None:
    pdf = LITQA / paper[0]
    if not pdf.is_file():
        pytest.skip(f"the LitQA2 dev papers are not here ({pdf.parent})")
    with Engine(home=tmp_path / "home") as engine:
        list(engine.add_documents([pdf]))  # a generator of per-file outcomes
        hits = engine.search(paper[1], k=8, source="library", rewrite=False)
    sources = {n: Reference(n, h.passage_id, h.doc_id, h.source, Bibliography(h.bib.title), h.text, page=h.page)
               for n, h in enumerate(hits, start=1)}
    stating = [n for n, r in sources.items() if phrase and phrase in " ".join(r.text.split())]
    if phrase:
        assert stating, f"no passage found for the question states {phrase!r}"
    wrong = next(n for n in sources if n not in stating)  # the writer's marker points elsewhere
    (verified,) = verify_text(f"{sentence[:-1]} [{wrong}].", sources, Verifier(SupportScorer(minilm())))
    if phrase:
        assert verified.support == "supported", (verified.support, verified.text)
        assert verified.citations and all(c.n in stating for c in verified.citations), verified.citations
    else:
        assert verified.support != "supported" and not verified.citations, (verified.support, verified.citations)
