"""A streaming chunker: text lines with word boxes in reading order -> ~N-word passages.

Passages end on sentence boundaries. The chunker also builds the document's text as it goes
(joining words, repairing end-of-line hyphenation), so each passage knows its character span
in that text and each word's span inside the passage. Only the passage being built, and the
line waiting to learn whether its last word continues on the next line, are held in memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from engine.types import PageRect, Passage, Rect, WordBox, content_hash, passage_id

# Words that end in a period without ending a sentence.
_ABBREVIATIONS = frozenset(
    "e.g. i.e. et al. etc. fig. figs. eq. eqs. sec. secs. tab. vs. cf. no. vol. pp. dr. mr. ms. "
    "prof. approx. resp. ref. refs. ch. al. inc. ltd. jr. sr. st. ca. viz. dept. univ.".split()
)
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*$")
_INITIAL = re.compile(r"^[A-Z]\.$")
_END_CHARS = frozenset(".!?\"')]”’")
_OPENERS = frozenset("([\"'“‘")


def ends_sentence(word: str) -> bool:
    """True when ``word`` closes a sentence (not an abbreviation or an initial)."""
    if not word or word[-1] not in _END_CHARS or not _SENTENCE_END.search(word):
        return False
    return word.lower() not in _ABBREVIATIONS and not _INITIAL.match(word)


def starts_sentence(word: str) -> bool:
    first = word[:1]
    return first.isupper() or first.isdigit() or first in _OPENERS


# Compounds broken at their own hyphen ("state-" / "of-the-art", "end-" / "to-end") keep it.
_COMPOUND_LINKS = frozenset("of the to and in on by for a an".split())


def is_split_word(before: str, after: str) -> bool:
    """'represen-' at a line end followed by 'tation': one word broken by hyphenation."""
    return (len(before) > 2 and before[-1] == "-" and before[-2].isalpha()
            and "-" not in before[:-1] and after[:1].islower())


def is_split_compound(before: str, after: str) -> bool:
    """'state-' at a line end followed by 'of-the-art': a hyphenated compound whose hyphen stays."""
    return is_split_word(before, after) and after.split("-", 1)[0] in _COMPOUND_LINKS and "-" in after


@dataclass
class _Draft:
    """The passage being built."""

    start: int = 0  # char offset of its first word in the document text
    parts: list[str] = field(default_factory=list)
    words: list[WordBox] = field(default_factory=list)  # spans relative to ``start``
    rects: list[PageRect] = field(default_factory=list)  # one per line (part)
    length: int = 0


@dataclass
class _Line:
    words: list[tuple[str, Rect]]
    page: int
    rect: Rect
    new_block: bool


class Chunker:
    """Feed lines in reading order with :meth:`add_line`; passages come out as they close."""

    def __init__(self, doc_id: str, title: str, target_words: int = 250) -> None:
        self.doc_id = doc_id
        self.title = title
        self.target_words = max(20, target_words)
        self.max_words = int(self.target_words * 1.6)
        self.is_reference = False
        self._ordinal = 0
        self._offset = 0  # length of the document text produced so far
        self._draft = _Draft()
        self._held: Passage | None = None  # last closed passage, kept so a short tail can join it
        self._waiting: _Line | None = None
        self._previous_word = ""
        self._ready: list[Passage] = []

    # --- input ---------------------------------------------------------------------------

    def add_line(self, words: list[tuple[str, Rect]], page: int, rect: Rect, *, new_block: bool) -> None:
        """Add the next text line; ``new_block`` marks the start of a paragraph or heading."""
        if not words:
            return
        waiting = self._waiting
        if waiting is not None:
            # A hyphenated word is joined even across a block boundary: text broken by a figure,
            # a column end or a producer that puts each line in its own block still continues.
            before, after = waiting.words[-1][0], words[0][0]
            joined = is_split_word(before, after)
            self._place_line(waiting, trim_last_hyphen=joined and not is_split_compound(before, after))
            if joined:
                new_block = False
        self._waiting = _Line(words, page, rect, new_block)
        if waiting is not None and joined:
            self._glue_next = True

    def start_section(self, *, is_reference: bool) -> None:
        """Begin a new section (e.g. the reference list): never mix it with the text before."""
        self._end_section()
        self.is_reference = is_reference

    @property
    def at_sentence_end(self) -> bool:
        """True when the text added so far ends a sentence (a good place to insert a footnote)."""
        last = self._waiting.words[-1][0] if self._waiting is not None else self._previous_word
        return ends_sentence(last)

    def passages(self) -> Iterator[Passage]:
        """Yield and forget the passages closed so far."""
        ready, self._ready = self._ready, []
        yield from ready

    def finish(self) -> Iterator[Passage]:
        """Close the last passage (joining a short tail to the one before) and yield the rest."""
        self._end_section()
        yield from self.passages()

    # --- internals -----------------------------------------------------------------------

    _glue_next = False  # the next line's first word continues a hyphenated word

    def _end_section(self) -> None:
        """Close the passage being built; a short tail joins the passage before it (same section)."""
        self._flush_waiting()
        tail, held = self._draft, self._held
        if (held is not None and tail.words and len(tail.words) < self.target_words // 4
                and len(held.words) + len(tail.words) <= self.max_words):
            self._held = None
            self._ordinal -= 1
            self._draft = self._reopen(held)
            self._append_draft(tail)
        self._close()
        self._release_held()

    def _flush_waiting(self) -> None:
        if self._waiting is not None:
            self._place_line(self._waiting, trim_last_hyphen=False)
            self._waiting = None

    def _place_line(self, line: _Line, *, trim_last_hyphen: bool) -> None:
        draft = self._draft
        target, max_words = self.target_words, self.max_words
        glued = self._glue_next
        self._glue_next = False
        first_in_draft = len(draft.words)
        previous = self._previous_word
        last_index = len(line.words) - 1
        for index, (text, rect) in enumerate(line.words):
            sep = ("" if glued else "\n" if line.new_block else " ") if index == 0 else " "
            count = len(draft.words)
            # Close at a sentence end: before a capitalised word or a new block (a heading, a
            # paragraph); only a passage grown to ``max_words`` is cut mid-sentence.
            if count >= target and not glued and (
                    count >= max_words
                    or (ends_sentence(previous) and (starts_sentence(text) or (index == 0 and line.new_block)))):
                self._end_line_part(line, first_in_draft)
                self._close()
                draft = self._draft
                first_in_draft = 0
            glued = False
            previous = text
            if index == last_index and trim_last_hyphen:
                text = text[:-1]
            if not draft.words:
                if self._offset:
                    self._offset += 1  # the separator between passages in the document text
                draft.start = self._offset
                sep = ""
            start = draft.length + len(sep)
            draft.parts.append(sep + text)
            draft.length = start + len(text)
            draft.words.append(WordBox(start, draft.length, line.page, rect))
        self._offset = draft.start + draft.length
        self._previous_word = previous
        self._end_line_part(line, first_in_draft)

    def _end_line_part(self, line: _Line, first_in_draft: int) -> None:
        """Record the box of this line's words in the current draft: the whole line or a part."""
        draft = self._draft
        placed = draft.words[first_in_draft:]
        if not placed:
            return
        if len(placed) == len(line.words):
            draft.rects.append(PageRect(line.page, line.rect))
            return
        x0 = min(w.rect.x0 for w in placed)
        y0 = min(w.rect.y0 for w in placed)
        x1 = max(w.rect.x1 for w in placed)
        y1 = max(w.rect.y1 for w in placed)
        draft.rects.append(PageRect(line.page, Rect(x0, y0, x1, y1)))

    @staticmethod
    def _reopen(passage: Passage) -> _Draft:
        return _Draft(passage.char_start, [passage.text], list(passage.words), list(passage.rects),
                      len(passage.text))

    def _append_draft(self, tail: _Draft) -> None:
        # The tail followed the reopened passage after a one-character separator.
        draft = self._draft
        shift = draft.length + 1
        draft.parts.append("\n")
        draft.parts.extend(tail.parts)
        draft.words.extend(WordBox(w.start + shift, w.end + shift, w.page, w.rect) for w in tail.words)
        draft.rects.extend(tail.rects)
        draft.length = shift + tail.length

    def _close(self) -> None:
        draft = self._draft
        if not draft.words:
            return
        text = "".join(draft.parts)
        words = tuple(draft.words)
        passage = Passage(
            id=passage_id(self.doc_id, self._ordinal), doc_id=self.doc_id, ordinal=self._ordinal,
            text=text, title=self.title, page_start=min(w.page for w in words),
            page_end=max(w.page for w in words),
            char_start=draft.start, char_end=draft.start + len(text), rects=tuple(draft.rects),
            content_hash=content_hash(f"{self.title}\n{text}"), is_reference=self.is_reference,
            words=words)
        self._ordinal += 1
        # A passage may close mid-line: the next one starts after it, not after the line before.
        self._offset = passage.char_end
        self._draft = _Draft()
        self._release_held()
        self._held = passage

    def _release_held(self) -> None:
        if self._held is not None:
            self._ready.append(self._held)
            self._held = None
