"""Details of the CLI a researcher meets in a day of use, through real subprocesses: the page `quire check` cites,
the defaults `--help` states, and the forms of `quire check --read`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fixtures.pdfs import text_pdf
from test_cli import quire

from engine.config import Settings

pytestmark = pytest.mark.slow

# Page 1 holds the start of the passage; the claim's sentence is on page 2.
PAGE_ONE = "\n".join(f"Sparse retrieval systems index documents by their words, line {n} of the method section."
                     for n in range(12))
PAGE_TWO = ("Field work took place over three summers on the northern outlet glaciers.\n"
            "Each station logged its position every hour with a dual frequency receiver.\n"
            "The glacier model predicts that meltwater doubles the sliding speed of the ice sheet.\n"
            "Later sentences talk about other things entirely, such as sampling rates and sensors.")
CLAIM = "Meltwater doubles the sliding speed of the ice sheet."


def test_check_cites_the_page_the_quote_is_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    pdf = text_pdf(tmp_path / "glacier.pdf", [PAGE_ONE, PAGE_TWO])
    assert quire(home, "ingest", pdf).returncode == 0
    done = quire(home, "check", CLAIM, "--json")
    assert done.returncode == 0, done.stderr
    found = [p for p in json.loads(done.stdout) if "meltwater" in p["quote"].lower()]
    assert found and found[0]["page"] == 2, found
    plain = quire(home, "check", CLAIM)
    assert "library, p. 2]" in plain.stdout, plain.stdout


def test_ask_help_states_the_settings_default_for_top_n(tmp_path: Path) -> None:
    done = quire(tmp_path / "home", "ask", "--help")
    assert done.returncode == 0, done.stderr
    stated = re.search(r"--top-n N passages handed to the model \(default (\d+)", " ".join(done.stdout.split()))
    assert stated and int(stated.group(1)) == Settings().retrieval.top_n, done.stdout


def test_check_read_for_a_claim_is_refused_as_the_readme_says(tmp_path: Path) -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert "`quire check --read` does the same for claims" not in readme
    done = quire(tmp_path / "home", "check", CLAIM, "--read")
    assert done.returncode == 2 and "--read works with --evidence or --pairs" in done.stderr
