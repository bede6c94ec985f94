"""Bibliographic metadata: how often does Quire read a paper's title, first author, year, DOI and venue right?

The truth is ``tests/data/metadata_truth.json``: the 24 corpus papers and the 42 LitQA2 dev papers,
written by hand from each PDF's first page as a reader sees it (PyMuPDF text of page 1 read line by
line, the arXiv side stamp, and the XMP packet where a value is printed nowhere else), never from
the extractor's output. ``null`` means the file does not print that value: the right answer is then
to leave it empty, so a guessed title or year counts as wrong.

Each PDF is read by the ingest's own opening (``PdfParse``: first pages, layout, Info dictionary,
and whatever else the checkout under test reads), with OCR off and no datastore or Zotero record,
so the figures are what the PDF alone yields. Fields are compared after normalisation:

- title: Unicode compatibility folding, accents dropped, case and everything but letters and digits
  ignored ("Single-nucleotide" = "Single nucleotide");
- first author: the family name the references print (``engine.render.common.surname`` of the
  first author in the checkout under test), folded the same way;
- year: equal, or one of the truth's ``also_accepted_years`` (a bioRxiv version posted a year
  after the first, an issue dated the year after its advance access);
- DOI (papers whose file prints one): equal ignoring case;
- venue: equal to one of the accepted spellings, folded but with its case kept (a journal cited
  "NATURE COMMUNICATIONS" is wrong); where the truth's venue is null the first page prints none, so
  anything found (a section label such as "Research Article") is wrong;
- authors (papers whose truth lists ``authors_family``): every author's family name, in order, folded.

``--root`` runs another checkout's engine (``git archive main engine resources | tar -x -C DIR``
gives today's main), so before and after come from the same script and truth. Usage:

    python benchmarks/metadata.py [--root DIR] [--label NAME] [--json benchmarks/results/metadata.json] [-v]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TRUTH = REPO / "tests" / "data" / "metadata_truth.json"
SHARED = Path(os.environ.get("QUIRE_SHARED", REPO.parent / "shared"))
FOLDERS = {"corpus": SHARED / "corpus" / "papers",
           "litqa2-dev": SHARED / "eval" / "litqa2-dev" / "pdfs"}
FIELDS = ("title", "first_author", "year", "doi", "venue", "authors")


def fold(text: str | None, keep_case: bool = False) -> str:
    folded = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^A-Za-z0-9]", "", folded if keep_case else folded.lower())


def extract(path: Path) -> dict[str, Any]:
    from engine.ingest.pipeline import IngestOptions, PdfParse
    from engine.render.common import surname

    with PdfParse(path, IngestOptions(ocr=False, parse_workers=0)) as parse:
        bib = parse.meta.bib
    return {"title": bib.title, "first_author": surname(bib.authors[0]) if bib.authors else "",
            "authors": [surname(name) for name in bib.authors], "year": bib.year, "doi": bib.doi, "venue": bib.venue}


def judge(truth: dict[str, Any], got: dict[str, Any]) -> dict[str, bool | None]:
    """Per field: right, wrong, or None where the field is not scored for this paper."""
    years = {truth["year"], *truth.get("also_accepted_years", ())} if truth["year"] else {None}
    venues = truth.get("venue") or []
    families = truth.get("authors_family")
    return {
        "title": fold(got["title"]) == fold(truth["title"]),
        "first_author": fold(got["first_author"]) == fold(truth["first_author_family"]),
        "year": got["year"] in years,
        "doi": got["doi"].lower() == truth["doi"].lower() if truth.get("doi") else None,
        "venue": any(fold(got["venue"], True) == fold(v, True) for v in venues) if venues
        else not got["venue"] if "venue" in truth else None,
        "authors": [fold(name) for name in got["authors"]] == [fold(name) for name in families] if families else None,
    }


def run(verbose: bool) -> dict[str, Any]:
    papers = json.loads(TRUTH.read_text(encoding="utf-8"))["papers"]
    right = dict.fromkeys(FIELDS, 0)
    scored = dict.fromkeys(FIELDS, 0)
    misses: list[dict[str, Any]] = []
    for truth in papers:
        got = extract(FOLDERS[truth["set"]] / truth["file"])
        verdict = judge(truth, got)
        for field, ok in verdict.items():
            if ok is None:
                continue
            scored[field] += 1
            right[field] += bool(ok)
            if not ok:
                expected = {"first_author": truth["first_author_family"],
                            "authors": truth.get("authors_family")}.get(field, truth.get(field))
                misses.append({"file": truth["file"], "field": field, "expected": expected, "got": got[field]})
                if verbose:
                    print(f"  {truth['file']}: {field} expected {expected!r}, got {got[field]!r}", file=sys.stderr)
    return {"papers": len(papers), "scored": scored,
            "share_right": {field: round(right[field] / scored[field], 3) for field in FIELDS},
            "misses": misses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=REPO, help="checkout whose engine is measured")
    parser.add_argument("--label", default="", help="name of this run in the JSON file (default: the root)")
    parser.add_argument("--json", type=Path, help="merge the result into this JSON file under the label")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each miss")
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    import engine

    print(f"engine from {Path(engine.__file__).parent}", file=sys.stderr)
    result = run(args.verbose)
    print(json.dumps({"scored": result["scored"], "share_right": result["share_right"]}, indent=1))
    if args.json:
        existing = json.loads(args.json.read_text()) if args.json.exists() else {}
        existing[args.label or str(args.root)] = result
        args.json.write_text(json.dumps(existing, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
