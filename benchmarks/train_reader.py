"""Train the answer reader shipped in resources/models/reader/ and export it as int8 ONNX.

    python benchmarks/reader_data.py                     # questions and their papers' sentences, once
    python benchmarks/train_reader.py train [--epochs 3] [--work ~/.cache/quire-train/reader-judge]
    python benchmarks/train_reader.py export [--work ...] [--out resources/models/reader]
    python benchmarks/train_reader.py train --init-weights WORK/best.safetensors --sources covidqa generated
                                                         # continue a trained reader on the writer's questions
    python benchmarks/train_reader.py train --init-weights ... --group 16 --foreign 4
                                                         # other papers' near misses too (measured: no gain)
    python benchmarks/reader.py                          # in-paper ranking on COVID-QA's check papers

The shipped reader (two stages, transfer then adapt, one seed; about an hour on two CPU cores):

    python benchmarks/train_reader.py train --work W1 --sources squad --limit 2400 --group 8 --hard 4 \
        --questions-per-step 8 --max-length 128 --unanswerable 0.2 --epochs 1 --dev-questions 30
    python benchmarks/train_reader.py train --work W2 --sources evidence covidqa --init-weights W1/best.safetensors \
        --group 8 --hard 4 --questions-per-step 8 --max-length 128 --unanswerable 0.2 --epochs 1 --dev-questions 30
    python benchmarks/train_reader.py export --work W2 && python benchmarks/reader.py --fit
    python benchmarks/reader.py --readers OLD resources/models/reader --selqa ../shared/eval/selqa/selqa-ass-dev.json

``--hand-offset W`` trains on the score the product ranks by, each sentence's logit plus W times its
hand-weighted score (engine.synthesis.evidence.answer_scores), so the reader learns what the hand score
misses rather than re-learning what it already gives; the export then combines at W.

``--unanswerable`` reads that share of questions against another paper's best-matching sentences with a
fixed "nothing here answers" logit of 0 in the group: the reader learns to score an answering sentence
above 0 and a wrong paper's sentences below it.

A cross-encoder that reads "question [SEP] sentence [SEP] the sentences around it" and gives one score:
how well this sentence answers the question (the sentence's neighbours resolve its "this" and "they").
Started from the support judge's encoder (read back from its int8 ONNX graph: an encoder that already
reads "does this passage say that") or, with ``--plain``, from the bundled all-MiniLM-L6-v2 weights;
every layer trained, mean pooling and a linear head. From the judge the listwise loss fell from 2.48
(chance, 12 sentences) to 1.57 in 20 steps, from all-MiniLM-L6-v2 not at all (2.50), so the judge is
the start.

The loss is listwise, as for answer-sentence selection: each question's answering sentence competes
with its paper's near misses (sentences that share the question's words, drawn anew each epoch from
the BM25 top 20) and a few random sentences of the same paper, softmax over the group. A binary loss
on the same pairs learned a shortcut ("close to the question -> not the answer"); a group cannot.

Six COVID-QA training papers are held out (by paper) to choose the epoch; COVID-QA's check file is
never read here. The work folder (outside the repository) holds a checkpoint written every
``--checkpoint-minutes`` and at each epoch's end; ``train`` started again resumes. ``log.jsonl``
there records the loss and each epoch's held-out ranking; ``export`` copies it into
benchmarks/results/reader_training.json. On two CPU cores an epoch (544 questions x 12 sentences)
takes about 10 minutes; on a CUDA GPU, seconds.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import TrainingCheckpoint  # noqa: E402
from onnx_export import write_int8_onnx  # noqa: E402
from reader_groups import (  # noqa: E402
    WrongPaper,
    drop_shared_words,
    foreign_near_misses,
    group,
    group_loss,
    with_hand_offsets,
)
from train_judge import (  # noqa: E402
    _autocast,
    _base,
    collate,
    load_model,
    load_weights,
    work_record,
)

from engine.cite.reader import reader_text  # noqa: E402

DEFAULT_WORK = Path.home() / ".cache" / "quire-train" / "reader-judge"
DEFAULT_DATA = Path.home() / ".cache" / "quire-train" / "reader-data.json.gz"
DEV_PAPERS = 6
SOURCE_NAMES = {"covidqa": "COVID-QA training file (Apache-2.0)",
                "squad": "SQuAD v1.0 train as answer-sentence selection (CC BY-SA 4.0)",
                "evidence": "Evidence Inference 2.0 training trials' prompts and doctors' evidence (MIT)",
                "pubmedqa": "PubMedQA training-side questions (MIT)",
                "generated": "questions the writer wrote of COVID-QA training papers and PubMedQA training-side "
                             "abstracts (benchmarks/reader_questions.py)",
                "paraphrased": "COVID-QA training questions reworded by the writer, which never saw the paper "
                               "(benchmarks/reader_paraphrase.py)"}


def read_data(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as file:
        data: dict[str, Any] = json.load(file)
    return data


def dev_papers(questions: list[dict[str, Any]]) -> set[str]:
    """The COVID-QA training papers held out to choose the epoch: a stable choice by hash of the id."""
    papers = sorted({q["paper"] for q in questions if q["source"] == "covidqa" and q["split"] == "train"},
                    key=lambda p: hashlib.sha256(p.encode()).hexdigest())
    return set(papers[:DEV_PAPERS])


def candidate_texts(data: dict[str, Any], paper: str) -> list[str]:
    return [reader_text(c["text"], c["before"], c["after"]) for c in data["papers"][paper]]


def encode(tokenizer: Any, question: str, texts: list[str], max_length: int) -> list[list[int]]:
    encoded = tokenizer([question] * len(texts), texts, truncation="longest_first", max_length=max_length)
    return [list(ids) for ids in encoded["input_ids"]]


def scores(model: Any, ids: list[list[int]], sep_id: int, device: Any, batch: int = 128) -> list[float]:
    import torch

    model.eval()
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    result = [0.0] * len(ids)
    with torch.no_grad(), _autocast(device):
        for first in range(0, len(order), batch):
            chunk = order[first:first + batch]
            logits = model(*collate([ids[i] for i in chunk], sep_id, device))[:, 0].float().cpu().tolist()
            for i, value in zip(chunk, logits, strict=True):
                result[i] = value
    model.train()
    return result


def ranking_report(model: Any, tokenizer: Any, data: dict[str, Any], questions: list[dict[str, Any]],
                   max_length: int, device: Any) -> dict[str, Any]:
    """Over every quotable sentence of each question's paper: is an answering sentence first, in the top 3?"""
    first = top3 = 0
    texts_of: dict[str, list[str]] = {}
    for question in questions:
        texts = texts_of.setdefault(question["paper"], candidate_texts(data, question["paper"]))
        if not question["also"]:
            continue
        got = scores(model, encode(tokenizer, question["question"], texts, max_length), tokenizer.sep_token_id,
                     device)
        if "hand" in question:  # trained on the combined score: judged on it too
            got = [value + offset for value, offset in zip(got, question["hand"], strict=True)]
        order = sorted(range(len(got)), key=lambda i: -got[i])
        first += order[0] in question["also"]
        top3 += any(i in question["also"] for i in order[:3])
    n = max(1, len(questions))
    return {"questions": len(questions), "first": round(first / n, 4), "top3": round(top3 / n, 4)}


