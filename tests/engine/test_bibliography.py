"""The Bibliography value: its short author label, where it points a reader, and its saved form."""

from __future__ import annotations

import pytest

from engine.bibliography import Bibliography

SPECTER = Bibliography("SPECTER", ("Arman Cohan", "Sergey Feldman", "Iz Beltagy"), 2020,
                       doi="10.18653/v1/2020.acl-main.207", arxiv_id="2004.07180", url="https://example.org/specter",
                       venue="Proceedings of ACL")


@pytest.mark.parametrize(("authors", "short"), [
    ((), ""),
    (("Kyle Lo",), "Kyle Lo"),
    (("Kyle Lo", "Lucy Lu Wang"), "Kyle Lo and Lucy Lu Wang"),
    (("Arman Cohan", "Sergey Feldman", "Iz Beltagy"), "Arman Cohan et al."),
])
def test_authors_short(authors: tuple[str, ...], short: str) -> None:
    assert Bibliography(authors=authors).authors_short == short


def test_a_doi_comes_before_an_arxiv_id_and_that_before_a_url() -> None:
    assert (SPECTER.locator, SPECTER.link) == ("doi:10.18653/v1/2020.acl-main.207",
                                               "https://doi.org/10.18653/v1/2020.acl-main.207")
    preprint = Bibliography(arxiv_id="2004.07180", url="https://example.org/x")
    assert (preprint.locator, preprint.link) == ("arXiv:2004.07180", "https://arxiv.org/abs/2004.07180")
    record = Bibliography(url="https://example.org/x")
    assert (record.locator, record.link) == ("https://example.org/x", "https://example.org/x")
    assert (Bibliography().locator, Bibliography().link) == ("", "")


def test_the_saved_form_round_trips_and_missing_fields_read_as_empty() -> None:
    saved = SPECTER.to_dict()
    assert list(saved) == ["title", "authors", "year", "doi", "arxiv_id", "url", "venue"]
    assert Bibliography.from_dict({**saved, "n": 1, "text": "not a field"}) == SPECTER
    assert Bibliography.from_dict({"title": "Old record"}) == Bibliography("Old record")
