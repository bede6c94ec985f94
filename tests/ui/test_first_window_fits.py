"""The first window fits the available screen: a 1366x768 laptop or a 1024x700 display, with the window opened as
the app opens it (a real QApplication on an offscreen screen of that size, in a subprocess of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = """
import json, sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from engine.service import Engine
from ui.engine_client import EngineClient
from ui.main_window import MainWindow
client = EngineClient(Engine(sys.argv[1]))
window = MainWindow(client, QSettings(sys.argv[2], QSettings.Format.IniFormat))
window.show()
app.processEvents()
frame, available = window.frameGeometry(), window.screen().availableGeometry()
print(json.dumps({"window": [frame.x(), frame.y(), frame.width(), frame.height()],
                  "screen": [available.x(), available.y(), available.width(), available.height()]}))
client.shutdown()
"""


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1024, 700)])
def test_the_first_window_fits_the_screen(tmp_path: Path, width: int, height: int) -> None:
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{"name": "screen", "x": 0, "y": 0, "width": width, "height": height,
                                               "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
    environment = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "home"), str(tmp_path / "window.ini")],
                          capture_output=True, text=True, env=environment, timeout=120, check=False,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    x, y, w, h = shown["window"]
    assert shown["screen"] == [0, 0, width, height]
    assert x >= 0 and y >= 0 and x + w <= width and y + h <= height, shown
