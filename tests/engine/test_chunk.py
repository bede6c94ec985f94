"""The streaming chunker on small hand-made inputs: boundaries, sizes, spans, hyphens, sections."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.ingest.chunk import (
    Chunker,
    continues_word,
    ends_sentence,
    is_split_compound,
    is_split_word,
    starts_sentence,
)
from engine.types import Passage, Rect

WORDS_PER_LINE = 7


def sentence(number: int) -> list[str]:
    """Ten words ending in a full stop: 'Sentence 3 has exactly ten words in it right here.'"""
    return f"Sentence {number} has exactly ten words in it right here.".split()


def as_lines(words: Sequence[str], per_line: int = WORDS_PER_LINE) -> list[list[str]]:
    return [list(words[i:i + per_line]) for i in range(0, len(words), per_line)]


def add(chunker: Chunker, line: Sequence[str], row: int, page: int = 1, *, new_block: bool = False) -> None:
    """Add one line at ``row`` on ``page``: words 40pt apart, rows 12pt apart."""
    # Words as PyMuPDF gives them: (x0, y0, x1, y1, text, block, line, word).
    boxes = [(10 + 40 * i, 12 * row, 40 + 40 * i, 12 * row + 10, word, 0, row, i) for i, word in enumerate(line)]
    chunker.add_line(boxes, page, Rect(10, 12 * row, 40 + 40 * (len(line) - 1), 12 * row + 10), new_block=new_block)


def chunk(lines: Sequence[Sequence[str]], target: int = 50, *, blocks: Sequence[int] = ()) -> list[Passage]:
    """Feed ``lines`` (new blocks at the indexes in ``blocks``) and collect every passage."""
    chunker = Chunker("doc", "A Title", target_words=target)
    out: list[Passage] = []
    for row, line in enumerate(lines):
        add(chunker, line, row, new_block=row in blocks)
        out.extend(chunker.passages())
    out.extend(chunker.finish())
    return out


def words_of(passage: Passage) -> list[str]:
    return [passage.text[w.start:w.end] for w in passage.words]


def assert_consistent(passages: Sequence[Passage]) -> None:
    """Spans increase without overlapping, and each word's span is exactly that word in the text."""
    previous_end = -1
    for ordinal, passage in enumerate(passages):
        assert passage.ordinal == ordinal and passage.id == f"doc-{ordinal:04d}"
        assert passage.char_start == previous_end + 1  # one separator between passages
        assert passage.char_end - passage.char_start == len(passage.text)
        previous_end = passage.char_end
        last_end = 0
        for word in passage.words:
            token = passage.text[word.start:word.end]
            assert token and token == token.strip() and word.start >= last_end
            # Only a separator (or nothing, inside a hyphen-joined word) lies between two words.
            assert passage.text[last_end:word.start] in ("", " ", "\n")
            last_end = word.end
        assert last_end == len(passage.text)


# --- sentence boundaries and sizes ----------------------------------------------------------


def test_passages_end_on_sentence_boundaries_and_respect_the_target() -> None:
    words = [w for n in range(30) for w in sentence(n)]
    passages = chunk(as_lines(words), target=50)
    assert len(passages) > 3
    for passage in passages:
        assert ends_sentence(words_of(passage)[-1])
        assert words_of(passage)[0] == "Sentence"
    for passage in passages[:-1]:
        assert 50 <= len(passage.words) <= 80  # target .. 1.6 x target
    assert [w for p in passages for w in words_of(p)] == words  # nothing lost, nothing doubled
    assert_consistent(passages)


def test_a_passage_closes_in_the_middle_of_a_line_and_the_next_starts_after_it() -> None:
    # With 7-word lines the tenth word (a sentence end) is mid-line: passages close there.
    words = [w for n in range(12) for w in sentence(n)]
    passages = chunk(as_lines(words), target=20)
    text = passages[0].text + " " + passages[1].text
    assert passages[1].char_start == passages[0].char_end + 1
    assert text.startswith("Sentence 0 ") and passages[1].text.startswith("Sentence 2 ")
    assert_consistent(passages)


def test_a_sentence_longer_than_the_maximum_is_cut() -> None:
    words = [f"word{i}" for i in range(200)]  # no full stop anywhere: the cut must be forced
    passages = chunk(as_lines(words), target=50)
    assert [len(p.words) for p in passages] == [80, 80, 40]
    assert_consistent(passages)


