"""Settings › the engine's Settings object: model file, embedder, threads, GPU layers, top N,
feedback, rewriting, retrieval while writing, and the named presets that set several at once (a preset's keys the dialog
has no field for, such as the second reading, are kept with the edited copy). The dialog edits a
copy; the engine client saves it (TOML, atomically).

A model file or embedder folder is checked when OK is pressed (a GGUF header and an
architecture llama.cpp supports; a folder with a sentence-transformers model) on the engine
client's quick lane, given as ``run_check``, and a problem is shown in the dialog under the name
the dialog gives the field, so a bad path is never saved. Each option says when it takes effect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.presets import apply_preset, presets
from engine.types import MULTILINGUAL_EMBEDDER
from ui.engine_tasks import check_model_file, is_small_model_file
from ui.errors import for_the_app

MODEL_FIELD, EMBEDDER_FIELD = "Model file", "Embedder"
WHEN_IT_APPLIES = ("Changes apply to the next question. A new model file, threads or GPU layers are used when "
                   "the model is next loaded; a new embedder re-embeds your papers in the background.")
SMALL_MODEL_NOTE = ("With a model this small, answers are evidence digests (verbatim quotes by theme) unless "
                    "“Written answer” is ticked beside the Ask button; self-feedback applies only to written "
                    "answers, and query rewriting is skipped.")


def check_embedder_folder(path: str) -> str:
    """``""`` when ``path`` is empty or a folder holding a sentence-transformers model, else why not."""
    if not path:
        return ""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        return f"{path}: no such folder. Choose the folder of a sentence-transformers model, or leave it empty."
    markers = ("modules.json", "config.json", "config_sentence_transformers.json")
    if not any((folder / name).is_file() for name in markers):
        return (f"{path}: this folder holds no sentence-transformers model (no modules.json or config.json). "
                "Choose the model's own folder.")
    return ""


Problems = dict[str, str]  # field label -> problem (empty: all good)
CheckRunner = Callable[[Callable[[], Problems], Callable[[Problems], None]], None]


def run_here(check: Callable[[], Problems], done: Callable[[Problems], None]) -> None:
    """Run the check at once, on the caller's thread: for a dialog opened without an engine client."""
    done(check())
# Retrieval while writing (generation.retrieval_stride): the choices offered, each with its measured cost.
WHILE_WRITING = ((0, "Off: search once, before writing"),
                 (-1, "At each sentence end (writing 1.3× as long on a CPU)"),
                 (16, "Every 16 tokens (writing ≈4× as long on a CPU)"),
                 (4, "Every 4 tokens (writing 1.8–11× as long on a CPU)"))
WHILE_WRITING_TIP = ("Search again while the model writes and swap in the passages found (In-Context RALM). "
                     "Measured with the 1.5B writer on a 2-core CPU (docs/answers.md): each swap reads the new "
                     "passages and the draft again, 170-440 prompt tokens an answer at sentence ends and up to "
                     "8,190 every 4 tokens; on 30 questions the answers cited and stated the same as searching "
                     "once, so it is off.")


