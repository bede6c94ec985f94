"""The support judge's training data: every labelled pair, each marked train or held out.

    python benchmarks/judge_data.py [--out ~/.cache/quire-train/judge-data.jsonl.gz]

One JSON line per pair: ``claim``, ``evidence``, ``label`` (``supports``, ``refutes``, ``neutral``,
or FEVER's two-way ``not_supports``), ``source`` and ``held_out`` (true for the 5 % of each
source kept back by a hash of the pair's id, the same on every run and machine). Sources:

- ``../shared/eval/nli-train``: VitaminC, SNLI, FEVER, Check-COVID (real labelled pairs);
- CLIMATE-FEVER (held out by claim id, so no claim is on both sides);
- FactCC-style pairs from real scientific text (benchmarks/judge_pairs.py): the sample datastore's
  papers (machine learning) and the abstracts of PubMedQA's training-side questions (biomedicine;
  its 500 test questions are never used), held out by paper id;
- Evidence Inference 2.0's training trials (``evidence-inference``; its validation trials are the test of
  benchmarks/judge_direction.py): the claim that states the doctors' label ("INTERVENTION significantly
  increased OUTCOME compared with COMPARATOR") against the evidence span is ``supports``, the opposite
  direction ``refutes``; held out by trial;
- evidence-side pairs from the same datastore and PubMedQA texts (``synthetic-evidence-side``): the paper's
  sentence as the claim against its window with that sentence negated, its number or direction changed
  (``refutes``) or its entity swapped (``neutral``), and claims with one content word swapped (``neutral``);
- with ``--conclusions`` only (an experiment that did not ship, docs/history/experiments.md): conclusions
  against results, from the same PubMedQA training-side abstracts. The authors' own conclusion
  sentence against the results window that shares most words with it is ``supports`` (a loose,
  inferred support, as in health claims); that sentence with its negation flipped is ``refutes``;
  another paper's conclusion against the same window is ``neutral``.

Never HealthVer or LitQA2: those are tests.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_pairs import EVIDENCE_SIDE_KINDS, LABELS, datastore_texts, documents_sentences, make_pairs, negate

from engine.cite.windows import content_words, overlap, quote_windows

SHARED = Path(__file__).resolve().parents[2] / "shared"
DEFAULT_OUT = Path.home() / ".cache" / "quire-train" / "judge-data.jsonl.gz"
HELD_OUT_SHARE = 0.05
# Perturbation kinds drawn for the synthetic pairs: true sentences weigh as much as the rest together.
SYNTHETIC_KINDS = ("true", "true", "true", "true", "negation", "number", "direction", "entity", "appended",
                   "appended", "other", "same-paper")


def held_out(key: str, share: float = HELD_OUT_SHARE) -> bool:
    """A stable split by key: the same ids are held out on every run and machine."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def nli_train(shared: Path) -> Iterator[dict[str, object]]:
    for name in ("vitaminc", "snli", "fever", "checkcovid"):
        with gzip.open(shared / "eval" / "nli-train" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                yield {"claim": record["claim"], "evidence": record["evidence"], "label": record["label"],
                       "source": name, "held_out": held_out(f"{name}:{record['id']}")}


def climate_fever(shared: Path) -> Iterator[dict[str, object]]:
    mapping = {"SUPPORTS": "supports", "REFUTES": "refutes", "NOT_ENOUGH_INFO": "neutral"}
    path = shared / "eval" / "climate-fever" / "climate-fever.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        keep_back = held_out(f"climate-fever:{record['claim_id']}")
        for evidence in record["evidences"]:
            yield {"claim": record["claim"], "evidence": evidence["evidence"],
                   "label": mapping[evidence["evidence_label"]], "source": "climate-fever", "held_out": keep_back}


def pubmedqa_texts(shared: Path) -> Iterator[tuple[str, str]]:
    """(id, abstract) of PubMedQA's training-side questions (its test ids are left alone)."""
    folder = shared / "eval" / "pubmedqa"
    records = json.loads((folder / "ori_pqal.json").read_text(encoding="utf-8"))
    test_ids = set(json.loads((folder / "test_ground_truth.json").read_text(encoding="utf-8")))
    for pmid, record in records.items():
        if pmid not in test_ids:
            yield pmid, " ".join(record["CONTEXTS"])


def _flip_negation(sentence: str) -> str | None:
    """The sentence's first "not"/"no" taken out, or else a "not" put in; None when neither can be done."""
    match = re.search(r"\b(not|no)\s+", sentence)
    if match:
        return sentence[:match.start()] + sentence[match.end():]
    return negate(sentence)


def pubmedqa_conclusions(shared: Path, per_paper: int = 2, seed: int = 13) -> Iterator[dict[str, object]]:
    """Each training-side abstract's conclusion sentences against its results (see the module's notes)."""
    folder = shared / "eval" / "pubmedqa"
    records = json.loads((folder / "ori_pqal.json").read_text(encoding="utf-8"))
    test_ids = set(json.loads((folder / "test_ground_truth.json").read_text(encoding="utf-8")))
    rng = random.Random(seed)
    papers = []
    for pmid, record in sorted(records.items()):
        if pmid in test_ids:
            continue
        results = " ".join(text for text, label in zip(record["CONTEXTS"], record["LABELS"], strict=False)
                           if "RESULT" in label.upper() or "FINDING" in label.upper())
        conclusions = documents_sentences([record["LONG_ANSWER"]])[0]
        if results and conclusions:
            papers.append((pmid, [w.text for w in quote_windows(results)], conclusions))
    for index, (pmid, windows, conclusions) in enumerate(papers):
        keep_back = held_out(f"pubmedqa-conclusions:{pmid}")
        chosen = conclusions if len(conclusions) <= per_paper else [conclusions[0], conclusions[-1]]
        for claim in chosen:
            words = content_words(claim)
            window = max(windows, key=lambda w: overlap(words, content_words(w)))
            if overlap(words, content_words(window)) < 0.25:
                continue  # the results never say it in so many words: no pair to learn from
            base = {"source": "pubmedqa-conclusions", "held_out": keep_back, "evidence": window}
            yield {**base, "claim": claim, "label": "supports", "kind": "conclusion"}
            flipped = _flip_negation(claim)
            if flipped:
                yield {**base, "claim": flipped, "label": "refutes", "kind": "negation"}
            others = [p for j, p in enumerate(papers) if j != index and held_out(
                f"pubmedqa-conclusions:{p[0]}") == keep_back]
            sample = rng.sample(others, min(40, len(others)))
            window_words = content_words(window)
            other = max((c for p in sample for c in p[2]), key=lambda c: overlap(content_words(c), window_words))
            yield {**base, "claim": other, "label": "neutral", "kind": "other-paper"}


def synthetic(name: str, texts: list[tuple[str, str]], per_doc: int, seed: int,
              kinds: tuple[str, ...] = SYNTHETIC_KINDS, prefixed: bool = False) -> Iterator[dict[str, object]]:
    """FactCC-style pairs from each text; a text's pairs are all held out or all trained on.
    ``prefixed``: the ids already name their collection ("datastore:ID"), which decides the split."""
    rng = random.Random(seed)
    for keep_back in (False, True):
        chosen = [text for doc_id, text in texts
                  if held_out(doc_id if prefixed else f"{name}:{doc_id}") == keep_back]
        for pair in make_pairs(documents_sentences(chosen), rng, per_doc=per_doc, kinds=kinds):
            yield {"claim": pair.claim, "evidence": pair.evidence, "label": LABELS[pair.label],
                   "source": f"synthetic-{name}", "kind": pair.kind, "held_out": keep_back}


def evidence_inference() -> Iterator[dict[str, object]]:
    """The direction claims of Evidence Inference's training trials against the doctors' evidence."""
    from judge_direction import direction_claims

    for row in direction_claims("train"):
        yield {"claim": row["claim"], "evidence": row["evidence"],
               "label": "supports" if row["kind"] == "true" else "refutes", "source": "evidence-inference",
               "kind": row["kind"], "held_out": held_out(f"evidence-inference:{row['trial']}")}


def build(shared: Path, seed: int = 13, conclusions: bool = False) -> list[dict[str, object]]:
    rows = list(nli_train(shared)) + list(climate_fever(shared))
    papers = list(datastore_texts(shared / "datastore" / "cs-sample.jsonl.gz"))
    pubmed = list(pubmedqa_texts(shared))
    rows += synthetic("datastore", papers, per_doc=3, seed=seed)
    rows += synthetic("pubmedqa", pubmed, per_doc=6, seed=seed)
    rows += evidence_inference()
    # Their own source name and seed, so the pairs above are the same as before they were added; a text is
    # held out here where it is held out above.
    evidence_side = [(f"datastore:{i}", t) for i, t in papers] + [(f"pubmedqa:{i}", t) for i, t in pubmed]
    rows += synthetic("evidence-side", evidence_side, per_doc=2, seed=seed + 1,
                      kinds=(*EVIDENCE_SIDE_KINDS, "word"), prefixed=True)
    if conclusions:
        rows += pubmedqa_conclusions(shared, seed=seed)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--conclusions", action="store_true", help="add the conclusion-against-results pairs")
    args = parser.parse_args()
    rows = build(args.shared, args.seed, args.conclusions)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = Counter((str(r["source"]), str(r["label"]), bool(r["held_out"])) for r in rows)
    for source in sorted({key[0] for key in counts}):
        parts = {f"{label}{'/held' if held else ''}": n
                 for (name, label, held), n in sorted(counts.items()) if name == source}
        print(source, parts)
    print(f"{len(rows)} pairs -> {args.out}")


if __name__ == "__main__":
    main()