def train(args: argparse.Namespace) -> None:
    import torch
    from safetensors.torch import save_file

    device = torch.device("cuda" if torch.cuda.is_available() and args.device != "cpu" else "cpu")
    if device.type == "cpu":
        torch.set_num_threads(args.threads)
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(args.seed)
    base = _base(args)
    model, tokenizer = load_model(Path(base), labels=1)
    if args.plain and not any(Path(base).glob("*.safetensors")):
        raise SystemExit(f"--plain starts from all-MiniLM-L6-v2's weights, and {base} has none")
    if args.init_weights:
        load_weights(model, [args.init_weights])
    elif not args.plain:
        load_judge_encoder(model, args.init_judge)
    model.to(device)
    sep_id = tokenizer.sep_token_id

    data = read_data(args.data)
    held = dev_papers(data["questions"])
    for question in data["questions"]:
        question["count"] = len(data["papers"][question["paper"]])
    train_questions = [q for q in data["questions"] if q["split"] == "train" and q["positive"]
                       and q["paper"] not in held and q["source"] in args.sources and q["count"] >= 4]
    dev_questions = [q for q in data["questions"] if q["paper"] in held][:args.dev_questions]
    if args.limit and len(train_questions) > args.limit:
        # A stage of a fixed size, a stable choice: the machine's hours, not the data, bound a CPU run.
        train_questions = random.Random(args.seed).sample(train_questions, args.limit)
    if args.hand_offset:
        if args.foreign or args.unanswerable:
            raise SystemExit("--hand-offset reads each question against its own paper: no --foreign, --unanswerable")
        with_hand_offsets(train_questions + dev_questions, data, args.hand_offset)
    texts_of = {paper: candidate_texts(data, paper) for paper in {q["paper"] for q in train_questions}}
    texts_of.update({paper: candidate_texts(data, paper) for paper in data["papers"] if paper not in texts_of
                     and any(paper.startswith(f"{source}-") for source in ("squad", "ei", "covidqa"))
                     and args.unanswerable})
    wrong = WrongPaper(train_questions, texts_of, data) if args.unanswerable else None
    if args.foreign:
        foreign_near_misses(train_questions, data, {q["paper"] for q in train_questions if q["source"] == "covidqa"})
    print(f"{len(train_questions)} training questions, {len(dev_questions)} held-out questions "
          f"from {len(held)} papers", flush=True)

    per_step = args.questions_per_step
    steps_per_epoch = math.ceil(len(train_questions) / per_step)
    total = steps_per_epoch * args.epochs
    head = list(model.head.parameters())
    body = [p for name, p in model.named_parameters() if not name.startswith("head.")]
    optimizer = torch.optim.AdamW([{"params": body, "lr": args.lr}, {"params": head, "lr": args.lr * args.head_lr}],
                                  weight_decay=0.01)
    warmup = max(1, int(args.warmup * total))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup) * max(0.0, (total - step) / max(1, total - warmup)))

    config = _config(args)
    checkpoint = TrainingCheckpoint(work, config, model, optimizer, schedule)
    state = checkpoint.resume(device, args.fresh)
    save_checkpoint = checkpoint.save

    log = (work / "log.jsonl").open("a", encoding="utf-8")
    if args.init_weights and state["step"] == 0:
        # Continuing a trained reader: its held-out ranking before this run is the figure to beat.
        start = ranking_report(model, tokenizer, data, dev_questions, args.max_length, device)
        state["best"] = start["first"] + start["top3"]
        _log(log, {"epoch": 0, "step": 0, "held_out": start})
    started = last_save = window_start = time.time()
    running = None
    model.train()
    while state["step"] < total:
        epoch, position = divmod(state["step"], steps_per_epoch)
        rng = random.Random(args.seed * 1000 + epoch)
        order = list(range(len(train_questions)))
        rng.shuffle(order)
        groups = [group(train_questions[i], args.group, args.hard, rng, args.foreign) for i in order]
        # Some questions are read against another paper instead, to learn "nothing here answers".
        answerable = [True] * len(order)
        if wrong is not None:
            for n, i in enumerate(order):
                if rng.random() < args.unanswerable:
                    away = wrong.group(train_questions[i], args.group, args.hard, rng)
                    if away:
                        groups[n], answerable[n] = away, False
        for step_in_epoch in range(position, steps_per_epoch):
            chosen = order[step_in_epoch * per_step:(step_in_epoch + 1) * per_step]
            ids: list[list[int]] = []
            for i, members in zip(chosen, groups[step_in_epoch * per_step:], strict=False):
                question = train_questions[i]
                asked = drop_shared_words(question["question"], texts_of[question["paper"]][question["positive"][0]],
                                          args.drop_shared, rng)
                ids += encode(tokenizer, asked, [texts_of[p][m] for p, m in members], args.max_length)
            window = slice(step_in_epoch * per_step, step_in_epoch * per_step + len(chosen))
            sizes = [len(g) for g in groups[window]]
            with _autocast(device):
                logits = model(*collate(ids, sep_id, device))[:, 0].float()
            if args.hand_offset:
                logits = logits + torch.tensor([train_questions[i]["hand"][m] for i, members in
                                                zip(chosen, groups[window], strict=True) for _, m in members],
                                               device=logits.device)
            loss = group_loss(logits, sizes, answerable[window], args.unanswerable > 0)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            state["step"] += 1
            running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
            if state["step"] % args.log_every == 0:
                _log(log, {"step": state["step"], "of": total, "epoch": epoch, "loss": round(running, 4),
                           "lr": round(schedule.get_last_lr()[0], 8),
                           "seconds_per_step": round((time.time() - window_start) / args.log_every, 2)})
                window_start = time.time()
            if time.time() - last_save > 60 * args.checkpoint_minutes:
                save_checkpoint()
                last_save = time.time()
        report = ranking_report(model, tokenizer, data, dev_questions, args.max_length, device)
        entry: dict[str, Any] = {"epoch": epoch + 1, "step": state["step"], "held_out": report,
                                 "minutes": round((time.time() - started) / 60, 1)}
        score = report["first"] + report["top3"]
        if score > state["best"]:
            state["best"] = score
            save_file({k: v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()},
                      str(work / "best.safetensors"))
            entry["kept"] = True
        _log(log, entry)
        save_checkpoint()
        last_save = time.time()
    # The last weights too: a continued run whose small held-out set never beat its start keeps no best.
    save_file({k: v.detach().float().cpu().contiguous() for k, v in model.state_dict().items()},
              str(work / "last.safetensors"))
    (work / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"done; weights in {work / 'best.safetensors'} (kept by the held-out ranking) "
          f"and {work / 'last.safetensors'}")