def test_a_short_tail_joins_the_passage_before() -> None:
    words = [w for n in range(5) for w in sentence(n)] + "A short tail of seven words here.".split()
    passages = chunk(as_lines(words), target=50)
    assert len(passages) == 1 and len(passages[0].words) == 57
    assert passages[0].text.endswith("A short tail of seven words here.")
    assert_consistent(passages)


def test_a_long_tail_stays_a_passage_of_its_own() -> None:
    words = [w for n in range(8) for w in sentence(n)]  # 50 + 30: the tail is not short
    passages = chunk(as_lines(words), target=50)
    assert [len(p.words) for p in passages] == [50, 30]
    assert_consistent(passages)


def test_a_block_start_after_a_sentence_end_closes_a_passage() -> None:
    body = [w for n in range(5) for w in sentence(n)]  # 50 words, then a heading
    lines = [*as_lines(body, 10), ["2", "Method"], sentence(9)]
    passages = chunk(lines, target=50, blocks={0, 5, 6})
    assert passages[0].text.endswith("in it right here.")
    assert passages[1].text.startswith("2 Method\nSentence 9")


def test_a_block_start_mid_sentence_does_not_close_a_passage() -> None:
    # Some producers put every line in its own block: a block start is not a sentence end.
    words = [w for n in range(6) for w in sentence(n)]
    words[50:50] = ["continues"]  # word 50 is now mid-sentence: "...in it here. continues Sentence 5"
    lines = [*as_lines(words[:45], 9), ["and", "so", "on", "to", "the"], ["middle", "of"], *as_lines(words[45:], 9)]
    passages = chunk(lines, target=50, blocks=set(range(len(lines))))
    for passage in passages[:-1]:
        assert ends_sentence(words_of(passage)[-1])
    assert_consistent(passages)


# --- characters, words and rectangles -------------------------------------------------------


def test_block_starts_separate_lines_with_a_newline_and_lines_with_a_space() -> None:
    passages = chunk([["Heading"], ["First", "line"], ["second", "line."]], blocks={0, 1})
    assert passages[0].text == "Heading\nFirst line second line."
    assert passages[0].search_text == "A Title\nHeading\nFirst line second line."


def test_each_line_has_one_rectangle_and_each_word_its_box() -> None:
    passages = chunk([["One", "two", "three"], ["four", "five."]])
    passage = passages[0]
    assert [r.rect for r in passage.rects] == [Rect(10, 0, 120, 10), Rect(10, 12, 80, 22)]
    start = passage.text.index("five.")
    assert passage.rects_for_span(start, start + 5) == ((1, Rect(50, 12, 80, 22)),)
    span = passage.rects_for_span(passage.text.index("two"), passage.text.index("four") + 4)
    assert [r.rect for r in span] == [Rect(50, 0, 120, 10), Rect(10, 12, 40, 22)]


def test_passages_record_their_pages() -> None:
    chunker = Chunker("doc", "", target_words=20)
    add(chunker, sentence(0), 0, page=3)
    add(chunker, sentence(1), 1, page=4)
    [passage] = list(chunker.finish())
    assert (passage.page_start, passage.page_end) == (3, 4)
    assert {w.page for w in passage.words} == {3, 4}


# --- hyphenation ----------------------------------------------------------------------------


def test_end_of_line_hyphenation_is_repaired_and_both_halves_keep_their_boxes() -> None:
    passages = chunk([["A", "careful", "represen-"], ["tation", "of", "text."]])
    passage = passages[0]
    assert passage.text == "A careful representation of text."
    assert words_of(passage) == ["A", "careful", "represen", "tation", "of", "text."]
    start = passage.text.index("representation")
    rects = passage.rects_for_span(start, start + len("representation"))
    assert [r.rect for r in rects] == [Rect(90, 0, 120, 10), Rect(10, 12, 40, 22)]
    assert_consistent(passages)


def test_hyphenation_is_repaired_across_a_block_boundary() -> None:
    # A column that ends "sum-" and a next column (a new block) that starts "maries".
    passages = chunk([["model-generated", "sum-"], ["maries", "are", "judged."]], blocks={0, 1})
    assert passages[0].text == "model-generated summaries are judged."


