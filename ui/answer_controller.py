"""Connects the ask pane to the engine client and the viewer: asking with a scope, streaming,
cancelling, opening a citation where it came from, past questions and export."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMainWindow

from engine.request import AskRequest, Scope
from engine.types import Answer, AnswerMode, Citation
from ui import reference_export
from ui.ask_pane import EVERYTHING, LIBRARY, SELECTED, AskPane
from ui.claim_check import as_reference, check_html
from ui.collection_scope import COLLECTION
from ui.engine_client import EngineClient
from ui.engine_tasks import PassageLocation
from ui.highlights_export import save_highlights
from ui.library_pane import LibraryPane
from ui.pdf_viewer import PdfViewer

_MESSAGE_MS = 8000
_EXPORTS = {"markdown": ("Export as Markdown", "Markdown (*.md)", ".md"),
            "bibtex": ("Export the cited papers' references", "", ".bib")}  # BibTeX, RIS or CSL-JSON


def export_file_name(question: str, suffix: str, words: int = 8) -> str:
    """A file name from the question: ``how-does-specter-embed-papers.md`` (``answer.md`` if nothing is left)."""
    kept = re.findall(r"[^\W_]+", unicodedata.normalize("NFKC", question).lower())[:words]
    stem = "-".join(kept)[:80].strip("-")
    return f"{stem or 'answer'}{suffix}"


def nothing_relevant_text(scope: str, selected: int, datastores: bool, listed: int = 0) -> str:
    """The "nothing relevant" answer, naming where Quire looked; the closest passages are mentioned
    only when ``listed`` says some are shown."""
    if scope == SELECTED:
        where = "the selected paper" if selected == 1 else f"the {selected} selected papers"
    elif scope == LIBRARY or not datastores:
        where = "your library"
    else:
        where = "your library or the attached datastores"
    widen = ", choose a wider scope" if scope == SELECTED or (scope == LIBRARY and datastores) else ""
    closest = "The closest passages are listed below; try" if listed else "Nothing came close either; try"
    return (f"None of the passages found in {where} addresses this question, so there is no answer to give. "
            f"{closest} other words{widen}, or add papers on the topic.")


EMPTY_LIBRARY = ("Your library is empty: add PDFs first (drop them on the window, or File › Add PDFs…), or try "
                 "the demo papers. Then ask again.")


def citation_for(answer: Answer, n: int, sentence_index: int) -> Citation | None:
    """The citation of reference ``n`` in the clicked sentence, else the strongest one anywhere."""
    if 0 <= sentence_index < len(answer.sentences):
        for citation in answer.sentences[sentence_index].citations:
            if citation.n == n:
                return citation
    candidates = [c for sentence in answer.sentences for c in sentence.citations if c.n == n]
    return max(candidates, key=lambda c: c.support) if candidates else None


class AnswerController(QObject):
    def __init__(self, client: EngineClient, pane: AskPane, viewer: PdfViewer, library: LibraryPane,
                 window: QMainWindow) -> None:
        super().__init__(window)
        self._client, self._pane, self._viewer, self._library, self._window = client, pane, viewer, library, window
        self._history: dict[str, Answer] = {}
        self._export_folder = str(Path.home())
        self._cancel_requested = False
        self._scope: tuple[str, int, bool] = (EVERYTHING, 0, False)
        self._asked = 0  # which question the pane is showing; results of earlier ones are not shown
        client.answer_token.connect(pane.append_token)
        client.answer_stage.connect(pane.set_stage)
        pane.cancel_requested.connect(self.cancel)
        pane.citation_activated.connect(self.open_citation)
        pane.history_activated.connect(self._open_past)
        pane.history_delete_requested.connect(self.delete_past)
        pane.check_passage_activated.connect(self.open_checked_passage)
        self.checked: list[Any] = []  # the passages of the claim check shown
        pane.export_requested.connect(self.export)
        client.settings_changed.connect(self.refresh_model_size)
        self.refresh_model_size()

    def refresh_model_size(self) -> None:
        """Tell the pane whether the model can write, so ticking "Written answer" warns before the wait."""
        self._client.model_is_small(self._pane.set_small_model)

    def _status(self, message: str) -> None:
        self._window.statusBar().showMessage(message, _MESSAGE_MS)

    def ask(self) -> bool:
        """Ask what is in the question box within the chosen scope; False if there is nothing to ask."""
        question = self._pane.question()
        if not question:
            self._status("Type a question first.")
            self._pane.question_box.setFocus()
            return False
        if self._client.asking and not self._cancel_requested:
            self._status("Still answering the last question; press Esc to stop it.")
            return False
        scope = self._pane.scope()
        datastores = bool(self._library.datastore_entries)
        if (self._library.model.rowCount() == 0 and not self._client.ingesting
                and (scope != EVERYTHING or not datastores)):
            self._status(EMPTY_LIBRARY)
            self._pane.show_message(question, EMPTY_LIBRARY)
            return False
        doc_ids = self._library.selected_doc_ids() if scope == SELECTED else None
        if scope == SELECTED and not doc_ids:
            self._status("Select one or more papers in the library to ask about just those.")
            return False
        if scope == COLLECTION:
            doc_ids = self._library.collection_doc_ids(self._pane.collection)
            if not doc_ids:
                self._status("No paper is filed in that collection; choose another scope.")
                return False
        if self._client.asking:
            self._status("Your question starts as soon as the last one has stopped.")
        elif self._client.ingesting:
            self._status("Your question will be answered once the papers being added are stored.")
        self._cancel_requested = False
        self._asked += 1
        current = self._asked
        self._pane.start_answer(question)
        label = self._pane.scope_label() + (f" ({len(doc_ids)})" if doc_ids else "")
        self._scope = (scope, len(doc_ids or ()), datastores)
        library_only = scope in (LIBRARY, SELECTED, COLLECTION)
        request = AskRequest(question, scope=Scope(source="library" if library_only else "all",
                                                   doc_ids=tuple(doc_ids) if doc_ids else None, label=label),
                             mode=self._pane.mode())
        self._client.ask(request, lambda answer: self.show(answer, current), on_failure=lambda: self._failed(current))
        return True

    def _failed(self, asked: int) -> None:
        """The question ended without an answer (an error, already shown, or a cancel before any text)."""
        if asked != self._asked or self._cancel_requested:
            return  # a cancelled question: the pane already said so, and may be busy with a newer one
        if self._pane.viewing_past:
            self._pane.finish()  # the error dialog says why; the past answer read meanwhile stays
            return
        self._pane.show_failure("No answer: see the message for why. Fix that and ask again.")

    def cancel(self) -> None:
        """Stop answering. The pane is ready again at once; the engine stops at its next check (a model
        being loaded finishes loading first), and a question asked meanwhile starts right after."""
        if self._cancel_requested or not self._pane.answering:
            return
        self._cancel_requested = True
        self._client.cancel_answer()
        if self._pane.viewing_past:  # a past answer is on screen: leave it there
            self._pane.finish()
            self._status("Stopped answering; ask again whenever you are ready.")
            return
        self._pane.show_stopped()

    def show(self, answer: Answer, asked: int | None = None) -> None:
        if asked is not None and asked != self._asked:
            self.refresh_history()  # a cancelled question's partial answer: kept in the history only
            return
        if asked is not None and self._pane.viewing_past:
            # The user went on to read a past answer meanwhile: do not take it off the screen.
            self._pane.finish()
            if not (self._cancel_requested or answer.cancelled):
                self._status(f"The answer to “{answer.question}” is ready in Past questions.")
            self._cancel_requested = False
            self.refresh_history()
            return
        if asked is not None and self._cancel_requested:
            # The pane said "Stopped" the moment Cancel was pressed and keeps the text streamed so far;
            # what the engine hands back afterwards goes to the history and must not redraw that view.
            self._cancel_requested = False
            self._pane.keep_stopped(answer if answer.cancelled and answer.sentences else None)
            self.refresh_history()
            return
        if answer.cancelled and not answer.sentences:
            self.refresh_history()
            return
        self._cancel_requested = False
        if answer.mode == AnswerMode.NO_EVIDENCE and asked is not None and answer.sentences:
            # The engine's words do not know the app's scopes.
            text = nothing_relevant_text(*self._scope, listed=len(answer.contexts))
            answer = replace(answer, text=text, sentences=(replace(answer.sentences[0], text=text),))
        self._pane.show_answer(answer)
        self._show_figures(answer)
        if answer.id:
            self._history[answer.id] = answer
        self.refresh_history()

    def _show_figures(self, answer: Answer) -> None:
        """Fetch pictures of the figures the answer cites and draw them in, once they are rendered."""
        if any(sentence.citations for sentence in answer.sentences):
            self._client.figure_images(answer, lambda figures: self._pane.show_figures(answer, figures))

    def refresh_history(self) -> None:
        self._client.list_answers(self._pane.set_history)

    def _open_past(self, answer_id: str) -> None:
        """Show a past answer at once, whatever runs: reading the history is quick work on the quick
        lane, so it never waits for an answer or a table being made."""
        if answer_id in self._history:
            self._reopen(self._history[answer_id])
        else:
            self._client.load_answer(answer_id, self._reopen)

    def _reopen(self, answer: Answer) -> None:
        self._history[answer.id] = answer
        # A past answer whose papers' files are gone still opens; the status bar says which.
        self._client.answer_file_notices(answer, self._say_missing)
        if self._pane.answering:
            self._pane.show_past_beside(answer)  # the question being answered goes on, its progress shown
        else:
            self._pane.show_answer(answer, reopened=True)
            self._show_figures(answer)

    def _say_missing(self, notices: list[str]) -> None:
        if notices:
            self._status(" ".join(notices))

    def delete_past(self, answer_id: str) -> None:
        """Delete a past question and its answer from the history (the papers are not touched)."""
        self._history.pop(answer_id, None)
        if self._pane.answer is not None and self._pane.answer.id == answer_id:
            self._pane.clear_answer()

        def deleted(_: object) -> None:
            self._status("Deleted the question from the history.")
            self.refresh_history()
        self._client.delete_answer(answer_id, deleted)

    def check_claim(self, claim: str) -> None:
        """Find passages that support or contradict ``claim`` (selected or pasted text) and list them."""
        claim = " ".join(claim.split())
        if not claim:
            self._status("Select a sentence, or type one, to check it against your papers.")
            return
        if self._client.asking and not self._cancel_requested:
            self._status("Still answering; press Esc to stop it first.")
            return
        self._pane.start_answer(claim)
        self._pane.set_stage("Checking the claim")

        def show(result: Any) -> None:
            self.checked = list(result.passages)
            self._pane.show_check(check_html(result.claim, self.checked, result.notes))
        self._client.check_claim(claim, show,
                                 lambda: self._pane.show_failure("The claim could not be checked: see the message."))

    def open_checked_passage(self, index: int) -> None:
        if 0 <= index < len(self.checked):
            reference, citation = as_reference(self.checked[index])
            self._client.locate(reference, citation, self._show_location)

    def open_citation(self, n: int, sentence_index: int) -> None:
        answer = self._pane.answer
        if answer is None:
            return
        citation = citation_for(answer, n, sentence_index)
        try:
            # [n] names a paper; the clicked sentence's citation names the exact passage it relies on.
            reference = answer.passage(citation.passage_id) if citation else answer.reference(n)
        except KeyError:
            try:
                reference = answer.reference(n)
            except KeyError:
                return
        if self._client.busy:
            self._status(f"Opening [{n}] once the engine finishes what it is doing…")
        self._client.locate(reference, citation, self._show_location)

    def _show_location(self, location: PassageLocation) -> None:
        reference, bib = location.reference, location.reference.bib
        if location.path:
            title = bib.title or Path(location.path).name
            if self._viewer.show_passage(location.path, location.page, location.passage_rects, location.quote_rects,
                                         title=title, figure_rects=location.figure_rects):
                self._status(f"[{reference.n}] {title}, page {location.page}")
            return
        if location.removed:
            self._status(f"[{reference.n}] {bib.title or 'This paper'} was removed from the library; "
                         "showing the quoted passage as the answer saved it.")
        self._viewer.show_record(bib.title, reference.text, authors=bib.authors, year=bib.year,
                                 source="" if location.removed else reference.source, url=bib.url,
                                 quote=location.quote, removed=location.removed)

    def export(self, kind: str) -> None:
        answer = self._pane.answer
        if answer is not None and kind == "highlights" and answer.id:
            save_highlights(self._client, self._window, answer.id, self._status)
            return
        if answer is None or kind not in _EXPORTS:
            return
        caption, file_filter, suffix = _EXPORTS[kind]
        suggested = Path(self._export_folder) / export_file_name(answer.question, suffix)
        if kind == "bibtex":  # references: the user picks the reference manager's format in the dialog
            chosen = reference_export.ask_where(self._window, caption, suggested)
            if chosen is None:
                return
            kind, path = chosen
        else:
            path, _ = QFileDialog.getSaveFileName(self._window, caption, str(suggested), file_filter)
            if not path:
                return

        self._export_folder = str(Path(path).parent)

        def write(text: str) -> None:
            try:
                Path(path).write_text(text, encoding="utf-8")
            except OSError as exc:
                self._client.error.emit(f"Could not write {path}: {exc.strerror or exc}. Choose another folder.")
                return
            self._status(f"Saved {Path(path).name}.")
        self._client.render_answer(answer, kind, write)
