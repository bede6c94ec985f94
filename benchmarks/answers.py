"""Answer quality and cost: LitQA2 dev, ScholarQA-Multi, the golden questions and the support scorer.

    python benchmarks/answers.py report --home H --model WRITER.gguf [--writer-limit 12]   # the one run
    python benchmarks/answers.py litqa --home H [--mode digest|write|auto] [--model PATH] [--half odd|even|all]
    python benchmarks/answers.py fit --home H            # answer-scoring and relevance constants, odd half
    python benchmarks/answers.py scholarqa --home H [--mode digest] [--limit N]
    python benchmarks/answers.py golden --home H [--mode auto|digest|write] [--limit N] [--datastore]
    python benchmarks/answers.py pairs                   # scorer precision/recall on labelled pairs (+ fit)

``litqa`` ingests the 42 LitQA2 dev PDFs and the 24 corpus papers into H if it is empty (the
same library as ../shared/checks/fulltext) and asks each question; per question it records
whether the key passage is cited (a citation whose *passage* holds >= 60 % of the key passage's
content words, in the question's paper), whether the ideal answer is stated in the answer's first
400 characters (as ../shared/checks/answers counts it), how many sections (the direct answer
included) cite no passage of the question's paper (built from passages that do not address the
question), dangling [n], quotes not verbatim, and the seconds the answer took. ``fit`` chooses the
answer-scoring and relevance constants on the odd-numbered questions and reports both halves.
``report`` runs LitQA2 and ScholarQA-Multi with the digest and with the writer in one go and
writes benchmarks/results/answers.json. Figures were taken on the shared, heavily loaded 2-core
development machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from answer_checks import (
    GOLDEN,
    NOT_SAVED,
    OUT,
    PAIRS,
    RESULTS,
    SHARED,
    check_answer,
    litqa_questions,
    prepare_home,
    save,
    stated,
    verdicts,
    words,
)
from support_pairs import measure_pairs

from engine.cite.support import SupportScorer
from engine.process import prepare_process
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.synthesis import evidence as evidence_module
from engine.synthesis.evidence import diverse, extract_evidence, relevant, to_reference

# --- the support scorer ---------------------------------------------------------------------

def pairs_command(_: argparse.Namespace) -> None:
    result = measure_pairs(PAIRS)
    print(json.dumps(result, indent=2))
    save("pairs", result)


# --- LitQA2 dev -------------------------------------------------------------------------------

def litqa_row(engine: Engine, question: dict[str, Any], names: dict[str, str], mode: str,
              model: str | None) -> dict[str, Any]:
    started = time.perf_counter()
    answer = engine.ask(AskRequest(question["question"], mode=mode, model=model, options=NOT_SAVED))
    seconds = time.perf_counter() - started
    key = words(question["key_passage"])
    cited_passages = [answer.passage(c.passage_id) for s in answer.sentences for c in s.citations]
    key_cited = any(names.get(r.doc_id) == question["pdf"] and len(key & words(r.text)) >= 0.6 * len(key)
                    for r in cited_passages)
    sections: dict[int, set[str]] = {}
    for sentence in answer.sentences:
        for citation in sentence.citations:
            sections.setdefault(sentence.section, set()).add(names.get(answer.passage(citation.passage_id).doc_id, ""))
    off_topic = sum(question["pdf"] not in files for files in sections.values())
    return {"index": question["index"], "question": question["question"], "ideal": question["ideal"],
            "mode": answer.mode.value, "notice": answer.notice, "key_passage_cited": key_cited,
            "ideal_in_first_400": stated(question["ideal"], answer.text[:400]),
            "ideal_anywhere": stated(question["ideal"], answer.text), "sections": len(sections),
            "sections_not_addressing": off_topic, "seconds": round(seconds, 1), "verdicts": verdicts(answer),
            **check_answer(answer), "timings": dict(answer.timings), "steps": [vars(s) for s in answer.steps],
            "answer": answer.text[:1200]}


FALLBACKS = {"did not hold up": "draft not supported", "did not answer the question as well": "answers less well "
             "than the best quote", "judged that none answers": "nothing answers", "could not write": "model failed",
             "cannot be checked": "judge missing"}


def fallback_reasons(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Why written answers fell back to the digest, counted from their notices."""
    counts: dict[str, int] = {}
    for row in rows:
        if row["mode"] == "digest" and row.get("notice"):  # a digest asked for has no notice: no fallback
            reason = next((name for phrase, name in FALLBACKS.items() if phrase in row.get("notice", "")), "other")
            counts[reason] = counts.get(reason, 0) + 1
    return counts


