"""A paper's back matter: thanks, funding, competing interests, who did what and where its data can be had.

These sentences sit in the same text as the findings ("We thank ... for help with data annotation",
"This work was supported by NIH grant ...", "The authors declare no competing interests.", "Erin Bransom
and Bailey Kuehl helped with data annotation ..."; anything under an "Acknowledgements" or "Author
Contributions" heading), and they share the words of many questions ("data",
"training", "annotation"), so they were quoted as answers: a table of papers gave PaperMage's
acknowledgements as its "Data / sample". They answer only a question about funding, thanks or
authorship, which :func:`asks_about_back_matter` recognises. Statements of availability ("Source data are
provided with this paper.", "... are available from the corresponding author upon request.", "... have been
deposited to ProteomeXchange ...") are back matter too: a table's "Data / sample" column quoted them for what a
paper's data are, and they answer only where its data, code or materials can be had.
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
    r"|\b(?:supported|funded)\s+(?:in\s+part\s+)?(?:by|through)\s+(?:an?\s+|the\s+)?(?:[A-Z][\w.&-]*\s+){0,8}"
    r"(?:grants?|awards?|fellowships?|contracts?)\b"
    # Declarations.
    r"|\bcompeting\s+(?:financial\s+)?interests\b|\bconflicts?\s+of\s+interests?\b"
    r"|\b(?:co-?founder|shareholder|co-?inventors?)\b|\bscientific\s+advisory\b"
    # Who did what: "helped with data annotation", "J.S. wrote the manuscript".
    r"|\b(?:helped|assisted)\s+with\s+(?:the\s+)?(?:data|writing|annotation|experiments?|analysis|manuscript)"
    r"|\b(?:wrote|edited)\s+the\s+(?:manuscript|paper)\b"
    # A colleague named in full who gave feedback ("Chris Wilhelm provided feedback on papermage's design"); not
    # "Participants provided feedback on the interface", a user study's finding.
    r"|^\W*(?-i:[A-Z][a-z]+(?:\s+[A-Z]\.)?\s+[A-Z][a-z]+(?:-[A-Z][a-z]+)?)\s+(?:also\s+)?(?:provided|gave|offered)\s+"
    r"(?:\w+\s+){0,2}?(?:feedback|comments|advice|suggestions)\b",
    re.IGNORECASE)

# Where the data, code or materials can be had: "Source data are provided with this paper.", "Detailed methods are
# provided in the online version of this paper ...", "... are available from the corresponding authors upon
# request.", "... have been deposited to ProteomeXchange ...", "... is available at https://github.com/...". Not "are
# available in the UK Biobank" or "were provided by the ministry": those say what the data are.
_AVAILABILITY = re.compile(
    r"\bprovided\s+(?:with|as|in)\s+(?:this|the)\s+(?:paper|article|online\s+version|source\s+data)"
    r"|\bavailable\s+(?:from|to)\s+the\s+(?:corresponding|lead|first|senior)\s+authors?\b"
    r"|\bavailable\s+(?:up)?on\s+(?:reasonable\s+)?request\b"
    r"|\b(?:are|is|were|was|have\s+been|has\s+been)\s+(?:also\s+)?deposited\s+(?:to|in|at|with|into)\b"
    r"|\bincluded\s+in\s+this\s+(?:published\s+)?article\b"
    # A link only where making it available is what the sentence says, not "phrase pairs from ..., available at".
    r"|^\W*(?:\S+\s+){0,10}?(?:(?:is|are)\s+(?:publicly\s+|freely\s+|openly\s+)?available|made\s+(?:\S+\s+){0,6}?"
    r"available)\s+(?:at|from|on|via)\s+(?:https?://|www\.|github|zenodo|figshare)"
    # As a footnote says it, with no verb: "Code and demo available at https://github.com/allenai/paper-plain".
    r"|^\W*\d{0,2}(?:our\s+|the\s+)?(?:source\s+)?(?:code|data|software|models?|datasets?|demo|implementation|corpus)"
    r"(?:\s+and\s+(?:the\s+)?\w+)?\s+(?:publicly\s+|freely\s+)?available\s+(?:at|from|on|via)\s+"
    r"(?:https?://|www\.|github|zenodo|figshare)",
    re.IGNORECASE)
# A paper saying that it shares its code, data or models, in its own text: "We release our code and data to facilitate
# reproducibility.", "Our code is publicly available." Not back matter (such a sentence often says what the data are:
# "We also release our training set (hundreds of thousands of paper titles, abstracts and citations) ..."), but what
# answers a question about availability, beside the statements above.
_RELEASES = re.compile(
    r"\bwe\s+(?:also\s+|will\s+|publicly\s+|openly\s+)*(?:release[sd]?|open[- ]source[sd]?)\s+(?:\S+\s+){0,3}?"
    r"(?:code|data(?:\s*sets?)?|models?|software|implementation|corpus|annotations|training\s+set|weights|tools?)\b"
    r"|\bwe\s+(?:also\s+|will\s+)*(?:make|made)\s+(?:\S+\s+){0,6}?(?:publicly\s+|freely\s+|openly\s+)?available\b"
    # "Our software is freely available", "all data are publicly available", "Sequencing data is available on GEO"
    # (not "when large amounts of training data is available", "Only limited data is available about this virus":
    # those say how much there is)
    r"|(?:\b(?:our|the|all|these|this|its|their)\s+|^\W*(?!(?:only|limited|little|no|few|more|less)\b))"
    r"(?:[\w-]+\s+){0,2}?(?:code|data(?:\s*sets?)?|models?|software|"
    r"implementation|corpus)\s+(?:is|are|will\s+be)\s+"
    r"(?:publicly\s+|freely\s+|openly\s+)?(?:available|released)\b",
    re.IGNORECASE)

# Who did what, named by initials: "E.P.T, J.B.M., and N.T. performed and analyzed experiments.", "C.R.L. supervised
# the work". Only at a sentence's start, and only initials with full stops, so that "DNA performed ..." is not one.
_INITIALS = r"(?:[A-Z]\.-?){1,3}[A-Z]?\.?"
_WHO_DID_WHAT = re.compile(
    r"\s*" + _INITIALS + r"(?:\s*(?:,|and|&)\s*(?:and\s+)?" + _INITIALS + r")*,?\s+(?:also\s+)?"
    r"(?:performed|designed|conceived|wrote|analy[sz]ed|supervised|contributed|carried\s+out|developed|prepared|"
    r"edited|revised|acquired|generated|conducted|collected|assisted|helped|built|implemented|coordinated|"
    r"directed|planned|initiated|interpreted|reviewed|drafted|made\s+the\s+figures)\b")

# A back-matter section's heading on a line of its own ("Acknowledgements", "9 Acknowledgements", "AUTHOR
# CONTRIBUTIONS", "Conflict of interest statement", "Funding:").
_SECTION_HEADING = re.compile(
    r"^[ \t]*(?:\d+(?:\.\d+)*\.?[ \t]*|[A-Z]\.?[ \t]+)?(?:acknowledge?ments?|funding(?:[ \t]+(?:information|sources?|"
    r"statement))?|financial[ \t]+support|authors?['’]?[ \t]+contributions?|contributions|competing[ \t]+(?:financial"
    r"[ \t]+)?interests?(?:[ \t]+statement)?|conflicts?[ \t]+of[ \t]+interests?(?:[ \t]+statement)?|declarations?"
    r"(?:[ \t]+of[ \t]+(?:competing[ \t]+)?interests?)?|disclosures?"
    r"|(?:data|code|software|materials?|resources?)(?:[ \t]+(?:and|&)[ \t]+(?:code|software|materials?|data))?[ \t]+"
    r"availability(?:[ \t]+statement)?|availability[ \t]+of[ \t]+(?:data|code|materials?)(?:[ \t]+and[ \t]+"
    r"materials?)?)[ \t]*[:.]?[ \t]*$",
    re.IGNORECASE | re.MULTILINE)
# A line that ends a back-matter section: the next heading (short, no sentence's closing punctuation).
_HEADING_CHARS = 70


# Not "fundamental", "contributes to drought tolerance" or "competing hypotheses": each asked for back matter.
_ASKS = re.compile(r"\b(?:fund(?:s|ed|ing|ers?)?|grants?|sponsor\w*|thank\w*|acknowledg\w*|"
                   r"competing\s+(?:financial\s+)?interests?|conflicts?\s+of\s+interest|authors?hip|"
                   r"authors?['’]?\s+contributions?|contributions?\s+of\s+(?:the|each)\s+authors?|"
                   r"who\s+(?:wrote|supported|paid|contributed))\b", re.IGNORECASE)
# Where a paper's data, code or materials can be had: "Is the code available?", "Where were the data deposited?",
# "What is the accession number?". Not "What treatments are available?" nor "amyloid deposits".
_THINGS_SHARED = r"(?:data(?:\s*sets?)?|code|software|scripts?|materials?|reagents?|strains?|plasmids?|sequences?|" \
                 r"models?|weights|files?)"
_ASKS_AVAILABILITY = re.compile(
    # "Is the code available?", "Are the sequencing data publicly available?" (not "... from publicly available
    # datasets, what is ...": there "available" describes data the question builds on)
    r"\b(?:is|are|was|were)\s+(?:\S+\s+){0,5}?" + _THINGS_SHARED + r"\s+(?:\S+\s+)?(?:availab\w*|deposit\w*|"
    r"released|shared)\b"
    # "Where were the data deposited?", "How can I download the code?", "Where can the strains be obtained?"
    r"|\b(?:where|how)\b(?=[^?]*\b" + _THINGS_SHARED + r"\b)[^?.]{0,60}?\b(?:availab\w*|deposit\w*|download\w*|"
    r"obtain\w*|access\w*)\b"
    # "Where can I get the S2ORC data?", "Where do I find the code?" (not "How did they get the data?": a method)
    r"|\bwhere\s+(?:can|could|do|does|to)\b(?=[^?]*\b" + _THINGS_SHARED + r"\b)[^?.]{0,60}?\b(?:get|find)\b"
    r"|\baccession\s+(?:numbers?|codes?|ids?)\b|\brepositor(?:y|ies)\b", re.IGNORECASE)
# Words back matter is written in, for finding it within a paper when a question asks about it ("Who funded
# ...?": the section says "This work was supported by NIH grant ...", "We thank ...").
BACK_MATTER_WORDS = ("acknowledgements", "acknowledgments", "funding", "supported", "grant", "grants", "thank",
                     "contributions", "interests")
# And those a statement of availability is written in ("Code and demo available at https://github.com/...",
# "deposited in GEO under accession ...", "We release our code"), for a question about where data or code can be had.
AVAILABILITY_WORDS = ("available", "availability", "release", "released", "github", "zenodo", "deposited",
                      "accession", "repository", "request")


# An entry of a reference list: "(16) Zhang, R.; et al. Probing ...", "[3] Andersen, H. C. Rattle: ...",
# "Letunic, I. & Bork, P. Interactive Tree Of Life ...", "Wu, G. A. et al. Sequencing of ...". Unnumbered, it takes
# a second author or "et al.", so that "Furthermore, E. coli isolates ..." is not one.
_AUTHOR = r"(?:(?:van|von|de|del|della|da|di|du|le|la|ten|ter)\s+)?[A-Z][\w'’-]+,\s+(?:[A-Z]\.\s?-?){1,3}"
_REFERENCE_ENTRY = re.compile(
    r"\s*(?:(?:\(\d{1,3}\)|\[\d{1,3}\]|\d{1,3}\.)\s*" + _AUTHOR
    + r"|" + _AUTHOR + r"(?:\s*et al\.|[;,]\s*(?:and\s+|&\s+)?" + _AUTHOR + r"|\s*&\s*" + _AUTHOR + r"))")
# The same with initials first, as Science and PNAS print them: "A.-C. Villani et al., Single-cell RNA-seq reveals
# ...", "J. W. Schoggins, C. M. Rice, Interferon-stimulated genes ...", "16. K. Polański et al., BBKNN: ...". "et al.,"
# before a year is a citation in prose ("J. Smith et al., 2020 found"), not an entry.
_INITIALS_FIRST = r"((?:[A-Z]\.\s?-?){1,3})\s*[A-Z][\w'’-]+"
_REFERENCE_ENTRY_INITIALS_FIRST = re.compile(
    r"\s*(?:(?:\(\d{1,3}\)|\[\d{1,3}\]|\d{1,3}\.)\s*)?" + _INITIALS_FIRST
    + r"(?:\s+et al\.,\s+(?!\(?(?:19|20)\d\d)|,\s+" + _INITIALS_FIRST + r"\s*,)")


def is_reference_entry(sentence: str) -> bool:
    """Whether ``sentence`` is an entry of a reference list that extraction left in the running text (the list
    was not recognised as one): it gives another paper's authors and title, never this paper's finding, and a
    title that shares a question's words ("Hepatitis C virus protease NS3/4A cleaves mitochondrial antiviral
    signaling protein ...") was quoted, or judged to support a sentence, as if the paper said it."""
    text = " ".join(sentence.split())
    if _REFERENCE_ENTRY.match(text):
        return True
    entry = _REFERENCE_ENTRY_INITIALS_FIRST.match(text)
    if entry is None:
        return False
    if entry.group(2) is None:  # "et al.,"
        return True
    # Two names with one and the same single initial, "S. Typhimurium, S. Enteritidis, and ...", are serovars of
    # one genus, not two authors.
    first, second = (group.replace(" ", "") for group in entry.group(1, 2))
    return not (first == second and len(first) == 2)


