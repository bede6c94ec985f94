"""``python -m desktop`` opens the window, like the ``quire-desktop`` command."""

from __future__ import annotations

from desktop.app import run

if __name__ == "__main__":
    run()
