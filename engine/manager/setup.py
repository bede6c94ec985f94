"""The model-manager operations the Engine facade exposes: download, choose, report on hardware.

Kept apart from the facade so ``engine/service.py`` stays a thin list of methods.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.config import Settings
from engine.hardware import HardwareInfo
from engine.manager.catalog import find_model, load_catalog
from engine.manager.fit import FitReport, fit_for_file, recommend
from engine.manager.installed import InstalledModel, install_model, resolve_model
from engine.progress import CancelToken, ProgressCallback, no_progress


def verify_language_model(path: Path) -> None:
    """Refuse a GGUF whose header is damaged or whose architecture the installed llama.cpp lacks."""
    from engine.generate.gguf import validate_gguf

    validate_gguf(path)


def download_catalog_model(models_dir: Path, name: str, progress: ProgressCallback = no_progress,
                           cancel: CancelToken | None = None, endpoint: str | None = None) -> InstalledModel:
    """Install the catalog model ``name``; language models must pass :func:`verify_language_model`."""
    entry = find_model(name)
    verify = verify_language_model if entry.kind == "llm" else None
    return install_model(entry, models_dir, progress=progress, cancel=cancel, endpoint=endpoint, verify_gguf=verify)


@dataclass(frozen=True)
class ModelChoice:
    """The outcome of choosing a model: the new settings and, for a language model, whether it fits."""

    model: InstalledModel
    settings: Settings
    fit: FitReport | None = None

    @property
    def warning(self) -> str:
        return self.fit.warning if self.fit else ""

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.to_dict(), "setting": self.setting_name, "value": self.model.path,
                "fit": self.fit.to_dict() if self.fit else None, "warning": self.warning}

    @property
    def setting_name(self) -> str:
        return "generation.model" if self.model.kind == "llm" else "retrieval.embedder"


def choose_model(models_dir: Path, name_or_path: str, settings: Settings, hardware: HardwareInfo) -> ModelChoice:
    """Validate a model and return settings that use it (the caller saves them).

    A language model must be a GGUF llama.cpp can load; one that will not fit in memory at the
    configured context is still chosen, with the warning in :attr:`ModelChoice.warning`.
    """
    model = resolve_model(name_or_path, models_dir)
    if model.kind == "llm":
        verify_language_model(Path(model.path))
        generation = settings.generation
        fit = fit_for_file(model.path, generation.context_size, hardware, generation.gpu_layers)
        return ModelChoice(model, replace(settings, generation=replace(generation, model=model.path)), fit)
    if model.kind == "embedder":
        return ModelChoice(model, replace(settings, retrieval=replace(settings.retrieval, embedder=model.path)))
    from engine.errors import EngineError

    raise EngineError(f"{model.name} is a {model.kind}; Quire chooses its reranker by measurement "
                      "(settings retrieval.reranker), so there is nothing to switch.")


def hardware_report(hardware: HardwareInfo, settings: Settings, models_dir: Path) -> dict[str, Any]:
    """Hardware, the recommendation for it, and whether the configured model fits."""
    from engine.models import language_model_file

    recommendation = recommend(hardware, load_catalog())
    configured = language_model_file(None, settings.generation.model).path
    from engine.errors import EngineError

    fit, problem = None, None
    if configured and Path(configured).exists():
        try:
            fit = fit_for_file(configured, settings.generation.context_size, hardware, settings.generation.gpu_layers)
        except EngineError as exc:
            # A broken model file named in settings.toml must not hide the rest of the report.
            problem = f"Model file {configured}: {exc}"
    return {"hardware": hardware.to_dict(), "recommendation": recommendation.to_dict(),
            "configured_model": str(configured) if configured else None,
            "configured_fit": fit.to_dict() if fit else None, "configured_problem": problem,
            "models_dir": str(models_dir)}
