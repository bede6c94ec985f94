"""Does the answer reader rank better where an answer is chosen, among the sentences of a search's passages?

    python benchmarks/experiments/reader_digest.py data [--home H] [--out F] [--limit 400]   # once
    python benchmarks/experiments/reader_digest.py train [--work W] [--epochs 2]
    python benchmarks/experiments/reader_digest.py export [--work W] --out DIR
    python benchmarks/experiments/reader_digest.py coverage --data F   # where the answer sits among the candidates

Every reader so far was trained and chosen in-paper: the question against its own paper's sentences. The digest
opens with the best sentence of the 12 passages a search returns, often from several papers, and readers that
ranked a paper's sentences better opened worse answers. Here the shipped reader is adapted where it is used.

``data`` typesets COVID-QA's training papers as PDFs (title, then every line of the paper, a page at a time),
ingests them into a library of their own, and asks each training question through the product (``Engine.ask``).
For each question it keeps every sentence the evidence step scored: its text with its neighbours as the reader
reads it, the hand-weighted score, and whether it states the expert's answer (at least 70 % of the answer's
content words; sentences holding 30-70 % are left out of training as neither). COVID-QA's check file is never
read here, except by ``data --questions ../shared/eval/covidqa/covidqa-check.json --home H`` (H: the library
../shared/checks/reader built), whose file only ``coverage`` reads: how many questions have a candidate that
states the answer, and how many have it first or in the top three as the product ranks today.

``train`` starts from the shipped reader (its int8 ONNX weights read back) and trains on the product's combined
score (logit + the shipped hand weight x hand score), listwise: each question's answering sentence against the
candidates that score best today (the near misses the digest actually confuses) and a few others. Eight training
papers are held out, by paper, to choose the epoch: the share of their questions whose best candidate answers.
``export`` writes the int8 ONNX reader; measure it with ../shared/checks/reader, ../shared/checks/answers and
``benchmarks/reader.py --readers``. The training log: benchmarks/results/reader_digest.json (copied from the
work folder's log.jsonl); conclusions in docs/history/experiments.md.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from answer_checks import covid_share  # noqa: E402  (the check's own word test)

import engine  # noqa: E402,F401  (before PyMuPDF: the engine sets up its imports)
from engine.tuning import SYNTHESIS  # noqa: E402

CACHE = Path.home() / ".cache" / "quire-train"
DEFAULT_DATA = CACHE / "reader-digest.json.gz"
DEFAULT_WORK = CACHE / "reader-digest"
COVIDQA_TRAIN = ROOT.parent / "shared" / "eval" / "covidqa" / "covidqa-train.json"
SHIPPED = ROOT / "resources" / "models" / "reader"
DEV_PAPERS = 8
ANSWERS, PARTLY = 0.7, 0.3
def typeset(context: str, path: Path) -> None:
    """A COVID-QA paper as a PDF: its title, then its lines (links left out), a page at a time."""
    import pymupdf

    lines = [line.strip() for line in context.split("\n")]
    title, text = lines[0], "\n".join(line for line in lines[1:] if line and not line.startswith("http"))
    doc = pymupdf.open()
    font = pymupdf.Font("helv")
    page = doc.new_page(width=612, height=792)
    writer = pymupdf.TextWriter(page.rect)
    top = 130
    writer.fill_textbox(pymupdf.Rect(54, 54, 558, 125), title, font=font, fontsize=15)
    while True:
        left = writer.fill_textbox(pymupdf.Rect(54, top, 558, 738), text, font=font, fontsize=10)
        writer.write_text(page)
        text = "\n".join(line for line, _ in left or [])
        if not text.strip():
            break
        page = doc.new_page(width=612, height=792)
        writer = pymupdf.TextWriter(page.rect)
        top = 54
    doc.set_metadata({"title": title})
    doc.save(str(path))
    doc.close()


def make_data(args: argparse.Namespace) -> None:
    import engine.synthesis.steps as steps
    from engine.cite.reader import neighbours, reader_text
    from engine.service import Engine
    from engine.synthesis.evidence import hand_scores

    home: Path = args.home
    training = args.questions.resolve() == COVIDQA_TRAIN.resolve()
    questions = []
    for article in json.loads(args.questions.read_text())["data"]:
        paragraph = article["paragraphs"][0]
        title = paragraph["context"].split("\n")[0].strip()  # names the paper: the held-out papers are chosen by it
        questions += [{"question": q["question"], "answer": q["answers"][0]["text"], "paper": title}
                      for q in paragraph["qas"] if q["answers"]]
        pdf = home / "pdfs" / f"covidqa-{paragraph['document_id']}.pdf"
        if training and not pdf.exists():
            pdf.parent.mkdir(parents=True, exist_ok=True)
            typeset(paragraph["context"], pdf)
    random.Random(5).shuffle(questions)  # the check's seeded order; the training run took the first 400
    if training:
        engine_ = Engine(home=home / "library")
        for _ in engine_.add_documents([home / "pdfs"]):  # an iterator: each file is stored as it is read
            pass
    else:  # the check's own library and its 100 seeded questions, to be measured, never trained on
        engine_ = Engine(home=home)
        questions = questions[:100]
    captured: list[Any] = []
    extract = steps.extract_evidence

    def spy(*positional: Any, **named: Any) -> Any:
        found = extract(*positional, **named)
        captured.append((positional, found))
        return found

    steps.extract_evidence = spy
    rows = []
    started = time.time()
    for number, item in enumerate(questions[:args.limit], 1):
        captured.clear()
        engine_.ask(item["question"])
        if not captured:
            continue
        (question, _references, scorer, *_), evidence = captured[0]
        flat = [(e, s) for e in evidence for s in (e.sentences or e.quotes)]
        if not flat:
            continue
        hands = hand_scores(question, [s.text for _, s in flat], scorer)
        rows.append({**item, "candidates": [
            {"text": reader_text(s.text, *neighbours(e.reference.text, s.start)), "hand": round(float(h), 5),
             "share": round(covid_share(item["answer"], s.text), 3), "rank": e.rank, "score": float(s.answer)}
            for (e, s), h in zip(flat, hands, strict=True)]})
        if number % 25 == 0:
            print(f"{number} questions, {time.time() - started:.0f} s", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as file:
        json.dump({"questions": rows}, file)
    print(f"{len(rows)} questions with their candidates in {args.out}")


def coverage(args: argparse.Namespace) -> None:
    """Where the expert's answer sits among each question's candidates, as the product ranks them today."""
    rows = read_rows(args.data)
    ranked = [sorted(r["candidates"], key=lambda c: -c["score"]) for r in rows]
    found = {"questions": len(rows),
             "a candidate states it": sum(any(c["share"] >= ANSWERS for c in cands) for cands in ranked),
             "first": sum(bool(cands) and cands[0]["share"] >= ANSWERS for cands in ranked),
             "top 3": sum(any(c["share"] >= ANSWERS for c in cands[:3]) for cands in ranked)}
    # Would the passage's search rank mend the order? The product's score (squashed, no rank penalty) taken back
    # to its logit, less w x log(rank); a sentence the reader did not read (score 0) stays last.
    for weight in (0.5, 1.0, 2.0, 4.0):
        def ranked_score(c: dict[str, Any], w: float = weight) -> float:
            score = min(max(c["score"], 1e-12), 1 - 1e-12)
            return math.log(score / (1 - score)) - w * math.log(c["rank"]) if c["score"] > 0 else -1e9
        found[f"first, less {weight} x log(search rank)"] = sum(
            max(r["candidates"], key=ranked_score)["share"] >= ANSWERS for r in rows if r["candidates"])
    print(json.dumps(found))


def read_rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as file:
        rows: list[dict[str, Any]] = json.load(file)["questions"]
    return rows


def held_out(rows: list[dict[str, Any]]) -> set[str]:
    papers = sorted({r["paper"] for r in rows}, key=lambda p: hashlib.sha256(p.encode()).hexdigest())
    return set(papers[:DEV_PAPERS])


def load_shipped(model: Any, folder: Path) -> None:
    """The shipped reader's weights, encoder and head, read back from its int8 ONNX graph."""
    from onnx_export import load_matching, weight_only_graph_state

    taken = load_matching(model, weight_only_graph_state(folder / "model.int8.onnx"))
    print(f"started from the shipped reader: {taken} of {len(model.state_dict())} tensors", flush=True)