def load_judge_encoder(model: Any, onnx_file: Path) -> None:
    """Start from the support judge's encoder: its int8 ONNX weights, dequantized, under their names
    (:func:`onnx_export.dynamic_graph_state`; the judge's head is not the reader's)."""
    from onnx_export import dynamic_graph_state, load_matching

    taken = load_matching(model, {k: v for k, v in dynamic_graph_state(onnx_file).items() if k.startswith("encoder.")})
    print(f"started from the judge's encoder: {taken} of {len(model.state_dict())} tensors", flush=True)


def _config(args: argparse.Namespace) -> dict[str, Any]:
    return {"epochs": args.epochs, "lr": args.lr, "head_lr": args.head_lr, "group": args.group, "hard": args.hard,
            "questions_per_step": args.questions_per_step, "max_length": args.max_length, "warmup": args.warmup,
            "seed": args.seed, "sources": sorted(args.sources), "init_judge": not args.plain and not args.init_weights,
            "init_weights": str(args.init_weights or ""), "base": "all-MiniLM-L6-v2",
            **({"foreign": args.foreign} if args.foreign else {}),
            **({"limit": args.limit} if args.limit else {}),
            **({"unanswerable": args.unanswerable} if args.unanswerable else {}),
            **({"drop_shared": args.drop_shared} if args.drop_shared else {}),
            **({"hand_offset": args.hand_offset} if args.hand_offset else {})}


