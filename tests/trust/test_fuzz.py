"""Fuzzing: mutated PDF bytes through the real importer, and property tests for the chunker and
the citation parser.

A mutated PDF must end as a stored document or as a clean failure with a reason, within the
per-page time limit, in a worker whose memory is capped; never as an exception, a hang or a
damaged catalog.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from fixtures.pdfs import paper_text, text_pdf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cite.markers import MAX_RANGE, StreamFilter, defuse_markers, find_markers, rewrite_markers, strip_markers
from engine.importer import Importer, Outcome
from engine.ingest.chunk import Chunker
from engine.ingest.pipeline import IngestOptions
from engine.service import Engine

# --- mutated PDF bytes -------------------------------------------------------------------

_mutation = st.one_of(
    st.tuples(st.just("flip"), st.floats(0, 1), st.integers(1, 255)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 400)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("truncate"), st.floats(0.05, 1), st.just(0)),
    st.tuples(st.just("dup"), st.floats(0, 1), st.integers(1, 2000)),
)


def _mutate(data: bytes, mutations: list[tuple[str, float, object]]) -> bytes:
    buffer = bytearray(data)
    for kind, where, arg in mutations:
        at = min(int(where * len(buffer)), max(len(buffer) - 1, 0))
        if not buffer:
            break
        if kind == "flip":
            buffer[at] ^= int(arg)  # type: ignore[call-overload]
        elif kind == "delete":
            del buffer[at:at + int(arg)]  # type: ignore[call-overload]
        elif kind == "insert":
            buffer[at:at] = arg  # type: ignore[assignment]
        elif kind == "truncate":
            del buffer[at:]
        else:
            buffer[at:at] = buffer[at:at + int(arg)]  # type: ignore[call-overload]
    return bytes(buffer)


@pytest.fixture(scope="module")
def seed_pdf(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    folder = tmp_path_factory.mktemp("seed")
    pages = [paper_text(f"subject {n}", paragraphs=2) for n in range(3)]
    return text_pdf(folder / "seed.pdf", pages).read_bytes()


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=st.lists(_mutation, min_size=1, max_size=6))
def test_fuzz_mutated_pdf_bytes_end_as_a_document_or_a_clean_failure(
        seed_pdf: bytes, tmp_path: Path, mutations: list[tuple[str, float, object]]) -> None:
    folder = tmp_path / f"case-{time.monotonic_ns()}"
    folder.mkdir()
    path = folder / "mutated.pdf"
    path.write_bytes(_mutate(seed_pdf, mutations))
    with Engine(folder / "home") as engine:
        importer = Importer(engine.library, IngestOptions(parse_workers=1, page_timeout=20))
        [result] = importer.add([path])  # any exception here fails the test; a hang fails on the page time limit

        assert result.outcome in (Outcome.ADDED, Outcome.FAILED)
        if result.outcome == Outcome.FAILED:
            assert result.reason.strip(), "a failure must say why"
        assert engine.library.check_integrity() == []


# --- the chunker -------------------------------------------------------------------------

_word = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp")), min_size=1, max_size=12)
_line = st.tuples(st.lists(_word, min_size=1, max_size=14), st.booleans())


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(_line, min_size=1, max_size=120), target=st.integers(20, 80),
       sections=st.sets(st.integers(0, 119), max_size=3))
def test_fuzz_chunker_keeps_every_word_and_its_exact_span(lines: list[tuple[list[str], bool]], target: int,
                                                          sections: set[int]) -> None:
    chunker = Chunker("doc", "Title", target_words=target)
    passages = []
    fed = 0
    for row, (words, new_block) in enumerate(lines):
        if row in sections:
            chunker.start_section(is_reference=row % 2 == 0)
        boxes = [(10.0 + 30 * i, 12.0 * row, 35.0 + 30 * i, 12.0 * row + 10, word, 0, row, i)
                 for i, word in enumerate(words)]
        chunker.add_line(boxes, 1 + row // 40, (10.0, 12.0 * row, 35.0 + 30 * len(words), 12.0 * row + 10),
                         new_block=new_block)
        fed += len(words)
        passages.extend(chunker.passages())
    passages.extend(chunker.finish())

    assert sum(len(p.words) for p in passages) == fed  # no word lost or doubled
    previous_end = -1
    for ordinal, passage in enumerate(passages):
        assert passage.ordinal == ordinal
        assert passage.char_start > previous_end and passage.char_end - passage.char_start == len(passage.text)
        previous_end = passage.char_end
        assert len(passage.words) <= int(target * 1.6) + target // 4 + 14
        last = 0
        for word in passage.words:
            assert 0 <= last <= word.start < word.end <= len(passage.text)
            assert passage.text[word.start:word.end].strip() == passage.text[word.start:word.end]
            last = word.end
        assert passage.page_start <= passage.page_end and passage.rects


# --- the citation parser -----------------------------------------------------------------

_citation_text = st.text(alphabet=st.sampled_from(list("[]0123456789,;-–— abcF.\n")) | st.characters(),
                         max_size=200)


@settings(max_examples=300, deadline=None)
@given(text=_citation_text, cuts=st.lists(st.integers(0, 200), max_size=6), valid=st.sets(st.integers(0, 30)))
def test_fuzz_citation_parser_never_invents_or_leaks_a_marker(text: str, cuts: list[int], valid: set[int]) -> None:
    for marker in find_markers(text):
        assert text[marker.start] == "[" and text[marker.end - 1] == "]"
        assert len(marker.numbers) == len(set(marker.numbers))
        assert len(marker.numbers) <= MAX_RANGE * max(1, text[marker.start:marker.end].count(",") +
                                                      text[marker.start:marker.end].count(";") + 1)
    assert find_markers(strip_markers(text)) == []
    assert find_markers(defuse_markers(text)) == []
    kept = rewrite_markers(text, lambda n: n if n in valid else None)
    assert all(set(m.numbers) <= valid for m in find_markers(kept))

    # Streamed in arbitrary pieces, no marker naming an unknown number reaches the screen.
    stream = StreamFilter(valid)
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    shown = "".join(stream.feed(text[a:b]) for a, b in itertools.pairwise(bounds)) + stream.flush()
    assert all(set(m.numbers) <= valid for m in find_markers(shown))
