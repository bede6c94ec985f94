"""Retrieval while writing (In-Context RALM) and rewrite-retrieve-read against retrieve-once, on the same questions.

    python benchmarks/ralm.py answers --model WRITER.gguf [--limit 5] [--sets litqa,covidqa,scholarqa]
    python benchmarks/ralm.py rewrite --model WRITER.gguf [--limit 42] [--writer-limit 10]
    python benchmarks/ralm.py table                   # the Markdown tables of benchmarks/results/ralm.json

``answers`` asks each question once per setting, with the writer in ``write`` mode (the model's own draft is
what the settings change; ``auto`` would replace most drafts with the digest):

- ``once``: today's answer, one search before writing, the plain question (no rewrite);
- ``evidence last``: the same with the prompt retrieval while writing uses (the task before the evidence)
  and a stride longer than the answer, so no search: what the layout alone changes;
- ``stride S``: retrieval while writing every S tokens, the question and the draft's last 32 tokens as a
  BM25 query (In-Context RALM's best BM25 setting; S = 4 is the paper's);
- ``sentence``: the same at each sentence end; ``sentence l64``: with the draft's last 64 tokens (the paper's
  best query length for dense retrievers);
- ``rewrite``: rewrite-retrieve-read, the writer turning the question into keyword queries first.

Per setting: the key passage cited (LitQA2: a cited passage of the question's paper holding >= 60 % of the
key passage's content words; COVID-QA: a cited passage holding >= 70 % of the gold span's content words;
ScholarQA-Multi: the share of expert-cited snippets cited), the answer stated in the first 400 characters
(LitQA2 as ../shared/checks/answers counts it, COVID-QA as ../shared/checks/reader does; ScholarQA has no
short answer), written sentences judged supported, seconds per answer, and the prompt tokens the calls
that resumed the draft evaluated (what the swaps recomputed), with the searches and swaps made.

``rewrite`` measures retrieval alone on LitQA2 dev: the key passage in the top 10 (as
../shared/checks/fulltext counts it) for the plain question with the shipped search (whose BM25 feedback
list is the cheap rewrite: keywords from the question's own top passages), the same without that
expansion, and the question rewritten by the bundled small model and by the writer (``--writer-limit``
questions: each rewrite is one call of the slow model).

Libraries: LitQA2 dev from --litqa-home (what ../shared/checks/fulltext builds), COVID-QA from
--covidqa-home (what ../shared/checks/reader builds), ScholarQA-Multi as a datastore of its snippets in
--scholarqa-home (made on first use). Run with ``nice -n 15`` on the shared machine; results go to
benchmarks/results/ralm.json (written after every answer, so a stopped run keeps what it measured).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from answer_checks import RESULTS, SHARED, check_answer, covid_share, litqa_questions, stated, verdicts, words
from answers import scholarqa_engine

from engine.process import prepare_process
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.service_search import build_retriever
from engine.synthesis.ralm import SENTENCE_END
from engine.types import Answer

OUTPUT = RESULTS / "ralm.json"
SETTINGS: dict[str, dict[str, Any]] = {
    "once": {"stride": 0, "rewrite": False},
    # The prompt retrieval while writing uses (task first, evidence last) with no search: the layout's own effect.
    "evidence last": {"stride": 1 << 16, "rewrite": False},
    "stride 4": {"stride": 4, "rewrite": False},
    "stride 16": {"stride": 16, "rewrite": False},
    "sentence": {"stride": SENTENCE_END, "rewrite": False},
    # The paper's best query length for dense retrievers (64), here with BM25 at each sentence end.
    "sentence l64": {"stride": SENTENCE_END, "rewrite": False, "query_tokens": 64},
    "rewrite": {"stride": 0, "rewrite": True},
}
def covid_questions() -> list[dict[str, str]]:
    """The COVID-QA check split's questions in the check's seeded order."""
    data = json.loads((SHARED / "eval" / "covidqa" / "covidqa-check.json").read_text(encoding="utf-8"))["data"]
    questions = [{"question": q["question"], "gold": q["answers"][0]["text"],
                  "title": a["paragraphs"][0]["context"].split("\n")[0].strip()}
                 for a in data for q in a["paragraphs"][0]["qas"] if q["answers"]]
    random.Random(5).shuffle(questions)
    return questions


def cost(answer: Answer) -> dict[str, Any]:
    """What writing cost: seconds, the first call's prompt evaluation, what resuming recomputed."""
    steps = answer.steps
    first = next((s for s in steps if s.step == "write"), None)
    return {"write_prompt_evaluated": first.prompt_tokens_evaluated if first else 0,
            "recomputed_tokens": sum(s.prompt_tokens_evaluated for s in steps if s.step.startswith("write (")),
            "swaps": sum(s.step == "write (after a swap)" for s in steps),
            "searches": sum(s.step == "search while writing" for s in steps),
            "search_seconds": round(sum(s.seconds_total for s in steps if s.step == "search while writing"), 2),
            "writing_seconds": dict(answer.timings).get("writing", 0.0)}


