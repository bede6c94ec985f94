"""A paper's bibliographic description, as one value.

Every type that stands for a paper (a library :class:`~engine.types.Document`, a search hit, a cited
passage or paper, a row of a table of papers, a datastore record) holds one as ``bib``. Metadata
then travels whole from where it is read to where it is shown, and a field added here reaches every
stage without a copy to update at each hand-over.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any

# Words that make an author an organisation rather than a person ("Procter and Gamble Research
# Group", "The ENCODE Project Consortium"): such a name has no given and family parts.
_GROUP_WORDS = re.compile(
    r"\b(group|consortium|consortia|collaboration|collaborative|team|committee|council|society|association|"
    r"network|initiative|project|organi[sz]ation|foundation|alliance|task ?force|working party|inc|ltd|llc|"
    r"corporation|company|laboratories)\b", re.I)


def is_group_author(name: str) -> bool:
    """Whether an author is an organisation, to be cited whole (never "Group, Procter and Gamble Research")."""
    return bool(_GROUP_WORDS.search(name))


@dataclass(frozen=True)
class Bibliography:
    """What identifies and cites a paper. Every field may be empty: a PDF or a record may lack any."""

    title: str = ""
    authors: tuple[str, ...] = ()  # display names, "Given Family", in the paper's order
    year: int | None = None
    doi: str = ""
    arxiv_id: str = ""
    url: str = ""
    venue: str = ""  # the journal or proceedings it appeared in, where known

    @property
    def authors_short(self) -> str:
        """``Arman Cohan et al.``, ``Kyle Lo and Lucy Lu Wang``, ``Kyle Lo`` or ``""``."""
        names = self.authors
        if not names:
            return ""
        return names[0] + (" et al." if len(names) > 2 else f" and {names[1]}" if len(names) == 2 else "")

    @property
    def locator(self) -> str:
        """How a reader finds the paper, as text: ``doi:…``, else ``arXiv:…``, else its URL, else ``""``."""
        if self.doi:
            return f"doi:{self.doi}"
        if self.arxiv_id:
            return f"arXiv:{self.arxiv_id}"
        return self.url

    @property
    def link(self) -> str:
        """The same place as :attr:`locator`, as a web address: the DOI's, the arXiv abstract's, or the URL."""
        if self.doi:
            return f"https://doi.org/{self.doi}"
        if self.arxiv_id:
            return f"https://arxiv.org/abs/{self.arxiv_id}"
        return self.url

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON values, in the order saved answers have always listed them."""
        return {"title": self.title, "authors": list(self.authors), "year": self.year, "doi": self.doi,
                "arxiv_id": self.arxiv_id, "url": self.url, "venue": self.venue}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Bibliography:
        """Read back :meth:`to_dict`'s fields from a larger record; a field an older record lacks is empty."""
        return cls(title=data.get("title", ""), authors=tuple(data.get("authors", ())), year=data.get("year"),
                   doi=data.get("doi", ""), arxiv_id=data.get("arxiv_id", ""), url=data.get("url", ""),
                   venue=data.get("venue", ""))


# Said after a file's name standing in for the title a PDF does not print: the reader sees it is no title.
FILE_NAME_MARK = " (file name)"


def titled_by_file_name(bib: Bibliography, path: str) -> Bibliography:
    """``bib``, or where no title was found, the file's name as its title, marked as one ("scan.pdf (file
    name)"), so that references and exports name the paper as the library shows it until its title is edited."""
    name = PurePath(path).name if path else ""
    return bib if bib.title.strip() or not name else replace(bib, title=name + FILE_NAME_MARK)
