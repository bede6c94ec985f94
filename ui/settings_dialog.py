"""Settings › the engine's Settings object: model file, embedder, threads, GPU layers, top N,
feedback and rewriting. The dialog edits a copy; the engine client saves it (TOML, atomically)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)


class SettingsDialog(QDialog):
    """Edits ``engine.config.Settings`` (received from the engine client, so the UI never loads it itself)."""

    def __init__(self, settings: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Quire Settings")
        self.setAccessibleName("Settings")
        self._original = settings
        generation, retrieval = settings.generation, settings.retrieval

        self.model_edit = self._path_row("Language model file (GGUF); empty = the bundled SmolLM2",
                                         generation.model, folder=False)
        self.embedder_edit = self._path_row("Embedder folder (sentence-transformers); empty = the bundled MiniLM",
                                            retrieval.embedder, folder=True)
        self.threads_box = self._spin(0, 256, generation.threads, "Threads", "0 = all physical cores")
        self.gpu_layers_box = self._spin(-1, 999, generation.gpu_layers, "GPU layers",
                                         "Layers offloaded to the GPU; -1 = all, 0 = CPU only")
        self.top_n_box = self._spin(1, 50, retrieval.top_n, "Passages per answer (top N)",
                                    "How many passages the answer is written from")
        self.feedback_box = QCheckBox("Self-feedback: review the draft and revise it", self)
        self.feedback_box.setChecked(generation.feedback)
        self.feedback_box.setAccessibleName("Self-feedback")
        self.rewrite_box = QCheckBox("Rewrite the question into search queries first", self)
        self.rewrite_box.setChecked(retrieval.rewrite)
        self.rewrite_box.setAccessibleName("Query rewriting")
        self.spelling_box = QCheckBox("Also search for the papers' spelling of a misspelled word", self)
        self.spelling_box.setChecked(retrieval.spelling)
        self.spelling_box.setAccessibleName("Spelling correction")

        form = QFormLayout()
        form.addRow("Model file", self.model_edit.parentWidget())
        form.addRow("Embedder", self.embedder_edit.parentWidget())
        form.addRow("Threads", self.threads_box)
        form.addRow("GPU layers", self.gpu_layers_box)
        form.addRow("Top N", self.top_n_box)
        form.addRow("", self.feedback_box)
        form.addRow("", self.rewrite_box)
        form.addRow("", self.spelling_box)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
                                   | QDialogButtonBox.StandardButton.RestoreDefaults, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self._restore_defaults)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(560)

    def settings(self) -> Any:
        """The edited settings, other sections and values unchanged."""
        original = self._original
        generation = replace(original.generation, model=self.model_edit.text().strip(),
                             threads=self.threads_box.value(), gpu_layers=self.gpu_layers_box.value(),
                             feedback=self.feedback_box.isChecked())
        retrieval = replace(original.retrieval, embedder=self.embedder_edit.text().strip(),
                            top_n=self.top_n_box.value(), rewrite=self.rewrite_box.isChecked(),
                            spelling=self.spelling_box.isChecked())
        return replace(original, generation=generation, retrieval=retrieval)

    def _restore_defaults(self) -> None:
        defaults = type(self._original)()
        self.model_edit.setText(defaults.generation.model)
        self.embedder_edit.setText(defaults.retrieval.embedder)
        self.threads_box.setValue(defaults.generation.threads)
        self.gpu_layers_box.setValue(defaults.generation.gpu_layers)
        self.top_n_box.setValue(defaults.retrieval.top_n)
        self.feedback_box.setChecked(defaults.generation.feedback)
        self.rewrite_box.setChecked(defaults.retrieval.rewrite)
        self.spelling_box.setChecked(defaults.retrieval.spelling)

    def _spin(self, low: int, high: int, value: int, name: str, tip: str) -> QSpinBox:
        box = QSpinBox(self)
        box.setRange(low, high)
        box.setValue(value)
        box.setAccessibleName(name)
        box.setToolTip(tip)
        if low == 0 and name == "Threads":
            box.setSpecialValueText("Automatic")
        return box

    def _path_row(self, placeholder: str, value: str, *, folder: bool) -> QLineEdit:
        row = QWidget(self)
        edit = QLineEdit(value, row)
        edit.setPlaceholderText(placeholder)
        edit.setAccessibleName("Embedder folder" if folder else "Model file")
        edit.setClearButtonEnabled(True)
        browse = QPushButton("Browse…", row)
        browse.setAccessibleName("Choose the embedder folder" if folder else "Choose the model file")
        browse.clicked.connect(lambda: self._browse(edit, folder))
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(edit, 1)
        layout.addWidget(browse)
        return edit

    def _browse(self, edit: QLineEdit, folder: bool) -> None:
        if folder:
            chosen = QFileDialog.getExistingDirectory(self, "Choose an embedder folder", edit.text())
        else:
            chosen, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model", edit.text(),
                                                    "GGUF models (*.gguf);;All files (*)")
        if chosen:
            edit.setText(chosen)
