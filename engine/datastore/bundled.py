"""The bundled demo datastore (resources/datastores): 3,529 CS papers from SciREX and SciTLDR."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from engine.errors import EngineError

BUNDLED_FILE = "cs-sample.jsonl.gz"


def bundled_datastore() -> Path:
    """Path of the bundled demo datastore file (Apache-2.0; see resources/datastores/NOTICE.md)."""
    path = Path(str(resources.files("resources") / "datastores" / BUNDLED_FILE))
    if not path.is_file():
        raise EngineError(f"The bundled demo datastore {path} is missing; reinstall Quire.")
    return path
