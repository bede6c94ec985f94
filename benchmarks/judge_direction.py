"""The support judge on biomedical direction and on changed evidence.

    python benchmarks/judge_direction.py [--split validation|train] [--limit N] [--per-kind 150]
    python benchmarks/judge_direction.py --write-pairs FILE --split train   # direction claims as training pairs
    python benchmarks/judge_direction.py --judges OLD_DIR NEW_DIR        # judges side by side, in one run

Two suites, each judged by the shipped judge as Quire runs it (windows, checks, thresholds):

- **direction claims** from Evidence Inference 2.0's prompts (``--split validation``: the 90 validation
  trials, never fitted on): for each prompt with a doctor's evidence span, the claim that states the
  doctors' label ("INTERVENTION significantly increased OUTCOME compared with COMPARATOR", "... decreased
  ...", "... did not significantly change ...") and the claim that states the opposite, each against the
  evidence span with the sentences around it. Reported: true kept (judged supported), opposite kept;
- **evidence-side perturbations**, the counterpart of benchmarks/verify.py's claim-side suite: a true sentence
  of a corpus paper as the claim, and its window with that sentence changed (negated, a number changed, a
  direction word flipped) as the evidence. The claim is unchanged, so "supported" is always wrong there.

Results: benchmarks/results/judge_direction.json (the command and the machine's load recorded).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from judge_pairs import change_number, flip_direction, negate  # noqa: E402
from verify import corpus_docs  # noqa: E402

from engine.cite.judge import PairModel, SupportJudge  # noqa: E402

SHARED = ROOT.parent / "shared"
EI = SHARED / "eval" / "evidence-inference"
RESULTS = ROOT / "benchmarks" / "results" / "judge_direction.json"
CONTEXT_CHARS = 300  # the evidence span with this much of the paper around it, as a passage holds it

STATEMENTS = {
    "significantly increased": "{i} significantly increased {o} compared with {c}.",
    "significantly decreased": "{i} significantly decreased {o} compared with {c}.",
    "no significant difference": "{i} did not significantly change {o} compared with {c}.",
}
OPPOSITE = {"significantly increased": "significantly decreased",
            "significantly decreased": "significantly increased",
            "no significant difference": "significantly increased"}


def direction_claims(split: str) -> list[dict[str, str]]:
    """One true and one opposite claim per (prompt, evidence span) of the split's trials."""
    ids = set((EI / "splits" / f"ev2_{split}_article_ids.txt").read_text().split())
    prompts = {}
    with (EI / "prompts_merged.csv").open(encoding="utf-8") as file:
        for row in csv.DictReader(file):
            prompts[row["PromptID"]] = row
    claims, seen = [], set()
    with (EI / "v2_annotations.csv").open(encoding="utf-8") as file:
        for row in csv.DictReader(file):
            prompt = prompts.get(row["PromptID"])
            label = row["Label"].strip()
            if (prompt is None or prompt["PMCID"] not in ids or label not in STATEMENTS
                    or row["Valid Label"] != "True" or row["PromptID"] in seen):
                continue
            start, end = int(row["Evidence Start"] or -1), int(row["Evidence End"] or -1)
            path = EI / "txt" / f"PMC{prompt['PMCID']}.txt"
            if not (0 <= start < end) or not path.is_file():
                continue
            seen.add(row["PromptID"])
            text = path.read_text(encoding="utf-8")
            evidence = " ".join(text[max(0, start - CONTEXT_CHARS):end + CONTEXT_CHARS].split())
            parts = {"i": prompt["Intervention"].strip(), "o": prompt["Outcome"].strip(),
                     "c": prompt["Comparator"].strip()}
            for kind, said in (("true", label), ("opposite", OPPOSITE[label])):
                claim = STATEMENTS[said].format(**parts)
                claims.append({"claim": claim[0].upper() + claim[1:], "evidence": evidence, "kind": kind,
                               "label": label, "prompt": row["PromptID"], "trial": prompt["PMCID"]})
    return claims


def evidence_side_suite(per_kind: int, seed: int = 7) -> list[dict[str, str]]:
    """A true sentence as the claim against its window with that sentence changed."""
    rng = random.Random(seed)
    docs = [d for d in corpus_docs(SHARED) if len(d) >= 3]
    suite: list[dict[str, str]] = []
    for kind, change in (("true", lambda s: s), ("negated", negate),
                         ("number", lambda s: change_number(s, rng, references=False)),
                         ("direction", lambda s: flip_direction(s, rng))):
        made = 0
        for _ in range(per_kind * 40):
            if made >= per_kind:
                break
            sentences = rng.choice(docs)
            at = rng.randrange(len(sentences))
            changed = change(sentences[at])
            if changed is None or (kind != "true" and changed == sentences[at]):
                continue
            window = [*sentences[max(0, at - 1):at], changed, *sentences[at + 1:at + 2]]
            suite.append({"claim": sentences[at], "evidence": " ".join(window), "kind": kind})
            made += 1
    return suite


def judged(judge: SupportJudge, rows: list[dict[str, str]]) -> dict[str, Any]:
    verdicts = judge.judge_many([(r["claim"], r["evidence"]) for r in rows])
    kinds = sorted({r["kind"] for r in rows})
    out: dict[str, Any] = {}
    for kind in kinds:
        mine = [v for r, v in zip(rows, verdicts, strict=True) if r["kind"] == kind]
        out[kind] = {"pairs": len(mine), "kept": round(sum(v.supports for v in mine) / max(1, len(mine)), 4),
                     "contradicted": round(sum(v.verdict == "contradicted" for v in mine) / max(1, len(mine)), 4)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("validation", "train"), default="validation")
    parser.add_argument("--limit", type=int, help="at most this many prompts' claims")
    parser.add_argument("--per-kind", type=int, default=150)
    parser.add_argument("--write-pairs", type=Path, help="write the direction claims as JSONL and stop")
    parser.add_argument("--judges", type=Path, nargs="*",
                        help="judge folders (model.int8.onnx, judge.json) to compare; default: the shipped one")
    args = parser.parse_args()
    claims = direction_claims(args.split)[:None if args.limit is None else 2 * args.limit]
    if args.write_pairs:
        with args.write_pairs.open("w", encoding="utf-8") as out:
            for claim in claims:
                out.write(json.dumps(claim) + "\n")
        print(f"{len(claims)} claims -> {args.write_pairs}")
        return
    results: dict[str, Any] = {"command": " ".join(["python benchmarks/judge_direction.py", *sys.argv[1:]]),
                               "load_average_start": round(os.getloadavg()[0], 2)}
    suite = evidence_side_suite(args.per_kind)
    for folder in args.judges or [None]:
        judge = SupportJudge(PairModel(folder, meta_name="judge.json", what="judge")) if folder else SupportJudge()
        found = {"direction": {"split": args.split, **judged(judge, claims)}, "evidence_side": judged(judge, suite)}
        if folder is None:
            results.update(found)
        else:
            results[str(folder)] = found
    results["load_average_end"] = round(os.getloadavg()[0], 2)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
