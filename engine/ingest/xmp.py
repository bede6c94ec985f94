"""The bibliographic fields of a PDF's XMP packet (Dublin Core and PRISM).

XMP is XML written by whatever made the PDF: publishers' packets are good, templates' are
sometimes stale (acmart names "ACM Transactions on Graphics" for every paper), and some files
carry malformed or enormous packets. A packet is read only up to :data:`MAX_XMP_BYTES`; one that
does not parse is ignored with a log line, never an error.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

log = logging.getLogger(__name__)

MAX_XMP_BYTES = 1 << 20  # real packets are a few KiB to a few dozen; more is padding or abuse
_NS = {
    "dc": "http://purl.org/dc/elements/1.1/",
    "prism": "http://prismstandard.org/namespaces/basic/2.0/",
    "prism3": "http://prismstandard.org/namespaces/basic/3.0/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
}
_DOCTYPE = re.compile(r"<!DOCTYPE|<!ENTITY", re.I)
_YEAR = re.compile(r"^\s*(1[89]\d\d|20\d\d)\b")


@dataclass(frozen=True)
class XmpFields:
    title: str = ""
    creators: tuple[str, ...] = ()
    doi: str = ""
    publication: str = ""
    year: int | None = None


def read_xmp(packet: str | None) -> XmpFields:
    """The fields of ``packet`` (the XML text), empty for a missing, huge or malformed packet."""
    if not packet or not packet.strip():
        return XmpFields()
    if len(packet) > MAX_XMP_BYTES:
        log.warning("XMP metadata of %d characters ignored (more than %d)", len(packet), MAX_XMP_BYTES)
        return XmpFields()
    if _DOCTYPE.search(packet):  # entity declarations have no place in XMP: refuse rather than expand
        log.warning("XMP metadata with a DOCTYPE/ENTITY declaration ignored")
        return XmpFields()
    try:
        root = ET.fromstring(packet.strip().strip("\x00"))
    except ET.ParseError as exc:
        log.warning("malformed XMP metadata ignored (%s)", exc)
        return XmpFields()
    title = _first(_values(root, "dc:title"))
    year = None
    for tag in ("prism:coverDate", "prism:publicationDate", "prism3:coverDate", "prism3:publicationDate"):
        match = _YEAR.match(_first(_values(root, tag)))
        if match:
            year = int(match.group(1))
            break
    return XmpFields(
        title=title,
        creators=tuple(value for value in _values(root, "dc:creator") if value),
        doi=_first(_values(root, "prism:doi") + _values(root, "prism3:doi")),
        publication=_first(_values(root, "prism:publicationName") + _values(root, "prism3:publicationName")),
        year=year,
    )


def _values(root: ET.Element, tag: str) -> list[str]:
    """Text of every ``tag`` element, or of the ``rdf:li`` items inside it (Seq, Bag, Alt)."""
    found: list[str] = []
    for element in root.iter(_qualified(tag)):
        items = list(element.iter(_qualified("rdf:li")))
        texts = [item.text or "" for item in items] if items else [element.text or ""]
        found.extend(" ".join(text.split()) for text in texts)
    # An attribute form (<rdf:Description prism:doi="..."/>) is as valid as an element.
    for element in root.iter(_qualified("rdf:Description")):
        value = element.get(_qualified(tag))
        if value:
            found.append(" ".join(value.split()))
    return found


def _first(values: list[str]) -> str:
    return next((value for value in values if value), "")


def _qualified(tag: str) -> str:
    prefix, name = tag.split(":")
    return f"{{{_NS[prefix]}}}{name}"