def litqa_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = max(1, len(rows))
    sections = sum(r["sections"] for r in rows)
    written: dict[str, int] = {}  # the judge's verdicts on the sentences of the answers the writer wrote
    for row in rows:
        if row["mode"] == "written":
            for verdict, count in row["verdicts"].items():
                written[verdict] = written.get(verdict, 0) + count
    return {"questions": len(rows),
            "written_sentences_by_verdict": written,
            "written_sentences_supported": round(written.get("supported", 0) / max(1, sum(written.values())), 3),
            "key_passage_cited": round(sum(r["key_passage_cited"] for r in rows) / n, 3),
            "ideal_in_first_400": round(sum(r["ideal_in_first_400"] for r in rows) / n, 3),
            "ideal_anywhere": round(sum(r["ideal_anywhere"] for r in rows) / n, 3),
            "sections_not_addressing_share": round(sum(r["sections_not_addressing"] for r in rows) / max(1, sections),
                                                   3),
            "seconds_p50": round(float(np.median([r["seconds"] for r in rows])), 1) if rows else 0.0,
            "modes": {m: sum(r["mode"] == m for r in rows) for m in sorted({r["mode"] for r in rows})},
            "fallbacks": fallback_reasons(rows),
            "dangling_total": sum(r["dangling"] for r in rows),
            "not_verbatim_total": sum(r["not_verbatim"] for r in rows)}


def run_litqa(engine: Engine, questions: list[dict[str, Any]], mode: str, model: str | None) -> dict[str, Any]:
    names = {d.id: Path(d.path).name for d in engine.documents()}
    rows = []
    for question in questions:
        rows.append(litqa_row(engine, question, names, mode, model))
        row = rows[-1]
        print(f"{row['index']:>2} {row['mode']:<8} key cited {row['key_passage_cited']!s:<5} "
              f"first400 {row['ideal_in_first_400']!s:<5} off-topic sections {row['sections_not_addressing']} "
              f"{row['seconds']:.0f}s", flush=True)
    return {"summary": litqa_summary(rows), "questions": rows}


def litqa_command(args: argparse.Namespace) -> None:
    engine = prepare_home(Path(args.home), False, litqa=True)
    result = run_litqa(engine, litqa_questions(args.half)[: args.limit], args.mode, args.model)
    print(json.dumps(result["summary"], indent=2))
    save(f"litqa-{args.mode}-{args.half}", result)


