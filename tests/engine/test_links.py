"""quire:// links: made and read back exactly; anything else is refused with a message naming the part."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from engine.links import QUOTE_CHARS, LinkError, OpenLink, open_link, parse_open_link, quote_span
from engine.mcp_files import read_or_create_token, server_state, token_path, write_state

PAPER = "faa5aceb428cdeb9"


def test_a_link_reads_back_as_made() -> None:
    link = open_link(PAPER, 7, f"{PAPER}-0027", "The graph has 280M nodes & “edges”.")
    assert link.startswith(f"quire://open?paper={PAPER}&page=7&passage={PAPER}-0027&quote=")
    assert parse_open_link(link) == OpenLink(PAPER, 7, f"{PAPER}-0027", "The graph has 280M nodes & “edges”.")
    assert parse_open_link(open_link(PAPER, None)) == OpenLink(PAPER, 1)


def test_a_long_quote_is_cut_at_a_word_end() -> None:
    quote = "word " * 200
    kept = parse_open_link(open_link(PAPER, 2, quote=quote)).quote
    assert len(kept) <= QUOTE_CHARS and quote.startswith(kept) and kept.endswith("word")


@pytest.mark.parametrize(("url", "says"), [
    ("https://example.org/?paper=faa5aceb428cdeb9", "not a quire:// link"),
    ("quire://delete?paper=faa5aceb428cdeb9", "quire://open?paper=ID"),
    ("quire://open?page=2", "does not name a paper"),
    ("quire://open?paper=../../etc", "is not a paper id"),
    ("quire://open?paper=faa5aceb428cdeb9&page=0", "not a page number"),
    ("quire://open?paper=faa5aceb428cdeb9&page=two", "not a page number"),
    ("quire://open?paper=faa5aceb428cdeb9&passage=0000000000000000-0001", "not a passage of paper"),
    ("quire://open?paper=faa5aceb428cdeb9&paper=faa5aceb428cdeb8", "more than once"),
])
def test_other_addresses_are_refused(url: str, says: str) -> None:
    with pytest.raises(LinkError, match=re.escape(says)):
        parse_open_link(url)


def test_the_token_file_is_private_and_kept(tmp_path: Path) -> None:
    token = read_or_create_token(tmp_path)
    assert len(token) >= 40 and stat.S_IMODE(token_path(tmp_path).stat().st_mode) == 0o600
    assert read_or_create_token(tmp_path) == token
    token_path(tmp_path).chmod(0o644)  # loosened by hand: tightened again before it is used
    assert read_or_create_token(tmp_path) == token
    assert stat.S_IMODE(token_path(tmp_path).stat().st_mode) == 0o600


def test_doctor_sees_a_running_server_and_forgets_a_dead_one(tmp_path: Path) -> None:
    assert server_state(tmp_path)["running"] is False
    write_state(tmp_path, {"transport": "http", "url": "http://127.0.0.1:8765/mcp", "allow_import": False})
    shown = server_state(tmp_path)
    assert shown["running"] is True and shown["pid"] == os.getpid() and shown["transport"] == "http"
    (tmp_path / "mcp-server.json").write_text('{"pid": 999999999, "transport": "stdio"}')
    assert server_state(tmp_path)["running"] is False


def test_a_links_quote_is_found_in_its_passage_across_line_breaks_and_when_cut() -> None:
    text = "Dense retrieval maps\nquestions and passages into one\n  vector space. Then it ranks them."
    quote = "questions and passages into one vector space."
    start, end = quote_span(text, parse_open_link(open_link(PAPER, 1, quote=quote)).quote) or (0, 0)
    assert text[start:end] == "questions and passages into one\n  vector space."
    long_text = "lead in. " + "word " * 200 + "tail."
    cut = parse_open_link(open_link(PAPER, 1, quote="word " * 200)).quote
    assert quote_span(long_text, cut) == (9, 9 + len(cut))
    assert quote_span(text, "words that are not there") is None
    assert quote_span(text, "  ") is None
