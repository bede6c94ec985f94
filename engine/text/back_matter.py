"""A paper's back matter: thanks, funding, competing interests and who did what.

These sentences sit in the same text as the findings ("We thank ... for help with data annotation",
"This work was supported by NIH grant ...", "The authors declare no competing interests.", "Erin Bransom
and Bailey Kuehl helped with data annotation ..."), and they share the words of many questions ("data",
"training", "annotation"), so they were quoted as answers: a table of papers gave PaperMage's
acknowledgements as its "Data / sample". They answer only a question about funding, thanks or
authorship, which :func:`asks_about_back_matter` recognises.
"""

from __future__ import annotations

import re

_BACK_MATTER = re.compile(
    # Thanks: "We would like to thank", "The authors are grateful to", "Dr X is thanked for".
    r"\b(?:we|the\s+authors?|I)\s+(?:would\s+(?:also\s+)?like\s+to\s+|also\s+|further\s+|gratefully\s+|sincerely\s+)?"
    r"(?:thank|are\s+(?:also\s+)?(?:very\s+|extremely\s+|deeply\s+)?(?:grateful|thankful|indebted))\b"
    # "We acknowledge the ERC grant ...", not "we acknowledge other algorithms can also be feasible".
    r"|\backnowledge[sd]?\b(?=(?:\W+\w+){0,12}?\W+(?:support|funding|funded|grants?|fellowships?|awards?|"
    r"assistance|help|discussions?|facility|facilities)\b)"
    r"|\b(?:is|are|was|were)\s+(?:gratefully\s+)?(?:acknowledged|thanked)\s+(?:for|by)\b"
    r"|\b(?:grateful|thankful|indebted)\s+to\b"
    # Funding: "This work was partially supported by", "supported in part by NSF grants".
    r"|\b(?:work|research|study|project|author|authors)\s+(?:is|was|were|are|has\s+been)\s+(?:also\s+)?"
    r"(?:partially\s+|partly\s+|financially\s+|generously\s+)?(?:supported|funded|sponsored)\b"
    r"|\b(?:supported|funded)\s+(?:in\s+part\s+)?by\s+(?:an?\s+|the\s+)?(?:[A-Z][\w.&-]*\s+){0,8}"
    r"(?:grants?|awards?|fellowships?|contracts?)\b"
    # Declarations.
    r"|\bcompeting\s+(?:financial\s+)?interests\b|\bconflicts?\s+of\s+interests?\b"
    r"|\b(?:co-?founder|shareholder|co-?inventors?)\b|\bscientific\s+advisory\b"
    # Who did what: "helped with data annotation", "J.S. wrote the manuscript".
    r"|\b(?:helped|assisted)\s+with\s+(?:the\s+)?(?:data|writing|annotation|experiments?|analysis|manuscript)"
    r"|\b(?:wrote|edited)\s+the\s+(?:manuscript|paper)\b",
    re.IGNORECASE)

_ASKS = re.compile(r"\b(?:fund\w*|grants?|sponsor\w*|thank\w*|acknowledg\w*|competing|conflicts?\s+of\s+interest|"
                   r"contribut\w*|authors?hip|who\s+(?:wrote|supported|paid))\b", re.IGNORECASE)


def is_back_matter(sentence: str) -> bool:
    """Whether ``sentence`` thanks someone, states funding or a declaration, or says which author did what."""
    return bool(_BACK_MATTER.search(" ".join(sentence.split())))


def asks_about_back_matter(question: str) -> bool:
    """Whether ``question`` asks about funding, thanks, interests or authorship (then back matter answers it)."""
    return bool(_ASKS.search(question))
