"""Past answers in the library catalog (table ``answers``, schema version 2), newest first."""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine.errors import EngineError
from engine.store.catalog import Library
from engine.store.record import answer_from_dict, answer_to_dict
from engine.types import Answer


class AnswerNotFoundError(EngineError):
    """No saved answer has the requested id."""


@dataclass(frozen=True)
class AnswerSummary:
    id: str
    question: str
    created_at: float
    mode: str
    cancelled: bool
    model: str = ""  # the language model's file name, "" for an evidence digest written without one
    scope: str = ""  # where the app looked ("Library only", "Selected papers (2)"); "" when not recorded
    asked: str = ""  # the mode asked for ("write", "auto", "digest"): a digest given for "write" is a fallback


def save_answer(library: Library, answer: Answer) -> None:
    record = json.dumps(answer_to_dict(answer), ensure_ascii=False)
    with library.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO answers(id, question, created_at, mode, cancelled, record) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     (answer.id, answer.question, answer.created_at, answer.mode.value, int(answer.cancelled), record))


def list_answers(library: Library, limit: int = 200) -> list[AnswerSummary]:
    rows = library.query("SELECT id, question, created_at, mode, cancelled, json_extract(record, '$.model'), "
                         "json_extract(record, '$.settings.scope'), json_extract(record, '$.settings.mode') "
                         "FROM answers ORDER BY created_at DESC LIMIT ?", (limit,))
    return [AnswerSummary(r[0], r[1], r[2], r[3], bool(r[4]), str(r[5] or ""), str(r[6] or ""), str(r[7] or ""))
            for r in rows]


def load_answer(library: Library, answer_id: str) -> Answer:
    """The saved answer with this id (or unique id prefix)."""
    rows = library.query("SELECT record FROM answers WHERE id LIKE ? LIMIT 2",
                         (answer_id.replace("%", "").replace("_", "") + "%",))
    if len(rows) != 1:
        raise AnswerNotFoundError(f"No saved answer has the id {answer_id!r}" +
                                  (" (the prefix is ambiguous)" if rows else "") + "; list them with: quire answers")
    return answer_from_dict(json.loads(rows[0][0]))


def delete_answer(library: Library, answer_id: str) -> None:
    with library.transaction() as conn:
        conn.execute("DELETE FROM answers WHERE id = ?", (load_answer(library, answer_id).id,))