def _log(log: Any, entry: dict[str, Any]) -> None:
    entry["time"] = round(time.time(), 1)
    log.write(json.dumps(entry) + "\n")
    log.flush()
    print(json.dumps(entry), flush=True)


def export(args: argparse.Namespace) -> None:
    """Write the int8 ONNX graph (one logit), the fast tokenizer's JSON and reader.json into ``--out``."""
    base = _base(args)
    model, tokenizer = load_model(Path(base), labels=1)
    best = args.work / "best.safetensors"
    load_weights(model, [best if best.is_file() else args.work / "last.safetensors"])
    config, log = work_record(args.work)
    out: Path = args.out
    write_int8_onnx(model, tokenizer, out, weight_only=True)  # see write_int8_onnx: the reader needs float activations
    kept = [e for e in log if e.get("kept")]
    meta_file = out / "reader.json"
    previous = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
    meta = {"labels": ["answers"], "max_length": int(config.get("max_length", 160)), "lowercase": True,
            "quantized_activations": False,  # int8 weights, float activations: PairModel batches it
            "training": {**config, "held_out": kept[-1]["held_out"] if kept else None,
                         "epoch_kept": kept[-1]["epoch"] if kept else None},
            "data": " and ".join(SOURCE_NAMES[name] for name in config.get("sources", ["covidqa"])) + "; see NOTICE"}
    if config.get("hand_offset"):  # trained on the combined score: it is combined at the weight it was trained with
        meta["combine"] = {"hand_weight": float(config["hand_offset"])}
    elif "combine" in previous:
        meta["combine"] = previous["combine"]
    meta_file.write_text(json.dumps(meta, indent=2) + "\n")
    if log:
        results = ROOT / "benchmarks" / "results" / "reader_training.json"
        results.write_text(json.dumps({"config": config, "log": log}, indent=1) + "\n")
    print(f"exported to {out}; now measure and fit it: python benchmarks/reader.py --fit")