def test_a_compound_broken_at_its_hyphen_keeps_it() -> None:
    passages = chunk([["the", "state-"], ["of-the-art", "model."]])
    assert passages[0].text == "the state-of-the-art model."


def test_a_compound_written_earlier_with_its_hyphen_keeps_it_at_a_line_end() -> None:
    # "pre-" is a bound prefix, so only the document's own spelling decides.
    passages = chunk([["the", "pre-mRNA", "is", "spliced", "and", "the", "pre-"], ["mrna", "decays."]])
    assert passages[0].text == "the pre-mRNA is spliced and the pre-mrna decays."
    assert chunk([["the", "pre-"], ["mrna", "decays."]])[0].text == "the premrna decays."


def test_a_word_whose_own_hyphen_ends_the_line_is_joined_without_a_space() -> None:
    # Names, acronyms and numbers keep their hyphen; a space there would read "Spn- E-EQ", "5- FU".
    passages = chunk([["mutant", "Spn-"], ["E-EQ", "and", "5-"], ["FU", "with", "RNA-"], ["coding", "GAIT-element-"],
                      ["bearing", "transcripts."]])
    assert passages[0].text == "mutant Spn-E-EQ and 5-FU with RNA-coding GAIT-element-bearing transcripts."
    start = passages[0].text.index("Spn-E-EQ")
    assert len(passages[0].rects_for_span(start, start + len("Spn-E-EQ"))) == 2  # both lines' boxes
    assert_consistent(passages)


def test_a_suspended_hyphen_keeps_its_space() -> None:
    passages = chunk([["both", "pre-"], ["and", "post-treatment,", "a", "2-"], ["to", "3-fold", "rise."]])
    assert passages[0].text == "both pre- and post-treatment, a 2- to 3-fold rise."


@pytest.mark.parametrize(("before", "after", "continues"), [
    ("Spn-", "E-EQ", True), ("5-", "FU", True), ("Wei-", "Jing", True), ("represen-", "tation", True),
    ("pre-", "and", False), ("2-", "to", False), ("pre-", "or,", False),
    ("-", "word", False),  # a dash on its own
    ("word", "next", False), ("word-", "(a)", False),
])
def test_continues_word(before: str, after: str, continues: bool) -> None:
    assert continues_word(before, after) is continues


@pytest.mark.parametrize(("before", "after", "split", "compound"), [
    ("represen-", "tation", True, False),
    ("state-", "of-the-art", True, True),
    ("end-", "to-end", True, True),
    ("Wei-", "Jing", False, False),  # a capital after the hyphen: a hyphenated name
    ("pre-", "Trained", False, False),
    ("sub-", "word", True, False),
    ("a-", "b", False, False),  # too short to be half a word
    ("x2-", "fold", False, False),  # a digit before the hyphen
    ("well-known-", "fact", False, False),  # already hyphenated: not a hyphenation break
    ("word", "next", False, False),
    ("pre-", "and", False, False),  # a suspended hyphen, not half a word
    # Both halves are English words and the joined word is none: the compound's own hyphen.
    ("virus-", "positive", True, True),
    ("(wild-", "type)", True, True),
    ("cross-", "linking,", True, True),
    # The joined word is English, or the first half is a bound prefix, or not a word at all.
    ("inter-", "action", True, False),
    ("trans-", "membrane", True, False),
    ("phosphor-", "ylation", True, False),
])
def test_split_word_rules(before: str, after: str, split: bool, compound: bool) -> None:
    assert is_split_word(before, after) is split
    assert is_split_compound(before, after) is compound


# --- sentence rules -------------------------------------------------------------------------


@pytest.mark.parametrize(("word", "ends"), [
    ("end.", True), ("end?", True), ("end!", True), ("(2019).", True), ("end.)", True), ("“quoted.”", True),
    ("e.g.", False), ("et", False), ("al.", False), ("Fig.", False), ("i.e.", False), ("A.", False),
    ("3.5", False), ("end,", False), ("", False),
])
def test_ends_sentence(word: str, ends: bool) -> None:
    assert ends_sentence(word) is ends


