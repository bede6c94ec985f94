"""The best recall@10 any ranking can reach on the retrieval contract check, under the per-paper cap.

The check (``../shared/checks/retrieval``) imports every snippet cited by a ScholarQA-Multi expert
answer as one datastore record and asks 40 of the questions (shuffled with seed 7). Its recall@10
counts the cited snippets found, over min(cited, 10). Quire keeps at most 3 passages of a paper
(OpenScholar's rule; a paper is recognised by DOI, arXiv id or normalised title), and some
answers cite up to 6 snippets of one paper, so no ranking can find them all. This prints that
ceiling with the product's own paper identity (engine.retrieve.dedupe) and lists the questions
the cap limits.

    python benchmarks/experiments/check_recall_ceiling.py [--per-paper 3]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.retrieve.dedupe import MIN_TITLE_CHARS, normalize_title

HUMAN_ANSWERS = Path(__file__).resolve().parents[3] / "shared" / "eval" / "scholarqa-multi" / "human_answers.json"


def check_questions(path: Path = HUMAN_ANSWERS) -> list[tuple[str, list[str]]]:
    """The check's 40 questions, each with the titles of the snippets its answer cites (as the check builds them)."""
    questions = []
    for record in json.loads(path.read_text(encoding="utf-8")):
        contexts = record["ctxs"] if isinstance(record["ctxs"], list) else ast.literal_eval(record["ctxs"])
        questions.append((record["input"], [c.get("title") if isinstance(c.get("title"), str) else ""
                                            for c in contexts]))
    random.Random(7).shuffle(questions)
    return questions[:40]


def reachable(titles: list[str], per_paper: int) -> int:
    """How many of one question's cited snippets a top 10 can hold when each paper keeps ``per_paper``."""
    papers = Counter(normalize_title(t) if len(normalize_title(t)) >= MIN_TITLE_CHARS else f"#{i}"
                     for i, t in enumerate(titles))
    return min(sum(min(per_paper, n) if per_paper > 0 else n for n in papers.values()), 10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-paper", type=int, default=3)
    args = parser.parse_args()
    questions = check_questions()
    total = 0.0
    for question, titles in questions:
        found = reachable(titles, args.per_paper)
        best = found / min(len(titles), 10)
        total += best
        if best < 1:
            print(f"  {best:.2f}  {len(titles)} cited, {found} reachable: {question[:80]!r}")
    print(f"recall@10 ceiling with {args.per_paper or 'no'} passages per paper: {total / len(questions):.3f} "
          f"on {len(questions)} questions")


if __name__ == "__main__":
    main()
