"""The helpers the benchmark scripts share: a training run that resumes, and timing summaries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from common import TrainingCheckpoint, emit, summary

torch = pytest.importorskip("torch")


def _run(work: Path, config: dict[str, object]) -> TrainingCheckpoint:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 / (step + 1))
    return TrainingCheckpoint(work, config, model, optimizer, schedule)


def test_a_killed_run_resumes_where_its_checkpoint_left_it(tmp_path: Path) -> None:
    first = _run(tmp_path, {"lr": 0.1})
    state = first.resume("cpu", fresh=False)
    assert state == {"step": 0, "best": -1.0}  # nothing saved yet: a new run
    first.model(torch.ones(4, 3)).sum().backward()
    first.optimizer.step()
    first.schedule.step()
    state["step"] = 7
    first.save()
    trained = {name: value.clone() for name, value in first.model.state_dict().items()}

    again = _run(tmp_path, {"lr": 0.1})
    assert again.resume("cpu", fresh=False)["step"] == 7
    for name, value in again.model.state_dict().items():
        assert torch.equal(value, trained[name])
    assert again.schedule.last_epoch == 1
    assert not (tmp_path / "checkpoint.tmp").exists()


def test_a_checkpoint_of_other_settings_is_refused_and_fresh_starts_over(tmp_path: Path) -> None:
    _run(tmp_path, {"lr": 0.1}).save()
    (tmp_path / "log.jsonl").write_text("{}\n")
    with pytest.raises(SystemExit, match="pass --fresh"):
        _run(tmp_path, {"lr": 0.2}).resume("cpu", fresh=False)
    assert _run(tmp_path, {"lr": 0.2}).resume("cpu", fresh=True)["step"] == 0
    assert not (tmp_path / "checkpoint.pt").exists() and not (tmp_path / "log.jsonl").exists()


def test_summary_and_emit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert summary([1.23456, 0.5, 2.0], 2) == {"median_s": 1.23, "best_s": 0.5, "worst_s": 2.0, "runs": 3}
    out = tmp_path / "r.json"
    emit({"a": 1}, out)
    assert json.loads(out.read_text()) == {"a": 1} and json.loads(capsys.readouterr().out) == {"a": 1}
