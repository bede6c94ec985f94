"""Which sentence a digest opens with, across passages: the search rank and the paper's share of the passages
beside the reader, fitted on training papers and measured on the check papers and LitQA2 dev.

    python benchmarks/opening_fit.py library               # typeset + ingest COVID-QA's training papers
    python benchmarks/opening_fit.py capture --set train   # every candidate sentence's features, per question
    python benchmarks/opening_fit.py capture --set check   # (and --set litqa)
    python benchmarks/opening_fit.py fit                   # fit on train, report on check and litqa
    python benchmarks/opening_fit.py capture --set check --read-all   # every sentence read (any read limit replays)
    python benchmarks/opening_fit.py rescore --weights WORK/best.safetensors --key NAME   # another reader's scores
    python benchmarks/opening_fit.py replay --keys reader NAME [--save]   # openings each reader would give

The answer reader was trained to rank the sentences of *one* paper. A digest chooses its opening among the
sentences of 12 passages from several papers, and there the search's own order and how many of the passages
come from one paper say something the reader cannot see. ``capture`` runs the product's search and evidence
steps (digest, library only, no rewriting) and records, for every sentence the reader read, its reader
logit, its hand-weighted score, its passage's search rank and score, the share of the 12 passages from its
paper, whether its passage passed the relevance filter, and whether it states the answer (as the checks count
it). ``fit`` fits a conditional logit (softmax over a question's candidates) on the training library and
compares, by the share of questions whose top sentence states the answer, the shipped rule with the fitted one.

Fitted on: questions the writer wrote from sentences of COVID-QA's training papers
(``benchmarks/reader_questions.py``; the shipped reader never saw them) and the expert questions of the six
training papers held out from the reader's training. Never on COVID-QA's check file or LitQA2 dev, which are
measured only. Results: benchmarks/results/opening_fit.json.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from answers import litqa_questions  # noqa: E402
from answers import stated as litqa_stated  # noqa: E402
from opening_rows import opening_rate, write_packed  # noqa: E402
from reader_cost import stated as covid_stated  # noqa: E402

import engine.synthesis.evidence as evidence_module  # noqa: E402
import engine.synthesis.pipeline as pipeline_module  # noqa: E402
from engine.cite.reader import neighbours, reader_text  # noqa: E402
from engine.request import AskRequest, RequestOptions, Scope  # noqa: E402
from engine.service import Engine  # noqa: E402

SHARED = ROOT.parent / "shared"
CACHE = Path.home() / ".cache" / "quire-train"
TRAIN_HOME = Path(os.environ.get("OPENING_FIT_HOME", "/tmp/quire-opening-fit"))
CHECK_HOME = Path(os.environ.get("CHECK_HOME", "/tmp/quire-checks"))
RESULTS = ROOT / "benchmarks" / "results" / "opening_fit.json"
ASKED = RequestOptions(rewrite=False, feedback=False, save=False)
DEV_PAPERS = 6  # as benchmarks/train_reader.py: the training papers held out from the reader's training


CHECK_CSS = "p{font-size:10pt;margin:0 0 6pt 0} h2{font-size:15pt}"  # ../shared/checks/reader's paragraph style


def typeset(context: str, path: Path, css: str = CHECK_CSS) -> None:
    """A COVID-QA paper as a letter-size PDF, as ../shared/checks/reader typesets its check papers (title, then a
    paragraph a line). With the check's style PyMuPDF may cut a paper's tail (benchmarks/reader_check_coverage.py)."""
    import pymupdf
    parts = context.split("\n\n")
    title, rest = parts[0].strip(), "\n\n".join(parts[2:])
    paragraphs = "".join(f"<p>{html.escape(p.strip())}</p>" for p in rest.split("\n") if p.strip())
    story = pymupdf.Story(html=f"<h2>{html.escape(title)}</h2>{paragraphs}", user_css=css)
    writer = pymupdf.DocumentWriter(str(path))
    more = True
    while more:
        device = writer.begin_page(pymupdf.paper_rect("letter"))
        more, _ = story.place(pymupdf.Rect(54, 54, 558, 738))
        story.draw(device)
        writer.end_page()
    writer.close()


def covid_papers(name: str) -> list[dict[str, Any]]:
    return [a["paragraphs"][0] for a in
            json.loads((SHARED / "eval" / "covidqa" / f"covidqa-{name}.json").read_text(encoding="utf-8"))["data"]]


def held_out_papers() -> set[str]:
    ids = sorted((f"covidqa-{p['document_id']}" for p in covid_papers("train")),
                 key=lambda p: hashlib.sha256(p.encode()).hexdigest())
    return set(ids[:DEV_PAPERS])


def library_command(_: argparse.Namespace) -> None:
    pdfs = TRAIN_HOME / "pdfs"
    pdfs.mkdir(parents=True, exist_ok=True)
    for paper in covid_papers("train"):
        path = pdfs / f"covidqa-{paper['document_id']}.pdf"
        if not path.exists():
            typeset(paper["context"], path)
    subprocess.run([str(Path(sys.executable).with_name("quire")), "--home", str(TRAIN_HOME / "q"), "ingest", str(pdfs)],
                   check=True, cwd=ROOT)


def train_items() -> list[dict[str, Any]]:
    """The writer's questions on the training papers, then the held-out papers' expert questions."""
    papers = {f"covidqa-{p['document_id']}" for p in covid_papers("train")}
    held = held_out_papers()
    items = []
    for line in (CACHE / "reader-generated.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        question = (row.get("question") or "").strip()
        if row["paper"] in papers and question.endswith("?") and len(question) < 300:
            items.append({"question": question, "gold": row["sentence"], "kind": "covid", "source": "written"})
    for paper in covid_papers("train"):
        if f"covidqa-{paper['document_id']}" in held:
            items += [{"question": q["question"], "gold": q["answers"][0]["text"], "kind": "covid",
                       "source": "expert held out"} for q in paper["qas"] if q["answers"]]
    return items


def check_items() -> list[dict[str, Any]]:
    return [{"question": q["question"], "gold": q["answers"][0]["text"], "kind": "covid", "source": "check"}
            for paper in covid_papers("check") for q in paper["qas"] if q["answers"]]


def litqa_items() -> list[dict[str, Any]]:
    return [{"question": q["question"], "gold": q["ideal"], "kind": "litqa", "source": "litqa dev"}
            for q in litqa_questions("all")]


def states(item: dict[str, Any], text: str) -> bool:
    return bool(covid_stated(item["gold"], text) if item["kind"] == "covid" else litqa_stated(item["gold"], text))


class Recorder:
    """Wraps the evidence step so one ask records every candidate's features (the product code runs as is)."""

    def __init__(self) -> None:
        self.scores: list[tuple[np.ndarray, np.ndarray]] = []
        self.chosen: Any = None
        self.hits: Any = None
        self._answer_scores = evidence_module.answer_scores
        self._choose = pipeline_module.choose_evidence
        evidence_module.answer_scores = self.answer_scores
        pipeline_module.choose_evidence = self.choose_evidence

    def answer_scores(self, read: np.ndarray, hand: np.ndarray, hand_weight: float) -> np.ndarray:
        self.scores.append((np.array(read), np.array(hand)))
        return self._answer_scores(read, hand, hand_weight)

    def choose_evidence(self, question: str, hits: Any, *args: Any, **kwargs: Any) -> Any:
        self.scores.clear()
        self.hits = hits
        self.chosen = self._choose(question, hits, *args, **kwargs)
        return self.chosen


