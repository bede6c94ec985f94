"""A paper's abbreviations expanded before its sentences are ranked: does the answering sentence rank higher?

    pip install abbreviations==0.2.5          # Schwartz & Hearst's algorithm (MIT); not a product dependency
    python benchmarks/reader_data.py          # once
    python benchmarks/experiments/abbreviation_expansion.py

Scientific papers define an abbreviation once ("insertion loci (ILs)") and then use it ("12,309
mandarin-specific ILs"); a question may use the long form where the answering sentence has the short one,
or the other way round. Each paper's definitions are found with the Schwartz-Hearst algorithm over its
sentences; a sentence (and its neighbours) then carries the long form after the abbreviation's first use,
and a question the long form of an abbreviation it uses (or the abbreviation of a long form it uses). The
answering sentence's rank in its paper is compared, as the product ranks (reader + hand score at its
weight, the reader reading the hand score's best 32), for:

- ``base``: nothing expanded (as shipped);
- ``hand``: the hand score reads the expanded question and sentences, the reader the original text;
- ``both``: the reader reads the expanded text too.

The six held-out COVID-QA training papers (32 questions) and the check papers (285, never fitted on) are
reported. Results: benchmarks/results/abbreviation_expansion.json; conclusions in docs/history/experiments.md.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from reader import descending, rank_stats, reader_and_scorer  # noqa: E402
from reader_data import DEFAULT_OUT  # noqa: E402
from train_reader import dev_papers, read_data  # noqa: E402

from engine.cite.reader import reader_text  # noqa: E402
from engine.synthesis.evidence import answer_scores, hand_scores  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "abbreviation_expansion.json"
READ_LIMIT = 32


def definitions(sentences: list[str]) -> dict[str, str]:
    """The paper's abbreviations and their long forms (two words or more)."""
    from abbreviations import schwartz_hearst

    found = schwartz_hearst.extract_abbreviation_definition_pairs(doc_text=" ".join(sentences),
                                                                  most_common_definition=True)
    return {short: long for short, long in found.items() if len(short) >= 2 and len(long.split()) >= 2}


def _used(short: str, text: str) -> re.Match[str] | None:
    return re.search(r"(?<![\w-])" + re.escape(short) + r"(?:s)?(?![\w-])", text)


def expand(text: str, defined: dict[str, str]) -> str:
    """``text`` with each defined abbreviation's long form after its first use, and each long form's
    abbreviation after it."""
    out = text
    for short, long in defined.items():
        if long.lower() not in out.lower() and (used := _used(short, out)):
            out = f"{out[:used.end()]} ({long}){out[used.end():]}"
    for short, long in defined.items():
        if long.lower() in out.lower() and not re.search(r"(?<![\w-])" + re.escape(short) + r"(?![\w-])", out):
            at = out.lower().index(long.lower()) + len(long)
            out = f"{out[:at]} ({short}){out[at:]}"
    return out


def rank(question: dict[str, Any], data: dict[str, Any], reader: Any, scorer: Any,
         defined: dict[str, str]) -> dict[str, list[int]]:
    candidates = data["papers"][question["paper"]]
    texts = [c["text"] for c in candidates]
    expanded = [expand(t, defined) for t in texts]
    asked = expand(question["question"], defined)
    orders = {}
    for label, query, ranked, reads_expanded in (("base", question["question"], texts, False),
                                                 ("hand", asked, expanded, False), ("both", asked, expanded, True)):
        hand = hand_scores(query, ranked, scorer)
        chosen = descending(hand)[:READ_LIMIT]
        if reads_expanded:
            read_texts = [reader_text(expanded[i], expand(candidates[i]["before"], defined),
                                      expand(candidates[i]["after"], defined)) for i in chosen]
        else:
            read_texts = [reader_text(texts[i], candidates[i]["before"], candidates[i]["after"]) for i in chosen]
        scores = reader.scores(query if reads_expanded else question["question"], read_texts)
        read = np.full(len(texts), -np.inf, dtype=np.float32)
        read[chosen] = scores
        orders[label] = descending(answer_scores(read, hand, reader.hand_weight))
    return orders


def main() -> None:
    data = read_data(DEFAULT_OUT)
    reader, scorer = reader_and_scorer()
    held = dev_papers(data["questions"])
    sets = {"held_out_training_papers": [q for q in data["questions"] if q["paper"] in held],
            "check_papers": [q for q in data["questions"] if q["split"] == "check"]}
    defined = {paper: definitions([c["text"] for c in data["papers"][paper]])
               for paper in {q["paper"] for qs in sets.values() for q in qs}}
    results: dict[str, Any] = {}
    for name, questions in sets.items():
        rows = [rank(q, data, reader, scorer, defined[q["paper"]]) for q in questions]
        answers = [q["also"] for q in questions]
        results[name] = {
            "questions": len(questions),
            "questions_expanded": sum(expand(q["question"], defined[q["paper"]]) != q["question"] for q in questions),
            "answer_sentence_expanded": sum(any(expand(data["papers"][q["paper"]][i]["text"], defined[q["paper"]])
                                                != data["papers"][q["paper"]][i]["text"] for i in q["also"])
                                            for q in questions),
            **{label: rank_stats([r[label] for r in rows], answers) for label in ("base", "hand", "both")}}
        print(name, json.dumps(results[name]), flush=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