def arguments() -> argparse.ArgumentParser:
    """The command line (benchmarks/reader_sweep.py parses its settings with it too)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("train", help="train (or resume) in --work")
    run.add_argument("--data", type=Path, default=DEFAULT_DATA, help="from benchmarks/reader_data.py")
    # PubMedQA's conclusions as answers teach "a conclusion answers" (an earlier trained scorer learned to prefer
    # "These findings suggest ..." to the result asked for: docs/history/answers.md), so COVID-QA alone by default.
    run.add_argument("--sources", nargs="*", default=["covidqa"], help="covidqa, pubmedqa, generated, paraphrased")
    run.add_argument("--init-judge", type=Path, default=ROOT / "resources/models/judge/model.int8.onnx",
                     help="start from this support judge's encoder (its model.int8.onnx; the default: the shipped one)")
    run.add_argument("--plain", action="store_true", help="start from all-MiniLM-L6-v2 instead of the judge")
    run.add_argument("--init-weights", type=Path,
                     help="continue from a trained reader's best.safetensors instead of the judge")
    run.add_argument("--epochs", type=int, default=3)
    run.add_argument("--lr", type=float, default=4e-5)
    run.add_argument("--head-lr", type=float, default=10.0, help="the head's learning rate, times --lr")
    run.add_argument("--group", type=int, default=12,
                     help="sentences a question's answer competes with, itself included")
    run.add_argument("--hard", type=int, default=7, help="near misses among them (the rest random)")
    run.add_argument("--foreign", type=int, default=0,
                     help="near misses from the other training papers among them (a digest reads several papers)")
    run.add_argument("--drop-shared", type=float, default=0.0,
                     help="rate at which a question word its answer shares is dropped in training (0: none)")
    run.add_argument("--questions-per-step", type=int, default=4)
    run.add_argument("--limit", type=int, help="train on this many of the questions (a stable sample; default all)")
    run.add_argument("--unanswerable", type=float, default=0.0,
                     help="share of questions read against another paper, to learn 'nothing here answers' (0: none)")
    run.add_argument("--hand-offset", type=float, default=0.0,
                     help="train on the product's combined score: each sentence's logit plus this times its "
                          "hand-weighted score (reader.json's hand_weight), so the reader learns what the hand "
                          "score misses (0: the reader alone)")
    run.add_argument("--max-length", type=int, default=160)
    run.add_argument("--warmup", type=float, default=0.06)
    run.add_argument("--seed", type=int, default=13)
    run.add_argument("--threads", type=int, default=2)
    run.add_argument("--device", choices=("auto", "cpu"), default="auto")
    run.add_argument("--dev-questions", type=int, default=60)
    run.add_argument("--log-every", type=int, default=20)
    run.add_argument("--checkpoint-minutes", type=float, default=5.0)
    run.add_argument("--fresh", action="store_true", help="ignore a checkpoint in --work and start over")
    out = commands.add_parser("export", help="export --work's best weights to ONNX")
    for command in (run, out):
        command.add_argument("--work", type=Path, default=DEFAULT_WORK)
        command.add_argument("--base", type=Path, help="all-MiniLM-L6-v2's folder (default: the bundled one)")
    out.add_argument("--out", type=Path, default=ROOT / "resources/models/reader")
    return parser


def main() -> None:
    args = arguments().parse_args()
    train(args) if args.command == "train" else export(args)


if __name__ == "__main__":
    main()
