"""Retrieval while writing (engine.synthesis.ralm): the passage block is swapped as the draft goes, and every
citation still names the passage its sentence was written from; a Stop during a search ends the draft.

The fake model continues its own reply (a last assistant message) the way LlamaModel does, writes each
sentence by copying a quote of the passage it finds in the evidence shown when the sentence starts, and
counts prompt tokens like llama.cpp's prefix cache (whitespace words), so the tests see what a swap costs."""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.bibliography import Bibliography
from engine.cite.markers import cited_numbers
from engine.cite.support import SupportScorer
from engine.embed import HashingEmbedder
from engine.generate.base import ChatMessage, Completion, TokenCallback
from engine.progress import CancelToken
from engine.synthesis.evidence import Evidence, Quote
from engine.synthesis.options import AskOptions
from engine.synthesis.pipeline import ask
from engine.synthesis.ralm import SENTENCE_END, RetrievalWhileWriting, RetrievingWriter, _Block, compose
from engine.synthesis.steps import Callbacks, PassageTools, choose_evidence, found_while_writing, write_draft
from engine.synthesis.write import WriterOptions
from engine.types import Reference, SearchHit

ALPHA = ("Alpha kinase phosphorylates the ribosomal protein in dividing yeast cells. "
         "The alpha kinase is active only during the growth phase.")
GAMMA = ("Gamma secretase cleaves the membrane receptor in yeast cells. "
         "Gamma secretase needs calcium for its activity.")
BETA = ("Beta arrestin binds the phosphorylated ribosomal protein after alpha kinase acts in yeast cells. "
        "Beta arrestin then moves the protein to the nucleus.")
QUESTION = "What do the alpha kinase and its partners do to the ribosomal protein in yeast cells?"


def hit(passage_id: str, text: str, title: str) -> SearchHit:
    return SearchHit(passage_id, f"doc-{passage_id}", "library", Bibliography(title), text, score=1.0, page=1)


HITS = {"alpha": hit("p-alpha", ALPHA, "Alpha paper"), "gamma": hit("p-gamma", GAMMA, "Gamma paper"),
        "beta": hit("p-beta", BETA, "Beta paper")}


class Library:
    """The question finds alpha and gamma; a query that mentions phosphorylation (what the draft says
    once alpha is written about) finds beta first: only retrieval while writing can find it."""

    def __init__(self, cancel_on_search: CancelToken | None = None) -> None:
        self.queries: list[str] = []
        self.cancel_on_search = cancel_on_search

    def retrieve(self, query: str, k: int) -> list[SearchHit]:
        self.queries.append(query)
        return [HITS["alpha"], HITS["gamma"]][:k]

    def search(self, query: str, k: int) -> list[SearchHit]:
        self.queries.append(query)
        if self.cancel_on_search is not None:  # a Stop arrives while this search runs; search raises as Engine's
            self.cancel_on_search.cancel()
            self.cancel_on_search.check()
        if "phosphorylates" in query.lower():
            return [HITS["beta"], HITS["alpha"]][:k]
        return [HITS["alpha"], HITS["gamma"]][:k]


_LINE = re.compile(r"^\[(\d+)\] [^:]*: \"([^\"]+)\"", re.MULTILINE)


