"""The answer reader's data: each question with every quotable sentence of the paper it is asked of.

    python benchmarks/reader_data.py [--out ~/.cache/quire-train/reader-data.json.gz]

One JSON document: ``papers`` (id -> its candidate sentences, each with the sentences before and after
it in its paragraph, as the reader reads them) and ``questions`` (question, paper id, the indexes of
the sentences that state the answer, ``split``, and ``hard``: the paper's other sentences ranked by
BM25 against the question, the near misses the reader must learn to pass over). Splits:

- ``train``: COVID-QA's training file (46 CC-BY papers, 581 questions by biomedical experts, each
  answered by a span of the paper; Apache-2.0), plus PubMedQA's training-side expert questions
  (MIT; its 500 test questions are never used): the authors' conclusion answers the question, the
  background and method sentences of the same abstract are the non-answers (its results sentences
  are left out: they often answer too);
- ``train``, source ``generated``: the writer's questions of benchmarks/reader_questions.py (read when
  its file exists), each answered by the sentence it was written from, against the rest of its paper
  (a PubMedQA abstract's every section, its conclusion left out: it restates the results asked about);
- ``check``: COVID-QA's check file (14 other papers), never fitted on: the in-paper ranking that
  benchmarks/reader.py reports.

The candidates are the sentences the product can quote (``sentence_spans``, per paragraph); a question
whose answer starts in no quotable sentence is left out of training and counted as a miss when checking.
LitQA2 and ScholarQA-Multi are never read here: they measure the product.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sentence_bm25 import Bm25, bm25_order  # noqa: E402

from engine.cite.reader import neighbours  # noqa: E402
from engine.synthesis.quotable import sentence_spans  # noqa: E402

SHARED = ROOT.parent / "shared"
DEFAULT_OUT = Path.home() / ".cache" / "quire-train" / "reader-data.json.gz"
HARD_POOL = 30  # the near misses kept per question, best first
GENERATED_ROUND_TRIP = 10  # a writer's question is kept when its sentence is among its paper's BM25 top 10


def paragraph_candidates(paragraph: str, offset: int) -> list[dict[str, Any]]:
    """A paragraph's quotable sentences with their neighbours and their character span in the paper."""
    result = []
    for start, end in sentence_spans(paragraph):
        before, after = neighbours(paragraph, start)
        result.append({"text": paragraph[start:end], "before": before, "after": after,
                       "start": offset + start, "end": offset + end})
    return result


def covidqa(path: Path, split: str, papers: dict[str, Any], questions: list[dict[str, Any]]) -> None:
    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        paragraph = article["paragraphs"][0]
        paper = f"covidqa-{paragraph['document_id']}"
        # Some papers' text is hard-wrapped: a line that does not end a sentence runs on into the next
        # (a space for the newline keeps every answer's offset).
        context = re.sub(r"(?<![.!?:])\n(?=\S)", " ", paragraph["context"])
        candidates: list[dict[str, Any]] = []
        offset = 0
        for block in context.split("\n"):
            candidates.extend(paragraph_candidates(block, offset))
            offset += len(block) + 1
        papers[paper] = [{k: c[k] for k in ("text", "before", "after")} for c in candidates]
        texts = [c["text"] for c in candidates]
        for qa in paragraph["qas"]:
            if not qa["answers"]:
                continue
            answer = qa["answers"][0]
            first, last = answer["answer_start"], answer["answer_start"] + len(answer["text"])
            start_in = [i for i, c in enumerate(candidates) if c["start"] <= first < c["end"]]
            overlapping = [i for i, c in enumerate(candidates) if c["start"] < last and first < c["end"]]
            questions.append({"question": qa["question"], "paper": paper, "split": split, "source": "covidqa",
                              "answer": answer["text"], "positive": start_in, "also": overlapping,
                              "hard": [i for i in bm25_order(qa["question"], texts)
                                       if i not in overlapping][:HARD_POOL]})