class SettingsDialog(QDialog):
    """Edits ``engine.config.Settings`` (received from the engine client, so the UI never loads it itself)."""

    def __init__(self, settings: Any, parent: QWidget | None = None, *, run_check: CheckRunner = run_here) -> None:
        super().__init__(parent)
        self.setWindowTitle("Quire Settings")
        self.setAccessibleName("Settings")
        self._original = settings
        self._base = settings  # what settings() builds on: the original, or the last preset chosen
        self._run_check = run_check
        self.problems: Problems = {}
        generation, retrieval = settings.generation, settings.retrieval

        self.preset_box = QComboBox(self)
        self.preset_box.setAccessibleName("Preset")
        self.preset_box.addItem("Custom", "")
        bundled = presets()
        for item in bundled:
            self.preset_box.addItem(item.name.capitalize(), item.name)
            self.preset_box.setItemData(self.preset_box.count() - 1, item.description, Qt.ItemDataRole.ToolTipRole)
        # Show the preset the settings already match (a specific one before "default"), else "Custom".
        matching = [item.name for item in bundled if not item.changes(settings)]
        in_effect = next((name for name in matching if name != "default"), matching[0] if matching else "")
        self.preset_box.setCurrentIndex(max(0, self.preset_box.findData(in_effect)))
        self.preset_box.setToolTip("Sets several options at once; the model, embedder, threads and GPU layers are kept")
        self.preset_box.activated.connect(self._choose_preset)
        self.model_edit = self._path_row("Language model file (GGUF); empty = the bundled SmolLM2",
                                         generation.model, folder=False)
        self.embedder_edit = self._path_row("Embedder folder (sentence-transformers); empty = the bundled MiniLM",
                                            retrieval.embedder, folder=True)
        # The multilingual model is named, not a folder: a box beside the folder row chooses it.
        multilingual = retrieval.embedder == MULTILINGUAL_EMBEDDER
        if multilingual:
            self.embedder_edit.clear()
        self.multilingual_box = QCheckBox("Papers in other languages: search with the multilingual embedder", self)
        self.multilingual_box.setChecked(multilingual)
        self.multilingual_box.setAccessibleName("Multilingual embedder")
        self.multilingual_box.setToolTip(f"{MULTILINGUAL_EMBEDDER}: a question finds papers in other languages by "
                                         "meaning. About ten times slower to embed; changing it embeds the library "
                                         "again")
        self.multilingual_box.toggled.connect(self._row_of(self.embedder_edit).setDisabled)
        self._row_of(self.embedder_edit).setDisabled(multilingual)
        self.threads_box = self._spin(0, 256, generation.threads, "Threads", "0 = all physical cores")
        self.gpu_layers_box = self._spin(-1, 999, generation.gpu_layers, "GPU layers",
                                         "Layers offloaded to the GPU; -1 = all, 0 = CPU only")
        self.top_n_box = self._spin(1, 50, retrieval.top_n, "Passages per answer (top N)",
                                    "How many passages the answer is written from")
        self.feedback_box = QCheckBox("Self-feedback: review a written draft and revise it", self)
        self.feedback_box.setChecked(generation.feedback)
        self.feedback_box.setAccessibleName("Self-feedback")
        self.feedback_box.setToolTip("Two more model calls per written answer; evidence digests are not revised")
        self.rewrite_box = QCheckBox("Rewrite the question into search queries first", self)
        self.rewrite_box.setChecked(retrieval.rewrite)
        self.rewrite_box.setAccessibleName("Query rewriting")
        self.rewrite_box.setToolTip("Uses the language model; skipped when the model is too small to help. With the "
                                    "1.5B writer it took ~14 s a question and found the key passage no more "
                                    "often (docs/answers.md)")
        self.spelling_box = QCheckBox("Also search for the papers' spelling of a misspelled word", self)
        self.spelling_box.setChecked(retrieval.spelling)
        self.spelling_box.setAccessibleName("Spelling correction")
        self.reader_box = QCheckBox("Pick the sentence that answers with the trained answer reader", self)
        self.reader_box.setChecked(generation.answer_reader)
        self.reader_box.setAccessibleName("Answer reader")
        self.reader_box.setToolTip("About half a second more per answer on a laptop CPU; off, sentences are "
                                   "ranked by shared words and embedding similarity")
        self.while_writing_box = QComboBox(self)
        self.while_writing_box.setAccessibleName("Search while writing")
        self.while_writing_box.setToolTip(WHILE_WRITING_TIP)
        for stride, label in WHILE_WRITING:
            self.while_writing_box.addItem(label, stride)
        self._show_stride(generation.retrieval_stride)
        self.applies_label = self._note(WHEN_IT_APPLIES, "When settings apply")
        self.small_model_label = self._note(SMALL_MODEL_NOTE, "Small model note")
        self.problem_label = self._note("", "Settings problem")
        self.problem_label.setStyleSheet("color:#a1260d")
        self.model_edit.textChanged.connect(self._update_notes)

        form = QFormLayout()
        form.addRow("Preset", self.preset_box)
        form.addRow(MODEL_FIELD, self._row_of(self.model_edit))
        form.addRow(EMBEDDER_FIELD, self._row_of(self.embedder_edit))
        form.addRow("", self.multilingual_box)
        form.addRow("Threads", self.threads_box)
        form.addRow("GPU layers", self.gpu_layers_box)
        form.addRow("Top N", self.top_n_box)
        form.addRow("", self.feedback_box)
        form.addRow("", self.rewrite_box)
        form.addRow("", self.spelling_box)
        form.addRow("", self.reader_box)
        form.addRow("Search while writing", self.while_writing_box)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
                                        | QDialogButtonBox.StandardButton.RestoreDefaults, self)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self._restore_defaults)
        layout = QVBoxLayout(self)
        # The dialog grows when a note appears instead of squeezing the path rows above it.
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        layout.addLayout(form)
        layout.addWidget(self.small_model_label)
        layout.addWidget(self.applies_label)
        layout.addWidget(self.problem_label)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(560)
        self._update_notes()

    def settings(self) -> Any:
        """The edited settings, other sections and values unchanged."""
        original = self._base
        generation = replace(original.generation, model=self.model_edit.text().strip(),
                             threads=self.threads_box.value(), gpu_layers=self.gpu_layers_box.value(),
                             feedback=self.feedback_box.isChecked(), answer_reader=self.reader_box.isChecked(),
                             retrieval_stride=int(self.while_writing_box.currentData()))
        retrieval = replace(original.retrieval, embedder=self._embedder(),
                            top_n=self.top_n_box.value(), rewrite=self.rewrite_box.isChecked(),
                            spelling=self.spelling_box.isChecked())
        return replace(original, generation=generation, retrieval=retrieval)

    def accept(self) -> None:
        """Check the model file and embedder folder (with ``run_check``: llama.cpp's probe may take a
        moment), then close; a problem keeps the dialog open and names the field."""
        model, embedder = self.model_edit.text().strip(), self._embedder()
        changed = (model != self._original.generation.model, embedder != self._original.retrieval.embedder)
        if not any(changed):
            super().accept()
            return
        self.buttons.setEnabled(False)
        self.problem_label.setText("Checking…")
        self.problem_label.show()
        self._fit_height()

        def check() -> Problems:
            folder = changed[1] and embedder != MULTILINGUAL_EMBEDDER
            problems = {MODEL_FIELD: check_model_file(model) if changed[0] else "",
                        EMBEDDER_FIELD: check_embedder_folder(embedder) if folder else ""}
            return {label: problem for label, problem in problems.items() if problem}

        self._run_check(check, self._on_checked)

    def _on_checked(self, problems: Problems) -> None:
        self.problems = problems
        self.buttons.setEnabled(True)
        if not problems:
            self.problem_label.hide()
            super().accept()
            return
        self.problem_label.setText("\n".join(f"{label}: {for_the_app(problem)}" for label, problem in problems.items()))
        self.problem_label.show()
        self._fit_height()
        (self.model_edit if MODEL_FIELD in problems else self.embedder_edit).setFocus()

    def _update_notes(self) -> None:
        self.small_model_label.setVisible(is_small_model_file(self.model_edit.text().strip()))
        self._fit_height()

    def _fit_height(self) -> None:
        """Grow (never shrink) to the height the fields and the visible notes need at this width."""
        layout = self.layout()
        if layout is None:
            return
        layout.activate()
        needed = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else layout.sizeHint().height()
        if needed > self.height():
            self.resize(self.width(), needed)

    def _choose_preset(self, index: int) -> None:
        name = self.preset_box.itemData(index)
        if not name:
            return
        self._base = apply_preset(self.settings(), name)
        self._show(self._base)

    def _restore_defaults(self) -> None:
        self._base = apply_preset(self._base, "default")
        self._show(type(self._original)())

    def _show(self, settings: Any) -> None:
        """Put ``settings``' values in the dialog's fields."""
        generation, retrieval = settings.generation, settings.retrieval
        self.model_edit.setText(generation.model)
        multilingual = retrieval.embedder == MULTILINGUAL_EMBEDDER
        self.embedder_edit.setText("" if multilingual else retrieval.embedder)
        self.multilingual_box.setChecked(multilingual)
        self.threads_box.setValue(generation.threads)
        self.gpu_layers_box.setValue(generation.gpu_layers)
        self.top_n_box.setValue(retrieval.top_n)
        self.feedback_box.setChecked(generation.feedback)
        self.rewrite_box.setChecked(retrieval.rewrite)
        self.spelling_box.setChecked(retrieval.spelling)
        self.reader_box.setChecked(generation.answer_reader)
        self._show_stride(generation.retrieval_stride)

    def _show_stride(self, stride: int) -> None:
        """Select ``stride``'s choice; a stride set in the settings file that the list lacks is added to it."""
        index = self.while_writing_box.findData(stride)
        if index < 0:
            self.while_writing_box.addItem(f"Every {stride} tokens", stride)
            index = self.while_writing_box.count() - 1
        self.while_writing_box.setCurrentIndex(index)

    def _note(self, text: str, name: str) -> QLabel:
        label = QLabel(text, self)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)  # problems quote file names
        label.setAccessibleName(name)
        label.setStyleSheet("color:#666")
        label.setVisible(bool(text))
        return label

    def _spin(self, low: int, high: int, value: int, name: str, tip: str) -> QSpinBox:
        box = QSpinBox(self)
        box.setRange(low, high)
        box.setValue(value)
        box.setAccessibleName(name)
        box.setToolTip(tip)
        if low == 0 and name == "Threads":
            box.setSpecialValueText("Automatic")
        return box

    def _embedder(self) -> str:
        return MULTILINGUAL_EMBEDDER if self.multilingual_box.isChecked() else self.embedder_edit.text().strip()

    def _path_row(self, placeholder: str, value: str, *, folder: bool) -> QLineEdit:
        row = QWidget(self)
        edit = QLineEdit(value, row)
        edit.setPlaceholderText(placeholder)
        edit.setAccessibleName("Embedder folder" if folder else MODEL_FIELD)
        edit.setClearButtonEnabled(True)
        browse = QPushButton("Browse…", row)
        browse.setAccessibleName("Choose the embedder folder" if folder else "Choose the model file")
        browse.clicked.connect(lambda: self._browse(edit, folder))
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(edit, 1)
        layout.addWidget(browse)
        row.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        # Wrapped notes below report their height only for a given width, so the layout's minimum
        # misses it; a floor here keeps the fields whole whatever the notes need.
        edit.setMinimumHeight(edit.sizeHint().height())
        row.setMinimumHeight(row.sizeHint().height())
        return edit

    @staticmethod
    def _row_of(edit: QLineEdit) -> QWidget:
        """The row widget :meth:`_path_row` put ``edit`` in (with its Browse button)."""
        row = edit.parentWidget()
        assert row is not None
        return row

    def _browse(self, edit: QLineEdit, folder: bool) -> None:
        if folder:
            chosen = QFileDialog.getExistingDirectory(self, "Choose an embedder folder", edit.text())
        else:
            chosen, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model", edit.text(),
                                                    "GGUF models (*.gguf);;All files (*)")
        if chosen:
            edit.setText(chosen)
