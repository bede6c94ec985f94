"""Does the digest state the answer first in every language? XQuAD through `quire ask`'s own path.

For each of XQuAD's five languages (../shared/eval/xquad/, CC BY-SA 4.0), its 240 paragraphs become
one datastore of a fresh library, and a sample of questions (the same ids in every language, seed 7)
is asked as the product asks it (the evidence digest, that datastore only, no rewriting). Counted:
the question's answer span (its text in that language; spaces and case ignored) in the answer's first
400 characters, and anywhere in it.

Keyword search only (``--dense`` embeds each datastore with the library's embedder first, which on a
laptop CPU takes minutes a language): on XQuAD it finds the question's paragraph in the top 5 for
0.965-0.995 of questions in every language (benchmarks/xquad.py), so what this measures is mostly
the reading: sentences split at each script's marks, and the answer reader, trained on English.

    python benchmarks/xquad_digest.py [--questions 40] [--dense] [--json benchmarks/results/xquad_digest.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine

XQUAD = Path(__file__).resolve().parents[2] / "shared" / "eval" / "xquad"
LANGUAGES = ("en", "de", "es", "zh", "ar")
ASKED = RequestOptions(rewrite=False, feedback=False, save=False)


def load(language: str) -> tuple[list[dict[str, str]], dict[str, tuple[str, str]]]:
    """The language's paragraphs as datastore records, and each question id's (question, answer text)."""
    data = json.loads((XQUAD / f"xquad.{language}.json").read_text(encoding="utf-8"))
    records, questions = [], {}
    for article in data["data"]:
        for number, paragraph in enumerate(article["paragraphs"]):
            records.append({"id": f"{article['title']}-{number}", "title": article["title"],
                            "text": paragraph["context"]})
            for qa in paragraph["qas"]:
                questions[qa["id"]] = (qa["question"], qa["answers"][0]["text"])
    return records, questions


def _squash(text: str) -> str:
    return "".join(text.split()).casefold()


def measure(language: str, records: list[dict[str, str]], asked: list[tuple[str, str]], dense: bool,
            work: Path) -> dict[str, Any]:
    store = work / f"xquad-{language}.jsonl"
    store.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    first = anywhere = 0
    seconds = []
    with Engine(home=work / f"home-{language}") as engine:
        engine.add_datastore(store, "xquad", embed=dense)
        for question, answer in asked:
            started = time.perf_counter()
            reply = engine.ask(AskRequest(question, scope=Scope(source="xquad"), mode="digest", options=ASKED))
            seconds.append(time.perf_counter() - started)
            first += _squash(answer) in _squash(reply.text[:400])
            anywhere += _squash(answer) in _squash(reply.text)
    seconds.sort()
    return {"questions": len(asked), "answer_in_first_400": round(first / len(asked), 3),
            "answer_anywhere": round(anywhere / len(asked), 3),
            "median_seconds": round(seconds[len(seconds) // 2], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dense", action="store_true", help="embed each datastore first (slow on a CPU)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    loaded = {language: load(language) for language in LANGUAGES}
    ids = sorted(set.intersection(*(set(questions) for _, questions in loaded.values())))
    sample = random.Random(args.seed).sample(ids, min(args.questions, len(ids)))
    results: dict[str, Any] = {"questions": len(sample), "seed": args.seed, "dense": args.dense, "by_language": {}}
    with tempfile.TemporaryDirectory() as folder:
        for language in LANGUAGES:
            records, questions = loaded[language]
            row = measure(language, records, [questions[qid] for qid in sample], args.dense, Path(folder))
            results["by_language"][language] = row
            print(f"{language}: answer in the first 400 characters {row['answer_in_first_400']:.3f}, anywhere "
                  f"{row['answer_anywhere']:.3f}, median {row['median_seconds']} s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
