"""The way back from the shipped judge's graph to PyTorch weights (benchmarks/onnx_export.py's
dynamic_graph_state), on which its requantization and the reader's start rest: the model rebuilt from them
must read pairs as the graph does."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from judge_requantize import load_from_dynamic_graph  # noqa: E402
from train_judge import load_model  # noqa: E402

from engine.cite.judge import PairModel  # noqa: E402
from engine.models import default_embedder_path  # noqa: E402

PAIRS = [
    ("SPECTER is trained on citation triplets.",
     "We train SPECTER on triplets of a query paper, a paper it cites and one it does not cite."),
    ("Masks reduce transmission.", "Mask wearing had no measurable effect on transmission in the trial."),
    ("The corpus holds 81.1M papers.", "Vitamin D levels were measured in 300 patients."),
]


def test_the_judge_rebuilt_from_its_graph_reads_pairs_as_the_graph_does() -> None:
    import torch

    base = default_embedder_path()
    assert base is not None
    model, tokenizer = load_model(Path(base))
    folder = ROOT / "resources" / "models" / "judge"
    assert load_from_dynamic_graph(model, folder / "model.int8.onnx") > 100
    model.eval()
    with torch.no_grad():
        batch = tokenizer([c for c, _ in PAIRS], [e for _, e in PAIRS], truncation="only_second", max_length=160,
                          padding=True, return_tensors="pt")
        rebuilt = torch.softmax(model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]), -1)
    shipped = PairModel(folder).probabilities(PAIRS)
    # The graph quantizes activations, the rebuilt model does not: close, not equal (0.02 on average measured).
    assert np.abs(rebuilt.numpy() - shipped).max() < 0.1
    assert (rebuilt.numpy().argmax(1) == shipped.argmax(1)).all()
