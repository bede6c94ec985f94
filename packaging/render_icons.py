"""Render the application icon (packaging/quire.svg) to the PNG sizes of the freedesktop icon theme.

Usage: ``python packaging/render_icons.py OUT_FOLDER`` writes ``OUT_FOLDER/<n>x<n>/apps/quire.png``
for each size in :data:`SIZES`, drawn by Qt's SVG renderer (PySide6, already a dependency), so the
PNGs always match the SVG that is installed beside them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SVG = Path(__file__).resolve().parent / "quire.svg"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def render_icons(out: Path, svg: Path = SVG) -> list[Path]:
    """The PNGs written under ``out`` (hicolor layout), one per size."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {svg} is not an SVG Qt can draw")
    written = []
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        renderer.render(painter)
        painter.end()
        target = out / f"{size}x{size}" / "apps" / "quire.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target), "PNG"):
            raise SystemExit(f"render_icons: could not write {target}")
        written.append(target)
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    for path in render_icons(Path(sys.argv[1])):
        print(path)