def top1(model: Any, tokenizer: Any, rows: list[dict[str, Any]], hand_weight: float, max_length: int,
         device: Any) -> float:
    """The share of questions whose best candidate (logit + hand_weight x hand) states the answer."""
    from train_reader import encode, scores

    hits = 0
    for row in rows:
        # As the product reads them: the sentences with the best hand-weighted scores (the rest rank after).
        cands = sorted(row["candidates"], key=lambda c: -c["hand"])[:SYNTHESIS.answer_read_limit]
        got = scores(model, encode(tokenizer, row["question"], [c["text"] for c in cands], max_length),
                     tokenizer.sep_token_id, device)
        best = max(range(len(cands)), key=lambda i: got[i] + hand_weight * cands[i]["hand"])
        hits += cands[best]["share"] >= ANSWERS
    return round(hits / max(1, len(rows)), 4)


def train(args: argparse.Namespace) -> None:
    import torch
    from reader_groups import group_loss
    from safetensors.torch import save_file
    from train_judge import _autocast, _base, collate, load_model
    from train_reader import encode

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device("cpu")
    model, tokenizer = load_model(Path(_base(args)), labels=1)
    load_shipped(model, SHIPPED)
    hand_weight = float(json.loads((SHIPPED / "reader.json").read_text())["combine"]["hand_weight"])
    rows = read_rows(args.data)
    held = held_out(rows)
    dev = [r for r in rows if r["paper"] in held]
    fit = [r for r in rows if r["paper"] not in held and any(c["share"] >= ANSWERS for c in r["candidates"])]
    print(f"{len(fit)} training questions, {len(dev)} held out from {len(held)} papers", flush=True)
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    log = (work / "log.jsonl").open("a", encoding="utf-8")

    def note(entry: dict[str, Any]) -> None:
        log.write(json.dumps(entry) + "\n")
        log.flush()
        print(json.dumps(entry), flush=True)

    def keep_best() -> None:
        save_file({k: v.detach().float().contiguous() for k, v in model.state_dict().items()},
                  str(work / "best.safetensors"))

    # Near misses as the product scores them today: the candidates it ranks best and does not answer with.
    for row in fit:
        row["order"] = sorted(range(len(row["candidates"])), key=lambda i: -row["candidates"][i]["score"])
    best = top1(model, tokenizer, dev, hand_weight, args.max_length, device)
    note({"epoch": 0, "held_out_top1": best})
    keep_best()
    per_step = args.questions_per_step
    steps_per_epoch = math.ceil(len(fit) / per_step)
    total = steps_per_epoch * args.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, int(0.06 * total))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup) * max(0.0, (total - step) / max(1, total - warmup)))
    model.train()
    step, running, started = 0, None, time.time()
    for epoch in range(args.epochs):
        rng = random.Random(args.seed * 1000 + epoch)
        order = list(range(len(fit)))
        rng.shuffle(order)
        for first in range(0, len(order), per_step):
            ids: list[list[int]] = []
            offsets: list[float] = []
            sizes: list[int] = []
            for i in order[first:first + per_step]:
                row = fit[i]
                cands = row["candidates"]
                positives = [j for j in range(len(cands)) if cands[j]["share"] >= ANSWERS]
                negatives = [j for j in row["order"] if cands[j]["share"] < PARTLY]
                hard = negatives[:args.hard]
                rest = negatives[args.hard:]
                members = [rng.choice(positives), *hard, *rng.sample(rest, min(len(rest), args.group - 1 - len(hard)))]
                ids += encode(tokenizer, row["question"], [cands[j]["text"] for j in members], args.max_length)
                offsets += [hand_weight * cands[j]["hand"] for j in members]
                sizes.append(len(members))
            with _autocast(device):
                logits = model(*collate(ids, tokenizer.sep_token_id, device))[:, 0].float()
            loss = group_loss(logits + torch.tensor(offsets), sizes, [True] * len(sizes), False)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
            if step % 20 == 0:
                note({"step": step, "of": total, "loss": round(running, 4),
                      "seconds": round(time.time() - started)})
        score = top1(model, tokenizer, dev, hand_weight, args.max_length, device)
        entry: dict[str, Any] = {"epoch": epoch + 1, "held_out_top1": score}
        if score > best:
            best = score
            keep_best()
            entry["kept"] = True
        note(entry)
        model.train()
    config = {key: value for key, value in vars(args).items() if key in
              ("epochs", "lr", "group", "hard", "questions_per_step", "max_length", "seed")}
    (work / "config.json").write_text(json.dumps({**config, "hand_offset": hand_weight, "init": "shipped reader"},
                                                 indent=2) + "\n")


