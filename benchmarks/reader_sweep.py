"""Train the answer reader under several settings in one run (minutes on a GPU) and keep the best.

    python benchmarks/reader.py --fit --cache ROWS        # once, here: the hand scores of every sentence
    python benchmarks/reader_sweep.py --rows ROWS --work DIR --out DIR [--base FOLDER] [--minutes 7]
    python benchmarks/reader_sweep.py --join DIR           # the chosen weights back in one file
    python benchmarks/opening_fit.py pack --out FILE       # optional: judge by the digests' openings too

With ``--openings FILE`` each setting is also judged by the openings its reader would give the digests that
opening_fit.py captured (every candidate sentence of the passages chosen, replayed at the product's read limit):
the training library chooses the setting and its hand weight, the check library and LitQA2 dev only report.

Each setting is trained by train_reader.py (its six held-out training papers choose the epoch); then
every quotable sentence of those held-out papers' questions, and of COVID-QA's check questions, is read.
A setting is judged as the product ranks: the reader's logit plus the hand score at the weight fitted
on the held-out papers, the reader reading the hand score's best 32 sentences. **Only the held-out
training papers choose**; the check papers are reported for every setting and choose nothing.

The chosen setting's weights go to ``--out`` as float16 safetensors cut in pieces under 16 MB (what a
lent machine can send back); ``--join`` puts them together as ``best.safetensors`` for train_reader.py export.
Results: ``--out``/sweep.json (copied to benchmarks/results/reader_sweep.json).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from opening_rows import opening_rate, read_packed  # noqa: E402
from train_reader import arguments, candidate_texts, dev_papers, encode, read_data, scores, train  # noqa: E402

READ_LIMIT = 32  # engine.synthesis.evidence.ANSWER_READ_LIMIT (the engine is not imported on a GPU machine)
WEIGHTS = (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)
OPENING_WEIGHTS = (0.0, 4.0, 8.0, 12.0, 16.0, 24.0)
PIECE_BYTES = 15 * 1024 * 1024

# Each setting: train_reader.py train's options beyond --work, --data and --base.
SETTINGS: dict[str, list[str]] = {
    "shipped": ["--epochs", "3"],
    "six_epochs": ["--epochs", "6"],
    "six_epochs_low_lr": ["--epochs", "6", "--lr", "2e-5"],
    "wide_groups": ["--epochs", "4", "--group", "24", "--hard", "15"],
    "all_hard": ["--epochs", "4", "--hard", "11"],
    "long_inputs": ["--epochs", "4", "--max-length", "256"],
    "big_steps": ["--epochs", "6", "--questions-per-step", "8", "--lr", "6e-5"],
    "shipped_seed_14": ["--epochs", "3", "--seed", "14"],
    # From the judge, as shipped (6 epochs, lr 2e-5), with the two options measured on the CPU only as a
    # continuation of the shipped reader (docs/history/answers.md): other papers' near misses, question words dropped.
    "foreign_near_misses": ["--epochs", "6", "--lr", "2e-5", "--group", "16", "--foreign", "4"],
    "drop_shared_words": ["--epochs", "6", "--lr", "2e-5", "--drop-shared", "0.5"],
    "drop_shared_strong": ["--epochs", "6", "--lr", "2e-5", "--drop-shared", "0.8"],
    "foreign_and_drop": ["--epochs", "6", "--lr", "2e-5", "--group", "16", "--foreign", "4", "--drop-shared", "0.5"],
    "six_epochs_low_lr_seed_14": ["--epochs", "6", "--lr", "2e-5", "--seed", "14"],
    # The experts' questions and the writer's rewordings of them (reader_paraphrase.py data's file as --data).
    "paraphrased": ["--epochs", "6", "--lr", "2e-5", "--sources", "covidqa", "paraphrased"],
    "paraphrased_seed_14": ["--epochs", "6", "--lr", "2e-5", "--sources", "covidqa", "paraphrased", "--seed", "14"],
}


def ranked(read: np.ndarray, hand: np.ndarray, weight: float) -> list[int]:
    """The product's order: reader + weight x hand over the hand score's best READ_LIMIT sentences."""
    combined = np.full(len(hand), -np.inf)
    kept = np.argsort(-hand, kind="stable")[:READ_LIMIT]
    combined[kept] = read[kept] + weight * hand[kept]
    return [int(i) for i in np.argsort(-combined, kind="stable")]


def rank_stats(rows: list[dict[str, Any]], reads: list[np.ndarray], weight: float | None) -> dict[str, float]:
    """Answering sentence first / in the top 3; ``weight`` None: the reader alone over every sentence."""
    first = top3 = 0
    for row, read in zip(rows, reads, strict=True):
        order = ([int(i) for i in np.argsort(-read, kind="stable")] if weight is None
                 else ranked(read, row["hand"], weight))
        answers = row["question"]["also"]
        first += bool(order) and order[0] in answers
        top3 += any(i in answers for i in order[:3])
    n = max(1, len(rows))
    return {"first": round(first / n, 4), "top3": round(top3 / n, 4)}


def read_rows(model: Any, tokenizer: Any, data: dict[str, Any], rows: list[dict[str, Any]], max_length: int,
              device: Any) -> list[np.ndarray]:
    texts_of: dict[str, list[str]] = {}
    reads = []
    for row in rows:
        question = row["question"]
        texts = texts_of.setdefault(question["paper"], candidate_texts(data, question["paper"]))
        reads.append(np.array(scores(model, encode(tokenizer, question["question"], texts, max_length),
                                     tokenizer.sep_token_id, device), dtype=np.float32))
    return reads


def judge_openings(model: Any, tokenizer: Any, openings: dict[str, list[dict[str, Any]]], max_length: int,
                   device: Any) -> dict[str, Any]:
    """The digests' openings this reader gives (opening_fit.py's captures, replayed at the product's read
    limit): the hand weight is chosen on the training library ("train"); the other sets only report."""
    for questions in openings.values():
        for question in questions:
            texts = [c["read_text"] for c in question["candidates"]]
            got = scores(model, encode(tokenizer, question["question"], texts, max_length), tokenizer.sep_token_id,
                         device) if texts else []
            for candidate, value in zip(question["candidates"], got, strict=True):
                candidate["new"] = value
    grid = {w: opening_rate(openings["train"], "new", w, READ_LIMIT) for w in OPENING_WEIGHTS}
    weight = max(grid, key=lambda w: (grid[w], -w))
    return {"hand_weight": weight, "train_grid": grid,
            **{name: opening_rate(questions, "new", weight, READ_LIMIT) for name, questions in openings.items()}}


def judge_setting(name: str, options: argparse.Namespace, data: dict[str, Any], dev: list[dict[str, Any]],
                  check: list[dict[str, Any]], openings: dict[str, list[dict[str, Any]]] | None) -> dict[str, Any]:
    import torch
    from train_judge import load_model, load_weights

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model, tokenizer = load_model(Path(options.base), labels=1)
    load_weights(model, [options.work / "best.safetensors"])
    model.to(device)
    dev_reads = read_rows(model, tokenizer, data, dev, options.max_length, device)
    check_reads = read_rows(model, tokenizer, data, check, options.max_length, device)
    grid = {w: rank_stats(dev, dev_reads, w) for w in WEIGHTS}
    weight = max(grid, key=lambda w: (grid[w]["first"] + grid[w]["top3"], -w))
    log = [json.loads(line) for line in (options.work / "log.jsonl").read_text().splitlines()]
    result = {"name": name, "options": SETTINGS[name], "hand_weight": weight,
              "held_out": {"combined": grid[weight], "reader_alone": rank_stats(dev, dev_reads, None)},
              "check": {"combined": rank_stats(check, check_reads, weight),
                        "reader_alone": rank_stats(check, check_reads, None)},
              "epochs": [e for e in log if "held_out" in e]}
    if openings:
        result["openings"] = judge_openings(model, tokenizer, openings, options.max_length, device)
    return result


def write_pieces(weights: Path, out: Path) -> list[str]:
    """``weights`` as one float16 safetensors file cut into byte pieces of at most PIECE_BYTES each
    (the word embeddings alone are 23 MB in float16, so the cut is through bytes, not between tensors)."""
    from safetensors.torch import load_file, save_file

    whole = out / "best-half.safetensors"
    save_file({k: v.half().contiguous() for k, v in load_file(str(weights)).items()}, str(whole))
    data = whole.read_bytes()
    whole.unlink()
    names = []
    for number, first in enumerate(range(0, len(data), PIECE_BYTES)):
        names.append(f"best-half.part{number}")
        (out / names[-1]).write_bytes(data[first:first + PIECE_BYTES])
    return names


def join(folder: Path) -> None:
    """The pieces put back together, as float32 ``best.safetensors`` (what train_reader.py export reads)."""
    from safetensors.torch import load, save_file

    pieces = sorted(folder.glob("best-half.part*"), key=lambda p: int(p.suffix.removeprefix(".part")))
    state = {k: v.float() for k, v in load(b"".join(p.read_bytes() for p in pieces)).items()}
    save_file(state, str(folder / "best.safetensors"))
    print(f"{len(state)} tensors from {len(pieces)} pieces in {folder / 'best.safetensors'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=Path, help="benchmarks/reader.py --cache folder (dev-all, check-all)")
    parser.add_argument("--work", type=Path, help="one training folder per setting goes here")
    parser.add_argument("--out", type=Path, help="sweep.json and the chosen weights")
    parser.add_argument("--data", type=Path, help="benchmarks/reader_data.py's file")
    parser.add_argument("--base", type=Path, help="all-MiniLM-L6-v2's folder (config and tokenizer suffice)")
    parser.add_argument("--only", nargs="*", help="these settings (default: all)")
    parser.add_argument("--minutes", type=float, default=7.0, help="start no new setting after this long")
    parser.add_argument("--openings", type=Path,
                        help="opening_fit.py pack's file: judge and choose settings by the digests' openings")
    parser.add_argument("--join", type=Path, help="join a folder's best-N pieces into best.safetensors, and stop")
    args = parser.parse_args()
    if args.join:
        join(args.join)
        return
    if not (args.rows and args.work and args.out):
        parser.error("--rows, --work and --out are needed (or --join)")
    args.out.mkdir(parents=True, exist_ok=True)
    common = [*(["--data", str(args.data)] if args.data else []), *(["--base", str(args.base)] if args.base else [])]
    first_options = arguments().parse_args(["train", "--work", str(args.work), *common])
    data = read_data(first_options.data)

    def rows_of(name: str) -> list[dict[str, Any]]:
        with (args.rows / f"{name}-all.pickle").open("rb") as file:
            return [{"question": r["question"], "hand": np.asarray(r["hand"], dtype=np.float64)}
                    for r in pickle.load(file)]

    dev, check = rows_of("dev"), rows_of("check")
    held = dev_papers(data["questions"])
    if {r["question"]["paper"] for r in dev} - held or {r["question"]["paper"] for r in check} & held:
        raise SystemExit("the cached rows' papers are not train_reader.py's held-out papers; rebuild them")

    openings = read_packed(args.openings) if args.openings else None
    started = time.time()
    results: list[dict[str, Any]] = []
    for name in args.only or list(SETTINGS):
        if (time.time() - started) / 60 > args.minutes:
            print(f"time is up: {name} not tried", flush=True)
            break
        options = arguments().parse_args(["train", "--work", str(args.work / name), "--fresh", "--log-every", "50",
                                          *common, *SETTINGS[name]])
        begun = time.time()
        train(options)
        result = judge_setting(name, options, data, dev, check, openings)
        result["minutes"] = round((time.time() - begun) / 60, 2)
        results.append(result)
        (args.out / "sweep-partial.json").write_text(json.dumps(results, indent=1) + "\n")
        print(json.dumps({k: result.get(k) for k in ("name", "hand_weight", "held_out", "check", "openings",
                                                     "minutes")}), flush=True)

    def held_out_score(result: dict[str, Any]) -> tuple[float, ...]:
        combined = result["held_out"]["combined"]
        in_paper = float(combined["first"] + combined["top3"])
        return (result["openings"]["train"], in_paper) if openings else (in_paper,)

    chosen = max(results, key=held_out_score)
    pieces = write_pieces(args.work / chosen["name"] / "best.safetensors", args.out)
    (args.out / "config.json").write_text((args.work / chosen["name"] / "config.json").read_text())
    (args.out / "log.jsonl").write_text((args.work / chosen["name"] / "log.jsonl").read_text())
    summary = {"chosen": chosen["name"],
               "chosen_by": ("the training library's openings, then " if openings else "")
               + "held-out training papers, combined first + top3",
               "read_limit": READ_LIMIT, "pieces": pieces, "settings": results,
               "held_out_questions": len(dev), "check_questions": len(check)}
    (args.out / "sweep.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"chosen: {chosen['name']}", flush=True)


if __name__ == "__main__":
    main()
