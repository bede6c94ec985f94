"""Saying "nothing answers": the model's verdicts when the library holds the answer and when it does not.

    python benchmarks/no_answer.py judge --home H --model WRITER.gguf     # P(Yes) maxima, threshold fitted
    python benchmarks/no_answer.py answers --home H --model WRITER.gguf   # what the user is told, end to end

H is the LitQA2 library of ``benchmarks/answers.py litqa`` (built if empty); the ScholarQA-Multi
snippet datastore lives in H-scholarqa, as in ``answers.py report``.

Every LitQA2 dev question is asked twice: of the library as it is (its paper holds the answer) and of
the library without the question's paper (``doc_ids``: every other document), which is what a
researcher meets when the paper that answers is not in their library. ScholarQA-Multi questions are
broad ("share papers on ...", "explain the LLaVA series"), where a single sentence rarely answers
alone, so they show what the threshold must not silence.

``judge`` records, per question, the highest P(Yes) the model gives the candidate sentences
(engine.synthesis.answer_judge; 0 when relevance already left nothing), then fits the threshold on
the odd-numbered LitQA2 questions and the first 20 ScholarQA-Multi ones, and reports it on the
even-numbered and the next 20. ``answers`` asks the LitQA2 questions without their paper through
``Engine.ask`` with the digest (no judge) and with the writer (``auto``), and counts answers that say
no passage answers. Writes benchmarks/results/no_answer.json (``judge`` and ``answers`` keep each
other's part).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from answers import RESULTS, litqa_questions, prepare_home, scholarqa_engine, stated

from engine.cite.support import SupportScorer
from engine.generate.llama import LlamaModel
from engine.process import prepare_process
from engine.request import AskRequest, RequestOptions, Scope
from engine.service import Engine
from engine.synthesis import answer_judge
from engine.synthesis.evidence import diverse, extract_evidence, relevant, to_reference
from engine.synthesis.mentions import NOT_MENTIONED
from engine.synthesis.pipeline import NOT_ANSWERED
from engine.types import AnswerMode, SearchHit

OUTPUT = RESULTS / "no_answer.json"
SCHOLARQA_QUESTIONS = 40  # the first 20 fit the threshold, the next 20 test it
GRID = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)


def without_paper(files: dict[str, str], pdf: str) -> list[str]:
    """Every library document (``files``: id -> file name) but the question's paper."""
    return [doc_id for doc_id, name in files.items() if name != pdf]


def file_names(engine: Engine) -> dict[str, str]:
    return {d.id: Path(d.path).name for d in engine.documents()}


def best_yes(lm: LlamaModel, engine: Engine, scorer: SupportScorer, question: str,
             hits: list[SearchHit]) -> dict[str, Any]:
    """The pipeline's evidence and candidates for ``hits``, and the highest P(Yes) the model gives them."""
    text = {h.passage_id: (engine.passage(h.passage_id).text if h.is_library else h.text) for h in hits}
    refs = [to_reference(h, i + 1, text[h.passage_id]) for i, h in enumerate(hits)]
    found = relevant(extract_evidence(question, refs, scorer))
    pool = answer_judge.candidates(found)
    yes = [answer_judge.answers_yes(lm, question, q.text) for q in pool]
    return {"kept_passages": len(found), "best_yes": round(max(yes, default=0.0), 4)}


