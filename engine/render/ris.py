"""RIS and CSL-JSON exports of cited works, from the same values as the BibTeX export.

Zotero, Mendeley and EndNote import both. Names are split into family and given parts by
:func:`engine.ingest.names.split_name`, so "Madeleine van Zuylen" is filed under "van Zuylen".
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from engine.bibliography import Bibliography, is_group_author
from engine.ingest.names import split_name
from engine.render.bibtex import entry_type, unique_keys

_RIS_TYPES = {"article": "JOUR", "inproceedings": "CPAPER", "misc": "GEN"}
_CSL_TYPES = {"article": "article-journal", "inproceedings": "paper-conference", "misc": "article"}


def _one_line(text: str) -> str:
    return " ".join(text.split())  # a newline would end the RIS field early


def works_to_ris(works: Sequence[Bibliography]) -> str:
    """One ``TY``…``ER`` record per work."""
    records = []
    for work in works:
        kind = entry_type(work)
        lines = [f"TY  - {_RIS_TYPES[kind]}", f"TI  - {_one_line(work.title)}"]
        for author in work.authors:
            name = split_name(author)
            if is_group_author(author) or not name.given:
                lines.append(f"AU  - {_one_line(author) if is_group_author(author) else name.family}")
            else:
                lines.append(f"AU  - {name.family}, {name.given}")
        if work.year:
            lines.append(f"PY  - {work.year}")
        if work.venue:
            lines.append(f"{'T2' if kind == 'inproceedings' else 'JO'}  - {_one_line(work.venue)}")
        if work.doi:
            lines.append(f"DO  - {work.doi}")
        if work.url:
            lines.append(f"UR  - {work.url}")
        if work.arxiv_id:
            lines.append(f"M1  - arXiv:{work.arxiv_id}")
        lines.append("ER  - ")
        records.append("\n".join(lines))
    return "\n\n".join(records) + ("\n" if records else "")


def works_to_csl(works: Sequence[Bibliography]) -> list[dict[str, object]]:
    """CSL-JSON items, ids equal to the BibTeX keys."""
    items: list[dict[str, object]] = []
    for work, key in zip(works, unique_keys(works), strict=True):
        kind = entry_type(work)
        item: dict[str, object] = {"id": key, "type": _CSL_TYPES[kind], "title": _one_line(work.title)}
        authors = []
        for author in work.authors:
            name = split_name(author)
            if is_group_author(author):
                authors.append({"literal": _one_line(author)})
            else:
                authors.append({"family": name.family, "given": name.given} if name.given else {"literal": name.family})
        if authors:
            item["author"] = authors
        if work.year:
            item["issued"] = {"date-parts": [[work.year]]}
        if work.venue:
            item["container-title"] = work.venue
        if work.doi:
            item["DOI"] = work.doi
        if work.url:
            item["URL"] = work.url
        if work.arxiv_id:
            item["number"] = f"arXiv:{work.arxiv_id}"
        items.append(item)
    return items


def works_to_csl_json(works: Sequence[Bibliography]) -> str:
    return json.dumps(works_to_csl(works), ensure_ascii=False, indent=2) + "\n"