def candidates(recorder: Recorder, item: dict[str, Any]) -> list[dict[str, Any]]:
    if not recorder.scores or recorder.chosen is None:
        return []
    read, hand = recorder.scores[0]
    found = recorder.chosen.found
    kept = {e.reference.passage_id for e in recorder.chosen.evidence}
    papers = [e.reference.doc_id for e in found]
    top = max((h.score for h in recorder.hits), default=1.0) or 1.0
    rows, position = [], 0
    for index, item_evidence in enumerate(found):
        reference = item_evidence.reference
        for quote in item_evidence.sentences:
            if np.isfinite(read[position]):
                rows.append({"reader": float(read[position]), "hand": float(hand[position]),
                             "hand_rank": int((hand > hand[position]).sum()),
                             "log_rank": math.log(index + 1),
                             "paper_share": papers.count(reference.doc_id) / len(papers),
                             "hit_score": float(recorder.hits[index].score) / top,
                             "relevant": float(reference.passage_id in kept), "answer": quote.answer,
                             "states": states(item, quote.text), "text": quote.text[:160],
                             # what the reader read, so that another reader can be scored on the capture
                             "read_text": reader_text(quote.text, *neighbours(reference.text, quote.start))})
            position += 1
    return rows


def capture_command(args: argparse.Namespace) -> None:
    items = {"train": train_items, "check": check_items, "litqa": litqa_items}[args.set]()[:args.limit]
    home = {"train": TRAIN_HOME / "q", "check": CHECK_HOME / "reader" / "q", "litqa": CHECK_HOME / "fulltext"}[args.set]
    out = CACHE / f"opening-{args.set}{'-all' if args.read_all else ''}.jsonl"
    if args.read_all:  # every sentence read, so that any read limit can be replayed from the capture
        evidence_module.ANSWER_READ_LIMIT = sys.maxsize
    done = {json.loads(line)["question"] for line in out.read_text(encoding="utf-8").splitlines()} \
        if out.exists() else set()
    recorder = Recorder()
    with Engine(home) as engine, out.open("a", encoding="utf-8") as sink:
        for number, item in enumerate(items):
            if item["question"] in done:
                continue
            answer = engine.ask(AskRequest(item["question"], scope=Scope(source="library"), mode="digest",
                                           options=ASKED))
            row = {**item, "stated_first_400": states(item, answer.text[:400]),
                   "candidates": candidates(recorder, item)}
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            if number % 20 == 0:
                print(number, len(items), row["stated_first_400"], item["question"][:60], flush=True)


