"""Questions written by the writer model for the answer reader to learn from (doc2query style).

    python benchmarks/reader_questions.py --model WRITER.gguf [--out ~/.cache/quire-train/reader-generated.jsonl]

COVID-QA gives the reader 544 experts' questions to learn from, too few for the settings to matter
(benchmarks/results/reader_sweep.json). Here the writer (Qwen2.5-Coder-1.5B-Instruct, the model
``../shared/models/fetch-writer`` assembles) reads one sentence of a paper and writes a question that
the sentence answers; benchmarks/reader_data.py then makes that sentence the answer and the paper's
other sentences the non-answers. The sentences come only from papers the reader may be fitted on:

- COVID-QA's training papers (CC BY; questions Apache-2.0), but not the six held out to choose the
  epoch and never its check papers;
- PubMedQA's training-side abstracts (MIT), never its 500 test abstracts; a results sentence is asked
  about, the abstract's other sentences are its non-answers.

LitQA2, ScholarQA-Multi, the demo corpus and COVID-QA's check file are never read. Each line of the
output is one question; a run started again skips the sentences already asked about, so it resumes.
About 2.4 s a question on two CPU cores (1,189 sentences: 50 minutes); measured use: docs/history/answers.md.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from reader_data import SHARED, paragraph_candidates  # noqa: E402

DEFAULT_OUT = Path.home() / ".cache" / "quire-train" / "reader-generated.jsonl"
INSTRUCTIONS = (
    "You help build a test of a literature search tool. You are shown one sentence of a scientific paper. "
    "Write one question that a researcher could type and that this sentence answers directly: ask about its "
    "specific finding, number, method, cause or definition. Write it as the researcher would before reading "
    "the paper: do not copy the sentence's wording where other words are natural, and never mention "
    "'the sentence', 'the text', 'the study' or 'the authors'. Reply with the question only.")
BANNED = re.compile(r"\b(sentence|the text|this study|the study|the authors|the paper|mentioned|according to)\b",
                    re.IGNORECASE)


def askable(text: str) -> bool:
    """A sentence worth a question: a statement of some length, not a heading, reference or table row."""
    count = len(text.split())
    return 12 <= count <= 60 and text.rstrip().endswith(".") and "http" not in text and text.count("[") < 3


def covidqa_sentences(shared: Path, held_out: set[str], per_paper: int, rng: random.Random) -> list[dict[str, Any]]:
    data = json.loads((shared / "eval" / "covidqa" / "covidqa-train.json").read_text(encoding="utf-8"))
    chosen = []
    for article in data["data"]:
        paragraph = article["paragraphs"][0]
        paper = f"covidqa-{paragraph['document_id']}"
        if paper in held_out:
            continue
        context = re.sub(r"(?<![.!?:])\n(?=\S)", " ", paragraph["context"])
        title = context.split("\n", 1)[0][:200]
        answered = {qa["answers"][0]["answer_start"] for qa in paragraph["qas"] if qa["answers"]}
        candidates, offset = [], 0
        for block in context.split("\n"):
            for c in paragraph_candidates(block, offset):
                if askable(c["text"]) and not any(c["start"] <= a < c["end"] for a in answered):
                    candidates.append(c)
            offset += len(block) + 1
        for c in rng.sample(candidates, min(per_paper, len(candidates))):
            chosen.append({"paper": paper, "title": title, "sentence": c["text"], "before": c["before"]})
    return chosen


def pubmedqa_sentences(shared: Path, rng: random.Random) -> list[dict[str, Any]]:
    data = json.loads((shared / "eval" / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    test = set(json.loads((shared / "eval" / "pubmedqa" / "test_ground_truth.json").read_text(encoding="utf-8")))
    chosen = []
    for pmid, item in data.items():
        if pmid in test:
            continue
        results = [c for text, label in zip(item["CONTEXTS"], item["LABELS"], strict=False)
                   if "RESULT" in label.upper() for c in paragraph_candidates(text, 0) if askable(c["text"])]
        if results:
            c = rng.choice(results)
            chosen.append({"paper": f"pubmedqa-full-{pmid}", "title": "", "sentence": c["text"],
                           "before": c["before"]})
    return chosen


def recorded(path: Path, *fields: str) -> set[tuple[Any, ...]]:
    """The keys (``fields`` of each line) of what an earlier run wrote to ``path``, so that a run resumes."""
    if not path.exists():
        return set()
    return {tuple(row[f] for f in fields) for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def clean(reply: str) -> str | None:
    """The question in the model's reply, or None when it is not one question of a usable kind."""
    line = reply.strip().strip('"').split("\n")[0].strip()
    line = re.sub(r"^(question|q)\s*[:.]\s*", "", line, flags=re.IGNORECASE)
    if not line.endswith("?") or not 4 <= len(line.split()) <= 40 or BANNED.search(line):
        return None
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="the writer's GGUF file")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--per-paper", type=int, default=30, help="sentences asked about per COVID-QA paper")
    parser.add_argument("--limit", type=int, default=0, help="stop after this many new questions (0: all)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    from llama_cpp import Llama
    from train_reader import dev_papers

    rng = random.Random(29)
    held_out = dev_papers([{"paper": f"covidqa-{a['paragraphs'][0]['document_id']}", "source": "covidqa",
                            "split": "train"} for a in json.loads(
        (args.shared / "eval" / "covidqa" / "covidqa-train.json").read_text(encoding="utf-8"))["data"]])
    sentences = covidqa_sentences(args.shared, held_out, args.per_paper, rng) + pubmedqa_sentences(args.shared, rng)
    rng.shuffle(sentences)
    done = recorded(args.out, "paper", "sentence")
    todo = [s for s in sentences if (s["paper"], s["sentence"]) not in done]
    print(f"{len(sentences)} sentences, {len(done)} done, {len(todo)} to ask about", flush=True)
    model = Llama(str(args.model), n_ctx=1024, n_threads=args.threads, verbose=False, seed=7)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    written = rejected = 0
    started = time.time()
    with args.out.open("a", encoding="utf-8") as out:
        for item in todo:
            if args.limit and written >= args.limit:
                break
            shown = (f"Paper: {item['title']}\n" if item["title"] else "") + (
                f"Just before it: {item['before']}\n" if item["before"] else "") + f"Sentence: {item['sentence']}"
            reply = model.create_chat_completion(
                messages=[{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": shown}],
                max_tokens=48, temperature=0.7)["choices"][0]["message"]["content"]
            question = clean(reply)
            # A rejected reply is recorded too (question null), so a resumed run does not ask again.
            out.write(json.dumps({"paper": item["paper"], "sentence": item["sentence"], "question": question}) + "\n")
            out.flush()
            written += question is not None
            rejected += question is None
            if (written + rejected) % 50 == 0:
                rate = (time.time() - started) / (written + rejected)
                print(f"{written} questions, {rejected} rejected, {rate:.2f} s each", flush=True)
    print(f"done: {written} questions, {rejected} rejected -> {args.out}")


if __name__ == "__main__":
    main()
