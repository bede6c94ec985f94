"""Saying "no passage mentions it" for a "What is ..." question with no names: how often the rule silences a
question its library answers, and how often it speaks up where the library cannot answer.

    python benchmarks/opening_fit.py library           # once: COVID-QA's training papers as a library
    python benchmarks/what_questions.py --train HOME --check HOME --elsewhere HOME [--out FILE]

COVID-QA's questions of the form "What is/are/was/were ..." that give no name (engine.synthesis.mentions
``asked_thing``) are asked twice: of a library holding their papers, and of ``--elsewhere``, a library
without them (the corpus and LitQA2 dev papers, with the sample datastore). For each share of the asked
thing's content words that one passage must hold, the count of questions the rule would mark "no passage
found mentions ..." in each library. The share is chosen on the training file's questions (``--train``: the
library of benchmarks/opening_fit.py) as 0.1 under the lowest share an answerable one reaches; the check
file's (``--check``: the ``checks/reader`` library, ``$CHECK_HOME/reader/q2``) only report.

The passages are what the digest reads: the question's 12 best search hits (the settings' top_n), and the
12 best for the asked thing alone (the rule's probe, engine.synthesis.pipeline). Search only: no answer is
written, so the whole run takes a minute. Results: benchmarks/results/what_questions.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import emit  # noqa: E402

from engine.cite.windows import content_words  # noqa: E402
from engine.service import Engine  # noqa: E402
from engine.synthesis.mentions import THING_SHARE, asked_thing  # noqa: E402

SHARED = ROOT.parent / "shared"
SHARES = (0.25, 1 / 3, 0.4, 0.5, 0.6)
TOP_N = 12


def questions(split: str) -> list[str]:
    data = json.loads((SHARED / "eval" / "covidqa" / f"covidqa-{split}.json").read_text(encoding="utf-8"))["data"]
    asked = [" ".join(qa["question"].split()) for article in data for paragraph in article["paragraphs"]
             for qa in paragraph["qas"]]
    return [q for q in dict.fromkeys(asked) if asked_thing(q)]


def best_shares(home: Path, asked: list[str]) -> list[float]:
    """Per question, the largest share of the asked thing's content words that one passage read holds."""
    engine = Engine(home)
    found = []
    for question in asked:
        thing = asked_thing(question)
        wanted = content_words(thing)
        texts = [h.text for h in engine.search(question, TOP_N, rewrite=False)]
        texts += [h.text for h in engine.search(thing, TOP_N, rewrite=False)]
        found.append(max((len(wanted & content_words(t)) / len(wanted) for t in texts), default=0.0))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, required=True, help="a library of COVID-QA's training papers")
    parser.add_argument("--check", type=Path, required=True, help="a library of COVID-QA's check papers")
    parser.add_argument("--elsewhere", type=Path, required=True, help="a library without either")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "what_questions.json")
    args = parser.parse_args()
    results: dict[str, Any] = {"command": " ".join(["python benchmarks/what_questions.py", *sys.argv[1:]]),
                               "shipped_share": round(THING_SHARE, 3), "load_average": round(os.getloadavg()[0], 2)}
    for split, home in (("train", args.train), ("check", args.check)):
        asked = questions(split)
        shares = {"answering": best_shares(home, asked), "elsewhere": best_shares(args.elsewhere, asked)}
        results[split] = {
            "questions": len(asked),
            "silenced": {f"{share:.2f}": {name: sum(s < share for s in found) for name, found in shares.items()}
                         for share in SHARES},
            "lowest_answering": sorted(zip(shares["answering"], asked, strict=True))[:5]}
    lowest = results["train"]["lowest_answering"][0][0] if results["train"]["lowest_answering"] else 1.0
    # 0.1 under the lowest, down to a tenth: a share an answerable training question never came near.
    results["chosen_share"] = max(0.0, math.floor(round(10 * (lowest - 0.1), 6)) / 10)
    emit(results, args.out)


if __name__ == "__main__":
    main()
