"""A streaming chunker: text lines with word boxes in reading order -> ~N-word passages.

Passages end on sentence boundaries. The chunker also builds the document's text as it goes
(joining words, repairing end-of-line hyphenation), so each passage knows its character span
in that text and each word's span inside the passage. Only the passage being built, and the
line waiting to learn whether its last word continues on the next line, are held in memory.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter

from engine.ingest.layout import TEXT, Word
from engine.ingest.wordlist import COMMON_COUNT, english_counts
from engine.text.language import MEANINGLESS_SHARE, NO_LANGUAGE, UNKNOWN, detect_language
from engine.text.scripts import meaningless_share, runs_on_unspaced
from engine.text.sentences import ends_sentence, starts_sentence
from engine.types import WORD_FIELDS, PageRect, Passage, Rect, WordBoxes, content_hash, passage_id

# Compounds broken at their own hyphen ("state-" / "of-the-art", "end-" / "to-end") keep it.
_COMPOUND_LINKS = frozenset("of the to and in on by for a an".split())


# A hyphen left hanging before one of these is a suspended one: "pre- and post-treatment",
# "2- to 3-fold". The space after it is real.
SUSPENDED_BEFORE = frozenset("and or nor to".split())


def continues_word(before: str, after: str) -> bool:
    """'Spn-' at a line end followed by 'E-EQ': the next line goes on with the same word.

    A hyphen attached to a word at a line end either breaks that word (:func:`is_split_word`) or
    is the word's own hyphen ("5-" / "FU", "RNA-" / "coding", "GAIT-element-" / "bearing"). Either
    way the two parts are one word, written without a space; only a suspended hyphen keeps it.
    """
    return (len(before) > 1 and before[-1] == "-" and before[-2].isalnum() and after[:1].isalnum()
            and after.rstrip(_TRAILING).lower() not in SUSPENDED_BEFORE)


def is_split_word(before: str, after: str) -> bool:
    """'represen-' at a line end followed by 'tation': one word broken by hyphenation."""
    # An acronym before the hyphen ("RNA-" / "coding") is a compound: TeX never hyphenates one.
    return (len(before) > 2 and continues_word(before, after) and before[-2].isalpha()
            and not before[-2].isupper() and "-" not in before[:-1] and after[:1].islower())


def is_split_compound(before: str, after: str, compounds: set[str] | frozenset[str] = frozenset()) -> bool:
    """'virus-' at a line end followed by 'positive': a hyphenated compound whose hyphen stays.

    TeX breaks a compound at its own hyphen too, so a line-end hyphen is kept when the compound
    is written with it elsewhere earlier in the document (``compounds``, lower case), when the
    joined word is no English word while both halves are ("virus-positive", "cross-linking"; not
    "represen-tation", nor "trans-membrane": a bound prefix is no word of its own), or when the
    next part is a linking word of a longer compound ("state-" / "of-the-art").
    """
    if not is_split_word(before, after):
        return False
    if after.split("-", 1)[0] in _COMPOUND_LINKS and "-" in after:
        return True
    head = before[:-1].lstrip(_LEADING).lower()
    tail = after.split("-", 1)[0].rstrip(_TRAILING).lower()
    if not head.isalpha() or not tail.isalpha():
        return False
    if f"{head}-{tail}" in compounds:
        return True
    if head in _PREFIXES or len(head) < 3 or len(tail) < 3:
        return False
    counts = english_counts()
    return (not counts.get(head + tail) and counts.get(head, 0) > COMMON_COUNT
            and counts.get(tail, 0) > COMMON_COUNT)


_TEXT_OF = itemgetter(TEXT)
_LEADING = "([{\"'“‘"
_TRAILING = ".,;:!?)]}\"'”’"
# English prefixes that are not words of their own in a compound: after them a line-end hyphen
# is taken for a break unless the document writes the compound with its hyphen.
_PREFIXES = frozenset(
    "anti auto bi bio co counter de dis extra hyper hypo inter intra macro micro mid mis mono multi neo non "
    "over poly post pre pro pseudo re semi sub super trans tri ultra un under".split())


class Numbering:
    """Ordinals and character offsets shared by the chunkers of one document (one per passage kind).

    A passage gets its number when it is released, so passages of every kind come out in one
    sequence, in order, without overlapping spans of the document text.
    """

    def __init__(self) -> None:
        self.ordinal = 0
        self.offset = 0  # length of the document text so far
        self.ready: list[Passage] = []
        self.compounds: set[str] = set()  # hyphenated words seen inside lines so far, lower case

    def claim(self, length: int) -> tuple[int, int]:
        """The next ordinal and the character offset of a passage of ``length`` characters."""
        start = self.offset + 1 if self.ordinal else 0  # one separator character between passages
        ordinal = self.ordinal
        self.ordinal += 1
        self.offset = start + length
        return ordinal, start


@dataclass
class _Draft:
    """The passage being built."""

    parts: list[str] = field(default_factory=list)
    # Its words' boxes packed as in WordBoxes (spans relative to ``start``): no object per word.
    boxes: array[float] = field(default_factory=lambda: array("f"))
    count: int = 0  # words
    rects: list[PageRect] = field(default_factory=list)  # one per line (part)
    length: int = 0
    is_reference: bool = False


@dataclass
class _Line:
    words: list[Word]
    page: int
    rect: Rect
    new_block: bool


class Chunker:
    """Feed lines in reading order with :meth:`add_line`; passages come out as they close."""

    def __init__(self, doc_id: str, title: str, target_words: int = 250, *, kind: str = "text",
                 numbering: Numbering | None = None) -> None:
        self.doc_id = doc_id
        self.title = title
        self.kind = kind
        self.target_words = max(20, target_words)
        self.max_words = int(self.target_words * 1.6)
        self.is_reference = False
        self.numbering = numbering or Numbering()
        self._draft = _Draft()
        self._held: _Draft | None = None  # last closed passage, kept so a short tail can join it
        self._waiting: _Line | None = None
        self._previous_word = ""

    # --- input ---------------------------------------------------------------------------

    def add_line(self, words: list[Word], page: int, rect: Rect, *, new_block: bool) -> None:
        """Add the next text line; ``new_block`` marks the start of a paragraph or heading.

        ``words`` are (x0, y0, x1, y1, text, ...) tuples, as PyMuPDF gives them.
        """
        if not words:
            return
        texts = "\n".join(map(_TEXT_OF, words))
        if "-" in texts:
            self._remember_compounds(texts.split("\n"))
        waiting = self._waiting
        if waiting is not None:
            # A hyphenated word is joined even across a block boundary: text broken by a figure,
            # a column end or a producer that puts each line in its own block still continues.
            before, after = waiting.words[-1][TEXT], words[0][TEXT]
            # Chinese, Japanese and Thai have no spaces: a line that wraps inside a paragraph runs on.
            joined = continues_word(before, after) or (not new_block and runs_on_unspaced(before, after))
            self._place_line(waiting, trim_last_hyphen=is_split_word(before, after) and not is_split_compound(
                before, after, self.numbering.compounds))
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
        last = self._waiting.words[-1][TEXT] if self._waiting is not None else self._previous_word
        return ends_sentence(last)

    def passages(self) -> Iterator[Passage]:
        """Yield and forget the passages closed so far (of every chunker sharing the numbering)."""
        ready, self.numbering.ready = self.numbering.ready, []
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
        if (held is not None and tail.count and tail.count < self.target_words // 4
                and held.count + tail.count <= self.max_words):
            self._held = None
            self._draft = held
            self._append_draft(tail)
        self._close()
        self._release_held()

    def _flush_waiting(self) -> None:
        if self._waiting is not None:
            self._place_line(self._waiting, trim_last_hyphen=False)
            self._waiting = None

    def _place_line(self, line: _Line, *, trim_last_hyphen: bool) -> None:
        glued = self._glue_next
        self._glue_next = False
        if self._draft.count + len(line.words) <= self.target_words:
            # Most lines: no passage can close inside this one, so it is placed in one go.
            self._place_whole_line(line, glued, trim_last_hyphen)
            return
        draft = self._draft
        target, max_words = self.target_words, self.max_words
        line_first = 0  # the first of this line's words in the current draft
        previous = self._previous_word
        last_index = len(line.words) - 1
        page = line.page
        for index, word in enumerate(line.words):
            text = word[TEXT]
            sep = ("" if glued else "\n" if line.new_block else " ") if index == 0 else " "
            count = draft.count
            # Close at a sentence end: before a capitalised word or a new block (a heading, a
            # paragraph); only a passage grown to ``max_words`` is cut mid-sentence.
            if count >= target and not glued and (
                    count >= max_words
                    or (ends_sentence(previous) and (starts_sentence(text) or (index == 0 and line.new_block)))):
                self._end_line_part(line, line_first, index)
                self._close()
                draft = self._draft
                line_first = index
            glued = False
            previous = text
            if index == last_index and trim_last_hyphen:
                text = text[:-1]
            if not draft.count:
                sep = ""
            start = draft.length + len(sep)
            draft.parts.append(sep + text)
            draft.length = start + len(text)
            draft.count += 1
            draft.boxes.extend((start, draft.length, page, word[0], word[1], word[2], word[3]))
        self._previous_word = previous
        self._end_line_part(line, line_first, len(line.words))

    def _place_whole_line(self, line: _Line, glued: bool, trim_last_hyphen: bool) -> None:
        """The fast path of :meth:`_place_line`, for a line the current passage takes whole."""
        draft = self._draft
        words = line.words
        texts = [word[TEXT] for word in words]
        previous = texts[-1]
        if trim_last_hyphen:
            texts[-1] = previous[:-1]
        sep = "" if glued else "\n" if line.new_block else " "
        if not draft.count:
            sep = ""
        position = draft.length + len(sep)
        page = line.page
        flat: list[float] = []
        add = flat.extend
        for word, text in zip(words, texts, strict=True):
            end = position + len(text)
            add((position, end, page, word[0], word[1], word[2], word[3]))
            position = end + 1
        draft.boxes.extend(flat)
        draft.parts.append(sep + " ".join(texts))
        draft.length = position - 1
        draft.count += len(words)
        draft.rects.append(PageRect(page, line.rect))
        self._previous_word = previous

    def _remember_compounds(self, texts: list[str]) -> None:
        """Note the hyphenated words of a line (not one broken at its end) for :func:`is_split_compound`."""
        for text in texts:
            if "-" in text[1:-1]:
                self.numbering.compounds.add(text.strip(_LEADING + _TRAILING).lower())

    def _end_line_part(self, line: _Line, first: int, end: int) -> None:
        """Record the box of ``line.words[first:end]`` (placed in the current draft): the line's, or a part's."""
        if end <= first:
            return
        if end - first == len(line.words):
            self._draft.rects.append(PageRect(line.page, line.rect))
            return
        placed = line.words[first:end]
        x0 = min(w[0] for w in placed)
        y0 = min(w[1] for w in placed)
        x1 = max(w[2] for w in placed)
        y1 = max(w[3] for w in placed)
        self._draft.rects.append(PageRect(line.page, Rect(x0, y0, x1, y1)))

    def _append_draft(self, tail: _Draft) -> None:
        # The tail followed the reopened passage after a one-character separator.
        draft = self._draft
        shift = draft.length + 1
        draft.parts.append("\n")
        draft.parts.extend(tail.parts)
        moved = array("f", tail.boxes)
        for i in range(0, len(moved), WORD_FIELDS):
            moved[i] += shift
            moved[i + 1] += shift
        draft.boxes.extend(moved)
        draft.count += tail.count
        draft.rects.extend(tail.rects)
        draft.length = shift + tail.length

    def _close(self) -> None:
        draft = self._draft
        if not draft.count:
            return
        draft.is_reference = self.is_reference
        self._draft = _Draft()
        self._release_held()
        self._held = draft

    def _release_held(self) -> None:
        draft = self._held
        if draft is None:
            return
        self._held = None
        text = "".join(draft.parts)
        ordinal, start = self.numbering.claim(len(text))
        pages = draft.boxes[2::WORD_FIELDS]
        self.numbering.ready.append(Passage(
            id=passage_id(self.doc_id, ordinal), doc_id=self.doc_id, ordinal=ordinal,
            text=text, title=self.title, page_start=int(min(pages)), page_end=int(max(pages)),
            char_start=start, char_end=start + len(text), rects=tuple(draft.rects),
            content_hash=content_hash(f"{self.title}\n{text}"), is_reference=draft.is_reference,
            words=WordBoxes(draft.boxes), kind=self.kind, language=self._language(text, draft.is_reference)))

    def _language(self, text: str, is_reference: bool) -> str:
        # Reference lists, tables and figure labels are names, numbers and fragments: their language
        # cannot be told reliably, and keyword search indexes them as typed (unspaced scripts still cut).
        if is_reference or self.kind != "text":
            return NO_LANGUAGE if meaningless_share(text) > MEANINGLESS_SHARE else UNKNOWN
        return detect_language(text)
