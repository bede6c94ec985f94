"""`quire check` end to end: pairs files, one pair, search over a real paper, and bad input.

Real subprocesses with the shipped support judge, as a user's script runs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_cli import quire

pytestmark = pytest.mark.slow

EVIDENCE = ("We propose SPECTER, a new method to generate document-level embedding of scientific documents based on "
            "pretraining a Transformer language model on a powerful signal of document-level relatedness: the "
            "citation graph.")
CLAIM = "SPECTER generates document-level embeddings of scientific documents by pretraining a Transformer on the " \
        "citation graph."
NEGATED = "SPECTER does not generate document-level embeddings of scientific documents."


def _pairs_file(folder: Path, lines: list[str]) -> Path:
    path = folder / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_pairs_are_judged_in_order_and_bad_lines_are_named(tmp_path: Path) -> None:
    lines = [json.dumps({"id": "a", "claim": CLAIM, "evidence": EVIDENCE}),
             "{this is not json",
             json.dumps({"id": 7, "claim": "", "evidence": EVIDENCE}),
             json.dumps({"id": "b", "claim": NEGATED, "evidence": EVIDENCE}),
             json.dumps({"id": "c", "claim": CLAIM})]
    done = quire(tmp_path / "home", "check", "--pairs", _pairs_file(tmp_path, lines), "--json")
    assert done.returncode == 1, done.stderr  # some lines were bad; the good ones were still judged
    out: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["id"] for o in out] == ["a", "b"]
    assert set(out[0]) == {"id", "verdict", "score", "quote"}
    assert out[0]["verdict"] == "supported" and out[0]["quote"] and out[0]["quote"] in EVIDENCE
    assert out[1]["verdict"] in ("contradicted", "unsupported")
    for number in (2, 3, 5):
        assert f"line {number}:" in done.stderr
    assert "not JSON" in done.stderr and "claim is empty" in done.stderr and "no text for evidence" in done.stderr


def test_missing_pairs_file_is_a_clear_error(tmp_path: Path) -> None:
    done = quire(tmp_path / "home", "check", "--pairs", tmp_path / "nowhere.jsonl", "--json")
    assert done.returncode == 1 and done.stdout == ""
    assert "No pairs file" in done.stderr and "nowhere.jsonl" in done.stderr and "Traceback" not in done.stderr


def test_one_pair_with_evidence(tmp_path: Path) -> None:
    done = quire(tmp_path / "home", "check", CLAIM, "--evidence", EVIDENCE, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "supported" and result["quote"] == EVIDENCE[result["quote_start"]:result["quote_end"]]
    plain = quire(tmp_path / "home", "check", NEGATED, "--evidence", EVIDENCE)
    assert plain.returncode == 0 and plain.stdout.split()[0] in ("contradicted", "unsupported")


@pytest.mark.parametrize(("claim", "evidence", "message"), [
    ("", EVIDENCE, "claim is empty"),
    ("   ", EVIDENCE, "claim is empty"),
    (CLAIM, "", "evidence is empty"),
])
def test_empty_claim_or_evidence_is_refused(tmp_path: Path, claim: str, evidence: str, message: str) -> None:
    done = quire(tmp_path / "home", "check", claim, "--evidence", evidence)
    assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr


def test_a_20000_character_claim_is_cut_and_said(tmp_path: Path) -> None:
    claim = " ".join(f"{CLAIM.rstrip('.')} ({i})." for i in range(20000 // len(CLAIM) + 1))  # no sentence said twice
    done = quire(tmp_path / "home", "check", claim[:20000], "--evidence", EVIDENCE, "--json")
    assert done.returncode == 0, done.stderr
    assert "20,000 characters" in done.stderr and "only its first" in done.stderr
    assert json.loads(done.stdout)["verdict"] in ("supported", "partial", "unsupported", "contradicted")


def test_a_question_is_judged_with_a_note(tmp_path: Path) -> None:
    done = quire(tmp_path / "home", "check", "Does SPECTER pretrain a Transformer on the citation graph?",
                 "--evidence", EVIDENCE, "--json")
    assert done.returncode == 0, done.stderr
    assert "question" in done.stderr


def test_evidence_in_another_language_is_noted_and_not_taken_as_support(tmp_path: Path) -> None:
    german = ("Wir schlagen SPECTER vor, eine neue Methode, um Einbettungen wissenschaftlicher Dokumente zu erzeugen, "
              "indem ein Transformer-Sprachmodell auf dem Zitationsgraphen vortrainiert wird.")
    done = quire(tmp_path / "home", "check", CLAIM, "--evidence", german, "--json")
    assert done.returncode == 0, done.stderr
    assert "English" in done.stderr
    assert json.loads(done.stdout)["verdict"] != "supported"


def test_check_searches_the_library_and_lists_judged_passages(tmp_path: Path, papers_dir: Path) -> None:
    home = tmp_path / "home"
    done = quire(home, "ingest", papers_dir / "2020.acl-main.207.pdf")  # SPECTER
    assert done.returncode == 0, done.stderr
    done = quire(home, "check", "SPECTER is pretrained on the citation graph to embed scientific documents.",
                 "--json", "--all", "-k", "8")
    assert done.returncode == 0, done.stderr
    passages: list[dict[str, Any]] = json.loads(done.stdout)
    assert passages and {"verdict", "score", "quote", "passage_id", "doc_id", "title", "page"} <= set(passages[0])
    assert all(p["verdict"] in ("supported", "partial", "unsupported", "contradicted") for p in passages)
    assert passages[0]["verdict"] in ("supported", "partial") and passages[0]["page"] is not None
    searched = json.loads(quire(home, "search", "SPECTER citation graph", "--json", "-k", "20").stdout)
    texts = {hit["passage_id"]: hit["text"] for hit in searched}
    for passage in passages:
        if passage["passage_id"] in texts:
            assert passage["quote"] in texts[passage["passage_id"]]
    human = quire(home, "check", "SPECTER is pretrained on the citation graph to embed scientific documents.")
    assert human.returncode == 0 and "Supporting:" in human.stdout


def test_read_with_the_bundled_model_is_refused_with_what_to_do(tmp_path: Path) -> None:
    done = quire(tmp_path / "home", "check", CLAIM, "--evidence", EVIDENCE, "--read")
    assert done.returncode != 0 and done.stdout == ""
    assert "too small to read claims" in done.stderr and "--model" in done.stderr and "Traceback" not in done.stderr


def test_read_needs_evidence_or_pairs(tmp_path: Path) -> None:
    done = quire(tmp_path / "home", "check", CLAIM, "--read")
    assert done.returncode == 2 and "--read works with --evidence or --pairs" in done.stderr


def test_a_claim_nothing_supports_or_contradicts_shows_the_closest_passages_read(tmp_path: Path) -> None:
    """A researcher checking a claim the paper does not make sees what the library does say, marked
    "not stated here", rather than an empty list."""
    from engine.demo import demo_papers

    home = tmp_path / "home"
    specter = next(p for p in demo_papers() if p.name == "2020.acl-main.207.pdf")
    assert quire(home, "ingest", specter).returncode == 0
    claim = "SPECTER is trained on 10 million PubMed abstracts."
    human = quire(home, "check", claim)
    assert human.returncode == 0, human.stderr
    assert "0 contradict it" in human.stdout and "Closest passages read (not stated here):" in human.stdout
    assert human.stdout.count("(not stated here") >= 3 and "SPECTER" in human.stdout
    shown = json.loads(quire(home, "check", claim, "--json").stdout)
    assert len(shown) == 3 and all(p["verdict"] == "unsupported" and p["quote"] for p in shown)
