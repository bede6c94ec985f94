"""The library filter matches the starts of words, as Zotero's quick search does."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from engine.bibliography import Bibliography
from engine.types import Document
from ui.library_model import LibraryFilter, LibraryModel, authors_short, matches_word_starts


def _document(n: int, title: str, authors: tuple[str, ...] = (), collections: tuple[str, ...] = ()) -> Document:
    return Document(id=f"{n:064x}", content_hash=f"{n:064x}", path=f"/p{n}.pdf",
                    bib=Bibliography(title, authors=authors, year=2019 + n), page_count=3, passage_count=2,
                    added_at=float(n), collections=collections)


def test_a_word_matches_where_a_word_starts_never_inside_one() -> None:
    assert matches_word_starts("Thesis", ["My PhD thesis"])
    assert matches_word_starts("thes", ["Theses on retrieval"])
    assert not matches_word_starts("Thesis", ["Error-prone translesion synthesis in bacteria"])
    assert matches_word_starts("related WORK", ["Thesis › Related work"])
    assert not matches_word_starts("related gold", ["Related work"])  # every word must match
    assert matches_word_starts("emile", ["Émile Durand"]) and matches_word_starts("2020", ["2020"])


def test_the_filter_box_finds_titles_authors_and_collections_by_word_start(qtbot: QtBot) -> None:
    model = LibraryModel()
    proxy = LibraryFilter()
    proxy.setSourceModel(model)
    model.set_documents([_document(1, "Error-prone translesion synthesis in bacteria", ("Ana Sintesis",)),
                         _document(2, "Writing a thesis", collections=("Reading",)),
                         _document(3, "Dense retrieval", ("Arman Cohan", "Iz Beltagy"), ("Thesis › Related work",))])

    def titles(text: str) -> list[str]:
        proxy.set_text(text)
        return sorted(str(proxy.index(row, 0).data()) for row in range(proxy.rowCount()))

    assert titles("Thesis") == ["Dense retrieval", "Writing a thesis"]  # a title, a collection
    assert titles("synth") == ["Error-prone translesion synthesis in bacteria"]
    assert titles("belt") == ["Dense retrieval"]  # any author, not only the ones shown
    assert titles("ohan") == []
    assert len(titles("")) == 3


def test_authors_are_shown_as_zotero_shows_them() -> None:
    assert authors_short(("Arman Cohan",)) == "Cohan"
    assert authors_short(("Arman Cohan", "Sergey Feldman")) == "Cohan and Feldman"
    assert authors_short(("Cohan, Arman", "Feldman, Sergey", "Beltagy, Iz")) == "Cohan et al."
    assert authors_short(()) == ""
