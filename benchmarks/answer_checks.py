"""What the answer benchmarks share: where the data is, the library they ask, and how an answer is checked.

Used by benchmarks/answers.py (and the benchmarks that reuse its LitQA2 library: answer_judge.py,
no_answer.py, reader_cost.py): the libraries, the LitQA2 dev questions, the checks every answer must
pass (no dangling [n], every quote verbatim) and whether an answer states the ideal one, as
../shared/checks/answers counts it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from engine.cite.markers import cited_numbers
from engine.request import RequestOptions
from engine.service import Engine
from engine.types import Answer

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("QUIRE_SHARED", ROOT.parent / "shared"))
OUT = ROOT / "benchmarks" / "out"
PAIRS = ROOT / "tests" / "data" / "support_pairs.jsonl"
GOLDEN = ROOT / "tests" / "golden" / "questions.json"
RESULTS = ROOT / "benchmarks" / "results"
LITQA = SHARED / "eval" / "litqa2-dev"
NOT_SAVED = RequestOptions(save=False)  # benchmark answers stay out of the history


def save(name: str, data: Any) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"answers-{name}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"wrote {OUT / f'answers-{name}.json'}")


def prepare_home(home: Path, datastore: bool, litqa: bool = False) -> Engine:
    engine = Engine(home)
    if not engine.documents():
        print("ingesting the corpus ...", file=sys.stderr)
        folders = [LITQA / "pdfs", SHARED / "corpus" / "papers"] if litqa else [SHARED / "corpus" / "papers"]
        for _ in engine.add_documents(folders):
            pass
    if datastore and not any(d.name == "cs" for d in engine.datastores()):
        print("importing the sample datastore (slow) ...", file=sys.stderr)
        engine.add_datastore(SHARED / "datastore" / "cs-sample.jsonl.gz", "cs")
    return engine


def check_answer(answer: Answer) -> dict[str, Any]:
    """Dangling [n] (naming no cited paper) and quotes not verbatim in the passage they name: both must be 0."""
    papers = {p.n for p in answer.papers}
    dangling = [n for n in cited_numbers(answer.text) if n not in papers]
    passages = {r.passage_id: r for r in (*answer.references, *answer.contexts)}
    not_verbatim = sum(1 for s in answer.sentences for c in s.citations
                       if c.passage_id not in passages or c.quote not in passages[c.passage_id].text)
    return {"dangling": len(dangling), "not_verbatim": not_verbatim}


def verdicts(answer: Answer) -> dict[str, int]:
    """Citation-worthy sentences by verdict: the entailment judge's when the sentences carry one."""
    counts: dict[str, int] = {}
    for sentence in answer.sentences:
        if not sentence.needs_citation:
            continue
        verdict = getattr(sentence, "support", None)
        name = str(getattr(verdict, "value", verdict)) if verdict is not None else (
            "supported" if sentence.supported else "unsupported")
        counts[name] = counts.get(name, 0) + 1
    return counts


# --- LitQA2 dev ---------------------------------------------------------------------------------

_WORDS = re.compile(r"[a-z0-9]+")
_NUM = re.compile(r"\d[\d,]*\.?\d*")


def words(text: str) -> set[str]:
    return {w for w in _WORDS.findall((text or "").lower()) if len(w) > 3}


def stated(ideal: str, text: str) -> bool:
    """The ideal answer in ``text`` as ../shared/checks/answers counts it."""
    ideal, text = ideal.lower().strip(), text.lower()
    if ideal in ("yes", "no"):
        return re.search(rf"\b{ideal}\b", text) is not None
    if fuzz.partial_ratio(ideal, text) >= 85:
        return True
    def nums(s: str) -> list[float]:
        return [float(x.replace(",", "")) for x in _NUM.findall(s)]
    want = nums(ideal)
    return bool(want) and all(any(abs(g - w) <= 0.02 * max(abs(w), 1e-9) for g in nums(text)) for w in want)


# The content words ../shared/checks/reader counts: every alphanumeric run but these.
_COVID_STOP = set("the a an of in on and or to is are was were be by for with as at from that this which it its their"
                  .split())


def covid_words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _COVID_STOP]


def covid_share(gold: str, text: str) -> float:
    """The share of the gold span's content words in ``text`` (../shared/checks/reader: it counts at 0.7)."""
    gold_words, present = covid_words(gold), set(covid_words(text))
    return sum(w in present for w in gold_words) / max(1, len(gold_words))


def litqa_questions(half: str) -> list[dict[str, Any]]:
    questions = [json.loads(line) for line in (LITQA / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    for index, question in enumerate(questions):
        question["index"] = index
    if half == "odd":
        return questions[1::2]
    if half == "even":
        return questions[0::2]
    return questions
