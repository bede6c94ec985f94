"""How well and how fast a passage's and a question's language is told (engine/text/language.py).

Over XQuAD's five languages (../shared/eval/xquad/): every paragraph (a passage, ~120 words), the
first sentence of each (a short passage, ~25 words) and every question, each detected as ingest
(``detect_language``) and search (``question_language``) do. Reports accuracy and mean
milliseconds per text; ``--full`` also times a paragraph detected whole instead of its first
``SAMPLE_CHARS`` characters and questions by lingua alone, ``--high`` lingua's high-accuracy mode
(~1 GB of models) beside it.

    python benchmarks/language_detection.py [--full] [--high] [--json benchmarks/results/language_detection.json]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.text import language as detection

XQUAD = Path(__file__).resolve().parents[2] / "shared" / "eval" / "xquad"
LANGUAGES = ("en", "de", "es", "zh", "ar")
_FIRST_SENTENCE = re.compile(r"^.+?[.!?。؟](?=\s|$)|^.+", re.S)


def texts(language: str) -> dict[str, list[str]]:
    data = json.loads((XQUAD / f"xquad.{language}.json").read_text(encoding="utf-8"))
    paragraphs = [p["context"] for article in data["data"] for p in article["paragraphs"]]
    questions = [qa["question"] for article in data["data"] for p in article["paragraphs"] for qa in p["qas"]]
    sentences = [m.group() for m in map(_FIRST_SENTENCE.match, paragraphs) if m]
    return {"paragraph": paragraphs, "first sentence": sentences, "question": questions}


def measure(detect: Callable[[str], str], items: Sequence[str], language: str) -> dict[str, float]:
    started = time.perf_counter()
    right = sum(detect(text) == language for text in items)
    seconds = time.perf_counter() - started
    return {"accuracy": round(right / len(items), 3), "ms": round(1000 * seconds / len(items), 2), "n": len(items)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="also detect each paragraph whole")
    parser.add_argument("--high", action="store_true", help="also lingua's high-accuracy mode")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    started = time.perf_counter()
    detection.detect_language("Ein kurzer Satz, um die Modelle zu laden.")
    results: dict[str, Any] = {"sample_chars": detection.SAMPLE_CHARS, "by_language": {}}
    detectors: dict[str, tuple[str, Callable[[str], str]]] = {
        "passage": ("paragraph", detection.detect_language),
        "short passage": ("first sentence", detection.detect_language),
        "question (as a passage)": ("question", detection.detect_language),
        "question": ("question", detection.question_language),
    }
    if args.full:
        def whole(text: str) -> str:
            found = detection._lingua().detect_language_of(text)
            return "" if found is None else found.iso_code_639_1.name.lower()
        detectors["passage, detected whole"] = ("paragraph", whole)
        detectors["question, lingua alone"] = ("question", whole)
    if args.high:
        from lingua import LanguageDetectorBuilder

        high = LanguageDetectorBuilder.from_all_languages().build()

        def high_mode(text: str) -> str:
            found = high.detect_language_of(text)
            return "" if found is None else found.iso_code_639_1.name.lower()
        detectors["question, high accuracy"] = ("question", high_mode)
        detectors["short passage, high accuracy"] = ("first sentence", high_mode)
    for language in LANGUAGES:
        sets = texts(language)
        row = {name: measure(detect, sets[kind], language) for name, (kind, detect) in detectors.items()}
        results["by_language"][language] = row
        print(language, "  ".join(f"{name}: {m['accuracy']:.3f} ({m['ms']} ms)" for name, m in row.items()), flush=True)
    results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    results["seconds"] = round(time.perf_counter() - started, 1)
    print(f"peak memory {results['peak_rss_mb']} MB")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
