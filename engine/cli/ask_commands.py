"""`quire ask` (streams the draft, then the verified answer and its references) and `quire answers`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import Any

from engine.cli.interrupt import run_cancellable
from engine.cli.progress_bar import one_line
from engine.config import Settings
from engine.progress import CancelToken
from engine.render.bibtex import to_bibtex
from engine.render.common import reference_line
from engine.render.exports import export_answer
from engine.render.html import to_html
from engine.render.links import answer_links
from engine.render.markdown import to_markdown
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.store.record import answer_to_dict
from engine.types import Answer, AnswerMode, PaperReference


def register(commands: argparse._SubParsersAction) -> None:
    ask = commands.add_parser("ask", help="answer a question from your papers, with verified citations")
    ask.add_argument("question")
    ask.add_argument("--model", metavar="PATH", help="a GGUF language model (default: settings, else SmolLM2-135M)")
    ask.add_argument("--top-n", type=int, metavar="N",
                     help=f"passages handed to the model (default {Settings().retrieval.top_n}, or the settings' "
                          "retrieval.top_n)")
    feedback = ask.add_mutually_exclusive_group()
    feedback.add_argument("--feedback", action="store_true",
                          help="add self-feedback and one revision (2 more LM calls)")
    feedback.add_argument("--no-feedback", action="store_true", help="skip self-feedback and revision")
    ask.add_argument("--no-rewrite", action="store_true", help="search with the question as typed")
    mode = ask.add_mutually_exclusive_group()
    mode.add_argument("--digest", action="store_true", help="no prose: themes of verbatim quotes with references")
    mode.add_argument("--write", action="store_true",
                      help="keep the model's verified prose even when most of it is unsupported")
    ask.add_argument("--doc", action="append", metavar="ID", help="only these documents (id or prefix; repeatable)")
    ask.add_argument("--source", default="all", help='"all", "library", "datastore" or a datastore name')
    output = ask.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the Answer as JSON")
    output.add_argument("--markdown", action="store_true", help="print the answer as Markdown")
    output.add_argument("--html", action="store_true", help="print the answer as HTML")
    output.add_argument("--bibtex", action="store_true", help="print BibTeX for the cited works")
    output.add_argument("--ris", action="store_true", help="print RIS for the cited works (EndNote, Zotero)")
    output.add_argument("--csl-json", action="store_true", help="print CSL-JSON for the cited works (Zotero, Pandoc)")
    # Tables of papers are made by `quire table`; these once made one from an answer and now say so.
    ask.add_argument("--table", action="store_true", help=argparse.SUPPRESS)
    ask.add_argument("--csv", action="store_true", help=argparse.SUPPRESS)
    ask.add_argument("--no-save", action="store_true", help="do not keep this answer in the history")
    ask.set_defaults(handler=_ask)

    answers = commands.add_parser("answers", help="past answers: list, show or delete")
    answers.add_argument("action", nargs="?", choices=("list", "show", "delete"), default="list")
    answers.add_argument("answer_id", nargs="?", metavar="ID")
    answers.add_argument("--json", action="store_true")
    answers.set_defaults(handler=_answers)


def _ask(engine: Engine, args: argparse.Namespace) -> int:
    if args.table or args.csv:
        flag = "--table" if args.table else "--csv"
        print(f"quire ask: {flag} is not an option of an answer. A table of papers (a row per paper, a column per "
              "question, as Markdown or with --csv as CSV) is made by: quire table \"QUESTION\"", file=sys.stderr)
        return 2
    request = AskRequest(
        args.question, scope=Scope(source=args.source, doc_ids=tuple(args.doc) if args.doc else None),
        mode="digest" if args.digest else "write" if args.write else None, model=args.model,
        options=RequestOptions(top_n=args.top_n, feedback=True if args.feedback else False if args.no_feedback
                               else None, rewrite=False if args.no_rewrite else None, save=not args.no_save))
    streaming = not (args.json or args.markdown or args.html or args.bibtex or args.ris or args.csl_json)
    cancel = CancelToken()
    state: dict[str, Any] = {"streamed": False}

    def on_token(piece: str) -> None:
        if streaming and piece:
            if not state["streamed"]:
                print("Draft (its citations are checked next):\n", flush=True)
                state["streamed"] = True
            sys.stdout.write(piece)
            sys.stdout.flush()

    def on_stage(stage: str) -> None:
        print(f"… {stage}", file=sys.stderr, flush=True)

    answer: Answer = run_cancellable(
        lambda: engine.ask(request, on_token=on_token, on_stage=on_stage, cancel=cancel),
        cancel, "quire-ask", "cancelling (the partial answer is kept)")
    if args.json:
        # With each cited passage's quire:// link, which opens its page in the app with the quote lit.
        print(json.dumps({**answer_to_dict(answer), "links": answer_links(answer)}, indent=2, ensure_ascii=False))
    elif args.markdown:
        print(to_markdown(answer), end="")
    elif args.html:
        print(to_html(answer, figures=engine.figure_images(answer)))
    elif args.bibtex:
        print(to_bibtex(answer), end="")
    elif args.ris or args.csl_json:
        print(export_answer(answer, "ris" if args.ris else "csl-json"), end="")
    else:
        if state["streamed"]:
            print("\n\n" + "─" * 60)
        print_answer(answer)
    return 130 if answer.cancelled else 0


def print_answer(answer: Answer) -> None:
    """The verified answer for a terminal: notice, sections, flagged sentences, references with pages."""
    if answer.notice:
        print(f"Note: {answer.notice}\n")
    section = -1
    for sentence in answer.sentences:
        if sentence.section != section:
            if section != -1:
                print()
            section = sentence.section
            if answer.sections and 0 <= section < len(answer.sections) and answer.mode != AnswerMode.NO_EVIDENCE \
                    and answer.sections[section]:  # a theme whose heading would not name its point has none
                print(f"## {answer.sections[section]}")
        flag = "" if sentence.supported else "  (unsupported)"
        print(f"{'- ' if answer.mode == AnswerMode.DIGEST else ''}{sentence.text}{flag}")
    if answer.cancelled:
        print("\n(cancelled: partial answer)")
    if answer.papers:
        print("\nReferences")
        for paper in answer.papers:
            print(f"  [{paper.n}] {paper_line(answer, paper)}")
    if answer.mode == AnswerMode.NO_EVIDENCE and answer.contexts:
        print("\nClosest passages (none of them addresses the question):")
        for reference in answer.contexts:
            snippet = " ".join(reference.text.split())[:200]
            print(f"  - {reference_line(reference)}\n    “{snippet}…”")
    print(f"\n(answer {answer.id}; {dict(answer.timings).get('total', 0):.1f} s)", file=sys.stderr)


def paper_line(answer: Answer, paper: PaperReference) -> str:
    """``Title. Authors (Year). pp. 3, 7. doi:...``: a cited paper with the pages of its cited passages."""
    first = next(r for r in answer.references if r.n == paper.n)
    line = reference_line(replace(first, bib=paper.bib, page=None, page_end=None))
    if not paper.pages:
        return line
    pages = f"p. {paper.pages[0]}" if len(paper.pages) == 1 else "pp. " + ", ".join(map(str, paper.pages))
    return f"{line}. {pages}"


def _answers(engine: Engine, args: argparse.Namespace) -> int:
    if args.action in ("show", "delete") and not args.answer_id:
        print(f"quire answers {args.action}: give an answer id (see: quire answers)", file=sys.stderr)
        return 2
    if args.action == "delete":
        engine.delete_answer(args.answer_id)
        return 0
    if args.action == "show":
        answer = engine.answer(args.answer_id)
        if args.json:
            print(json.dumps(answer_to_dict(answer), indent=2, ensure_ascii=False))
        else:
            print(f"Q: {answer.question}\n")
            for notice in engine.answer_file_notices(answer):
                print(f"Note: {notice}")
            print_answer(answer)
        return 0
    summaries = engine.answers()
    if args.json:
        print(json.dumps([vars(s) for s in summaries], indent=2, ensure_ascii=False))
    elif not summaries:
        print("No answers yet. Ask with: quire ask \"your question\"")
    for summary in summaries if not args.json else []:
        flag = " (cancelled)" if summary.cancelled else ""
        print(f"{summary.id}  {summary.mode:<11} {one_line(summary.question[:90])}{flag}")
    return 0
