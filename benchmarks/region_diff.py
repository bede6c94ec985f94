"""Which lines a change to the page reader moves between running text, captions, tables and figure text.

    python benchmarks/region_diff.py save BEFORE.json          # on the code before the change
    python benchmarks/region_diff.py compare BEFORE.json       # on the code after it: every line that moved

Every page of the PDFs at hand (LitQA2 dev, the corpus, the bundled demo papers and, when the reader
check's library has been built, its COVID-QA papers) is laid out and classified as ingest does
(engine.ingest.pipeline.PdfParse), without chunking or storing. A rule for region kinds is judged by
reading the lines it moves, since no set labels every line of a page.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402,F401  (first: it switches off onnxruntime's telemetry before anything imports it)
from engine.ingest.pipeline import PdfParse  # noqa: E402

SHARED = ROOT.parent / "shared"
CHECK_HOME = Path(os.environ.get("CHECK_HOME", "/tmp/quire-checks"))


def pdfs() -> list[Path]:
    folders = [SHARED / "eval" / "litqa2-dev" / "pdfs", SHARED / "corpus" / "papers", ROOT / "resources" / "demo",
               CHECK_HOME / "reader" / "pdfs"]
    return sorted(path for folder in folders if folder.is_dir() for path in folder.glob("*.pdf"))


def kinds() -> dict[str, list[list[str]]]:
    """Each page's lines as (kind, text), keyed "file:page"."""
    found: dict[str, list[list[str]]] = {}
    for path in pdfs():
        with PdfParse(path) as parse:
            for index in range(parse.page_count):
                layout = parse._read_page(index)
                labels = layout.kinds or ["text"] * len(layout.lines)
                found[f"{path.name}:{index + 1}"] = [[kind, line.text] for kind, line in zip(labels, layout.lines,
                                                                                             strict=True)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("save", "compare"))
    parser.add_argument("file", type=Path)
    args = parser.parse_args()
    now = kinds()
    if args.action == "save":
        args.file.write_text(json.dumps(now), encoding="utf-8")
        print(f"{len(now)} pages of {len(pdfs())} PDFs saved to {args.file}")
        return
    before = json.loads(args.file.read_text(encoding="utf-8"))
    moved = 0
    for page, lines in now.items():
        for index, ((kind, text), (was, _)) in enumerate(zip(lines, before.get(page, lines), strict=False)):
            if kind != was:
                moved += 1
                above = lines[index - 1][1] if index else ""
                print(f"{page}  {was} -> {kind}  | after {above[-50:]!r} | {text[:80]!r}")
    print(f"{moved} lines moved, over {len(now)} pages of {len(pdfs())} PDFs")


if __name__ == "__main__":
    main()
