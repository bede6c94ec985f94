"""The answer judge with a model that can write (Qwen2.5-Coder-1.5B-Instruct from
../shared/models/fetch-writer, looked for in QUIRE_TEST_MODELS or ~/.cache/quire-test-models).
Slow, and skipped where the writer has not been fetched: CI does not need it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.synthesis.answer_judge import messages

WRITER = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QUESTION = "How many citation triplets is SPECTER trained on?"
ANSWERS = "The training data consists of 684K triplets built from the citation graph of Semantic Scholar papers."
ABOUT = "We evaluate SPECTER embeddings of scientific papers on SCIDOCS, a benchmark of seven document-level tasks."


def writer_path() -> Path:
    folder = Path(os.environ.get("QUIRE_TEST_MODELS", Path.home() / ".cache" / "quire-test-models"))
    path = folder / WRITER
    if not path.is_file():
        pytest.skip(f"the writer is not fetched ({path}); run ../shared/models/fetch-writer")
    return path


@pytest.mark.slow
def test_the_writer_judges_the_sentence_with_the_answer_above_one_about_the_topic() -> None:
    from engine.generate.llama import LlamaModel

    model = LlamaModel(writer_path(), context_size=2048)
    try:
        answers, _ = model.reply_probabilities(messages(QUESTION, ANSWERS), ("Yes", "No"))
        about, _ = model.reply_probabilities(messages(QUESTION, ABOUT), ("Yes", "No"))
    finally:
        model.close()
    assert answers > 0.5 > about
