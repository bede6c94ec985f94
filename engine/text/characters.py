"""Characters: accents folded away for matching, and text made safe to encode."""

from __future__ import annotations

import re
import unicodedata

# Lone surrogates: what Python makes of command-line bytes that are not UTF-8 (surrogateescape).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def ascii_fold(text: str) -> str:
    """``text`` with accents dropped and every other non-ASCII character removed ("Gödel" -> "Godel").

    For matching only (titles, names, citation keys): what is shown keeps its accents."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def readable_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, the replacement character.

    A question typed in a terminal set to another encoding reaches Python as lone surrogates,
    which no encoder accepts: the embedder's tokenizer, SQLite and the answer history would each
    fail on them. Replaced, the rest of the question is still searched.
    """
    return _LONE_SURROGATE.sub("\ufffd", text) if isinstance(text, str) else text