@pytest.mark.parametrize(("word", "starts"), [
    ("The", True), ("2", True), ("(a)", True), ("“Quoted", True), ("lower", False), ("—", False),
])
def test_starts_sentence(word: str, starts: bool) -> None:
    assert starts_sentence(word) is starts


def test_at_sentence_end_follows_the_last_word_added() -> None:
    chunker = Chunker("doc", "")
    add(chunker, ["A", "sentence", "that"], 0)
    assert not chunker.at_sentence_end
    add(chunker, ["ends", "here."], 1)
    assert chunker.at_sentence_end


# --- sections -------------------------------------------------------------------------------


def test_references_never_share_a_passage_with_body_text() -> None:
    chunker = Chunker("doc", "", target_words=50)
    body = [w for n in range(6) for w in sentence(n)] + ["Short", "body", "tail."]
    for row, line in enumerate(as_lines(body)):
        add(chunker, line, row)
    chunker.start_section(is_reference=True)
    references = "[1] A. Author. 2020. A title. [2] B. Author. 2021. Another title.".split()
    for row, line in enumerate(as_lines(references * 3), start=20):
        add(chunker, line, row)
    passages = list(chunker.passages()) + list(chunker.finish())
    flags = [p.is_reference for p in passages]
    assert flags == sorted(flags)  # body first, then references, never interleaved
    body_passages = [p for p in passages if not p.is_reference]
    assert body_passages[-1].text.endswith("Short body tail.")
    assert all("[1]" not in p.text for p in body_passages)
    assert all(p.text.startswith("[1]") for p in passages if p.is_reference)
    assert_consistent(passages)


def test_a_short_body_tail_is_not_merged_into_the_references() -> None:
    chunker = Chunker("doc", "", target_words=50)
    for row, line in enumerate(as_lines([w for n in range(5) for w in sentence(n)] + ["Tail."])):
        add(chunker, line, row)
    chunker.start_section(is_reference=True)
    add(chunker, ["[1]", "Only", "reference."], 30)
    passages = list(chunker.passages()) + list(chunker.finish())
    assert [p.is_reference for p in passages] == [False, True]  # the tail joined the body, not the list
    assert passages[0].text.endswith("right here.\nTail.")
    assert passages[1].text == "[1] Only reference."


def test_an_appendix_after_the_references_is_body_again() -> None:
    chunker = Chunker("doc", "", target_words=20)
    chunker.start_section(is_reference=True)
    add(chunker, ["[1]", "A", "reference."], 0)
    chunker.start_section(is_reference=False)
    add(chunker, ["A", "Appendix", "text."], 1, new_block=True)
    passages = list(chunker.passages()) + list(chunker.finish())
    assert [(p.text, p.is_reference) for p in passages] == [("[1] A reference.", True), ("A Appendix text.", False)]


# --- any input ------------------------------------------------------------------------------

_word = st.one_of(
    st.sampled_from(["the", "model", "works.", "Results", "e.g.", "Fig.", "(2019).", "repre-", "sen-", "tation",
                     "state-", "of-the-art", "Wei-", "[1]", "3.5", "“Quote.”", "x"]),
    st.text(alphabet=st.characters(categories=["L", "N", "P"]), min_size=1, max_size=12),
)


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.tuples(st.lists(_word, min_size=1, max_size=12), st.booleans()), max_size=60),
       target=st.integers(20, 60), reference_at=st.integers(0, 70))
def test_any_input_gives_consistent_passages(lines: list[tuple[list[str], bool]], target: int,
                                             reference_at: int) -> None:
    chunker = Chunker("doc", "T", target_words=target)
    passages: list[Passage] = []
    for row, (line, new_block) in enumerate(lines):
        if row == reference_at:
            chunker.start_section(is_reference=True)
        add(chunker, line, row, new_block=new_block)
        passages.extend(chunker.passages())
    passages.extend(chunker.finish())
    assert_consistent(passages)
    # A word joined across a line break has a box on each line; count it once.
    whole_words = [sum(w.start == 0 or p.text[w.start - 1] in " \n" for w in p.words) for p in passages]
    assert all(count <= int(max(20, target) * 1.6) for count in whole_words)
    assert sum(len(p.words) for p in passages) >= sum(len(line) for line, _ in lines)
    flags = [p.is_reference for p in passages]
    assert flags == sorted(flags)
