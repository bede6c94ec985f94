"""The way back from the shipped reader's weight-only int8 graph to PyTorch weights (benchmarks/onnx_export.py's
weight_only_graph_state), from which benchmarks/experiments/reader_digest.py continues the shipped reader: the
model rebuilt from them must score sentences as the product's reader does."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from onnx_export import load_matching, weight_only_graph_state  # noqa: E402
from train_judge import collate, load_model  # noqa: E402

from engine.cite.reader import AnswerReader, default_reader_folder  # noqa: E402
from engine.models import default_embedder_path  # noqa: E402

QUESTION = "How is SPECTER trained?"
SENTENCES = ["SPECTER is trained with a triplet loss on citation triplets.",
             "We thank the reviewers for their comments.",
             "The corpus holds 81.1M papers from many fields."]


def test_the_reader_rebuilt_from_its_graph_scores_as_the_product_does() -> None:
    import torch

    base = default_embedder_path()
    assert base is not None
    model, tokenizer = load_model(Path(base), labels=1)
    taken = load_matching(model, weight_only_graph_state(default_reader_folder() / "model.int8.onnx"))
    assert taken >= len(model.state_dict()) - 2  # all but the pooler, which the reader's mean pooling never uses
    model.eval()
    ids = [list(x) for x in tokenizer([QUESTION] * len(SENTENCES), SENTENCES, truncation="longest_first",
                                      max_length=160)["input_ids"]]
    with torch.no_grad():
        rebuilt = model(*collate(ids, tokenizer.sep_token_id, torch.device("cpu")))[:, 0].numpy()
    shipped = AnswerReader(default_reader_folder()).scores(QUESTION, SENTENCES)
    assert np.allclose(rebuilt, shipped, atol=0.05)
    assert int(np.argmax(rebuilt)) == 0