def fit_command(args: argparse.Namespace) -> None:
    """Grid over the answer-scoring constants on the odd half (retrieval cached), reported on both halves."""
    engine = prepare_home(Path(args.home), False, litqa=True)
    names = {d.id: Path(d.path).name for d in engine.documents()}
    scorer = SupportScorer(engine.support_embedder)
    cached: dict[int, list[Any]] = {}
    for question in litqa_questions("all"):
        hits = diverse(engine.search(question["question"], k=16, source="library"), 8)
        cached[question["index"]] = [to_reference(h, i + 1, engine.passage(h.passage_id).text)
                                     for i, h in enumerate(hits)]

    def measure(half: str, number: float, rank: float, relative: float) -> dict[str, float]:
        evidence_module.NUMBER_BONUS, evidence_module.RANK_PENALTY = number, rank
        first = cited = off = kept = 0
        questions = litqa_questions(half)
        for question in questions:
            refs = cached[question["index"]]
            found = relevant(extract_evidence(question["question"], refs, scorer), relative=relative)
            best = max((q for e in found for q in e.quotes), key=lambda q: q.answer, default=None)
            first += bool(best) and stated(question["ideal"], best.text)
            key = words(question["key_passage"])
            cited += any(names.get(e.reference.doc_id) == question["pdf"] and len(key & words(e.reference.text))
                         >= 0.6 * len(key) for e in found)
            off += sum(names.get(e.reference.doc_id) != question["pdf"] for e in found)
            kept += len(found)
        n = len(questions)
        return {"best_quote_states_ideal": round(first / n, 3), "key_passage_kept": round(cited / n, 3),
                "kept_passages_not_addressing": round(off / max(1, kept), 3)}

    grid = []
    for number in (0.0, 0.1, 0.15, 0.2, 0.3):
        for rank in (0.0, 0.02, 0.05):
            for relative in (0.0, 0.6, 0.75, 0.85):
                odd = measure("odd", number, rank, relative)
                grid.append({"number_bonus": number, "rank_penalty": rank, "relative": relative, "odd": odd})
    # Best on the odd half: the key passage kept first (the answer must be able to cite it), then the
    # best quote stating the ideal answer, then the fewest passages from other papers.
    best = max(grid, key=lambda g: (g["odd"]["key_passage_kept"] >= 0.95, g["odd"]["best_quote_states_ideal"],
                                    -g["odd"]["kept_passages_not_addressing"]))
    best["even"] = measure("even", best["number_bonus"], best["rank_penalty"], best["relative"])
    shipped = {"number_bonus": evidence_module.NUMBER_BONUS, "rank_penalty": evidence_module.RANK_PENALTY}
    print(json.dumps({"chosen": best, "shipped": shipped}, indent=2))
    save("fit", {"chosen": best, "grid": grid})


# --- the golden questions -------------------------------------------------------------------

def golden_command(args: argparse.Namespace) -> None:
    engine = prepare_home(Path(args.home), args.datastore)
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    names = {d.id: Path(d.path).name for d in engine.documents()}
    rows = []
    wanted = {"all": ("library", "datastore"), "library": ("library",), "datastore": ("datastore",)}[args.questions]
    questions = [q for q in golden["questions"]
                 if q["source"] in wanted and (args.datastore or q["source"] == "library")][: args.limit]
    for question in questions:
        started = time.perf_counter()
        answer = engine.ask(AskRequest(
            question["question"], scope=Scope(source="library" if question["source"] == "library" else "all"),
            mode=args.mode, options=RequestOptions(feedback=False if args.no_feedback else None, save=False)))
        cited = {names.get(r.doc_id, r.doc_id) for r in answer.references}
        row = {"id": question["id"], "mode": answer.mode.value, "notice": answer.notice,
               "expected_cited": bool(cited & set(question["expected"])), "cited": sorted(cited),
               "sentences": len(answer.sentences), "unsupported_share": round(answer.unsupported_share, 3),
               "timings": dict(answer.timings), "steps": [vars(s) for s in answer.steps],
               "seconds": round(time.perf_counter() - started, 1), **check_answer(answer),
               "answer": answer.text}
        rows.append(row)
        print(f"{row['id']:<28} {row['mode']:<11} expected cited: {row['expected_cited']!s:<5} "
              f"unsupported {row['unsupported_share']:.2f} dangling {row['dangling']} "
              f"not verbatim {row['not_verbatim']} {row['seconds']:.0f}s", flush=True)
    summary = summarise(rows)
    print(json.dumps(summary, indent=2))
    save(f"golden-{args.mode}-{args.questions}", {"summary": summary, "questions": rows})


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    stages: dict[str, list[float]] = {}
    for row in rows:
        for stage, seconds in row["timings"].items():
            stages.setdefault(stage, []).append(seconds)
    steps: dict[str, list[tuple[int, int]]] = {}
    for row in rows:
        for step in row["steps"]:
            kind = step["step"].split()[0]
            if kind == "draft":  # the first call evaluates the evidence; later drafts only their turn
                kind = "draft 1" if step["step"] == "draft 1" else "draft 2+"
            steps.setdefault(kind, []).append((step["prompt_tokens_evaluated"], step["prompt_tokens"]))
    return {
        "questions": len(rows),
        "modes": {m: sum(r["mode"] == m for r in rows) for m in {r["mode"] for r in rows}},
        "dangling_total": sum(r["dangling"] for r in rows),
        "not_verbatim_total": sum(r["not_verbatim"] for r in rows),
        "expected_paper_cited": round(sum(r["expected_cited"] for r in rows) / max(1, len(rows)), 3),
        "unsupported_share_mean": round(float(np.mean([r["unsupported_share"] for r in rows])), 3) if rows else 0,
        "median_seconds_per_stage": {k: round(float(np.median(v)), 2) for k, v in stages.items()},
        "prompt_tokens_evaluated_vs_sent": {k: {"evaluated": sum(e for e, _ in v), "sent": sum(s for _, s in v),
                                                "share": round(sum(e for e, _ in v) / max(1, sum(s for _, s in v)), 3)}
                                            for k, v in steps.items()},
    }


