"""Citation markers and sentence spans: golden cases, rewriting, and the streaming filter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from engine.cite.markers import StreamFilter, cited_numbers, find_markers, format_marker, rewrite_markers, strip_markers
from engine.cite.sentences import split_sentences, split_spans

CASES = json.loads((Path(__file__).parents[1] / "data" / "citation_markers.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["text"][:30] for c in CASES])
def test_marker_golden_cases(case: dict) -> None:
    assert [list(m.numbers) for m in find_markers(case["text"])] == case["markers"]
    assert cited_numbers(case["text"]) == case["numbers"]


def test_rewrite_removes_unknown_numbers_and_empty_markers() -> None:
    text = "SPECTER learns embeddings [1, 7]. It was invented [9]. S2ORC is large [2]."
    assert rewrite_markers(text, lambda n: n if n in (1, 2) else None) == \
        "SPECTER learns embeddings [1]. It was invented. S2ORC is large [2]."


def test_strip_and_format() -> None:
    assert strip_markers("A claim [1][2] and more [3-4].") == "A claim and more."
    assert format_marker([3, 1, 3]) == "[3, 1]"
    assert format_marker([]) == ""


def test_sentence_spans_keep_abbreviations_decimals_and_trailing_markers() -> None:
    text = "Cohan et al. (2020) propose SPECTER, e.g. for papers. It gains 3.5 points [1]. Really? Next. [2] Last one"
    assert split_sentences(text) == [
        "Cohan et al. (2020) propose SPECTER, e.g. for papers.", "It gains 3.5 points [1].", "Really?",
        "Next. [2]", "Last one"]
    for span in split_spans(text):
        assert text[span.start:span.end].strip() == text[span.start:span.end]


def test_stream_filter_never_lets_an_unknown_number_through() -> None:
    stream = StreamFilter({1, 2})
    pieces = ["SPEC", "TER [", " 1", ", 7] works [9", "]. See [a] and [2][3]. [Fig 2] end ["]
    shown = "".join(stream.feed(p) for p in pieces) + stream.flush()
    assert cited_numbers(shown) == [1, 2]
    assert "[a]" in shown and "[Fig 2]" in shown and shown.endswith("[")


@given(st.text(alphabet="ab [],-1234567890.", max_size=60), st.sets(st.integers(1, 9)))
@example("[[0]", set())  # a bracket inside a held one once let "[0]" through
@example("[[0]0]", set())  # an unknown marker removed inside a held bracket once left it "[" + "0]"
def test_stream_filter_output_cites_only_valid_numbers(text: str, valid: set[int]) -> None:
    stream = StreamFilter(valid)
    shown = "".join(stream.feed(ch) for ch in text) + stream.flush()
    assert set(cited_numbers(shown)) <= valid


@given(st.text(max_size=200))
def test_split_spans_are_ordered_and_inside_the_text(text: str) -> None:
    previous = 0
    for span in split_spans(text):
        assert previous <= span.start < span.end <= len(text)
        previous = span.end
