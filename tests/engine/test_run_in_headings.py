"""Section headings run into a sentence by the PDF's text: where the quote starts (examples from real papers of
the LitQA2 and demo libraries)."""

from __future__ import annotations

import pytest

from engine.synthesis.quotable import sentence_spans
from engine.synthesis.run_in import sentence_start


def quoted(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


@pytest.mark.parametrize(("heading", "sentence"), [
    # A numbered heading in sentence case, on its line or not.
    ("3.1 Representing and manipulating visually-rich documents with magelib\n",
     "In this section, we use code snippets to show how our library's abstractions are tailored to documents."),
    ("2.5 Filtering paper clusters\n",
     "We further filter paper clusters to remove papers with no abstract or body text."),
    ("3.1 Representing and manipulating visually-rich documents with magelib ",
     "In this section, we use code snippets to show how our library's abstractions are tailored to documents."),
    # A heading on its own line: a method's name, a result stated as a heading.
    ("Statistical analysis\n", "Statistical tests (t-tests) were performed using the IBM SPSS software for all data."),
    ("Low-affinity ETS sites are necessary for tissue-specific expression\n",
     "To determine if these six low-affinity ETS sites are necessary, we mutated each of them in the enhancer."),
    ("Affinity-optimizing SNVs cause gain-of-function enhancer activity, which can contribute to phenotypes\n",
     "In Ciona, affinity-optimizing SNVs lead to loss of tissue-specific expression in the heart progenitors."),
    ("In vitro protein pull-down assay\n",
     "In total, 500 μg GST-PWWP3 and 500 μg MBP were incubated with the beads overnight."),
    # The next line opens with a name in capitals or with digits, as biology's sentences often do.
    ("Human and mouse Gata4 heart enhancers contain low-affinity ETS sites\n",
     "GATA4 is a key TF within the developing heart."),
    ("Co-IP assay\n", "Co-IP assay was conducted as previously described (Yang et al, 2023)."),
])
def test_a_heading_is_left_out_of_the_quote(heading: str, sentence: str) -> None:
    assert quoted(heading + sentence) == [sentence]


@pytest.mark.parametrize("text", [
    # A sentence broken by a page's furniture or a line that ends mid-phrase: not a heading.
    "To our knowledge, only three studies search for an affinity increase\nDev Cell. Author manuscript; available.",
    "Therefore, we explored whether KIR+CD8+ T cells can suppress\nT cells from patients with rheumatoid arthritis.",
    "For example, given the sentence\nExtendicare agreed to buy Arbor Health Care for about $ 432 million.",
    "This suggests a stochastic gradient descent procedure of the form\nThis is obtained by canceling out terms.",
    "The co-evolution of\nBd and BdDV-1 and their shared integration locus suggests a long association.",
    "Previous descriptions of relatively common variants were ambiguous\nHsMOR(N40D) allele carriers were studied.",
    # A line of prose that ends a sentence is not a heading of the next.
    "We measured the viscosity of the nuclei in all cells.\nThe cytoplasm was measured in the same way afterwards.",
    # A purpose clause and a lead-in with a footnote's number are not headings.
    "To enable\nLLMs to follow natural language instructions, we tune them on tasks phrased as instructions.",
    "In the words of one patient:2\nI had been studying CLL through the internet for a long time.",
    # One line, no heading.
    "Region A consists of papers related to deep generative models and their training objectives.",
])
def test_a_sentence_that_only_breaks_a_line_keeps_its_start(text: str) -> None:
    first_end = text.find(".") + 1 if text.find(".") < text.find("\n") else len(text)
    assert sentence_start(text, 0, first_end) == 0


def test_a_capitalised_run_in_heading_is_cut_as_before() -> None:
    run_in = "Training Data To train our model, we use a subset of the Semantic Scholar corpus of papers."
    assert quoted(run_in) == [run_in[len("Training Data "):]]