def load(name: str) -> list[dict[str, Any]]:
    path = CACHE / f"opening-{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


HAND_WEIGHT = 12.0  # the shipped reader's weight on the hand score (fitted in-paper: benchmarks/reader.py)


def value(candidate: dict[str, Any], feature: str) -> float:
    """A feature of a candidate; "combined" is the shipped in-paper answer score (reader + 12 x hand)."""
    if feature == "combined":
        return candidate["reader"] + HAND_WEIGHT * candidate["hand"]
    return float(candidate[feature])


def matrix(rows: list[dict[str, Any]], features: tuple[str, ...]) -> np.ndarray:
    return np.array([[value(c, f) for f in features] for c in rows], dtype=np.float64)


def eligible(question: dict[str, Any]) -> dict[str, Any]:
    """The question with only the candidates of passages that passed the relevance filter (as the product)."""
    return {**question, "candidates": [c for c in question["candidates"] if c["relevant"]]}


def rounded_top(question: dict[str, Any]) -> dict[str, Any] | None:
    """The opening as chosen before: the answer score squashed to 0..1 and rounded to 4 places, so every
    sentence scoring over ~10 tied at 1.0 and the first passage's won (computed here, whatever code captured)."""
    def rounded(c: dict[str, Any]) -> float:
        return round(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, value(c, "combined"))))), 4)
    return max(question["candidates"], key=rounded, default=None)


