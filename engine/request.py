"""What a question asks for, as one value: the CLI, the UI adapter and the benchmarks build an
:class:`AskRequest`, and the service checks it once (engine.service_ask.validated) before any work.

Plain values only, so every caller can build one without the engine; what needs the library (does a
named paper still exist, is a datastore installed) is checked by the service, which has it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# "auto": write, and show the evidence digest when the draft fails verification; "write": keep the
# draft whatever verification says; "digest": the evidence itself, no model writing.
MODES = ("auto", "write", "digest")

# Sources that are not a datastore's name (engine.service_search.select_sources).
ALL, LIBRARY, DATASTORE = "all", "library", "datastore"


@dataclass(frozen=True)
class Scope:
    """Where the answer may come from: ``source`` is "all", "library", "datastore" or one datastore's
    name; ``doc_ids`` (ids or unique id prefixes) limits it to those papers; ``label`` is how the
    user named the scope, kept with the answer in the history."""

    source: str = ALL
    doc_ids: tuple[str, ...] | None = None
    label: str = ""


@dataclass(frozen=True)
class RequestOptions:
    """Per-question overrides; None takes the value from the settings."""

    top_n: int | None = None  # passages an answer is written from
    feedback: bool | None = None  # self-feedback and one revision (two more model calls)
    rewrite: bool | None = None  # the model rewrites the question into search queries
    save: bool = True  # keep the answer in the history


@dataclass(frozen=True)
class AskRequest:
    """One question and how to answer it.

    ``mode`` None lets Quire decide: the settings' digest preference, and the digest when the model is
    too small to write; an explicit "auto", "write" or "digest" is used as given. ``model`` is a
    language model file to use instead of the configured one.
    """

    question: str
    scope: Scope = field(default_factory=Scope)
    mode: str | None = None
    model: str | Path | None = None
    options: RequestOptions = field(default_factory=RequestOptions)


def source_problem(source: str, datastore_names: Sequence[str]) -> str:
    """Why ``source`` cannot be searched given the installed datastores, or "" when it can."""
    if source in (ALL, LIBRARY) or source in datastore_names:
        return ""
    if source == DATASTORE:
        return "" if datastore_names else ("No datastore is installed; add one with "
                                          "`quire datastore add FILE --name NAME`.")
    names = ", ".join(datastore_names) or "none installed"
    return (f"Unknown search source {source!r}: use all, library, datastore or a datastore name "
            f"({names}).")


__all__ = ["ALL", "DATASTORE", "LIBRARY", "MODES", "AskRequest", "RequestOptions", "Scope", "source_problem"]
