"""A search that starts cold opens the exported int8 embedder without importing torch.

The real MiniLM model and its real int8 export (made once per module, which does load torch);
the searches themselves run in fresh processes, whose ``sys.modules`` says what was imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fixtures.pdfs import paper_text, text_pdf

from engine.embed import SentenceTransformerEmbedder
from engine.embed.onnx_cached import fast_tokenize, max_seq_length, open_cached_encoder, pooled_dimension
from engine.embed.onnx_int8 import MODEL_FILE, OnnxInt8Encoder, hf_tokenize

REPO = Path(__file__).resolve().parents[2]

TEXTS = [
    "Wide residual networks",
    "Ünïcödé àccents, ligatures ﬁ ﬂ and CJK 注意力机制 mixed in",
    "",
    "   leading and trailing spaces   ",
    "a long passage " + " ".join(f"token{number}" for number in range(600)),  # past the 256-token limit
    "Citations [1], e-mail x@y.org, 3.5e-7 mol/L, and α-helix β-sheet",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> SentenceTransformerEmbedder:
    """The int8 embedder after its ONNX export exists (the export itself needs torch)."""
    embedder = SentenceTransformerEmbedder(quantize=True, onnx_folder=tmp_path_factory.mktemp("onnx"))
    embedder.embed(["warm up"])
    return embedder


def _onnx_file(embedder: SentenceTransformerEmbedder) -> Path:
    return embedder._onnx_path()


def test_the_folder_says_what_loading_the_model_would(exported: SentenceTransformerEmbedder) -> None:
    from sentence_transformers import SentenceTransformer

    folder = Path(exported.source)
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    length = int(model.max_seq_length)
    assert pooled_dimension(folder) == model.get_embedding_dimension() == exported.dimension
    assert max_seq_length(folder) == length

    fast = fast_tokenize(folder, length)
    assert fast is not None
    theirs, ours = hf_tokenize(model.tokenizer, length)(TEXTS), fast(TEXTS)
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        assert np.array_equal(np.asarray(theirs[name]), ours[name]), name

    opened = open_cached_encoder(_onnx_file(exported), folder, None)
    assert opened is not None
    light, dimension = opened
    heavy = OnnxInt8Encoder(_onnx_file(exported), hf_tokenize(model.tokenizer, length))
    assert dimension == 384
    assert np.allclose(light.encode(TEXTS), heavy.encode(TEXTS), atol=1e-6)


def test_a_folder_that_does_not_say_enough_is_loaded_the_slow_way(exported: SentenceTransformerEmbedder,
                                                                  tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(exported.source, folder)
    (folder / "tokenizer.json").unlink()  # a model with only the slow tokenizer's vocab.txt
    assert open_cached_encoder(_onnx_file(exported), folder, None) is None
    assert open_cached_encoder(tmp_path / "absent" / MODEL_FILE, Path(exported.source), None) is None


PROBE = """
import json, sys
from engine.cli.main import main
code = main(sys.argv[1:])
heavy = ("torch", "transformers", "sentence_transformers")
print(json.dumps({"code": code, "loaded": sorted(m for m in sys.modules if m.split(".")[0] in heavy),
                  "onnxruntime": "onnxruntime" in sys.modules}))
"""


@pytest.mark.slow
def test_quire_search_never_imports_torch_once_the_int8_model_is_exported(exported: SentenceTransformerEmbedder,
                                                                          tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    onnx_file = _onnx_file(exported)
    # Where the engine's own embedder looks (platformdirs honours XDG_CACHE_HOME).
    target = cache / "quire" / "onnx" / onnx_file.parent.name / MODEL_FILE
    target.parent.mkdir(parents=True)
    shutil.copy2(onnx_file, target)
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(cache)}
    home = tmp_path / "home"
    paper = text_pdf(tmp_path / "paper.pdf", [paper_text("cold searches")])

    def quire(*args: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", PROBE, "--home", str(home), *args], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    ingested = quire("ingest", str(paper))  # embeds the passages with the same int8 file
    searched = quire("search", "--json", "cold searches")

    assert ingested["code"] == 0 and ingested["loaded"] == []
    assert searched["code"] == 0
    assert searched["onnxruntime"] is True  # the question was embedded: a dense search ran
    assert searched["loaded"] == [], searched["loaded"]


@pytest.mark.slow
def test_quire_ask_never_imports_torch_and_judges_support_at_full_precision(
        exported: SentenceTransformerEmbedder, tmp_path: Path) -> None:
    from engine.embed.onnx_int8 import FP32_MODEL_FILE

    cache = tmp_path / "cache"
    onnx_file = _onnx_file(exported)
    assert (onnx_file.parent / FP32_MODEL_FILE).is_file()  # the int8 export keeps its fp32 graph
    target = cache / "quire" / "onnx" / onnx_file.parent.name
    shutil.copytree(onnx_file.parent, target)
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(cache)}
    home = tmp_path / "home"
    paper = text_pdf(tmp_path / "paper.pdf", [paper_text("cold questions")])

    def quire(*args: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", PROBE, "--home", str(home), *args], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    assert quire("ingest", str(paper))["code"] == 0
    asked = quire("ask", "How do retrieval systems cite their sources?", "--digest", "--no-save", "--json")
    assert asked["code"] == 0
    assert asked["loaded"] == [], asked["loaded"]

    # The support embedder's ONNX fp32 vectors are the torch fp32 model's: the fitted thresholds hold.
    support = exported.full_precision()
    assert support.model_id == SentenceTransformerEmbedder(Path(exported.source)).model_id
    fp32 = SentenceTransformerEmbedder(Path(exported.source))
    assert np.allclose(support.embed(TEXTS), fp32.embed(TEXTS), atol=1e-5)
    assert support._onnx is not None  # it ran through ONNX Runtime, not torch