def pubmedqa(shared: Path, papers: dict[str, Any], questions: list[dict[str, Any]]) -> None:
    data = json.loads((shared / "eval" / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    test = set(json.loads((shared / "eval" / "pubmedqa" / "test_ground_truth.json").read_text(encoding="utf-8")))
    for pmid, item in data.items():
        if pmid in test:
            continue
        candidates: list[dict[str, Any]] = []
        for text, label in zip(item["CONTEXTS"], item["LABELS"], strict=False):
            if "RESULT" not in label.upper():
                candidates.extend(paragraph_candidates(text, 0))
        negatives = len(candidates)
        conclusion = paragraph_candidates(item["LONG_ANSWER"], 0)
        if not conclusion or negatives < 3:
            continue
        candidates.extend(conclusion)
        paper = f"pubmedqa-{pmid}"
        papers[paper] = [{k: c[k] for k in ("text", "before", "after")} for c in candidates]
        conclusions = list(range(negatives, len(candidates)))
        questions.append({"question": item["QUESTION"], "paper": paper, "split": "train", "source": "pubmedqa",
                          "answer": item["LONG_ANSWER"], "positive": conclusions[:1], "also": conclusions,
                          "hard": bm25_order(item["QUESTION"], [c["text"] for c in candidates[:negatives]])})


def generated(path: Path, shared: Path, papers: dict[str, Any], questions: list[dict[str, Any]]) -> None:
    """The writer's questions: the sentence each was written from answers it, the paper's others do not."""
    abstracts = json.loads((shared / "eval" / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if not record["question"]:
            continue
        paper = record["paper"]
        if paper not in papers and paper.startswith("pubmedqa-full-"):
            item = abstracts[paper.removeprefix("pubmedqa-full-")]
            papers[paper] = [{k: c[k] for k in ("text", "before", "after")}
                             for text in item["CONTEXTS"] for c in paragraph_candidates(text, 0)]
        texts = [c["text"] for c in papers[paper]]
        if record["sentence"] not in texts:
            continue
        answer = texts.index(record["sentence"])
        order = bm25_order(record["question"], texts)
        # Round-trip check: a question whose own sentence is not among the paper's ten best by BM25 was
        # usually written about something else (a neighbour, or nothing the sentence says); left out.
        if answer not in order[:GENERATED_ROUND_TRIP]:
            continue
        questions.append({"question": record["question"], "paper": paper, "split": "train", "source": "generated",
                          "answer": record["sentence"], "positive": [answer], "also": [answer],
                          "hard": [i for i in order if i != answer][:HARD_POOL]})


def squad(path: Path, papers: dict[str, Any], questions: list[dict[str, Any]], limit: int | None = None) -> None:
    """SQuAD v1.0 train as answer-sentence selection within a whole article: the sentence holding the
    answer span is the positive; the article's other sentences (its paragraph's and the other
    paragraphs') are the candidates, the BM25 best of them the near misses. A sentence elsewhere in the
    article that holds the answer text is never a near miss (it may answer too)."""
    by_article: dict[str, list[dict[str, Any]]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as file:
        for line in file:
            record = json.loads(line)
            by_article.setdefault(record["title"], []).append(record)
    taken = 0
    for title, records in by_article.items():
        paper = f"squad-{title}"
        candidates: list[dict[str, Any]] = []
        where: dict[str, range] = {}  # each paragraph's candidates
        for record in records:
            if record["context"] not in where:
                first_index = len(candidates)
                candidates.extend(paragraph_candidates(record["context"], 0))
                where[record["context"]] = range(first_index, len(candidates))
        papers[paper] = [{k: c[k] for k in ("text", "before", "after")} for c in candidates]
        texts = [c["text"] for c in candidates]
        lowered = [" ".join(t.lower().split()) for t in texts]
        index = Bm25(texts)
        for record in records:
            span = where[record["context"]]
            answer = record["answers"][0]
            first, last = answer["answer_start"], answer["answer_start"] + len(answer["text"])
            start_in = [i for i in span if candidates[i]["start"] <= first < candidates[i]["end"]]
            overlapping = [i for i in span if candidates[i]["start"] < last and first < candidates[i]["end"]]
            if not start_in:
                continue
            text = " ".join(answer["text"].lower().split())
            holding = {i for i, t in enumerate(lowered) if text and text in t}
            got = index.scores(record["question"])
            hard = [i for i in sorted(got, key=lambda i: -got[i]) if i not in overlapping and i not in holding]
            questions.append({"question": record["question"], "paper": paper, "split": "train", "source": "squad",
                              "answer": answer["text"], "positive": start_in, "also": overlapping,
                              "hard": hard[:HARD_POOL], "holding": sorted(holding - set(overlapping))})
            taken += 1
            if limit and taken >= limit:
                return


EI_SECTION = re.compile(r"^(TITLE|ABSTRACT|BODY)[.A-Z0-9 _:/-]*:\s*$")


def ei_question(outcome: str, intervention: str, comparator: str) -> str:
    """The doctors' prompt as a question, in the words Evidence Inference's own papers use."""
    return f"With respect to {outcome.strip()}, how did {intervention.strip()} compare with {comparator.strip()}?"


def evidence_inference(folder: Path, papers: dict[str, Any], questions: list[dict[str, Any]]) -> None:
    """Evidence Inference 2.0: each prompt over its trial's full text, answered by the sentences the doctors
    quoted as evidence (any annotator's). Train trials are ``train``; validation trials ``check-ei``,
    never fitted on (benchmarks/reader.py reports their ranking)."""
    import csv

    splits = {line.strip(): "train" for line in (folder / "splits" / "ev2_train_article_ids.txt").read_text().split()}
    splits.update({line.strip(): "check-ei"
                   for line in (folder / "splits" / "ev2_validation_article_ids.txt").read_text().split()})
    prompts = {}
    with (folder / "prompts_merged.csv").open(encoding="utf-8") as file:
        for row in csv.DictReader(file):
            prompts[row["PromptID"]] = row
    spans: dict[str, list[tuple[int, int]]] = {}
    with (folder / "v2_annotations.csv").open(encoding="utf-8") as file:
        for row in csv.DictReader(file):
            start, end = int(row["Evidence Start"] or -1), int(row["Evidence End"] or -1)
            if row["Valid Label"] == "True" and 0 <= start < end:
                spans.setdefault(row["PromptID"], []).append((start, end))
    candidates_of: dict[str, list[dict[str, Any]]] = {}
    for prompt_id, evidence in spans.items():
        prompt = prompts.get(prompt_id)
        if prompt is None or prompt["PMCID"] not in splits:
            continue
        pmcid = prompt["PMCID"]
        paper = f"ei-{pmcid}"
        if pmcid not in candidates_of:
            path = folder / "txt" / f"PMC{pmcid}.txt"
            if not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            candidates: list[dict[str, Any]] = []
            offset = 0
            for block in text.split("\n"):
                if block.strip() and not EI_SECTION.match(block.strip()):
                    candidates.extend(paragraph_candidates(block, offset))
                offset += len(block) + 1
            candidates_of[pmcid] = candidates
            papers[paper] = [{k: c[k] for k in ("text", "before", "after")} for c in candidates]
        candidates = candidates_of[pmcid]
        if len(candidates) < 4:
            continue
        also = sorted({i for i, c in enumerate(candidates) for first, last in evidence
                       if c["start"] < last and first < c["end"]})
        positive = sorted({i for i, c in enumerate(candidates) for first, _ in evidence
                           if c["start"] <= first < c["end"]})
        question = ei_question(prompt["Outcome"], prompt["Intervention"], prompt["Comparator"])
        texts = [c["text"] for c in candidates]
        questions.append({"question": question, "paper": paper, "split": splits[pmcid], "source": "evidence",
                          "answer": "", "positive": positive, "also": also,
                          "hard": [i for i in bm25_order(question, texts) if i not in also][:HARD_POOL]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--generated", type=Path, default=DEFAULT_OUT.parent / "reader-generated.jsonl",
                        help="the writer's questions (benchmarks/reader_questions.py); left out when absent")
    parser.add_argument("--squad-limit", type=int, help="at most this many SQuAD questions (default: all)")
    args = parser.parse_args()
    papers: dict[str, Any] = {}
    questions: list[dict[str, Any]] = []
    covidqa(args.shared / "eval" / "covidqa" / "covidqa-train.json", "train", papers, questions)
    covidqa(args.shared / "eval" / "covidqa" / "covidqa-check.json", "check", papers, questions)
    pubmedqa(args.shared, papers, questions)
    squad(args.shared / "eval" / "squad" / "squad-v1.0-train.jsonl.gz", papers, questions, args.squad_limit)
    evidence_inference(args.shared / "eval" / "evidence-inference", papers, questions)
    if args.generated.is_file():
        generated(args.generated, args.shared, papers, questions)
    random.Random(7).shuffle(questions)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as out:
        json.dump({"papers": papers, "questions": questions}, out)
    counts = Counter((q["source"], q["split"], bool(q["positive"])) for q in questions)
    for (source, split, found), count in sorted(counts.items()):
        print(f"{source:9} {split:6} {'answer quotable' if found else 'answer not in a quotable sentence'}: {count}")
    print(f"{len(papers)} papers, {sum(len(p) for p in papers.values())} candidate sentences -> {args.out}")


if __name__ == "__main__":
    main()
