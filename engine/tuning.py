"""The measured constants of retrieval, answer writing and citation checking: what each does, where it came from.

These are not user settings (those are :mod:`engine.config`, persisted as TOML): each value here was
chosen by a benchmark (or by hand, where its ``origin`` says so) and changing one changes a reported
figure. Before changing one, re-run the benchmark named in its ``origin`` and report the figures
beside the old ones (docs/numbers.md). The modules that use a value keep a module-level name bound
to the field, so a benchmark can still set it for a grid search.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


def tuned(value: float | str, description: str, origin: str) -> Any:
    """A dataclass field holding a measured ``value``: what it does, and the measurement that chose it."""
    return field(default=value, metadata={"description": description, "origin": origin})


@dataclass(frozen=True)
class RetrievalTuning:
    """How search ranks passages (engine/retrieve)."""

    title_weight: float = tuned(
        1.0, "BM25 weight of a passage's paper title column (each FTS row holds its paper's title).",
        "benchmarks/retrieval_quality.py on the scholarly dev set: weighting the title above the text did not help.")
    text_weight: float = tuned(1.0, "BM25 weight of the passage text column.", "as title_weight")
    common_term_share: float = tuned(
        0.3, "A query word found in more than this share of a source's passages is left out of its BM25 query.",
        "benchmarks/retrieval_quality.py: BM25 nDCG@10 0.546 whole, 0.545 pruned at 30 %, 0.531 at 15 %, 0.493 at "
        "5 %; at 100k passages a query with such words cost ~120 ms against 45 ms without.")
    rrf_k: float = tuned(
        60.0, "k of reciprocal rank fusion, which merges the BM25 and dense lists.",
        "Cormack et al.'s k = 60 (TREC runs of 1,000 documents); benchmarks/retrieval_quality.py measures "
        "it on the scholarly dev set.")
    near_duplicate_jaccard: float = tuned(
        0.8, "Word-trigram Jaccard similarity above which two passages count as the same text.",
        "Set by hand: reprints and preprint/published pairs of one paper sit above it.")
    candidates: int = tuned(100, "Passages each retriever returns per source before fusion.", "Set by hand.")
    rerank_depth: int = tuned(30, "Fused candidates the reranker sees.", "Set by hand.")
    fusion: str = tuned(
        "zscore", "How the retrievers' lists are fused: 'zscore' or 'minmax' (score fusion) or 'rrf' (reciprocal "
                  "rank fusion with rrf_k).",
        "benchmarks/retrieval_quality.py, dev set: nDCG@10 0.592 (RRF) -> 0.609 with z-scores and feedback, 0.569 "
        "-> 0.604 without; a passage far ahead in one list keeps its lead, where RRF sees only its rank.")
    bm25_weight: float = tuned(1.0, "Fusion weight of the BM25 list.",
                               "The reference the other weights are set against.")
    dense_weight: float = tuned(
        0.7, "Fusion weight of the dense (embedding) list.",
        "LitQA2 dev key passage in the top 3: 0.76 at 1.0, 0.81 at 0.6-0.7 (both halves up); ScholarQA-Multi "
        "snippets alike at 0.7 and 1.0 (recall@10 0.636 both); docs/history/retrieval.md has the grid.")
    rewrite_weight: float = tuned(0.5, "Fusion weight of the lists searched for the LM's query rewrites.",
                                  "Set by hand, the weight every derived list has.")
    feedback_weight: float = tuned(0.5, "Fusion weight of the BM25 pseudo-relevance feedback list.",
                                   "Set by hand, the weight every derived list has.")
    dense_feedback_list_weight: float = tuned(
        1.0, "Fusion weight of the dense pseudo-relevance feedback (Rocchio) list.",
        "benchmarks/retrieval_quality.py with dense_feedback_weight (docs/history/retrieval.md).")
    feedback_passages: int = tuned(
        5, "First-round passages BM25 pseudo-relevance feedback (RM3-style) takes words from (0: off).",
        "Dev set: hybrid nDCG@10 0.570 -> 0.591, on the tuning and the held-out half alike.")
    feedback_terms: int = tuned(10, "Words the BM25 feedback adds to the question.",
                                "Set by hand with feedback_passages.")
    dense_feedback_passages: int = tuned(
        3, "First-round passages whose mean vector the dense feedback (Rocchio) moves the question toward (0: off).",
        "Dev-set nDCG@10 0.609 -> 0.614 (tuning half +1.2, held-out -0.2; docs/history/retrieval.md), contract-check "
        "recall@10 0.616 -> 0.622, for one more dense search.")
    dense_feedback_weight: float = tuned(
        2.0, "Weight of the passages' mean vector added to the question's in the dense feedback.",
        "As dense_feedback_passages.")
    paper_evidence: float = tuned(
        0.2, "Each fused candidate gains this times the score of the best other candidate of its paper (0: off).",
        "Dev-set nDCG@10 0.621 -> 0.628 (tuning half +0.2, held-out +1.2; best of 0.1-0.4 on the tuning half), "
        "contract check 0.627 -> 0.628.")
    within_paper: float = tuned(
        0.5, "Weight of a candidate's BM25 z-score within its paper when a paper's candidates are re-ordered "
             "among their places (0: off).",
        "Set by hand: the weight every derived list has (retrieve/within_paper.py).")


@dataclass(frozen=True)
class SynthesisTuning:
    """How an answer's evidence is chosen and when a written answer gives way to the digest (engine/synthesis).

    Chosen on the odd-numbered LitQA2 dev questions and reported on the even ones (docs/history/answers.md).
    """

    relevance_threshold: float = tuned(
        0.25, "Absolute relevance floor: under it no passage addresses the question.",
        "benchmarks/answers.py fit, odd LitQA2 half.")
    relative_relevance: float = tuned(
        0.6, "A passage's paper must reach this share of the best paper's relevance.",
        "Odd LitQA2 half, 12 passages: 0.6 -> 7 % of sections from papers not addressing the question, 0.85 -> "
        "4.8 %, 0.9 -> 2.4 %, key passage cited in 90.5 % throughout; on 10 ScholarQA-Multi questions the share "
        "of expert-cited snippets cited is 0.892 with no floor, 0.817 with 0.6, 0.465 with 0.85.")
    table_relative_relevance: float = tuned(
        0.6, "relative_relevance for the table of papers: a paper gets a row when its best passage reaches this share "
             "of the best paper's relevance.", "0.6 kept the key passage as often on the odd half.")
    number_bonus: float = tuned(
        0.15, "Added to a sentence's score when the question asks 'how many' and the sentence states a quantity.",
        "benchmarks/answers.py fit grid (0, 0.1, 0.15, 0.2, 0.3), odd LitQA2 half.")
    name_bonus: float = tuned(
        0.05, "Added when the question asks 'which' and the sentence names something the question does not.",
        "benchmarks/answers.py fit, odd LitQA2 half.")
    counted_bonus: float = tuned(
        0.1, "Added on top of number_bonus when the sentence counts what the question counts ('how many genes').",
        "grid in docs/history/answers.md.")
    rank_penalty: float = tuned(
        0.0, "Subtracted per natural-log unit of search rank.",
        "benchmarks/answers.py fit grid: 0.02 and 0.05 measured worse than 0.")
    length_penalty: float = tuned(
        0.03, "Subtracted per 100 characters over 200: long sentences hold more question words without answering.",
        "Odd LitQA2 half: ideal answer in the first 400 characters 0.476 at 0, 0.571 at 0.03, 0.524 at 0.06.")
    topic_cosine_weight: float = tuned(
        0.4, "Weight of embedding cosine against shared content words in a sentence's topic score.",
        "The support scorer's fitted weight (tests/data/support_pairs.jsonl), reused.")
    second_quote_share: float = tuned(
        0.85, "A passage's next quote must score at least this share of its best one.", "Set by hand.")
    judge_weight: float = tuned(
        0.2, "Weight of the model's P(Yes) against the evidence score when the answer judge reranks sentences.",
        "Odd LitQA2 half (benchmarks/answer_judge.py): 0.1-0.3 gave the same result, 0.2 is its middle.")
    digest_margin: float = tuned(
        0.1, "A written answer whose first sentence is judged worse than the best quote by more than this is "
             "replaced by the digest (auto mode).",
        "Read off 21 written LitQA2 dev answers (docs/history/answers.md).")
    no_answer: float = tuned(
        0.45, "When every judged sentence scores under this, the library does not hold the answer.",
        "benchmarks/no_answer.py: LitQA2 dev odd questions with and without their paper, and 20 ScholarQA-Multi "
        "questions; about 0.1 under the lowest P(Yes) of a question whose answer is there.")
    judge_candidates: int = tuned(
        8, "Sentences with the best answer scores that the answer judge reads.",
        "benchmarks/answer_judge.py, 42 LitQA2 dev questions: the best 8 hold a sentence stating the ideal answer for "
        "15 odd / 16 even, and judging 12, 16 or 24 left the top sentence the same (11 odd / 14 even at "
        "judge_weight 0.2) at up to three times the cost (docs/history/answers.md).")
    per_paper: int = tuned(
        0, "Passages of one paper an answer reads (0: no cap).",
        "Odd LitQA2 half, 12 passages: the key passage cited in 76 % with a cap of 3, 81 % with 5, 90.5 % uncapped; "
        "a specific question's answer is in its paper (docs/history/answers.md).")
    cell_floor: float = tuned(
        0.12, "Topic score under which a cell of the table of papers says 'not stated' instead of quoting the "
              "paper's best sentence for its column (a column question shares few words with its answer).",
        "Set by hand: not measured on a benchmark (docs/history/answers.md).")

    answer_read_limit: int = tuned(
        32, "Sentences of an answer's passages the answer reader reads (those with the best hand-weighted scores); "
            "the rest rank after them.",
        "benchmarks/reader.py, COVID-QA check papers ranked whole (~209 sentences a question): the answering "
        "sentence first in 0.505 reading the best 16, 32 or 64 and reading all; the reader costs ~7-14 ms a "
        "sentence on this machine, so reading all of an answer's ~130 would exceed its 1 s budget.")
    cell_read_limit: int = tuned(
        8, "Sentences of a table cell's passages the answer reader reads (those with the best hand-weighted "
           "scores); the rest rank after them.",
        "benchmarks/reader.py, COVID-QA check papers ranked whole: reading the hand score's best 8 against all "
        "(combined_reading_hand_top8), at a table cell's budget of ~20 ms a cell (docs/history/answers.md).")


@dataclass(frozen=True)
class CitationTuning:
    """How a citation is checked (engine/cite) and when the writer's second reading supports a sentence
    (engine/synthesis/support_reader.py).

    The support judge's own cut-offs on its model's probabilities (supported at P(supports) >= 0.60,
    contradicted at P(refutes) >= 0.225) are not here: ``benchmarks/verify.py --fit`` fitted them for that
    model, and they live with it in resources/models/judge/judge.json, so a retrained judge brings its own.
    """

    embedding_weight: float = tuned(
        0.4, "Weight of embedding cosine in the support scorer's similarity; the rest is the share of the "
             "claim's content words found in the window.",
        "Fitted with the packaged all-MiniLM-L6-v2 on 90 hand-labelled (sentence, passage) pairs "
        "(tests/data/support_pairs.jsonl) by benchmarks/answers.py pairs, best F0.5 over weight and threshold: "
        "precision / recall 0.96 / 0.96, 5-fold 0.94 / 0.96 (docs/numbers.md).")
    support_threshold: float = tuned(
        0.67, "Similarity at which a citation the model made is kept when verification runs without the judge "
              "(SupportScorer(judge=None)); also the gate of the old, gated judge benchmarks/verify.py compares.",
        "Fitted with embedding_weight (benchmarks/answers.py pairs).")
    insert_threshold: float = tuned(
        0.75, "Similarity at which verification without the judge attaches a citation the model did not make: "
              "stricter than support_threshold, because the claim is then the engine's.",
        "Set by hand above support_threshold; benchmarks/answers.py pairs reports its precision and recall.")
    added_clause_coverage: float = tuned(
        0.5, "Share of an added clause's content words (', which ...') a window must hold for the clause to "
             "count as stated; under it the claim is at most partially supported.",
        "Set by hand; benchmarks/verify.py measures the appended-clause perturbation it serves (0.000 of them "
        "still supported, docs/numbers.md).")
    judge_windows: int = tuned(
        3, "Windows of a passage the judge's model reads: those sharing most content words with the claim.",
        "Set by hand: the other windows almost never win, and each costs a model pass (docs/history/verification.md).")
    min_window_words: int = tuned(
        3, "Content words a window needs before the judge's model is asked about it (a figure label or a "
           "heading states nothing).",
        "Set by hand for citations the writer's LitQA2 answers kept against such windows; every verification "
        "figure in docs/history/verification.md is measured with it.")
    veto: float = tuned(
        0.5, "P(refutes) at which the model vetoes a window the similarity gate lets through (the gated judge "
             "only, SupportJudge.gated, kept for comparison).",
        "Set by hand: behind the gate, the model's fitted contradicted cut-off vetoed true sentences of the "
        "labelled corpus pairs, so it vetoes only when 'refutes' is at least as likely as the other two together.")
    contradiction_topic_share: float = tuned(
        0.5, "Share of the claim's content words a window must hold for a negation or direction clash to count "
             "as a contradiction, and, in a claim checked by search, for the judge's model alone to call a "
             "found passage contradicting (below it the passage is on the claim's subject, not on what it says).",
        "The clash rule: set by hand (benchmarks/contradicted.py). Search: benchmarks/check_contradicted.py, "
        "corpus sentences checked by search, model-only marks replayed at 0.2 / 0.34 / 0.5 / 0.67: at 0.5 a true "
        "sentence's false marks fall from 0.20 to 0.03 a claim and every perturbed sentence's own passage is "
        "still marked. Not applied to given evidence: on HealthVer pairs it kept precision (0.39 -> 0.41) and "
        "cut recall (0.17 -> 0.05) (docs/history/verification.md).")
    reader_supported: float = tuned(
        0.25, "Support score (P(Fully) + 1/2 P(Partially)) at which the writer's second reading cites a "
              "passage the judge left unsupported.",
        "benchmarks/lm_judge.py on 113 held-out training-side pairs the judge hands the reader (Check-COVID, "
        "CLIMATE-FEVER, PubMedQA FactCC-style): the lowest score at which 90 % of what the reader accepts is "
        "labelled supports (12 of 13; AUC 0.81). Never fitted on HealthVer or LitQA2 (docs/history/verification.md).")
    reader_passages: int = tuned(
        2, "Passages the writer's second reading reads per unsupported sentence, the cited ones first.",
        "Set by hand: each read costs about 2 s on a 2-core CPU (docs/history/verification.md).")


RETRIEVAL = RetrievalTuning()
SYNTHESIS = SynthesisTuning()
CITATION = CitationTuning()


def described(tuning: RetrievalTuning | SynthesisTuning | CitationTuning) -> list[tuple[str, float, str, str]]:
    """(name, value, description, origin) of each tuned field, for docs and for checks."""
    return [(f.name, getattr(tuning, f.name), f.metadata["description"], f.metadata["origin"])
            for f in fields(tuning)]
