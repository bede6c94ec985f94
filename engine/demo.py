"""The bundled demo: four CC BY 4.0 ACL Anthology papers shipped in resources/demo."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def demo_papers() -> list[Path]:
    """Paths of the bundled sample PDFs."""
    folder = resources.files("resources") / "demo"
    return sorted(Path(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".pdf"))
