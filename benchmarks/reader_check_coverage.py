"""How much of each COVID-QA check paper its typeset PDF shows, and what the digest states of what it shows.

    python benchmarks/reader_check_coverage.py --pdfs DIR [--home HOME]
    python benchmarks/reader_check_coverage.py --retypeset DIR

../shared/checks/reader typesets each of its 14 papers with PyMuPDF's Story, a page at a time, ingests the PDFs and
asks 100 seeded questions. With the PyMuPDF installed here (1.28.5) the Story does not always split the text
across pages: on a later page it reports that nothing is left and lays the rest of the paper out in one block
that runs past the page's foot (a filled height of 15,168 points on a 792-point page). What is drawn there is off
the page: no viewer shows it and PyMuPDF's extraction clips it, so the library never holds it.

``--pdfs`` (the check's PDFs, ``$CHECK_HOME/reader/pdfs``) measures, for each paper, the share of its text the PDF
shows (six-word runs of the expert's text found in the page text), and for each of the 100 questions whether
the expert's answer is in the PDF at all. ``--home`` (the check's library, ``$CHECK_HOME/reader/q``) also asks
the 100 questions through the ``quire`` CLI as the check does, and splits "stated in the first 400 characters"
and "anywhere" between the questions the PDFs can answer and the others.

The cause is the check's paragraph style, ``margin:0 0 6pt 0``: with ``margin-bottom:6pt`` (the same spacing)
the Story splits every page. ``--retypeset DIR`` typesets the papers that way into DIR, ingests them into DIR/q
and measures the same, to show what the check would read with PDFs that hold the whole papers.
Writes benchmarks/results/reader_check_coverage.json (``--retypeset``: reader_check_coverage_retypeset.json).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
RESULTS = ROOT / "benchmarks" / "results" / "reader_check_coverage.json"
sys.path.insert(0, str(ROOT / "benchmarks"))

from opening_fit import typeset  # noqa: E402  (the check's own typesetting)
from reader_cost import stated  # noqa: E402  (counted as ../shared/checks/reader counts it)

RUN_WORDS = 6  # a paper's text counts as shown where this many of its words run on in the page text
ANSWER_WORDS = 5  # shorter runs for an answer, which may be a few words long
ANSWER_MARGIN = 40  # characters of the paper around the answer that are looked for with it
SHOWN_SHARE = 0.5  # the answer is in the PDF when half of the runs around it are


def normalise(text: str) -> str:
    """Lower-cased words and numbers, one space apart; ligatures (the typesetter's "ﬁ") undone."""
    return " ".join(re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", text).lower()))


def shown_share(text: str, page_text: str, run: int = RUN_WORDS) -> float:
    """Share of ``text``'s runs of ``run`` words (every third start) found in ``page_text``."""
    words = normalise(text).split()
    shown = f" {normalise(page_text)} "
    starts = range(0, max(1, len(words) - run + 1), 3 if len(words) > 2 * run else 1)
    runs = [" ".join(words[i:i + run]) for i in starts]
    return sum(f" {r} " in shown for r in runs) / max(1, len(runs))


def answer_shown(context: str, start: int, answer: str, page_text: str) -> bool:
    """Whether the expert's answer, read with a little of the text around it, is in the PDF's page text."""
    around = context[max(0, start - ANSWER_MARGIN):start + len(answer) + ANSWER_MARGIN]
    return shown_share(around, page_text, ANSWER_WORDS) >= SHOWN_SHARE


def check_questions() -> tuple[list[dict[str, Any]], dict[int, str]]:
    """The seeded 100 questions ../shared/checks/reader asks, in its order, and each paper's text."""
    data = json.loads((SHARED / "eval" / "covidqa" / "covidqa-check.json").read_text(encoding="utf-8"))["data"]
    papers = {a["paragraphs"][0]["document_id"]: a["paragraphs"][0]["context"] for a in data}
    questions = [{"question": q["question"], "answer": q["answers"][0]["text"],
                  "paper": a["paragraphs"][0]["document_id"], "start": q["answers"][0]["answer_start"]}
                 for a in data for q in a["paragraphs"][0]["qas"] if q["answers"]]
    random.Random(5).shuffle(questions)
    return questions[:100], papers


SPLITTING_CSS = "p{font-size:10pt;margin-bottom:6pt} h2{font-size:15pt}"  # the check's spacing, split on every page


def page_texts(pdfs: Path, papers: dict[int, str]) -> dict[int, str]:
    import pymupdf

    texts = {}
    for paper in papers:
        with pymupdf.open(pdfs / f"covidqa-{paper}.pdf") as pdf:
            texts[paper] = " ".join(page.get_text() for page in pdf)
    return texts


def quire() -> str:
    return shutil.which("quire") or str(Path(sys.executable).with_name("quire"))


def retypeset(folder: Path, papers: dict[int, str]) -> tuple[Path, Path]:
    """The check's papers typeset with the splitting style into ``folder``/pdfs and ingested into ``folder``/q."""
    pdfs, home = folder / "pdfs", folder / "q"
    pdfs.mkdir(parents=True, exist_ok=True)
    for paper, context in papers.items():
        if not (pdfs / f"covidqa-{paper}.pdf").exists():
            typeset(context, pdfs / f"covidqa-{paper}.pdf", SPLITTING_CSS)
    if not (folder / ".ingested").exists():
        subprocess.run([quire(), "--home", str(home), "ingest", str(pdfs)], check=True, capture_output=True)
        (folder / ".ingested").touch()
    return pdfs, home


def ask(home: Path, question: str) -> str:
    """The digest's answer through the CLI, as the check asks it."""
    done = subprocess.run([quire(), "--home", str(home), "ask", question, "--json"], capture_output=True, text=True)
    try:
        return json.loads(done.stdout).get("answer") or ""
    except ValueError:
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdfs", type=Path, help="the check's typeset PDFs (covidqa-ID.pdf)")
    parser.add_argument("--home", type=Path, help="the check's library: ask the 100 questions through the CLI")
    parser.add_argument("--retypeset", type=Path, metavar="DIR",
                        help="typeset the papers with the splitting style into DIR, ingest and ask there")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    questions, papers = check_questions()
    if args.retypeset:
        args.pdfs, args.home = retypeset(args.retypeset, papers)
    elif not args.pdfs:
        parser.error("give --pdfs (the check's PDFs) or --retypeset DIR")
    missing = [paper for paper in papers if not (args.pdfs / f"covidqa-{paper}.pdf").is_file()]
    if missing:
        parser.error(f"{args.pdfs} lacks covidqa-{missing[0]}.pdf (and {len(missing) - 1} more): give the folder "
                     f"../shared/checks/reader typesets into ($CHECK_HOME/reader/pdfs), or run that check first")
    out = args.out or (RESULTS.with_name("reader_check_coverage_retypeset.json") if args.retypeset else RESULTS)
    texts = page_texts(args.pdfs, papers)
    report: dict[str, Any] = {
        "command": ("python benchmarks/reader_check_coverage.py --retypeset DIR" if args.retypeset else
                    "python benchmarks/reader_check_coverage.py --pdfs $CHECK_HOME/reader/pdfs --home "
                    "$CHECK_HOME/reader/q"),
        "paper_text_shown": {str(p): round(shown_share(papers[p], texts[p]), 2) for p in papers},
    }
    for q in questions:
        q["in_pdf"] = answer_shown(papers[q["paper"]], q["start"], q["answer"], texts[q["paper"]])
    report["questions_answer_in_pdf"] = sum(q["in_pdf"] for q in questions)
    if args.home:
        for q in questions:
            answer = ask(args.home, q["question"])
            q["stated_first"], q["stated_anywhere"] = stated(q["answer"], answer[:400]), stated(q["answer"], answer)
        for name, group in (("answer_in_pdf", [q for q in questions if q["in_pdf"]]),
                            ("answer_not_in_pdf", [q for q in questions if not q["in_pdf"]]),
                            ("all", questions)):
            report[name] = {"questions": len(group), "stated_first": sum(q["stated_first"] for q in group),
                            "stated_anywhere": sum(q["stated_anywhere"] for q in group)}
    report["questions"] = questions
    print(json.dumps({k: v for k, v in report.items() if k != "questions"}, indent=2))
    out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
