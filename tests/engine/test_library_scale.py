"""A library embedded a little at a time switches to IVF-SQ8 once it passes FLAT_LIMIT passages.

The library is generated straight into the catalog (no PDFs) and embedded with the hashing
embedder, so 50,000 passages take seconds rather than the hours real embedding would.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine.bibliography import Bibliography
from engine.embed import HashingEmbedder
from engine.index import FLAT_LIMIT, FlatIndex, IVFIndex, read_header
from engine.service import Engine
from engine.store import FileRecord
from engine.types import Document, Page, Passage

pytestmark = pytest.mark.slow


def word(n: int) -> str:
    """A made-up word for ``n`` (letters only, so the full-text tokenizer keeps it whole)."""
    letters = ""
    while True:
        n, digit = divmod(n, 26)
        letters += "abcdefghijklmnopqrstuvwxyz"[digit]
        if n == 0:
            return "zq" + letters


def generated_paper(engine: Engine, name: str, first: int, count: int) -> Document:
    """Store a document of ``count`` passages, each with a word of its own (:func:`word`)."""
    doc_id = hashlib.sha256(name.encode()).hexdigest()[:16]
    passages = []
    for ordinal, n in enumerate(range(first, first + count)):
        text = f"passage {n} discusses {word(n)} and {word(n % 997)} with {word(n % 31)}"
        passages.append(Passage(id=f"{doc_id}:{ordinal}", doc_id=doc_id, ordinal=ordinal, text=text, title=name,
                                page_start=1, page_end=1, char_start=0, char_end=len(text), rects=(),
                                content_hash=hashlib.sha256(text.encode()).hexdigest()))
    document = Document(id=doc_id, content_hash=doc_id, path=f"/papers/{name}.pdf", bib=Bibliography(name))
    pages = [Page(doc_id=doc_id, number=1, width=612.0, height=792.0, word_count=count * 10, has_text_layer=True)]
    return engine.library.write_document(document, passages, pages, FileRecord(document.path, doc_id, 1, 0.0))


def test_an_incrementally_embedded_library_becomes_ivf_past_the_flat_limit(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Engine(home) as engine:
        engine.embedder = HashingEmbedder(64)  # type: ignore[misc]
        first = FLAT_LIMIT - 100
        generated_paper(engine, "bulk", 0, first)
        assert engine.embed_pending() == first
        assert isinstance(engine.library_source.index(), FlatIndex)  # still small enough for exact search

        more = generated_paper(engine, "more", first, 200)  # 50,100 passages in all
        assert engine.embed_pending() == 200
        index = engine.library_source.index()
        assert isinstance(index, IVFIndex) and len(index) == FLAT_LIMIT + 100
        assert read_header(engine.library_source.index_path).kind == IVFIndex.kind
        # A passage embedded after the switch is its own nearest neighbour in the IVF index.
        source = engine.library_source
        late = f"{more.id}:150"
        assert source.dense(source.vectors([late])[late], 1)[0][0] == late
        hits = engine.search(word(first + 150), k=5, source="library", spelling=False)
        assert any(hit.passage_id == late for hit in hits)

    with Engine(home) as again:  # a new process loads the saved IVF index; nothing is left to embed
        again.embedder = HashingEmbedder(64)  # type: ignore[misc]
        assert isinstance(again.library_source.index(), IVFIndex)
        assert again.embed_pending() == 0
