"""A paper's back matter: thanks, funding, competing interests and who did what.

These sentences sit in the same text as the findings ("We thank ... for help with data annotation",
"This work was supported by NIH grant ...", "The authors declare no competing interests.", "Erin Bransom
and Bailey Kuehl helped with data annotation ..."; anything under an "Acknowledgements" or "Author
Contributions" heading), and they share the words of many questions ("data",
"training", "annotation"), so they were quoted as answers: a table of papers gave PaperMage's
acknowledgements as its "Data / sample". They answer only a question about funding, thanks or
authorship, which :func:`asks_about_back_matter` recognises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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

# A back-matter section's heading on a line of its own ("Acknowledgements", "9 Acknowledgements", "AUTHOR
# CONTRIBUTIONS", "Conflict of interest statement", "Funding:").
_SECTION_HEADING = re.compile(
    r"^[ \t]*(?:\d+(?:\.\d+)*\.?[ \t]*|[A-Z]\.?[ \t]+)?(?:acknowledge?ments?|funding(?:[ \t]+(?:information|sources?|"
    r"statement))?|financial[ \t]+support|authors?['’]?[ \t]+contributions?|contributions|competing[ \t]+(?:financial"
    r"[ \t]+)?interests?(?:[ \t]+statement)?|conflicts?[ \t]+of[ \t]+interests?(?:[ \t]+statement)?|declarations?"
    r"(?:[ \t]+of[ \t]+(?:competing[ \t]+)?interests?)?|disclosures?)[ \t]*[:.]?[ \t]*$",
    re.IGNORECASE | re.MULTILINE)
# A line that ends a back-matter section: the next heading (short, no sentence's closing punctuation).
_HEADING_CHARS = 70


# Not "fundamental", "contributes to drought tolerance" or "competing hypotheses": each asked for back matter.
_ASKS = re.compile(r"\b(?:fund(?:s|ed|ing|ers?)?|grants?|sponsor\w*|thank\w*|acknowledg\w*|"
                   r"competing\s+(?:financial\s+)?interests?|conflicts?\s+of\s+interest|authors?hip|"
                   r"authors?['’]?\s+contributions?|contributions?\s+of\s+(?:the|each)\s+authors?|"
                   r"who\s+(?:wrote|supported|paid|contributed))\b", re.IGNORECASE)
# Words back matter is written in, for finding it within a paper when a question asks about it ("Who funded
# ...?": the section says "This work was supported by NIH grant ...", "We thank ...").
BACK_MATTER_WORDS = ("acknowledgements", "acknowledgments", "funding", "supported", "grant", "grants", "thank",
                     "contributions", "interests")


# An entry of a reference list: "(16) Zhang, R.; et al. Probing ...", "[3] Andersen, H. C. Rattle: ...",
# "Letunic, I. & Bork, P. Interactive Tree Of Life ...", "Wu, G. A. et al. Sequencing of ...". Unnumbered, it takes
# a second author or "et al.", so that "Furthermore, E. coli isolates ..." is not one.
_AUTHOR = r"(?:(?:van|von|de|del|della|da|di|du|le|la|ten|ter)\s+)?[A-Z][\w'’-]+,\s+(?:[A-Z]\.\s?-?){1,3}"
_REFERENCE_ENTRY = re.compile(
    r"\s*(?:(?:\(\d{1,3}\)|\[\d{1,3}\]|\d{1,3}\.)\s*" + _AUTHOR
    + r"|" + _AUTHOR + r"(?:\s*et al\.|[;,]\s*(?:and\s+|&\s+)?" + _AUTHOR + r"|\s*&\s*" + _AUTHOR + r"))")


def is_reference_entry(sentence: str) -> bool:
    """Whether ``sentence`` is an entry of a reference list that extraction left in the running text (the list
    was not recognised as one): it gives another paper's authors and title, never this paper's finding, and a
    title that shares a question's words ("Hepatitis C virus protease NS3/4A cleaves mitochondrial antiviral
    signaling protein ...") was quoted, or judged to support a sentence, as if the paper said it."""
    return bool(_REFERENCE_ENTRY.match(" ".join(sentence.split())))


def is_back_matter(sentence: str) -> bool:
    """Whether ``sentence`` thanks someone, states funding or a declaration, or says which author did what."""
    return bool(_BACK_MATTER.search(" ".join(sentence.split())))


def back_matter_flags(text: str, spans: Sequence[tuple[int, int]]) -> list[bool]:
    """For each (start, end) sentence of ``text``: whether it is back matter, by what it says or by the section
    it stands in."""
    sections = back_matter_sections(text)
    return [is_back_matter(text[start:end]) or any(first <= start < last for first, last in sections)
            for start, end in spans]


def back_matter_sections(text: str) -> list[tuple[int, int]]:
    """(start, end) of each back-matter section of ``text``: from its heading line ("Acknowledgements",
    "Author Contributions", "Competing interests", ...) to the next heading that is not one, or the end.
    What a section says need not read as thanks ("Paul Sayre provided feedback on initial designs of the
    library", "Joseph Chee Chang implemented an end-to-end web-based visual interface"), so the heading decides.
    A line that only looks like a heading (a short one without a full stop) ends the section early: the error
    keeps a sentence quotable, never hides one that is not back matter."""
    sections: list[tuple[int, int]] = []
    for heading in _SECTION_HEADING.finditer(text):
        if sections and heading.start() < sections[-1][1]:
            continue  # a heading inside the section before ("Acknowledgements" then "Author Contributions")
        end = len(text)
        position = text.find("\n", heading.end())
        while position != -1:
            line_end = text.find("\n", position + 1)
            line = text[position + 1:len(text) if line_end == -1 else line_end].strip()
            if (0 < len(line) < _HEADING_CHARS and not line.endswith((".", ",", ";"))
                    and not _SECTION_HEADING.fullmatch(line)):
                end = position + 1
                break
            position = line_end
        sections.append((heading.start(), end))
    return sections


def asks_about_back_matter(question: str) -> bool:
    """Whether ``question`` asks about funding, thanks, interests or authorship (then back matter answers it)."""
    return bool(_ASKS.search(question))


# What kind of back matter a question asks for, and the words that say a sentence is of that kind: "Who funded
# ...?" is answered by "This work was supported by NIH grant ...", not by "We thank J. Doe for discussions".
_ASKS_FUNDING = re.compile(r"\b(?:fund(?:s|ed|ing|ers?)?|grants?|sponsor\w*|who\s+(?:supported|paid))\b",
                           re.IGNORECASE)
_ASKS_THANKS = re.compile(r"\b(?:thank\w*|acknowledg\w*)\b", re.IGNORECASE)
_STATES_FUNDING = re.compile(r"\b(?:supported|funded|funding|grants?|sponsored|fellowships?|awards?)\b",
                             re.IGNORECASE)
_STATES_THANKS = re.compile(r"\b(?:thank\w*|grateful|indebted|acknowledg\w*)\b", re.IGNORECASE)


def answers_back_matter_question(question: str, sentence: str, back_matter: bool) -> bool:
    """Whether ``sentence`` (``back_matter``: it is back matter, by what it says or the section it stands in)
    is of the kind of back matter ``question`` asks about: funding for "who funded", thanks for "whom do they
    thank", any for authorship or competing interests. No other sentence can answer such a question."""
    if not back_matter or not asks_about_back_matter(question):
        return False
    if _ASKS_FUNDING.search(question):
        return bool(_STATES_FUNDING.search(sentence))
    if _ASKS_THANKS.search(question):
        return bool(_STATES_THANKS.search(sentence))
    return True