def is_back_matter(sentence: str) -> bool:
    """Whether ``sentence`` thanks someone, states funding or a declaration, says which author did what, or says
    where the paper's data, code or materials can be had."""
    text = " ".join(sentence.split())
    return bool(_BACK_MATTER.search(text) or _WHO_DID_WHAT.match(text) or _AVAILABILITY.search(text))


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


def asks_about_availability(question: str) -> bool:
    """Whether ``question`` asks where a paper's data, code or materials can be had."""
    return bool(_ASKS_AVAILABILITY.search(question))


def asks_about_back_matter(question: str) -> bool:
    """Whether ``question`` asks about funding, thanks, interests, authorship or where data, code or materials can be
    had (then back matter answers it)."""
    return bool(_ASKS.search(question)) or asks_about_availability(question)


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
    thank", a statement of availability (or the paper saying it releases its code or data, back matter or not)
    for "where is the data available", any for authorship or competing interests. No other sentence can answer
    such a question."""
    if not asks_about_back_matter(question):
        return False
    if _ASKS_FUNDING.search(question):
        return back_matter and bool(_STATES_FUNDING.search(sentence))
    if _ASKS_THANKS.search(question):
        return back_matter and bool(_STATES_THANKS.search(sentence))
    if asks_about_availability(question):
        # A paper's own "We release our code ..." is not back matter, and answers this question all the same.
        return bool(_AVAILABILITY.search(sentence) or _RELEASES.search(sentence))
    return back_matter
