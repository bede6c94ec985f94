"""Page furniture: the lines a repository or preprint server stamps on every page of a paper.

PubMed Central's author manuscripts ("Author manuscript; available in PMC 2024 November 06."),
bioRxiv's and medRxiv's stamp ("bioRxiv preprint doi: ...; this version posted ...", "The copyright
holder for this preprint ... is the author/funder", "made available under a CC-BY 4.0 International
license"), publishers' download lines and "(legend continued on next page)" say nothing about the paper's
findings. When ingest keeps
one inside running text, a sentence carrying it is no quote to show or cite.
"""

from __future__ import annotations

import re

_FURNITURE = re.compile(
    r"author manuscript;?\s+available in PMC"
    r"|\b(?:bio|med)Rxiv preprint\b"
    r"|the copyright holder for this (?:preprint|version)"
    r"|was not certified by peer review"
    r"|this version posted\s+[A-Z][a-z]+\s+\d"
    r"|made available under a\s+CC[- ]BY"
    r"|\bCC[- ]BY(?:[- ]N[CD])*(?:[- ]ND)? \d\.\d International license"
    r"|downloaded from\s+https?://\S+\s+by\s"
    r"|\bpublished in final edited form as\b"
    # A legend or table broken across pages: "(legend continued on next page)", "Figure 2 continued on next page".
    r"|\b(?:legend|figure\s+\d+|fig\.\s*\d+|table\s+\d+)?\s*continued\s+on\s+(?:the\s+)?next\s+page\b",
    re.I,
)


def has_page_furniture(text: str) -> bool:
    """Whether ``text`` carries a repository's or server's page stamp rather than only the paper's words."""
    return bool(_FURNITURE.search(" ".join(text.split())))
