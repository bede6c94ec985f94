"""`quire check`: does the literature support a claim, contradict it, or neither?

    quire check "a claim"                       search the library and datastores, judge what is found
                                                (when nothing supports or contradicts it, the closest
                                                passages read are shown, "not stated here")
    quire check "a claim" --evidence "text"     judge one claim against one passage
    quire check --pairs FILE.jsonl --json       one verdict per {"id", "claim", "evidence"} line, in order

With --evidence or --pairs, --read lets a language model that can write read again each pair the
judge's model finds unsupported (about 2 s a pair on a CPU): better on loosely worded claims.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from engine.cite.claims import NOT_STATED_HERE, CheckedPassage, prepare_claim, prepare_evidence
from engine.cite.judge import NOT_STATED
from engine.cli.progress_bar import one_line
from engine.errors import ClaimError
from engine.progress import CancelToken
from engine.service import Engine
from engine.synthesis.support_reader import SupportReader

PAIRS_BATCH = 64  # pairs judged per batch: big enough to keep the model busy, small enough to stream


def register(commands: argparse._SubParsersAction) -> None:
    check = commands.add_parser("check", help="check a claim: passages that support or contradict it",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("claim", nargs="?", help="the sentence to check")
    check.add_argument("--evidence", metavar="TEXT", help="judge the claim against this text instead of searching")
    check.add_argument("--pairs", metavar="FILE", type=Path,
                       help='JSON lines {"id", "claim", "evidence"}: print one verdict line per pair, in order')
    check.add_argument("-k", type=int, default=20, help="passages searched and judged (default 20)")
    check.add_argument("--source", default="all", metavar="SOURCE",
                       help="all (default), library, datastore, or one datastore's name")
    check.add_argument("--all", action="store_true", dest="show_all",
                       help="also list passages that neither support nor contradict the claim")
    check.add_argument("--json", action="store_true", help="print JSON (a list; with --pairs one object per line)")
    check.add_argument("--read", action="store_true",
                       help="with --evidence or --pairs: a language model that can write reads again what the "
                            "judge finds unsupported (slower; see above)")
    check.add_argument("--model", metavar="PATH", help="the GGUF model --read uses (default: settings)")
    check.set_defaults(handler=_check)


def _check(engine: Engine, args: argparse.Namespace) -> int:
    if args.pairs is not None:
        if args.claim or args.evidence:
            print("quire check: --pairs reads claims from the file; give no claim or --evidence with it",
                  file=sys.stderr)
            return 2
        return check_pairs_file(engine, args.pairs, _reader(engine, args))
    if args.claim is None:
        print('quire check: give a claim, e.g. quire check "BM25 beats dense retrieval on BEIR", or --pairs FILE',
              file=sys.stderr)
        return 2
    if args.evidence is not None:
        return _check_evidence(engine, args.claim, args.evidence, args.json, _reader(engine, args))
    if args.read:
        print("quire check: --read works with --evidence or --pairs", file=sys.stderr)
        return 2
    if args.k <= 0:
        print("quire check: -k must be at least 1", file=sys.stderr)
        return 2
    cancel = CancelToken()
    try:
        result = engine.check(args.claim, k=args.k, source=args.source, cancel=cancel)
    except KeyboardInterrupt:
        cancel.cancel()
        raise
    for note in result.notes:
        print(f"quire: {note}", file=sys.stderr)
    closest = result.closest()
    shown = [p for p in result.passages if args.show_all or p.verdict != "unsupported" or p in closest]
    if args.json:
        print(json.dumps([passage_json(p) for p in shown], indent=2, ensure_ascii=False))
        return 0
    if not result.passages:
        print("No passages found. Add papers with `quire ingest` or a datastore with `quire datastore add`.")
        return 0
    supporting, contradicting = result.supporting, result.contradicting
    print(f"{len(supporting)} of {len(result.passages)} passages found support the claim, "
          f"{len(contradicting)} contradict it.")
    neither = [p for p in shown if p.verdict == "unsupported"]
    # With nothing for or against, the closest passages show what was read and that it does not say this.
    neither_heading = "Closest passages read (not stated here)" if closest and not args.show_all else "Neither"
    for heading, group in (("Supporting", supporting), ("Contradicting", contradicting), (neither_heading, neither)):
        if group:
            print(f"\n{heading}:")
            for passage in group:
                _print_passage(passage)
    return 0


def passage_json(passage: CheckedPassage) -> dict[str, Any]:
    """The JSON form of a judged passage: {verdict, score, quote, passage_id, doc_id, title, page, ...}."""
    return {"verdict": passage.verdict, "score": passage.score, "quote": passage.quote,
            "passage_id": passage.passage_id, "doc_id": passage.doc_id, "title": passage.title,
            "page": passage.page, "source": passage.source, "contradiction": passage.contradiction,
            "quote_start": passage.quote_start, "quote_end": passage.quote_end, "reason": passage.reason,
            "closeness": passage.closeness}


def _print_passage(passage: CheckedPassage) -> None:
    where = passage.source if passage.page is None else f"{passage.source}, p. {passage.page}"
    score = passage.contradiction if passage.verdict == "contradicted" else passage.score
    print(f"  [{passage.verdict} {score:.2f}] {one_line(passage.title or '(untitled)')}  [{where}]  "
          f"{one_line(passage.doc_id)}")
    print(textwrap.indent(textwrap.fill(f"“{passage.shown_quote}”", 92), "      "))
    if passage.verdict == "unsupported":
        print(f"      ({NOT_STATED_HERE}{': ' + passage.reason if passage.reason not in ('', NOT_STATED) else ''})")
    elif passage.reason and passage.verdict != "supported":
        print(f"      ({passage.reason})")


def _reader(engine: Engine, args: argparse.Namespace) -> SupportReader | None:
    if not args.read:
        if args.model:
            print("quire: --model is used only with --read; judging without a language model", file=sys.stderr)
        return None
    return engine.support_reader(args.model)


def _check_evidence(engine: Engine, claim: str, evidence: str, as_json: bool,
                    reader: SupportReader | None = None) -> int:
    result = engine.check_evidence(claim, evidence, reader)
    for note in result.notes:
        print(f"quire: {note}", file=sys.stderr)
    judgement = result.judgement
    if as_json:
        print(json.dumps({"verdict": judgement.verdict, "score": judgement.score,
                          "contradiction": judgement.contradiction, "quote": judgement.quote,
                          "quote_start": judgement.start, "quote_end": judgement.end, "reason": judgement.reason},
                         indent=2, ensure_ascii=False))
        return 0
    print(f"{judgement.verdict} (support {judgement.score:.2f}, contradiction {judgement.contradiction:.2f})")
    if judgement.quote:
        print(textwrap.indent(textwrap.fill(f"“{judgement.quote}”", 92), "  "))
    if judgement.reason:
        print(f"  ({judgement.reason})")
    return 0


def check_pairs_file(engine: Engine, path: Path, reader: SupportReader | None = None) -> int:
    """Judge every good line of a pairs file; bad lines are reported on stderr by number and skipped.
    Prints one JSON line per good pair, in file order; exit code 1 when any line was bad."""
    try:
        handle = path.expanduser().open(encoding="utf-8")
    except FileNotFoundError:
        raise ClaimError(f"No pairs file at {path}; give a JSON-lines file with one "
                         '{"id", "claim", "evidence"} object a line.') from None
    except OSError as exc:
        raise ClaimError(f"Cannot read the pairs file {path}: {exc.strerror or exc}") from None
    bad = 0
    batch: list[tuple[Any, str, str]] = []
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                pair_id, claim, evidence = _parse_pair(line)
            except (ClaimError, ValueError) as exc:
                print(f"quire check: {path.name} line {number}: {exc}; skipped", file=sys.stderr)
                bad += 1
                continue
            batch.append((pair_id, claim, evidence))
            if len(batch) >= PAIRS_BATCH:
                _judge_batch(engine, batch, reader)
                batch = []
    if batch:
        _judge_batch(engine, batch, reader)
    return 1 if bad else 0


def _parse_pair(line: str) -> tuple[Any, str, str]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise ValueError('not a JSON object; expected {"id", "claim", "evidence"}')
    missing = [key for key in ("claim", "evidence") if not isinstance(record.get(key), str)]
    if missing:
        raise ValueError(f"no text for {' and '.join(missing)}")
    prepare_claim(record["claim"])
    prepare_evidence(record["evidence"])
    return record.get("id"), record["claim"], record["evidence"]


def _judge_batch(engine: Engine, batch: list[tuple[Any, str, str]], reader: SupportReader | None = None) -> None:
    verdicts = engine.check_pairs([(claim, evidence) for _, claim, evidence in batch], reader)
    for (pair_id, _, _), verdict in zip(batch, verdicts, strict=True):
        judgement = verdict.judgement
        print(json.dumps({"id": pair_id, "verdict": judgement.verdict, "score": judgement.score,
                          "quote": judgement.quote}, ensure_ascii=False), flush=True)