def judge_command(args: argparse.Namespace) -> None:
    engine = prepare_home(Path(args.home), False, litqa=True)
    lm = LlamaModel(args.model, context_size=4096)
    scorer = SupportScorer(engine.support_embedder)
    files = file_names(engine)
    rows = []
    for question in litqa_questions("all"):
        for kind, doc_ids in (("with_paper", None), ("without_paper", without_paper(files, question["pdf"]))):
            hits = diverse(engine.search(question["question"], k=12, source="library", doc_ids=doc_ids), 12, 0)
            rows.append({"set": "litqa", "kind": kind, "index": question["index"],
                         **best_yes(lm, engine, scorer, question["question"], hits)})
            print(rows[-1], flush=True)
    scholar, data = scholarqa_engine(Path(f"{args.home}-scholarqa"))
    scholar_scorer = SupportScorer(scholar.support_embedder)
    for index, item in enumerate(data[:SCHOLARQA_QUESTIONS]):
        hits = diverse(scholar.search(item["input"], k=12, source="scholarqa"), 12, 0)
        rows.append({"set": "scholarqa", "kind": "with_paper", "index": index,
                     **best_yes(lm, scholar, scholar_scorer, item["input"], hits)})
        print(rows[-1], flush=True)

    def split(part: str) -> tuple[list[float], list[float]]:
        """(answerable, unanswerable) P(Yes) maxima of one part: "fit" or "test"."""
        litqa_half = 1 if part == "fit" else 0
        scholar = range(0, 20) if part == "fit" else range(20, SCHOLARQA_QUESTIONS)
        chosen = [r for r in rows if (r["set"] == "litqa" and r["index"] % 2 == litqa_half)
                  or (r["set"] == "scholarqa" and r["index"] in scholar)]
        return ([r["best_yes"] for r in chosen if r["kind"] == "with_paper"],
                [r["best_yes"] for r in chosen if r["kind"] == "without_paper"])

    def counts(part: str, threshold: float) -> dict[str, Any]:
        answerable, unanswerable = split(part)
        return {"threshold": threshold, "answerable_silenced": sum(y < threshold for y in answerable),
                "answerable": len(answerable), "unanswerable_said": sum(y < threshold for y in unanswerable),
                "unanswerable": len(unanswerable)}

    fit_answerable, _ = split("fit")
    result = load()
    result["judge"] = {
        "model": Path(args.model).name, "shipped_threshold": answer_judge.NO_ANSWER,
        "lowest_answerable_on_fit": min(fit_answerable),
        "rule": "about 0.1 under the lowest P(Yes) of an answerable fitting question, to a multiple of 0.05",
        "fit": [counts("fit", t) for t in GRID], "test": [counts("test", t) for t in GRID], "questions": rows}
    save(result)
    print(json.dumps({k: v for k, v in result["judge"].items() if k != "questions"}, indent=1))


def says_nothing_answers(mode: AnswerMode, text: str) -> bool:
    return mode == AnswerMode.NO_EVIDENCE or text.startswith((NOT_ANSWERED, NOT_MENTIONED))


def answers_command(args: argparse.Namespace) -> None:
    """Each mode asked of the library without the question's paper (``--with-paper``: as it is, where
    saying nothing answers is a loss)."""
    engine = prepare_home(Path(args.home), False, litqa=True)
    result = load()
    files = file_names(engine)
    key = "answers_with_their_paper" if args.with_paper else "answers_without_their_paper"
    part: dict[str, Any] = {**result.get(key, {}), "model": Path(args.model).name}
    for mode in args.modes:
        rows = []
        for question in litqa_questions("all"):
            started = time.perf_counter()
            scope = Scope() if args.with_paper else Scope(doc_ids=tuple(without_paper(files, question["pdf"])))
            answer = engine.ask(AskRequest(question["question"], scope=scope, mode=mode,
                                           model=None if mode == "digest" else args.model,
                                           options=RequestOptions(save=False)))
            rows.append({"index": question["index"], "mode": answer.mode.value,
                         "says_nothing_answers": says_nothing_answers(answer.mode, answer.text),
                         "states_the_ideal_answer": stated(question["ideal"], answer.text),
                         "seconds": round(time.perf_counter() - started, 1), "answer": answer.text[:400]})
            print(mode, rows[-1]["index"], rows[-1]["mode"], rows[-1]["says_nothing_answers"], rows[-1]["seconds"],
                  flush=True)
        said = {half: sum(r["says_nothing_answers"] for r in rows if r["index"] % 2 == (half == "odd"))
                for half in ("odd", "even")}
        part[mode] = {"says_nothing_answers": said, "questions_per_half": 21, "questions": rows}
    result[key] = part
    save(result)
    print(json.dumps({m: v["says_nothing_answers"] for m, v in part.items() if isinstance(v, dict)}, indent=1))


def load() -> dict[str, Any]:
    return json.loads(OUTPUT.read_text(encoding="utf-8")) if OUTPUT.exists() else {}


def save(result: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(f"wrote {OUTPUT}")


def main() -> None:
    prepare_process()  # as the CLI does: offline hub client, passive OpenMP threads for llama.cpp
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, command in (("judge", judge_command), ("answers", answers_command)):
        one = sub.add_parser(name)
        one.add_argument("--home", required=True, help="the LitQA2 library (built if empty)")
        one.add_argument("--model", required=True, help="a GGUF model that can write, e.g. the fetch-writer model")
        one.set_defaults(run=command)
        if name == "answers":
            one.add_argument("--modes", nargs="+", default=["digest", "auto"], choices=("digest", "auto"))
            one.add_argument("--with-paper", action="store_true", help="ask the library as it is instead")
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
