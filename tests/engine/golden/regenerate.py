"""Write tests/engine/golden/corpus.json from the shared corpus, and print it for review.

Run by hand when the ingest pipeline changes on purpose:

    .venv/bin/python tests/engine/golden/regenerate.py [PAPERS_DIR]

then read the printed table against the papers' first pages before committing. The golden
file pins what a reader can check on the page (printed title and authors, page count),
tolerance bands around the counts of running-text and of caption passages, whether a reference
list was found, and one sentence per paper whose highlight rectangles the test re-reads from the
PDF.

A value the extractor gets wrong is fixed in engine/ingest, not blessed here. Where that is not
done yet, ``KNOWN_ISSUES`` records the value printed on the page and why it is missed; the
golden file keeps the printed value and the test expects it to fail until the extractor is fixed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from engine.ingest import parse_pdf
from engine.text.sentences import ends_sentence, starts_sentence
from engine.types import Passage

SHARED_CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"  # ../shared beside the checkout
DEFAULT_CORPUS = Path(os.environ.get("QUIRE_TEST_CORPUS", SHARED_CORPUS)) / "papers"
GOLDEN = Path(__file__).with_name("corpus.json")
KNOWN_ISSUES: dict[str, dict[str, object]] = {
    # "paper.pdf": {"authors": [...as printed...], "why": "what the extractor misses and why"},
}

# Passage counts move a little whenever chunking or layout improves; a band of +-15% (at least
# 2) still catches a paper that lost its second column or collapsed into one passage.
COUNT_SLACK = 0.15


def sentences(passage: Passage) -> list[tuple[int, int]]:
    """Character spans of the sentences in a passage, split where the chunker would split."""
    words = [passage.text[w.start:w.end] for w in passage.words]
    spans: list[tuple[int, int]] = []
    first = 0
    for index, word in enumerate(words):
        last = index == len(words) - 1
        if last or (ends_sentence(word) and starts_sentence(words[index + 1])):
            spans.append((passage.words[first].start, passage.words[index].end))
            first = index + 1
    return spans


def is_prose(sentence: str) -> bool:
    """8-60 words of running text: not a table row, a formula or a caption run into a heading."""
    words = sentence.split()
    wordlike = sum(word.strip(".,;:()“”\"'").isalpha() for word in words)
    return 8 <= len(words) <= 60 and "\n" not in sentence and wordlike >= 0.8 * len(words)


def sample_sentence(passages: list[Passage]) -> dict[str, object]:
    """A fixed, reproducible pick: the middle prose sentence of the middle body passage that has one."""
    body = [p for p in passages if not p.is_reference and p.kind == "text"] or passages
    candidates = [(p, [s for s in sentences(p) if is_prose(p.text[s[0]:s[1]])]) for p in body]
    with_prose = [(p, spans) for p, spans in candidates if spans] or [(p, sentences(p)) for p in body]
    passage, spans = with_prose[len(with_prose) // 2]
    start, end = spans[len(spans) // 2]
    return {"ordinal": passage.ordinal, "start": start, "end": end, "sentence": passage.text[start:end]}


def golden_entry(path: Path) -> dict[str, object]:
    parsed = parse_pdf(path)
    count = sum(p.kind == "text" for p in parsed.passages)
    slack = max(2, round(count * COUNT_SLACK))
    captions = sum(p.kind == "caption" for p in parsed.passages)
    caption_slack = max(1, round(captions * COUNT_SLACK))
    entry: dict[str, object] = {
        "title": parsed.meta.bib.title,
        "authors": list(parsed.meta.bib.authors),
        "page_count": len(parsed.pages),
        "passages": {"min": max(1, count - slack), "max": count + slack, "when_generated": count},
        "captions": {"min": max(0, captions - caption_slack), "max": captions + caption_slack,
                     "when_generated": captions},
        "has_references": any(p.is_reference for p in parsed.passages),
        "sample": sample_sentence(parsed.passages),
    }
    known = KNOWN_ISSUES.get(path.name)
    if known:
        entry.update(known_issue=known["why"], **{k: v for k, v in known.items() if k != "why"})
    return entry


def main(argv: list[str]) -> None:
    corpus = Path(argv[1]) if len(argv) > 1 else DEFAULT_CORPUS
    golden = {path.name: golden_entry(path) for path in sorted(corpus.glob("*.pdf"))}
    GOLDEN.write_text(json.dumps(golden, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, entry in golden.items():
        print(f"{name}\n  title:   {entry['title']!r}\n  authors: {', '.join(entry['authors'])}\n"
              f"  pages {entry['page_count']}, passages {entry['passages']}, captions {entry['captions']}, "
              f"references {entry['has_references']}\n"
              f"  sample:  {entry['sample']['sentence']!r}")  # type: ignore[index]
    print(f"wrote {GOLDEN} ({len(golden)} papers)")


if __name__ == "__main__":
    main(sys.argv)