def export(args: argparse.Namespace) -> None:
    from onnx_export import write_int8_onnx
    from train_judge import _base, load_model, load_weights

    model, tokenizer = load_model(Path(_base(args)), labels=1)
    load_weights(model, [args.work / "best.safetensors"])
    write_int8_onnx(model, tokenizer, args.out, weight_only=True)
    meta = json.loads((SHIPPED / "reader.json").read_text())
    meta["training"] = {**json.loads((args.work / "config.json").read_text()),
                        "log": [json.loads(line) for line in (args.work / "log.jsonl").open() if "epoch" in line]}
    (args.out / "reader.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"exported to {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data")
    data.add_argument("--home", type=Path, default=CACHE / "reader-digest-library")
    data.add_argument("--out", type=Path, default=DEFAULT_DATA)
    data.add_argument("--limit", type=int, default=None)
    data.add_argument("--questions", type=Path, default=COVIDQA_TRAIN)
    cover = commands.add_parser("coverage")
    cover.add_argument("--data", type=Path, required=True)
    run = commands.add_parser("train")
    run.add_argument("--data", type=Path, default=DEFAULT_DATA)
    run.add_argument("--epochs", type=int, default=2)
    run.add_argument("--lr", type=float, default=1e-5)
    run.add_argument("--group", type=int, default=12)
    run.add_argument("--hard", type=int, default=8)
    run.add_argument("--questions-per-step", type=int, default=4)
    run.add_argument("--max-length", type=int, default=160)
    run.add_argument("--seed", type=int, default=13)
    run.add_argument("--threads", type=int, default=2)
    out = commands.add_parser("export")
    out.add_argument("--out", type=Path, required=True)
    for command in (run, out):
        command.add_argument("--work", type=Path, default=DEFAULT_WORK)
        command.add_argument("--base", type=Path, help="all-MiniLM-L6-v2's folder (default: the bundled one)")
    args = parser.parse_args()
    {"data": make_data, "train": train, "export": export, "coverage": coverage}[args.command](args)


if __name__ == "__main__":
    main()
