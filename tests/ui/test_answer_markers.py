"""Every number of a citation marker becomes a link in the answer view, ranges and dashes included."""

from __future__ import annotations

import re

import pytest

from engine.bibliography import Bibliography
from engine.types import Answer, AnswerMode, AnswerSentence, Reference
from ui.answer_html import answer_html, cite_url


def _answer(text: str) -> Answer:
    references = tuple(Reference(n, f"d{n}-0001", f"d{n}", "library", Bibliography(f"Paper {n}"), f"Passage {n}.",
                                 page=1)
                       for n in (1, 2, 3))
    sentence = AnswerSentence(text, (), supported=True)
    return Answer("Which papers?", text, (sentence,), references, AnswerMode.WRITTEN, id="a1")


@pytest.mark.parametrize("marker", ["[1-3]", "[1–3]", "[1—3]", "[1, 2, 3]", "[1; 2-3]", "[ 1 - 3 ]"])
def test_each_number_a_marker_names_is_a_link(marker: str) -> None:
    markup = answer_html(_answer(f"Three papers agree {marker}."))
    for n in (1, 2, 3):
        assert f'href="{cite_url(n, 0)}"' in markup, f"{n} of {marker} is not linked"


def test_numbers_without_a_reference_and_other_brackets_are_left_as_text() -> None:
    markup = answer_html(_answer("See [Figure 2] and [7]."))
    assert "[Figure 2]" in markup and "[7]" in markup
    assert not re.search(r'href="quire://cite/(2|7)\?s=0"', markup)
