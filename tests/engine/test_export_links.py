"""The Markdown and HTML exports give each cited library passage its quire:// link, the same link
``quire ask --json`` gives, which reads back to the passage's page and quote; datastore passages,
which have no PDF, get none."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from engine.bibliography import Bibliography
from engine.links import parse_open_link
from engine.render.html import to_html
from engine.render.links import answer_links
from engine.render.markdown import to_markdown
from engine.types import Answer, AnswerMode, AnswerSentence, Citation, PageRect, Rect, Reference

PAPER = "a1b2c3d4e5f60718"
PASSAGES = (Reference(1, f"{PAPER}-0003", PAPER, "library", Bibliography("Dense retrieval"),
                      "Dense retrieval maps questions and passages\ninto one space.", page=3, page_end=4),
            Reference(1, f"{PAPER}-0009", PAPER, "library", Bibliography("Dense retrieval"),
                      "It beats BM25 on open questions.", page=7),
            Reference(2, "cs-00042", "cs-00042", "cs-sample", Bibliography("A datastore record"),
                      "A record's abstract says so.", page=None))


def answer() -> Answer:
    on_page_4 = (PageRect(4, Rect(72, 90, 300, 102)),)
    sentences = (AnswerSentence("It maps both into one space [1].", (
                     Citation(1, f"{PAPER}-0003", "questions and passages\ninto one space.", 21, 59, 0.9,
                              on_page_4),), True),
                 AnswerSentence("It beats BM25 [1] and records agree [2].", (
                     Citation(1, f"{PAPER}-0009", "It beats BM25", 0, 13, 0.8),
                     Citation(2, "cs-00042", "A record's abstract says so.", 0, 28, 0.7)), True))
    return Answer(question="How does dense retrieval work?", text="", sentences=sentences, references=PASSAGES,
                  mode=AnswerMode.WRITTEN)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a" and dict(attrs).get("href"):
            self.hrefs.append(str(dict(attrs)["href"]))


def test_each_cited_library_passage_has_its_link_in_both_exports() -> None:
    expected = answer_links(answer())
    assert set(expected) == {f"{PAPER}-0003", f"{PAPER}-0009"}, "the datastore passage has no PDF to open"
    markdown_links = re.findall(r"\]\(<(quire://[^>]*)>\)", to_markdown(answer()))
    parser = _Links()
    parser.feed(to_html(answer()))
    html_links = [href for href in parser.hrefs if href.startswith("quire:")]
    assert markdown_links == html_links == list(expected.values())

    first, second = (parse_open_link(link) for link in markdown_links)
    assert (first.paper, first.page, first.passage) == (PAPER, 4, f"{PAPER}-0003")  # the quote's own page
    assert first.quote == "questions and passages into one space."
    assert (second.page, second.passage, second.quote) == (7, f"{PAPER}-0009", "It beats BM25")
    assert "Open in Quire: [p. 4](<" in to_markdown(answer())


def test_the_apps_own_answer_view_has_no_open_links() -> None:
    parser = _Links()
    parser.feed(to_html(answer(), open_links=False))
    assert not [href for href in parser.hrefs if href.startswith("quire:")]