def configured(engine: Engine, model: str, stride: int, query_tokens: int = 32) -> None:
    settings = engine.settings
    engine.save_settings(replace(settings, generation=replace(settings.generation, model=model,
                                                                 retrieval_stride=stride,
                                                                 retrieval_query_tokens=query_tokens)))


def ask(engine: Engine, question: str, setting: dict[str, Any], model: str,
        scope: Scope | None = None) -> tuple[Answer, float]:
    configured(engine, model, setting["stride"], setting.get("query_tokens", 32))
    engine.language_model()  # loaded before the clock starts: the first answer of a run would pay for it
    started = time.perf_counter()
    answer = engine.ask(AskRequest(question, scope=scope or Scope(), mode="write",
                                   options=RequestOptions(save=False, rewrite=setting["rewrite"])))
    return answer, round(time.perf_counter() - started, 1)


def contradicted(answer: Answer) -> list[dict[str, str]]:
    """Each sentence marked contradicted with the passage quote shown beside it, to be read by a person."""
    marked = [s for s in answer.sentences if s.support == "contradicted"]
    return [{"sentence": s.text, "passage": s.contradictions[0].passage_id if s.contradictions else "",
             "quote": s.contradictions[0].quote if s.contradictions else ""} for s in marked]


def common(answer: Answer, seconds: float) -> dict[str, Any]:
    return {"mode": answer.mode.value, "seconds": seconds, "verdicts": verdicts(answer), **check_answer(answer),
            **cost(answer), "contradicted": contradicted(answer), "answer": answer.text[:900]}


def litqa_row(engine: Engine, names: dict[str, str], item: dict[str, Any], setting: dict[str, Any],
              model: str) -> dict[str, Any]:
    answer, seconds = ask(engine, item["question"], setting, model)
    key = words(item["key_passage"])
    cited = [answer.passage(c.passage_id) for s in answer.sentences for c in s.citations]
    return {"question": item["index"],
            "key_passage_cited": any(names.get(r.doc_id) == item["pdf"] and len(key & words(r.text)) >= 0.6 * len(key)
                                     for r in cited),
            "stated_first_400": stated(item["ideal"], answer.text[:400]), **common(answer, seconds)}


def covid_row(engine: Engine, item: dict[str, str], setting: dict[str, Any], model: str) -> dict[str, Any]:
    answer, seconds = ask(engine, item["question"], setting, model)
    text = re.sub(r"\[\d+\]|[“”\"]", "", answer.text)
    cited = [answer.passage(c.passage_id) for s in answer.sentences for c in s.citations]
    return {"question": item["question"], "key_passage_cited": any(covid_share(item["gold"], r.text) >= 0.7
                                                                   for r in cited),
            "stated_first_400": covid_share(item["gold"], text[:400]) >= 0.7, **common(answer, seconds)}


def scholarqa_row(engine: Engine, item: dict[str, Any], setting: dict[str, Any], model: str) -> dict[str, Any]:
    answer, seconds = ask(engine, item["input"], setting, model, Scope(source="scholarqa"))
    expert = {f"{item['id']}:{n}" for n in map(int, re.findall(r"\[(\d+)\]", item["output"]))}
    ours = {r.doc_id for r in answer.references}
    return {"question": item["id"], "key_passage_cited": round(len(ours & expert) / max(1, len(expert)), 3),
            "stated_first_400": None, **common(answer, seconds)}


