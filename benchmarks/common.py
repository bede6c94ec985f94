"""What several benchmark scripts share: timing summaries, writing a results file, and resumable training.

Kept in one module so that a fix to how a run resumes or how timings are summarised reaches every
script that relies on it.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The files a training run keeps in its work folder; a fresh run removes them first.
TRAINING_FILES = ("log.jsonl", "best.safetensors", "checkpoint.pt")


def summary(samples: list[float], digits: int = 3) -> dict[str, float]:
    """Median, best and worst of timed runs in seconds, rounded to ``digits``, and how many runs."""
    return {"median_s": round(statistics.median(samples), digits), "best_s": round(min(samples), digits),
            "worst_s": round(max(samples), digits), "runs": len(samples)}


def emit(results: dict[str, Any], path: Path | None) -> None:
    """Print the results as JSON, and write them to ``path`` when one is given."""
    text = json.dumps(results, indent=2)
    print(text)
    if path:
        path.write_text(text + "\n")


@dataclass
class TrainingCheckpoint:
    """A training run's model, optimiser, schedule and progress, saved so that a killed run resumes.

    ``config`` is what the run was started with; a checkpoint made with other settings is refused
    rather than silently mixed into a different run.
    """

    work: Path
    config: dict[str, Any]
    model: Any
    optimizer: Any
    schedule: Any
    state: dict[str, Any] = field(default_factory=lambda: {"step": 0, "best": -1.0})

    @property
    def path(self) -> Path:
        return self.work / "checkpoint.pt"

    def resume(self, device: Any, fresh: bool) -> dict[str, Any]:
        """Load the saved run unless ``fresh`` (which removes its files instead); the run's state."""
        if self.path.is_file() and not fresh:
            import torch

            saved = torch.load(self.path, map_location=device, weights_only=False)
            if saved["config"] != self.config:
                raise SystemExit(f"{self.path} was made with other settings; pass --fresh to start over")
            self.model.load_state_dict(saved["model"])
            self.optimizer.load_state_dict(saved["optimizer"])
            self.schedule.load_state_dict(saved["schedule"])
            self.state = saved["state"]
            print(f"resuming at step {self.state['step']}", flush=True)
        elif fresh:
            for stale in TRAINING_FILES:
                (self.work / stale).unlink(missing_ok=True)
        return self.state

    def save(self) -> None:
        import torch

        temporary = self.path.with_suffix(".tmp")
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "schedule": self.schedule.state_dict(), "state": self.state, "config": self.config}, temporary)
        temporary.replace(self.path)  # a run killed mid-write keeps the previous checkpoint