# --- ScholarQA-Multi --------------------------------------------------------------------------

def scholarqa_engine(home: Path) -> tuple[Engine, list[dict[str, Any]]]:
    data = json.loads((SHARED / "eval" / "scholarqa-multi" / "human_answers.json").read_text(encoding="utf-8"))
    engine = Engine(home)
    if not any(d.name == "scholarqa" for d in engine.datastores()):
        records = OUT / "scholarqa-snippets.jsonl"
        OUT.mkdir(parents=True, exist_ok=True)
        with records.open("w", encoding="utf-8") as out:
            for item in data:
                for index, ctx in enumerate(item["ctxs"]):
                    out.write(json.dumps({"id": f"{item['id']}:{index}", "source": "scholarqa", "title": ctx["title"],
                                          "text": ctx["text"], "year": ctx.get("year"), "url": ctx.get("url", "")})
                              + "\n")
        engine.add_datastore(records, "scholarqa")
    return engine, data


def run_scholarqa(engine: Engine, data: list[dict[str, Any]], mode: str, model: str | None) -> dict[str, Any]:
    rows = []
    for item in data:
        expert_cited = {f"{item['id']}:{n}" for n in map(int, re.findall(r"\[(\d+)\]", item["output"]))}
        started = time.perf_counter()
        answer = engine.ask(AskRequest(item["input"], scope=Scope(source="scholarqa"), mode=mode, model=model,
                                       options=NOT_SAVED))
        ours = {r.doc_id for r in answer.references}
        count = len(re.sub(r"\[\d+\]", "", answer.text).split())
        expert_words = len(re.sub(r"\[\d+\]", "", item["output"]).split())
        rows.append({"id": item["id"], "mode": answer.mode.value,
                     "expert_snippets_cited": round(len(ours & expert_cited) / max(1, len(expert_cited)), 3),
                     "unsupported_share": round(answer.unsupported_share, 3), "verdicts": verdicts(answer),
                     "words": count, "expert_words": expert_words, **check_answer(answer),
                     "seconds": round(time.perf_counter() - started, 1), "timings": dict(answer.timings)})
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "timings"}), flush=True)
    totals: dict[str, int] = {}
    for row in rows:
        for verdict, count in row["verdicts"].items():
            totals[verdict] = totals.get(verdict, 0) + count
    summary = {"questions": len(rows),
               "expert_snippet_recall": round(float(np.mean([r["expert_snippets_cited"] for r in rows])), 3),
               "unsupported_share_mean": round(float(np.mean([r["unsupported_share"] for r in rows])), 3),
               "sentences_by_verdict": totals,
               "length_ratio_median": round(float(np.median([r["words"] / max(1, r["expert_words"])
                                                             for r in rows])), 3),
               "seconds_p50": round(float(np.median([r["seconds"] for r in rows])), 1),
               "modes": {m: sum(r["mode"] == m for r in rows) for m in sorted({r["mode"] for r in rows})},
            "fallbacks": fallback_reasons(rows),
               "dangling_total": sum(r["dangling"] for r in rows),
               "not_verbatim_total": sum(r["not_verbatim"] for r in rows)}
    return {"summary": summary, "questions": rows}


