"""XQuAD as PDFs: each language's paragraphs typeset one to a page, ingested as a library, searched and asked.

For each of XQuAD's five languages (../shared/eval/xquad/, CC BY-SA 4.0) its 240 paragraphs are typeset
by PyMuPDF (``insert_htmlbox``, which shapes Chinese and Arabic with the fonts MuPDF carries, right to
left for Arabic), one PDF a paragraph, and ingested into a library of their own with the default
settings: a library that is not English switches itself to the multilingual embedder (docs/languages.md)
and is embedded. For a sample of questions (the same ids in every language, seed 7) it reports the
question's paragraph in the top 5, by BM25 alone and by the default search, and the answer span in the
digest's first 400 characters, with the embedder the library ended up with and the time each step took.

    python benchmarks/xquad_pdfs.py [--questions 40] [--json benchmarks/results/xquad_pdfs.json]
"""

from __future__ import annotations

import argparse
import html
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine  # noqa: F401 - before PyMuPDF, which loads ONNX Runtime: engine switches off its telemetry first

# isort: split
import pymupdf

from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine

XQUAD = Path(__file__).resolve().parents[2] / "shared" / "eval" / "xquad"
LANGUAGES = ("en", "de", "es", "zh", "ar")
ASKED = RequestOptions(rewrite=False, feedback=False, save=False)
TOP = 5


def load(language: str) -> tuple[dict[str, str], dict[str, tuple[str, str, str]]]:
    """Paragraph id -> text, and question id -> (question, answer text, paragraph id)."""
    data = json.loads((XQUAD / f"xquad.{language}.json").read_text(encoding="utf-8"))
    paragraphs, questions = {}, {}
    for article_number, article in enumerate(data["data"]):
        for number, paragraph in enumerate(article["paragraphs"]):
            paragraph_id = f"p{article_number:02d}-{number:02d}"
            paragraphs[paragraph_id] = paragraph["context"]
            for qa in paragraph["qas"]:
                questions[qa["id"]] = (qa["question"], qa["answers"][0]["text"], paragraph_id)
    return paragraphs, questions


def typeset(folder: Path, language: str, paragraphs: dict[str, str]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    direction = "rtl" if language == "ar" else "ltr"
    paths = []
    for paragraph_id, text in paragraphs.items():
        path = folder / f"{paragraph_id}.pdf"
        document = pymupdf.open()
        document.new_page().insert_htmlbox(pymupdf.Rect(60, 60, 535, 780),
                                           f'<p dir="{direction}" style="font-size:11pt">{html.escape(text)}</p>')
        document.set_metadata({"title": f"XQuAD {language} {paragraph_id}"})
        document.save(path)
        document.close()
        paths.append(path)
    return paths


def _squash(text: str) -> str:
    return "".join(text.split()).casefold()


def measure(language: str, paragraphs: dict[str, str], asked: list[tuple[str, str, str]],
            work: Path) -> dict[str, Any]:
    started = time.perf_counter()
    pdfs = typeset(work / f"pdfs-{language}", language, paragraphs)
    row: dict[str, Any] = {"typeset_seconds": round(time.perf_counter() - started, 1)}
    with Engine(home=work / f"home-{language}") as library:
        started = time.perf_counter()
        results = list(library.add_documents(pdfs))
        row["ingest_seconds"] = round(time.perf_counter() - started, 1)
        row["papers"] = sum(r.doc_id is not None for r in results)
        row["embedder"] = library.embedder.model_id.split("@")[0]
        started = time.perf_counter()
        library.embed_pending()
        row["embed_seconds"] = round(time.perf_counter() - started, 1)
        paper_of = {document.id: Path(str(document.path)).stem for document in library.documents()}
        for name, lexical_only in (("bm25", True), ("default", False)):
            found = 0
            for question, _, paragraph_id in asked:
                hits = library.search(question, k=TOP, source="library", lexical_only=lexical_only)
                found += paragraph_id in {paper_of.get(hit.doc_id) for hit in hits}
            row[f"{name}_top5"] = round(found / len(asked), 3)
        first = 0
        for question, answer, _ in asked:
            reply = library.ask(AskRequest(question, scope=Scope(source="library"), mode="digest", options=ASKED))
            first += _squash(answer) in _squash(reply.text[:400])
        row["digest_answer_in_first_400"] = round(first / len(asked), 3)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--languages", nargs="*", default=list(LANGUAGES))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    loaded = {language: load(language) for language in LANGUAGES}
    ids = sorted(set.intersection(*(set(questions) for _, questions in loaded.values())))
    sample = random.Random(args.seed).sample(ids, min(args.questions, len(ids)))
    results: dict[str, Any] = {"questions": len(sample), "seed": args.seed, "by_language": {}}
    with tempfile.TemporaryDirectory() as folder:
        for language in args.languages:
            paragraphs, questions = loaded[language]
            row = measure(language, paragraphs, [questions[qid] for qid in sample], Path(folder))
            results["by_language"][language] = row
            print(language, json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