def _id(name: str, item: dict[str, Any]) -> Any:
    """The question's key in the rows of its set."""
    return {"litqa": item.get("index"), "covidqa": item.get("question"), "scholarqa": item.get("id")}[name]


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    supported = sum(r["verdicts"].get("supported", 0) for r in rows)
    judged = sum(sum(r["verdicts"].values()) for r in rows)
    firsts = [r["stated_first_400"] for r in rows if r["stated_first_400"] is not None]
    return {"questions": len(rows),
            "key_passage_cited": round(float(np.mean([float(r["key_passage_cited"]) for r in rows])), 3),
            "stated_first_400": round(float(np.mean(firsts)), 3) if firsts else None,
            "written_sentences_supported": round(supported / max(1, judged), 3), "sentences_judged": judged,
            "seconds_p50": round(float(np.median([r["seconds"] for r in rows])), 1),
            "writing_seconds_p50": round(float(np.median([r["writing_seconds"] for r in rows])), 1),
            "recomputed_tokens_mean": round(float(np.mean([r["recomputed_tokens"] for r in rows])), 1),
            "swaps_mean": round(float(np.mean([r["swaps"] for r in rows])), 1),
            "searches_mean": round(float(np.mean([r["searches"] for r in rows])), 1),
            "dangling_total": sum(r["dangling"] for r in rows),
            "not_verbatim_total": sum(r["not_verbatim"] for r in rows)}


def load() -> dict[str, Any]:
    return json.loads(OUTPUT.read_text(encoding="utf-8")) if OUTPUT.exists() else {}