class ContinuingLM:
    """Writes one sentence per topic word: a copy of the first quote shown that contains the word, ending
    with that passage's [n]; continues a last assistant message from where it stopped."""

    def __init__(self, topics: Sequence[str]) -> None:
        self.topics = list(topics)
        self.planned: list[str] = []  # the reply's words so far, as this model means them
        self.calls: list[list[ChatMessage]] = []
        self.previous: list[str] = []

    model_id = "continuing"
    context_size = 4096

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def chat(self, messages: Sequence[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0,
             stop: Sequence[str] = (), on_token: TokenCallback | None = None,
             cancel: CancelToken | None = None) -> Completion:
        self.calls.append(list(messages))
        started = messages[-1].content if messages[-1].role == "assistant" else ""
        head = messages[:-1] if started else messages
        flat = "".join(f"<{m.role}> {m.content} </{m.role}> " for m in head).split()
        prompt = [*flat, "<assistant>", *started.split()]
        assert started.split() == self.planned[:len(started.split())], "the writer must hand back the draft as written"
        common = next((i for i, (a, b) in enumerate(zip(prompt, self.previous, strict=False)) if a != b),
                      min(len(prompt), len(self.previous)))
        done = len(started.split())
        pieces: list[str] = []
        finish = "length"
        while len(pieces) < max_tokens:
            if cancel is not None and cancel.cancelled:
                finish = "cancelled"
                break
            if done + len(pieces) == len(self.planned):  # a sentence ends here: start the next from what is shown
                if not self.topics:
                    finish = "stop"
                    break
                self.planned.extend(self._sentence(self.topics.pop(0), messages[1].content).split())
            word = self.planned[done + len(pieces)]
            piece = word if done + len(pieces) == 0 else " " + word
            pieces.append(piece)
            if on_token is not None:
                on_token(piece)
        text = "".join(pieces)
        self.previous = prompt + text.split()
        return Completion(text, len(prompt), len(prompt) - common, len(pieces), 0.0, 0.0,
                          cancelled=finish == "cancelled", finish_reason=finish)

    @staticmethod
    def _sentence(topic: str, user: str) -> str:
        for number, quote in _LINE.findall(user):
            first = re.split(r"(?<=\.) ", quote)[0]
            if topic in first.lower():
                return f"{first[:-1]} [{number}]."
        return f"Nothing on {topic} here."


def options(stride: int = 4) -> AskOptions:
    return AskOptions(relevance_threshold=0.2, judge_answers=False, read_unsupported=False,
                      writer=WriterOptions(answer_tokens=60, max_quotes=2),
                      while_writing=RetrievalWhileWriting(stride=stride, passages=2))


def scorer() -> SupportScorer:
    return SupportScorer(HashingEmbedder())


def draft(lm: ContinuingLM, library: Library, stride: int = 4, cancel: CancelToken | None = None):  # type: ignore[no-untyped-def]
    opts = options(stride)
    hits = library.retrieve(QUESTION, 12)
    chosen = choose_evidence(QUESTION, hits, scorer(), opts)
    outcome = write_draft(QUESTION, lm, chosen, chosen.evidence,
                          PassageTools(library.retrieve, scorer(), search_while_writing=library.search), opts,
                          Callbacks(cancel=cancel))
    return outcome, chosen


def test_a_sentence_written_after_a_swap_cites_the_new_passage_and_earlier_citations_keep_theirs() -> None:
    lm, library = ContinuingLM(["alpha", "beta"]), Library()
    outcome, chosen = draft(lm, library)
    numbers = {r.passage_id: r.n for r in chosen.references}
    assert numbers["p-alpha"] == 1 and numbers["p-gamma"] == 2 and numbers["p-beta"] == 3  # the next free number
    first, second = re.split(r"(?<=\.) ", outcome.draft.strip())
    assert first.startswith("Alpha kinase phosphorylates") and cited_numbers(first) == [1]
    assert second.startswith("Beta arrestin binds") and cited_numbers(second) == [3]
    # The passage the second sentence cites was never shown before the swap, and is handed to verification.
    assert "Beta arrestin" not in lm.calls[0][1].content
    assert [e.reference.passage_id for e in outcome.extra] == ["p-beta"]
    # The search used the draft's last words beside the question.
    assert any("phosphorylates" in query for query in library.queries)


def test_the_swap_keeps_what_the_draft_cites_first_and_recomputes_only_from_the_block() -> None:
    lm, library = ContinuingLM(["alpha", "beta"]), Library()
    outcome, _ = draft(lm, library)
    swapped = [i for i, s in enumerate(outcome.steps) if s.step == "write (after a swap)"]
    assert swapped, [s.step for s in outcome.steps]
    call = lm.calls[len([s for s in outcome.steps[:swapped[0]] if s.step.startswith("write")])]
    block = call[1].content.split("Evidence:\n", 1)[1]
    assert block.index("[1]") < block.index("[3]")  # the cited passage stays, in its place, before the new one
    assert "Task:" in call[1].content.split("Evidence:")[0]  # the task comes before the block a swap changes
    step = outcome.steps[swapped[0]]
    recomputed_from = call[1].content.split("Evidence:\n", 1)[1]
    # Only the block and the draft are evaluated again: not the system message, the question or the task.
    assert 0 < step.prompt_tokens_evaluated <= len(recomputed_from.split()) + len(outcome.draft.split()) + 2
    unswapped = [s for s in outcome.steps if s.step == "write (continued)"]
    assert all(s.prompt_tokens_evaluated == 0 for s in unswapped)  # nothing changed: all from the cache


def test_the_answer_verified_after_swaps_cites_each_sentence_to_its_own_passage() -> None:
    lm, library = ContinuingLM(["alpha", "beta"]), Library()
    answer = ask(QUESTION, retrieve=library.retrieve, scorer=scorer(), language_model=lambda: lm,
                 options=AskOptions(**{**vars(options()), "mode": "write"}), search_while_writing=library.search)
    written = [s for s in answer.sentences if s.citations and not s.text.startswith("“")]
    by_text = {s.text.split()[0]: {answer.passage(c.passage_id).passage_id for c in s.citations} for s in written}
    assert by_text["Alpha"] == {"p-alpha"}
    assert by_text["Beta"] == {"p-beta"}
    assert all(s.supported for s in written)


def test_at_sentence_ends_the_draft_pauses_once_per_sentence_with_its_marker() -> None:
    lm, library = ContinuingLM(["alpha", "beta"]), Library()
    outcome, _ = draft(lm, library, stride=SENTENCE_END)
    writes = [s for s in outcome.steps if s.step.startswith("write")]
    assert len(writes) == 2  # one pause: once the second sentence began, after the first one's [1]
    first = "Alpha kinase phosphorylates the ribosomal protein in dividing yeast cells [1]."
    # This model chose its second sentence's source before the search (its first word was written), so it
    # found no beta passage; the pause came with the marker kept in its sentence.
    assert lm.calls[1][-1] == ChatMessage("assistant", first + " Nothing")
    assert outcome.draft.startswith(first)


def test_a_stop_during_a_search_ends_the_draft_with_what_was_written() -> None:
    cancel = CancelToken()
    lm, library = ContinuingLM(["alpha", "beta"]), Library(cancel_on_search=cancel)
    outcome, _ = draft(lm, library, cancel=cancel)
    assert outcome.cancelled
    assert len(lm.calls) == 1  # no writing after the Stop
    assert outcome.draft == "Alpha kinase phosphorylates the"


def test_a_stop_during_a_search_gives_a_cancelled_answer_that_keeps_the_draft() -> None:
    cancel = CancelToken()
    lm, library = ContinuingLM(["alpha", "beta"]), Library(cancel_on_search=cancel)
    answer = ask(QUESTION, retrieve=library.retrieve, scorer=scorer(), language_model=lambda: lm,
                 options=AskOptions(**{**vars(options()), "mode": "write"}), cancel=cancel,
                 search_while_writing=library.search)
    assert answer.cancelled
    assert "Alpha kinase phosphorylates the" in answer.text


def test_the_search_finding_the_shown_passages_swaps_nothing() -> None:
    lm = ContinuingLM(["alpha", "gamma"])
    library = Library()
    library.search = library.retrieve  # type: ignore[method-assign]  # always alpha and gamma
    outcome, _ = draft(lm, library)
    assert not [s for s in outcome.steps if s.step == "write (after a swap)"]
    assert outcome.extra == []
    assert sum(s.prompt_tokens_evaluated for s in outcome.steps if s.step.startswith("write (")) == 0


def test_compose_never_drops_a_cited_passage_and_fills_the_rest_best_first() -> None:
    def evidence(n: int) -> Evidence:
        reference = Reference(n, f"p{n}", f"d{n}", "library", Bibliography(f"T{n}"), "text", 1)
        return Evidence(reference, (Quote(n, 0, 4, "text", 0.5, 0.5),), 0.5)

    shown = _Block([(1, evidence(1).quotes), (2, evidence(2).quotes), (3, evidence(3).quotes)])
    block = compose(shown, {3, 1}, [evidence(5), evidence(1), evidence(6)], max_quotes=3)
    assert block.numbers == (1, 3, 5)
    assert compose(shown, {1, 2, 3}, [evidence(5)], max_quotes=2).numbers == (1, 2, 3)  # cited beats the budget


def test_retrieving_writer_reports_searches_and_swaps() -> None:
    lm, library = ContinuingLM(["alpha", "beta"]), Library()
    opts = options()
    chosen = choose_evidence(QUESTION, library.retrieve(QUESTION, 12), scorer(), opts)
    find = found_while_writing(QUESTION, chosen.references, library.search, scorer(), opts)
    writer = RetrievingWriter(lm, opts.writer, opts.while_writing, find)
    outcome = writer.write(QUESTION, [q for e in chosen.evidence for q in e.quotes],
                           {e.reference.n: e.reference.bib.title for e in chosen.evidence})
    assert writer.cost.searches >= 2 and writer.cost.swaps >= 1
    resumed = [s for s in outcome.steps if s.step.startswith("write (")]
    assert writer.cost.recomputed == sum(s.prompt_tokens_evaluated for s in resumed)