def fit(questions: list[dict[str, Any]], features: tuple[str, ...], l2: float = 0.01) -> np.ndarray:
    """A conditional logit: softmax over each question's candidates, the answering ones as the target."""
    from scipy.optimize import minimize
    groups = [(matrix(q["candidates"], features), np.array([c["states"] for c in q["candidates"]], dtype=bool))
              for q in questions if q["candidates"] and any(c["states"] for c in q["candidates"])]
    scale = np.concatenate([x for x, _ in groups]).std(axis=0) + 1e-9

    def loss(weights: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros_like(weights)
        for x, y in groups:
            z = (x / scale) @ weights
            z -= z.max()
            p = np.exp(z) / np.exp(z).sum()
            q = p[y] / p[y].sum()
            total -= math.log(p[y].sum() + 1e-300)
            grad -= (x[y] / scale).T @ q - (x / scale).T @ p
        return total / len(groups) + l2 * float(weights @ weights), grad / len(groups) + 2 * l2 * weights

    result = minimize(loss, np.zeros(len(features)), jac=True, method="L-BFGS-B")
    return result.x / scale


def top_states(questions: list[dict[str, Any]], weights: np.ndarray | None, features: tuple[str, ...]) -> float:
    hits = 0
    for question in questions:
        rows = question["candidates"]
        if weights is None:
            best = rounded_top(question)
        else:
            best = rows[int(np.argmax(matrix(rows, features) @ weights))] if rows else None
        hits += bool(best and best["states"])
    return round(hits / max(1, len(questions)), 3)


def fit_command(args: argparse.Namespace) -> None:
    train, check, litqa = ([eligible(q) for q in load(name)] for name in ("train", "check", "litqa"))
    sets = {name: rows for name, rows in (("train", train), ("check", check), ("litqa", litqa)) if rows}
    report: dict[str, Any] = {"questions": {k: len(v) for k, v in sets.items()},
                              "rounded (before)": {k: top_states(v, None, ()) for k, v in sets.items()},
                              "reachable": {k: round(sum(any(c["states"] for c in q["candidates"]) for q in v)
                                                     / max(1, len(v)), 3) for k, v in sets.items()},
                              "digest_stated_first_400": {k: round(sum(q["stated_first_400"] for q in v)
                                                                   / max(1, len(v)), 3) for k, v in sets.items()},
                              "fits": []}
    for features in [("combined",), ("combined", "log_rank"), ("combined", "paper_share"),
                     ("combined", "log_rank", "paper_share"), ("combined", "log_rank", "paper_share", "hit_score"),
                     ("reader", "hand"), ("reader", "hand", "log_rank", "paper_share"),
                     ("reader", "hand", "log_rank", "paper_share", "hit_score")]:
        weights = fit(train, features)
        report["fits"].append({"features": features, "weights": [round(float(w), 4) for w in weights],
                               **{k: top_states(v, weights, features) for k, v in sets.items()}})
    print(json.dumps(report, indent=1))
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def rescore_command(args: argparse.Namespace) -> None:
    """Score every candidate of the ``--read-all`` captures with other reader weights (train_reader.py's
    best.safetensors), under ``--key``, so that readers can be compared on the same digests."""
    import torch
    from train_judge import _base, load_model, load_weights
    from train_reader import encode, scores
    torch.set_num_threads(2)
    model, tokenizer = load_model(Path(_base(argparse.Namespace(base=None))), labels=1)
    load_weights(model, [args.weights])
    for name in args.sets:
        path = CACHE / f"opening-{name}-all.jsonl"
        rows = load(f"{name}-all")
        for question in rows:
            texts = [c["read_text"] for c in question["candidates"]]
            if texts:
                got = scores(model, encode(tokenizer, question["question"], texts, 160), tokenizer.sep_token_id,
                             torch.device("cpu"))
                for candidate, score in zip(question["candidates"], got, strict=True):
                    candidate[args.key] = score
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        print(name, len(rows), "questions scored as", args.key, flush=True)


def replay_command(args: argparse.Namespace) -> None:
    """Openings replayed from the ``--read-all`` captures: each reader key, hand weight and read limit."""
    report: dict[str, Any] = {}
    for name in args.sets:
        rows = load(f"{name}-all")
        entry: dict[str, Any] = {"questions": len(rows),
                                 "reachable": round(sum(any(c["states"] and c["relevant"] for c in q["candidates"])
                                                        for q in rows) / max(1, len(rows)), 3)}
        for key in args.keys:
            if not all(key in c for q in rows for c in q["candidates"]):
                continue  # this reader was not scored on this set (rescore --sets)
            for weight in args.weights:
                for limit in args.read_limits:
                    entry[f"{key} + {weight:g} x hand, read {limit or 'all'}"] = opening_rate(rows, key, weight,
                                                                                              limit or None)
        report[name] = entry
    print(json.dumps(report, indent=1))
    if args.save:
        RESULTS.with_name("opening_replay.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def pack_command(args: argparse.Namespace) -> None:
    """The ``--read-all`` captures, cut to what reader_sweep.py needs to judge new readers by their openings."""
    write_packed({name: load(f"{name}-all") for name in args.sets}, args.out)
    print(f"packed {', '.join(args.sets)} into {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("library")
    capture = sub.add_parser("capture")
    capture.add_argument("--set", choices=("train", "check", "litqa"), required=True)
    capture.add_argument("--limit", type=int, default=100000)
    capture.add_argument("--read-all", action="store_true",
                         help="the reader reads every sentence (hand_rank says which a read limit would keep)")
    sub.add_parser("fit")
    rescore = sub.add_parser("rescore")
    rescore.add_argument("--weights", type=Path, required=True, help="a trained reader's best.safetensors")
    rescore.add_argument("--key", required=True, help="the name its scores are kept under")
    rescore.add_argument("--sets", nargs="+", default=["train", "check", "litqa"])
    replay = sub.add_parser("replay")
    replay.add_argument("--sets", nargs="+", default=["train", "check", "litqa"])
    replay.add_argument("--keys", nargs="+", default=["reader"])
    replay.add_argument("--weights", nargs="+", type=float, default=[12.0])
    replay.add_argument("--read-limits", nargs="+", type=int, default=[32], help="0: every sentence")
    replay.add_argument("--save", action="store_true", help="write benchmarks/results/opening_replay.json")
    pack = sub.add_parser("pack")
    pack.add_argument("--sets", nargs="+", default=["train", "check", "litqa"])
    pack.add_argument("--out", type=Path, required=True, help="a .json.gz for reader_sweep.py --openings")
    args = parser.parse_args()
    {"pack": pack_command, "library": library_command, "capture": capture_command, "fit": fit_command,
     "rescore": rescore_command, "replay": replay_command}[args.command](args)


if __name__ == "__main__":
    main()