def store(results: dict[str, Any]) -> None:
    """``results``' keys written into the file as it is now, so that the two commands may run at once."""
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps({**load(), **results}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def answers_command(args: argparse.Namespace) -> None:
    results = load()
    runs = results.setdefault("answers", {})
    chosen = [s.strip() for s in args.settings.split(",")]
    for name in args.sets.split(","):
        names: dict[str, str] = {}
        if name == "litqa":
            engine = Engine(Path(args.litqa_home))
            names = {d.id: Path(d.path).name for d in engine.documents()}
            items: list[Any] = litqa_questions("all")[args.start: args.start + args.limit]
        elif name == "covidqa":
            engine = Engine(Path(args.covidqa_home))
            items = covid_questions()[args.start: args.start + args.limit]
        else:
            engine, data = scholarqa_engine(Path(args.scholarqa_home))
            items = data[args.start: args.start + args.limit]
        for setting in chosen:
            # --start N adds questions N.. to the rows already measured (a run in parts on a busy machine).
            before = runs.get(name, {}).get(setting, {}).get("rows", []) if args.start else []
            rows: list[dict[str, Any]] = [r for r in before if r["question"] not in {_id(name, i) for i in items}]
            for item in items:  # one setting over all questions, so llama.cpp's cache is not shared across settings
                setting_values = SETTINGS[setting]
                rows.append(litqa_row(engine, names, item, setting_values, args.model) if name == "litqa" else
                            covid_row(engine, item, setting_values, args.model) if name == "covidqa" else
                            scholarqa_row(engine, item, setting_values, args.model))
                last = rows[-1]
                print(f"{name} {setting:<10} {str(last['question'])[:40]:<40} cited {last['key_passage_cited']} "
                      f"first400 {last['stated_first_400']} {last['verdicts']} {last['seconds']}s "
                      f"recomputed {last['recomputed_tokens']} swaps {last['swaps']}", flush=True)
                runs.setdefault(name, {})[setting] = {"summary": summary(rows), "rows": rows}
                results["machine"] = {"cpus": os.cpu_count(), "load_average": os.getloadavg(), "model": args.model,
                                      "questions_per_set": len(rows), "mode": "write"}
                store(results)
        engine.close()


def rank_summary(ranks: list[int]) -> dict[str, Any]:
    """Key passage in the top 3 and top 10, and the mean reciprocal rank (0 beyond the top 10)."""
    n = max(1, len(ranks))
    return {"questions": len(ranks), "key_in_top_3": round(sum(0 < r <= 3 for r in ranks) / n, 3),
            "key_in_top_10": round(sum(r > 0 for r in ranks) / n, 3),
            "mrr_at_10": round(sum(1 / r for r in ranks if r) / n, 3)}


def rewrite_command(args: argparse.Namespace) -> None:
    engine = Engine(Path(args.litqa_home))
    names = {d.id: Path(d.path).name for d in engine.documents()}
    questions = litqa_questions("all")[: args.limit]
    measured: dict[str, Any] = {}
    for label, model, limit in (("no expansion", "", len(questions)), ("plain question", "", len(questions)),
                                ("small model rewrite", "", len(questions)),
                                ("writer rewrite", args.model, args.writer_limit)):
        settings = engine.settings
        engine.save_settings(replace(settings, generation=replace(settings.generation, model=model)))
        retriever = build_retriever(engine.search_tools(), rewrite=label.endswith("rewrite"))
        if label == "no expansion":  # the shipped search without its keyword expansion from the top passages
            retriever.options = replace(retriever.options, feedback_passages=0, dense_feedback_passages=0)
        ranks: list[int] = []  # the key passage's rank in the top 10 (0: not there)
        seconds = []
        for item in questions[:limit]:
            started = time.perf_counter()
            hits = retriever.search(item["question"], k=10)
            seconds.append(time.perf_counter() - started)
            key = words(item["key_passage"])
            ranks.append(next((rank for rank, h in enumerate(hits, start=1) if names.get(h.doc_id) == item["pdf"]
                               and len(key & words(h.text)) >= 0.6 * len(key)), 0))
        measured[label] = {**rank_summary(ranks), "seconds_p50": round(float(np.median(seconds)), 2),
                           "ranks": ranks}
        print(label, rank_summary(ranks), f"{measured[label]['seconds_p50']} s", flush=True)
    plain = measured["plain question"]["ranks"]
    for row in measured.values():
        row["plain_on_same_questions"] = rank_summary(plain[: row["questions"]])
    store({"rewrite": {"machine": {"load_average": os.getloadavg(), "model": args.model}, **measured}})
    engine.close()


def table_command(_: argparse.Namespace) -> None:
    """The Markdown tables of benchmarks/results/ralm.json (docs/history/answers.md shows them)."""
    results = load()
    print("| set | setting | questions | key passage cited | answer in first 400 | written sentences supported |"
          " seconds per answer (writing) | prompt tokens recomputed | swaps / searches |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, settings in results.get("answers", {}).items():
        for setting in SETTINGS:
            if setting not in settings:
                continue
            row = summary(settings[setting]["rows"])
            first = "—" if row["stated_first_400"] is None else f"{row['stated_first_400']:.2f}"
            print(f"| {name} | {setting} | {row['questions']} | {row['key_passage_cited']:.2f} | {first} | "
                  f"{row['written_sentences_supported']:.2f} ({row['sentences_judged']}) | {row['seconds_p50']:,.0f} "
                  f"({row['writing_seconds_p50']:,.0f}) | "
                  f"{row['recomputed_tokens_mean']:,.0f} | {row['swaps_mean']:.0f} / {row['searches_mean']:.0f} |")
    rewrite = results.get("rewrite", {})
    if rewrite:
        print("\n| search (LitQA2 dev) | questions | key in top 3 | key in top 10 | MRR@10 | plain question on the "
              "same questions (top 3 / top 10 / MRR) | seconds per search |")
        print("|---|---|---|---|---|---|---|")
        for label, row in rewrite.items():
            if label == "machine":
                continue
            plain = row["plain_on_same_questions"]
            print(f"| {label} | {row['questions']} | {row['key_in_top_3']:.3f} | {row['key_in_top_10']:.3f} | "
                  f"{row['mrr_at_10']:.3f} | {plain['key_in_top_3']:.3f} / {plain['key_in_top_10']:.3f} / "
                  f"{plain['mrr_at_10']:.3f} | {row['seconds_p50']:.2f} |")


def main() -> None:
    prepare_process()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("answers", "rewrite"):
        command = sub.add_parser(name)
        command.add_argument("--model", required=True, help="the writer GGUF (../shared/models/fetch-writer)")
        command.add_argument("--limit", type=int, default=5, help="questions per set")
        command.add_argument("--start", type=int, default=0, help="the first question (added to earlier rows)")
        command.add_argument("--litqa-home", default="/tmp/quire-checks/fulltext")
        command.add_argument("--covidqa-home", default="/tmp/quire-checks/reader/q")
        command.add_argument("--scholarqa-home", default="/tmp/quire-ralm-scholarqa")
    sub.choices["answers"].add_argument("--sets", default="litqa,covidqa,scholarqa")
    sub.choices["answers"].add_argument("--settings", default=",".join(SETTINGS))
    sub.choices["rewrite"].add_argument("--writer-limit", type=int, default=10)
    sub.add_parser("table", help="print the Markdown tables of the results")
    args = parser.parse_args()
    {"answers": answers_command, "rewrite": rewrite_command, "table": table_command}[args.command](args)


if __name__ == "__main__":
    main()
