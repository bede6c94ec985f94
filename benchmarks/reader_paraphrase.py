"""The experts' questions reworded by the writer, for the answer reader to learn from.

    python benchmarks/reader_paraphrase.py ask --model WRITER.gguf      # resumable; ~2 s a question on 2 cores
    python benchmarks/reader_paraphrase.py data --out FILE              # reader_data.py's file plus the rewordings

COVID-QA's experts wrote each question while reading its answer, so the answer shares the question's rarest
words and the reader learned to follow them (docs/history/answers.md). Here the writer sees only the question, never
the paper, and is asked to reword it as someone who has not read the paper would ask it; the answer stays the
expert's. A rewording is kept when it is one question and keeps at most 80 % of the original's content words.
Only COVID-QA's training questions are reworded, never those of the six papers held out to choose the epoch,
and never the check file's; LitQA2 and ScholarQA-Multi are never read.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sentence_bm25 import bm25_order, words  # noqa: E402

DEFAULT_OUT = Path.home() / ".cache" / "quire-train" / "reader-paraphrased.jsonl"
DEFAULT_DATA = Path.home() / ".cache" / "quire-train" / "reader-data.json.gz"
HARD_POOL = 30  # as reader_data.py
KEPT_WORDS = 0.8
INSTRUCTIONS = (
    "You reword questions about scientific papers. You are shown a question that an expert wrote while "
    "reading the paper. Rewrite it as a researcher who has NOT read the paper would ask for the same "
    "information: keep its meaning, but use different words for its specific terms and phrases (a synonym, "
    "a more general description, or a different sentence structure). Reply with the one reworded question "
    "only.")


def clean(reply: str, original: str) -> str | None:
    """The rewording, or None when it is not one question or keeps too many of the original's words."""
    text = reply.strip().strip('"').strip()
    text = re.sub(r"^(reworded question|question)\s*:\s*", "", text, flags=re.IGNORECASE).strip()
    if "\n" in text or not text.endswith("?") or text.count("?") != 1 or not 10 <= len(text) <= 250:
        return None
    before, after = set(words(original)), set(words(text))
    if not after or (before and len(before & after) / len(before) > KEPT_WORDS):
        return None
    return text


def training_questions(data: dict) -> list[dict]:
    from train_reader import dev_papers

    held = dev_papers(data["questions"])
    return [q for q in data["questions"] if q["source"] == "covidqa" and q["split"] == "train"
            and q["paper"] not in held and q["positive"]]


def ask_command(args: argparse.Namespace) -> None:
    from llama_cpp import Llama
    from reader_questions import recorded
    from train_reader import read_data

    questions = training_questions(read_data(args.data))
    done = recorded(args.out, "paper", "question")
    todo = [q for q in questions if (q["paper"], q["question"]) not in done]
    print(f"{len(questions)} questions, {len(done)} done, {len(todo)} to reword", flush=True)
    model = Llama(str(args.model), n_ctx=512, n_threads=args.threads, verbose=False, seed=7)
    started, kept = time.time(), 0
    with args.out.open("a", encoding="utf-8") as out:
        for number, question in enumerate(todo, 1):
            reply = model.create_chat_completion(
                messages=[{"role": "system", "content": INSTRUCTIONS},
                          {"role": "user", "content": f"Question: {question['question']}"}],
                max_tokens=60, temperature=0.3)["choices"][0]["message"]["content"]
            reworded = clean(reply, question["question"])
            # A rejected reply is recorded too (reworded null), so a resumed run does not ask again.
            out.write(json.dumps({"paper": question["paper"], "question": question["question"],
                                  "reworded": reworded, "reply": reply}) + "\n")
            out.flush()
            kept += reworded is not None
            if number % 25 == 0:
                print(f"{number} asked, {kept} kept, {(time.time() - started) / number:.2f} s each", flush=True)
    print(f"done: {kept} of {len(todo)} kept -> {args.out}")


def data_command(args: argparse.Namespace) -> None:
    """reader_data.py's file with each kept rewording added as a question of source ``paraphrased``: the
    expert's answer sentences, and near misses ranked by BM25 against the rewording."""
    from train_reader import read_data

    data = read_data(args.data)
    by_question = {(q["paper"], q["question"]): q for q in training_questions(data)}
    added = 0
    for row in map(json.loads, args.paraphrased.read_text(encoding="utf-8").splitlines()):
        original = by_question.get((row["paper"], row["question"]))
        if not row["reworded"] or original is None:
            continue
        texts = [c["text"] for c in data["papers"][row["paper"]]]
        data["questions"].append({**original, "question": row["reworded"], "source": "paraphrased",
                                  "hard": [i for i in bm25_order(row["reworded"], texts)
                                           if i not in original["also"]][:HARD_POOL]})
        added += 1
    with gzip.open(args.out, "wt", encoding="utf-8") as file:
        json.dump(data, file)
    print(f"{added} reworded questions added -> {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ask = sub.add_parser("ask")
    ask.add_argument("--model", type=Path, required=True, help="the writer's GGUF file")
    ask.add_argument("--threads", type=int, default=2)
    data = sub.add_parser("data")
    data.add_argument("--out", type=Path, required=True)
    for command in (ask, data):
        command.add_argument("--data", type=Path, default=DEFAULT_DATA, help="reader_data.py's file")
        command.add_argument("--paraphrased" if command is data else "--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    (ask_command if args.command == "ask" else data_command)(args)


if __name__ == "__main__":
    main()