def scholarqa_command(args: argparse.Namespace) -> None:
    engine, data = scholarqa_engine(Path(args.home))
    result = run_scholarqa(engine, data[: args.limit], args.mode, args.model)
    print(json.dumps(result["summary"], indent=2))
    save(f"scholarqa-{args.mode}", result)


@contextmanager
def reader_off(engine: Engine) -> Iterator[None]:
    """The engine's settings with generation.read_unsupported off, restored afterwards."""
    before = engine.settings
    engine.save_settings(replace(before, generation=replace(before.generation, read_unsupported=False)))
    try:
        yield
    finally:
        engine.save_settings(before)


def report_command(args: argparse.Namespace) -> None:
    """One run: LitQA2 dev and ScholarQA-Multi with the digest (all questions) and the writer (a subset)."""
    litqa_engine = prepare_home(Path(args.home), False, litqa=True)
    questions = litqa_questions("all")
    step = max(1, len(questions) // args.writer_limit)
    subset = questions[::step][: args.writer_limit]  # spread over the set, both halves
    scholar_engine, data = scholarqa_engine(Path(args.scholarqa_home or f"{args.home}-scholarqa"))
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": round(os.getloadavg()[0], 2)},
        "writer": args.model, "writer_questions": [q["index"] for q in subset]}
    spread = questions[:: max(1, len(questions) // args.limit)][: args.limit] if args.limit else questions
    result["litqa_digest"] = run_litqa(litqa_engine, spread, "digest", None)
    result["litqa_digest_on_writer_subset"] = litqa_summary(
        [r for r in result["litqa_digest"]["questions"] if r["index"] in set(result["writer_questions"])])
    result["litqa_writer"] = run_litqa(litqa_engine, subset, args.writer_mode, args.model)
    if args.compare_reader:  # the same questions with the writer's second reading of unsupported sentences off
        with reader_off(litqa_engine):
            result["litqa_writer_without_reader"] = run_litqa(litqa_engine, subset, args.writer_mode, args.model)
    result["scholarqa_digest"] = run_scholarqa(scholar_engine, data[: args.scholarqa_limit], "digest", None)
    result["scholarqa_writer"] = run_scholarqa(scholar_engine, data[: args.scholarqa_writer_limit],
                                               args.writer_mode, args.model)
    summary = {k: v["summary"] if isinstance(v, dict) and "summary" in v else v for k, v in result.items()}
    result["machine"]["load_average_at_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(summary, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "answers.json").write_text(json.dumps({"summary": summary, **result}, indent=2, ensure_ascii=False),
                                          encoding="utf-8")
    print(f"wrote {RESULTS / 'answers.json'}")


def main() -> None:
    prepare_process()  # as the CLI does: offline hub client, passive OpenMP threads for llama.cpp
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("pairs").set_defaults(run=pairs_command)
    for name, run in (("golden", golden_command), ("scholarqa", scholarqa_command), ("litqa", litqa_command),
                      ("fit", fit_command), ("report", report_command)):
        command = commands.add_parser(name)
        command.add_argument("--home", required=True)
        command.add_argument("--limit", type=int, default=None)
        command.add_argument("--mode", default="auto", choices=("auto", "write", "digest"))
        command.add_argument("--model", default=None, help="a GGUF writer (default: the settings' model)")
        command.add_argument("--half", default="all", choices=("all", "odd", "even"))
        command.add_argument("--no-feedback", action="store_true")
        command.add_argument("--datastore", action="store_true")
        command.add_argument("--questions", default="all", choices=("all", "library", "datastore"))
        command.add_argument("--writer-limit", type=int, default=12)
        command.add_argument("--writer-mode", default="auto", choices=("auto", "write"))
        command.add_argument("--scholarqa-limit", type=int, default=None)
        command.add_argument("--scholarqa-home", default=None, help="report: the ScholarQA library")
        command.add_argument("--scholarqa-writer-limit", type=int, default=6)
        command.add_argument("--compare-reader", action="store_true",
                             help="report: the writer's LitQA2 questions again without the second reading")
        command.set_defaults(run=run)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
