"""The direct answer keeps the sentence it leans on: the one before when it opens by pointing back to it,
the one after when that one continues it, never past the length a reading pane shows at once."""

from __future__ import annotations

from engine.bibliography import Bibliography
from engine.synthesis.digest import digest_sentences
from engine.synthesis.evidence import CONTEXT_CHARS, Evidence, Quote, direct_answers, in_context
from engine.synthesis.plan import Theme
from engine.synthesis.quotable import sentence_spans
from engine.types import Reference

# COVID-QA check paper 1556 (MERS-CoV diagnosis), as its text reads.
NAMED = "RT-LAMP has similar sensitivity as real time RT-PCR."
CONTINUES = "It is also highly specific and is used to detect MERS-CoV."
OTHER = "Four studies identified various other diagnostic methods for the virus in camels and humans."
DEFINES = "The convergence model combines the dynamics of urban, agricultural and natural ecosystems."
POINTS_BACK = "These interactions are the proximate drivers of disease emergence."


def evidence(*sentences: str, best: int, answer: float = 0.9) -> Evidence:
    text = " ".join(sentences)
    reference = Reference(1, "p1", "d1", "library", Bibliography("A paper"), text, page=1)
    quotes = tuple(Quote(1, s, e, text[s:e], 0.5, answer if i == best else 0.1)
                   for i, (s, e) in enumerate(sentence_spans(text)))
    return Evidence(reference, (quotes[best],), 0.5, sentences=quotes)


def test_a_sentence_that_points_back_comes_with_the_one_before() -> None:
    item = evidence(OTHER, DEFINES, POINTS_BACK, best=2)
    (direct,) = direct_answers([item])
    assert direct.text == f"{DEFINES} {POINTS_BACK}"
    assert item.reference.text[direct.start:direct.end] == direct.text  # one verbatim span: its highlight works


def test_a_sentence_the_next_one_continues_comes_with_it() -> None:
    (direct,) = direct_answers([evidence(NAMED, CONTINUES, OTHER, best=0)])
    assert direct.text == f"{NAMED} {CONTINUES}"


def test_a_sentence_that_stands_alone_is_quoted_alone() -> None:
    (direct,) = direct_answers([evidence(NAMED, OTHER, DEFINES, best=0)])
    assert direct.text == NAMED
    (first,) = direct_answers([evidence(POINTS_BACK, OTHER, best=0)])  # nothing before it to lean on
    assert first.text == POINTS_BACK


def test_context_never_makes_the_opening_longer_than_a_pane_shows() -> None:
    long_before = "The convergence model " + "combines many interacting factors of land use, " * 9 + "in one frame."
    item = evidence(long_before, POINTS_BACK, best=1)
    assert len(long_before) + len(POINTS_BACK) > CONTEXT_CHARS
    assert in_context(item.quotes[0], item).text == POINTS_BACK


def test_the_digest_does_not_show_the_added_sentence_twice() -> None:
    item = evidence(NAMED, CONTINUES, OTHER, best=0)
    direct = direct_answers([item])
    continues = next(q for q in item.sentences if q.text == CONTINUES)
    theme = Theme("Diagnosis", (continues, item.sentences[2]))
    sentences, _ = digest_sentences(direct, [theme], {1: item.reference})
    texts = [s.text for s in sentences]
    assert sum(CONTINUES in t for t in texts) == 1, texts


def test_two_asks_answered_by_adjacent_sentences_are_each_quoted_once() -> None:
    text = f"{NAMED} {CONTINUES} {OTHER}"
    reference = Reference(1, "p1", "d1", "library", Bibliography("A paper"), text, page=1)
    spans = sentence_spans(text)
    quotes = (Quote(1, *spans[0], text[slice(*spans[0])], 0.5, 0.9, ask=0),
              Quote(1, *spans[1], text[slice(*spans[1])], 0.5, 0.8, ask=1))
    item = Evidence(reference, quotes, 0.5, sentences=(*quotes, Quote(1, *spans[2], text[slice(*spans[2])], 0.5, 0.1)))
    assert [q.text for q in direct_answers([item])] == [NAMED, CONTINUES]


def test_a_heading_names_its_quote_topic_not_the_quote_again() -> None:
    """S2ORC's digest headed a section "The English language filter reduces GRO-BID parsing errors" over that
    very sentence; the heading is the noun phrase the best quote is about, over one quote or more."""
    filter_sentence = "The English language filter reduces GRO-BID parsing errors."
    text = f"{NAMED} {OTHER} {filter_sentence}"
    reference = Reference(1, "p1", "d1", "library", Bibliography("A paper"), text, page=1)
    quotes = [Quote(1, s, e, text[s:e], 0.5, 0.5) for s, e in sentence_spans(text)]
    alone = Theme("", (quotes[2],))
    _, headings = digest_sentences([quotes[0]], [alone], {1: reference})
    assert headings == ("Answer", "English language filter")
    together = Theme("", (quotes[2], quotes[1]))
    _, headings = digest_sentences([quotes[0]], [together], {1: reference})
    assert headings[1] == "English language filter"



def test_a_sentence_two_passages_print_alike_is_quoted_once() -> None:
    """PaperMage prints its "Grobid Subset" note twice; the digest over both passages showed it twice."""
    note = "The Grobid Subset limits evaluation to only categories for which Grobid returns bounding boxes."
    first = Reference(1, "p1", "d1", "library", Bibliography("A paper"), f"{NAMED} {note}", page=3)
    second = Reference(1, "p2", "d1", "library", Bibliography("A paper"), f"{note}  {OTHER}", page=7)
    start = first.text.index(note)
    theme = Theme("", (Quote(1, start, start + len(note), note, 0.5, 0.6), Quote(1, 0, len(note), note, 0.5, 0.5),
                       Quote(1, len(note) + 2, len(second.text), OTHER, 0.5, 0.4)))
    sentences, _ = digest_sentences([], [theme], {1: first})
    texts = [s.text for s in sentences]
    assert sum(note in t for t in texts) == 1 and any(OTHER in t for t in texts), texts
