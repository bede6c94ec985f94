"""Figure regions: is each captioned figure's region found on its page, tied to its caption?

The truth is ``tests/data/figure_regions.json``: figures of the shared corpus and LitQA2 dev papers, every
figure on each listed page, each with its page and its approximate region, read by eye off the rendered
page over a 25-point grid (so a box is good to about 5 points). Each paper is read by Quire's ingest
(``engine.ingest.parse_pdf``); a found figure is a caption passage carrying a region on a listed page.

A found region matches the listed figure it overlaps most when their intersection over union (IoU) is at
least 0.5, each listed figure matched at most once. Precision: the share of found regions that match;
recall: the share of listed figures matched; tied: the share of listed figures matched by the region of
their own caption (the label agrees). Mean IoU is over the listed figures, 0 for one not found. Usage:

    python benchmarks/figure_regions.py [--json benchmarks/results/figure_regions.json] [-v]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import emit

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
TRUTH = ROOT / "tests" / "data" / "figure_regions.json"
MATCH_IOU = 0.5

Box = tuple[float, float, float, float]


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes (x0, y0, x1, y1)."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _label(text: str) -> str:
    """A caption label compared loosely: "Fig. 3" and "Figure 3" read alike."""
    match = re.match(r"^\s*(?:extended data\s+)?fig(?:ure)?s?\.?\s*(s?\d+)", text, re.I)
    return match.group(1).lower() if match else text.strip().lower()


def found_figures(pdf: Path, pages: set[int]) -> list[dict[str, Any]]:
    """The figure regions Quire's ingest ties to captions on ``pages`` of ``pdf``."""
    from engine.ingest import parse_pdf

    found = []
    for passage in parse_pdf(pdf).passages:
        if passage.kind == "caption" and passage.figure is not None and passage.figure.page in pages:
            found.append({"page": passage.figure.page, "label": _label(passage.text),
                          "region": tuple(passage.figure.rect)})
    return found


def score(truth: list[dict[str, Any]], found: list[dict[str, Any]]) -> dict[str, Any]:
    """Greedy one-to-one matching by IoU on each page; precision, recall, tied and mean IoU."""
    pairs = sorted(((iou(tuple(t["region"]), f["region"]), ti, fi)
                    for ti, t in enumerate(truth) for fi, f in enumerate(found) if t["page"] == f["page"]),
                   reverse=True)
    best_iou = [0.0] * len(truth)
    matched_truth: dict[int, int] = {}
    used: set[int] = set()
    for overlap, ti, fi in pairs:
        best_iou[ti] = max(best_iou[ti], overlap if fi not in used else 0.0)
        if overlap >= MATCH_IOU and ti not in matched_truth and fi not in used:
            matched_truth[ti] = fi
            used.add(fi)
    tied = sum(_label(truth[ti]["label"]) == found[fi]["label"] for ti, fi in matched_truth.items())
    return {"listed": len(truth), "found": len(found), "matched": len(matched_truth),
            "precision": round(len(used) / len(found), 3) if found else 0.0,
            "recall": round(len(matched_truth) / len(truth), 3) if truth else 0.0,
            "tied": round(tied / len(truth), 3) if truth else 0.0,
            "mean_iou": round(sum(best_iou) / len(truth), 3) if truth else 0.0,
            "per_figure": [{"pdf": t["pdf"], "page": t["page"], "label": t["label"], "iou": round(best_iou[i], 3)}
                           for i, t in enumerate(truth)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each figure's IoU")
    args = parser.parse_args()
    truth = json.loads(TRUTH.read_text())["figures"]
    by_pdf: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for figure in truth:
        by_pdf[figure["pdf"]].append(figure)
    started = time.perf_counter()
    found: list[dict[str, Any]] = []
    ordered_truth: list[dict[str, Any]] = []
    for pdf, figures in sorted(by_pdf.items()):
        path = SHARED / pdf
        if not path.is_file():
            raise SystemExit(f"{path} is missing: point the shared folder at a copy with the corpus and LitQA2 dev")
        # Pages are compared within one paper only: tag each found figure with its paper.
        pages = {figure["page"] for figure in figures}
        for item in found_figures(path, pages):
            item["page"] = (pdf, item["page"])
            found.append(item)
        for figure in figures:
            ordered_truth.append({**figure, "page": (pdf, figure["page"])})
    results = score(ordered_truth, found)
    for row in results["per_figure"]:
        row["page"] = row["page"][1]
    results = {"truth": str(TRUTH.relative_to(ROOT)), "papers": len(by_pdf), "match_iou": MATCH_IOU,
               **results, "seconds": round(time.perf_counter() - started, 1)}
    if not args.verbose:
        per_figure = results.pop("per_figure")
        low = [row for row in per_figure if row["iou"] < MATCH_IOU]
        results["missed"] = low
    emit(results, args.json)


if __name__ == "__main__":
    main()
