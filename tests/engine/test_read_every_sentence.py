"""Where a read is cheap (a GPU), the writer reads every written sentence against its cited passage and
its verdict is the one shown; on a CPU only the sentences the judge leaves unsupported are read.

The judge is the shipped one on real passages; the reader is a stand-in whose answer per passage is
fixed, so each test says what the reader decided and checks what verification does with it.
"""

from __future__ import annotations

from functools import cache

from fixtures.models import minilm

from engine.bibliography import Bibliography
from engine.cite.support import SupportScorer
from engine.cite.verify import Verifier, VerifyReport, verify_text
from engine.synthesis.support_reader import CHEAP_READ_SECONDS, reads_every_sentence
from engine.types import Reference

S2ORC = ("We introduce S2ORC, a large corpus of 81.1M English-language academic papers spanning many academic "
         "disciplines. The corpus consists of rich metadata, paper abstracts, resolved bibliographic references, "
         "as well as structured full text for 8.1M open access papers.")
STATED = "S2ORC is a large corpus of 81.1M English-language academic papers [1]."


@cache
def scorer() -> SupportScorer:
    return SupportScorer(minilm())


def sources() -> dict[int, Reference]:
    return {1: Reference(1, "p1", "d1", "library", Bibliography("S2ORC"), S2ORC, page=1)}


class Reader:
    def __init__(self, score: float | None) -> None:
        self.score = score
        self.asked: list[str] = []

    def __call__(self, claim: str, passage: str) -> float | None:
        self.asked.append(claim)
        return self.score


def test_the_rule_reads_every_sentence_on_a_gpu_or_when_a_read_is_measured_cheap() -> None:
    assert reads_every_sentence(offloaded=True, seconds_per_read=None)
    assert reads_every_sentence(offloaded=False, seconds_per_read=0.01)
    assert not reads_every_sentence(offloaded=False, seconds_per_read=None)  # nothing measured yet: a CPU's rule
    assert not reads_every_sentence(offloaded=False, seconds_per_read=2.0)  # a 2-core CPU's read
    assert not reads_every_sentence(offloaded=False, seconds_per_read=CHEAP_READ_SECONDS)


def test_on_a_cpu_a_supported_sentence_costs_no_read() -> None:
    reader = Reader(None)
    [sentence] = verify_text(STATED, sources(), Verifier(scorer(), reader=reader))
    assert sentence.support == "supported" and not reader.asked


def test_reading_every_sentence_a_reader_that_does_not_say_no_keeps_the_citation() -> None:
    asked: list[str] = []

    def veto(claim: str, passage: str) -> bool:
        asked.append(claim)
        return False

    [sentence] = verify_text(STATED, sources(), Verifier(scorer(), reader=Reader(None), veto=veto))
    assert sentence.support == "supported" and [c.n for c in sentence.citations] == [1]
    assert asked  # read although the judge had supported it


def test_reading_every_sentence_the_readers_no_is_the_verdict_shown() -> None:
    report = VerifyReport()
    [sentence] = verify_text(STATED, sources(),
                             Verifier(scorer(), reader=Reader(None), veto=lambda _c, _p: True), report=report)
    assert sentence.support == "unsupported" and not sentence.citations
    assert report.dropped == 1 and not sentence.contradictions  # not read as support is not "says otherwise"


def test_the_readers_no_is_a_low_score_not_a_missed_acceptance() -> None:
    """The 1.5B writer scores true sentences 0.1-0.2 (benchmarks/results/support_read_cost.json): below its
    acceptance threshold, above its veto bar; only a clear no overrules the judge."""
    from engine.synthesis.support_reader import SUPPORTED, VETO_BELOW, SupportReader

    class Replies:
        def __init__(self, fully: float) -> None:
            self.fully = fully

        def reply_probabilities(self, _messages: object, _replies: object) -> list[float]:
            return [self.fully, 0.0, 1 - self.fully]

    assert VETO_BELOW < 0.16 < SUPPORTED
    assert not SupportReader(Replies(0.16)).vetoes(STATED, S2ORC)  # type: ignore[arg-type]
    assert SupportReader(Replies(0.16))(STATED, S2ORC) is None  # type: ignore[arg-type]
    assert SupportReader(Replies(0.05)).vetoes(STATED, S2ORC)  # type: ignore[arg-type]


def test_a_read_is_measured_on_the_loaded_model_that_keeps_it_and_on_no_other() -> None:
    from engine.synthesis.support_reader import SupportReader, measured_read_seconds

    class Replies:
        def reply_probabilities(self, _messages: object, replies: object) -> list[float]:
            return [0.9, 0.05, 0.05]

    class Kept(Replies):
        fastest_read_seconds: float | None = None

    kept, plain = Kept(), Replies()
    SupportReader(kept)("A claim.", S2ORC)  # type: ignore[arg-type]
    SupportReader(plain)("A claim.", S2ORC)  # type: ignore[arg-type]
    seconds = measured_read_seconds(kept)
    assert seconds is not None and seconds < CHEAP_READ_SECONDS  # a stand-in reads in no time
    assert measured_read_seconds(plain) is None  # a model that keeps no time never switches the rule
