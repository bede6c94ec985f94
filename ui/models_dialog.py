"""Models & Datastores: what is installed, what can be downloaded, and what this machine can run.

Every engine call goes through :class:`~ui.engine_client.EngineClient` (one worker thread);
download progress is relayed back by a signal, so the dialog never blocks and Cancel stops a
download between chunks (the partial file is kept, and the next download resumes it). Errors
reach the user through the client's ``error`` signal, like every other engine failure.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.progress import CancelToken, Progress, human_size
from ui import errors
from ui.engine_client import DEMO_DATASTORE, EngineClient
from ui.window_state import fit_to_screen

# A long client job, given the progress callback, the cancel token and what to call when it ends.
LongJob = Callable[[Callable[[Progress], None], CancelToken, Callable[[object], None], Callable[[], None]], None]
ROW = Qt.ItemDataRole.UserRole
MODEL_ROWS_SHOWN = 8  # the model list's height, in rows, before it scrolls


def _items(tree: QTreeWidget) -> list[QTreeWidgetItem]:
    """The top-level rows of ``tree``."""
    return [item for index in range(tree.topLevelItemCount()) if (item := tree.topLevelItem(index)) is not None]


class _ProgressRelay(QObject):
    """Emitted on the worker thread, delivered (queued) on the UI thread."""

    progress = Signal(object)


class ModelsDialog(QDialog):
    """The Models & Datastores dialog: ``ModelsDialog(client, parent=None)``."""

    def __init__(self, client: EngineClient, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models & Datastores")
        self.setAccessibleName("Models and datastores")
        self.resize(1100, 700)  # fitted to the screen when shown (ui.window_state.fit_to_screen)
        self._client = client
        self._cancel: CancelToken | None = None
        self._relay = _ProgressRelay(self)
        self._relay.progress.connect(self._on_progress)
        self.snapshot: dict[str, Any] = {}
        self.datastores_changed = False
        self._server_datastores: set[str] = set()
        self._done_text = ""

        self.hardware_label = QLabel("Checking this machine…", self)
        self.hardware_label.setWordWrap(True)
        self.hardware_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.recommendation_label = QLabel("", self)
        self.recommendation_label.setWordWrap(True)
        hardware_box = QGroupBox("This machine", self)
        hardware_layout = QVBoxLayout(hardware_box)
        hardware_layout.addWidget(self.hardware_label)
        hardware_layout.addWidget(self.recommendation_label)

        self.in_use_label = QLabel("", self)
        self.in_use_label.setAccessibleName("Language model in use")
        self.in_use_label.setTextFormat(Qt.TextFormat.PlainText)
        self.in_use_label.setWordWrap(True)
        self.models_tree = self._tree(["Model", "Kind", "Size", "Licence", "Verified by", "Status"], "Models")
        self.models_tree.setMinimumHeight(MODEL_ROWS_SHOWN * self.models_tree.fontMetrics().lineSpacing() * 3 // 2)
        self.models_tree.itemSelectionChanged.connect(self._update_buttons)
        self.download_button = QPushButton("Download", self)
        self.download_button.setToolTip("Download, verify and install the selected model (needs the network)")
        self.download_button.clicked.connect(self.download_selected)
        self.use_button = QPushButton("Use", self)
        self.use_button.setToolTip("Make the selected installed model the one Quire uses")
        self.use_button.clicked.connect(self.use_selected)
        models_box = self._box("Models", self.models_tree, [self.download_button, self.use_button],
                               above=self.in_use_label)

        self.datastores_tree = self._tree(["Datastore", "Papers", "Passages", "Size", "Embedder"], "Datastores")
        self.datastores_tree.itemSelectionChanged.connect(self._update_buttons)
        self.install_pack_button = QPushButton("Install pack…", self)
        self.install_pack_button.setToolTip("Install a prebuilt datastore pack from a file or a URL")
        self.install_pack_button.clicked.connect(lambda: self.install_pack())
        self.embed_datastore_button = QPushButton("Embed", self)
        self.embed_datastore_button.setToolTip("Embed the selected datastore's passages, so it is searched by "
                                               "meaning as well as by keyword (resumable; Cancel keeps what is done)")
        self.embed_datastore_button.clicked.connect(self.embed_selected_datastore)
        self.remove_datastore_button = QPushButton("Remove", self)
        self.remove_datastore_button.setToolTip("Detach and delete the selected datastore; answers stop using it")
        self.remove_datastore_button.clicked.connect(self.remove_selected_datastore)
        self.demo_datastore_button = QPushButton("Add sample datastore", self)
        self.demo_datastore_button.setToolTip("Attach the bundled sample of 3,529 computer-science papers (SciREX "
                                              "and SciTLDR), searchable by keyword at once")
        self.demo_datastore_button.clicked.connect(self.add_demo_datastore)
        datastores_box = self._box("Datastores", self.datastores_tree, [
            self.demo_datastore_button, self.embed_datastore_button, self.remove_datastore_button,
            self.install_pack_button])

        self.progress_label = QLabel("", self)
        self.progress_bar = QProgressBar(self)
        self.progress_bar.setAccessibleName("Download progress")
        self.cancel_button = QPushButton("Cancel download", self)
        self.cancel_button.clicked.connect(self.cancel_download)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress_label, 2)
        progress_row.addWidget(self.progress_bar, 3)
        progress_row.addWidget(self.cancel_button)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(hardware_box)
        layout.addWidget(models_box, 5)
        layout.addWidget(datastores_box, 2)
        layout.addLayout(progress_row)
        layout.addWidget(buttons)
        self._set_busy(False)
        self.refresh()

    # --- building ---------------------------------------------------------------------------

    def _tree(self, headers: list[str], name: str) -> QTreeWidget:
        tree = QTreeWidget(self)
        tree.setHeaderLabels(headers)
        tree.setRootIsDecorated(False)
        tree.setAlternatingRowColors(True)
        tree.setAccessibleName(name)
        tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        # Every column as wide as what it holds, so nothing is cut ("compl...a256"); where the dialog is
        # narrower than the columns, the list scrolls sideways instead.
        tree.header().setStretchLastSection(True)
        tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        return tree

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        fit_to_screen(self)

    def _box(self, title: str, tree: QTreeWidget, actions: list[QPushButton],
             above: QWidget | None = None) -> QGroupBox:
        box = QGroupBox(title, self)
        row = QHBoxLayout()
        row.addStretch(1)
        for button in actions:
            row.addWidget(button)
        layout = QVBoxLayout(box)
        if above is not None:
            layout.addWidget(above)
        layout.addWidget(tree)
        layout.addLayout(row)
        return box

    # --- loading ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read catalog, installed models, datastores and the hardware report (on the worker)."""
        self._client.models_snapshot(self._show_snapshot)

    @Slot(object)
    def _show_snapshot(self, snapshot: dict[str, Any]) -> None:
        self.snapshot = snapshot
        self._show_hardware(snapshot["report"])
        self._show_models(snapshot)
        self._show_datastores(snapshot["datastores"])
        self._update_buttons()

    def _show_hardware(self, report: dict[str, Any]) -> None:
        hardware, recommendation = report["hardware"], report["recommendation"]
        gpus = ", ".join(f"{gpu['name']} ({human_size(gpu['vram_free_bytes'])} free)" for gpu in hardware["gpus"])
        offload = {True: "llama.cpp can offload to the GPU", False: "llama.cpp is a CPU-only build",
                   None: "llama.cpp not available"}[hardware["gpu_offload"]]
        self.hardware_label.setText(
            f"{hardware['cpu_model'] or 'CPU'}: {hardware['physical_cores']} cores · "
            f"RAM {human_size(hardware['ram_total_bytes'])} ({human_size(hardware['ram_available_bytes'])} free) · "
            f"GPU: {gpus or 'none found'} · {offload}")
        fit = report.get("configured_fit")
        warning = f"\n⚠ {fit['warning']}" if fit and fit.get("warning") else ""
        if report.get("configured_problem"):
            warning += f"\n⚠ {report['configured_problem']}"
        self.recommendation_label.setText(
            f"Recommended: {recommendation['title']} · context {recommendation['context_size']:,} tokens · "
            f"GPU layers {recommendation['gpu_layers']} · {recommendation['threads']} threads\n"
            + "\n".join(f"• {reason}" for reason in recommendation["reasons"]) + warning)

    def _show_models(self, snapshot: dict[str, Any]) -> None:
        selected = self._selected_name()
        current = snapshot["current_model"]
        self.in_use_label.setText(f"Language model in use: {Path(current).name} ({current})" if current else
                                  "Language model in use: the bundled SmolLM2 135M (no model file is set in "
                                  "Settings; it is too small to write, so answers show the evidence digest)")
        self.models_tree.clear()
        installed = {model.name: model for model in snapshot["installed"]}
        in_use = {snapshot["current_model"], snapshot["current_embedder"]} - {""}
        for entry in snapshot["catalog"]:
            model = installed.pop(entry.name, None)
            if model is not None:
                status = "in use" if model.path in in_use else "installed"
                size = human_size(model.size_bytes)
            else:
                status = "bundled" if entry.bundled else ("available" if entry.can_download else "not downloadable")
                approximate = "" if entry.size_bytes else "~"
                size = approximate + human_size(entry.size_estimate) if entry.size_estimate else ""
            self._add_model_row([entry.title, entry.kind, size, entry.license, entry.verified_by, status],
                                {"name": entry.name, "kind": entry.kind, "installed": model is not None,
                                 "can_download": entry.can_download and model is None, "tooltip": entry.description})
        for model in installed.values():  # GGUF files the user put in the folder by hand
            status = "in use" if model.path in in_use else "installed"
            self._add_model_row([model.name, model.kind, human_size(model.size_bytes), "", model.verified_by, status],
                                {"name": model.name, "kind": model.kind, "installed": True, "can_download": False,
                                 "tooltip": model.path})
        listed = {model.path for model in snapshot["installed"]}
        for kind, path in (("llm", snapshot["current_model"]), ("embedder", snapshot["current_embedder"])):
            if path and path not in listed:  # chosen in Settings from elsewhere on disk: still show it in use
                self._add_model_row([Path(path).name, kind, "", "", "", "in use"],
                                    {"name": path, "kind": kind, "installed": True, "can_download": False,
                                     "tooltip": path})
        if not snapshot["current_model"]:
            self.models_tree.setToolTip("The language model in use is the bundled SmolLM2 135M "
                                        "(no model file is set in Settings)")
        if selected:
            self.select_model(selected)

    def _add_model_row(self, columns: list[str], data: dict[str, Any]) -> None:
        item = QTreeWidgetItem(columns)
        item.setData(0, ROW, data)
        item.setToolTip(0, data.get("tooltip", ""))
        self.models_tree.addTopLevelItem(item)

    def _show_datastores(self, datastores: list[Any]) -> None:
        self.datastores_tree.clear()
        self._server_datastores = {info.name for info in datastores if info.on_server}
        for info in datastores:
            if info.on_server:
                item = QTreeWidgetItem([info.name, f"{info.records:,}", f"{info.passages:,}", "on a server",
                                        server_state(info)])
                item.setToolTip(0, f"{info.location}: questions searched with datastores are sent to this server "
                                   "(and nowhere else); the papers stay there.")
                item.setToolTip(4, info.state)
            else:
                model = info.embedding_model or "not embedded (keyword search only; Embed adds meaning)"
                if info.embedding_model and info.embedded < info.passages:  # a stopped or killed run's vectors
                    model = f"{info.embedded:,} of {info.passages:,} embedded ({info.embedding_model}; Embed resumes)"
                item = QTreeWidgetItem([info.name, f"{info.records:,}", f"{info.passages:,}",
                                        human_size(info.size_bytes), model])
            item.setData(0, ROW, info.name)
            self.datastores_tree.addTopLevelItem(item)

    def selected_datastore(self) -> str:
        items = self.datastores_tree.selectedItems()
        return str(items[0].data(0, ROW)) if items else ""

    def select_datastore(self, name: str) -> bool:
        for item in _items(self.datastores_tree):
            if item.data(0, ROW) == name:
                self.datastores_tree.setCurrentItem(item)
                return True
        return False

    def embed_selected_datastore(self) -> None:
        name = self.selected_datastore()
        if name:
            self._start(f"Embedding {name}", partial(self._client.embed_datastore, name),
                        done=f"{name} is embedded: searched by meaning too.")

    def remove_selected_datastore(self) -> None:
        name = self.selected_datastore()
        question, detail = ((f"Disconnect the server datastore “{name}”?", "Its papers stop taking part in answers "
                             "and questions stop going to its server. The server keeps it; you can connect again.")
                            if name in self._server_datastores else
                            (f"Remove the datastore “{name}”?", "Its papers stop taking part in answers. Your library "
                             "is not touched; you can attach the datastore again later."))
        if not name or not errors.confirm(self, question, detail):
            return
        self._client.remove_datastore(name, lambda _: self._removed(name))

    def _removed(self, name: str) -> None:
        self.progress_label.setText(f"Removed the datastore {name}.")
        self.datastores_changed = True
        self.refresh()

    # --- selection ----------------------------------------------------------------------------

    def _selected(self) -> dict[str, Any] | None:
        items = self.models_tree.selectedItems()
        return items[0].data(0, ROW) if items else None

    def _selected_name(self) -> str:
        row = self._selected()
        return row["name"] if row else ""

    def select_model(self, name: str) -> bool:
        """Select the row of model ``name``; False if there is none."""
        for item in _items(self.models_tree):
            if item.data(0, ROW)["name"] == name:
                self.models_tree.setCurrentItem(item)
                return True
        return False

    def row_status(self, name: str) -> str:
        for item in _items(self.models_tree):
            if item.data(0, ROW)["name"] == name:
                return item.text(5)
        return ""

    def _update_buttons(self) -> None:
        row, busy = self._selected(), self._cancel is not None
        self.download_button.setEnabled(bool(row and row["can_download"]) and not busy)
        self.use_button.setEnabled(bool(row and row["installed"] and row["kind"] in ("llm", "embedder")) and not busy)
        self.install_pack_button.setEnabled(not busy)
        has_datastore = bool(self.selected_datastore())
        on_server = self.selected_datastore() in self._server_datastores  # embedded by whoever published it
        self.embed_datastore_button.setEnabled(has_datastore and not on_server and not busy)
        self.remove_datastore_button.setEnabled(has_datastore and not busy)
        attached = {str(item.data(0, ROW)) for item in _items(self.datastores_tree)}
        self.demo_datastore_button.setEnabled(DEMO_DATASTORE not in attached and not busy)

    def add_demo_datastore(self) -> None:
        """Attach the bundled sample datastore (keyword search at once; Embed adds search by meaning)."""
        self.demo_datastore_button.setEnabled(False)
        self.progress_label.setText("Attaching the sample datastore…")
        self._client.add_demo_datastore(self._demo_attached)

    def _demo_attached(self, _result: object) -> None:
        self.progress_label.setText("The sample datastore is attached.")
        self.datastores_changed = True
        self.refresh()

    # --- actions ------------------------------------------------------------------------------

    def download_selected(self) -> None:
        row = self._selected()
        if row and row["can_download"]:
            name = row["name"]
            self._start(f"Downloading {name}", partial(self._client.download_model, name))

    def install_pack(self, location: str | None = None) -> None:
        """Install a datastore pack from ``location`` (asks for a file or URL when None)."""
        if location is None:
            location = self._ask_pack_location()
            if not location:
                return
        self._start(f"Installing {location.rsplit('/', 1)[-1]}", partial(self._client.install_datastore, location))

    def _ask_pack_location(self) -> str:
        url, ok = QInputDialog.getText(self, "Install datastore pack",
                                       "A pack URL (https://…), or leave empty to choose a file:")
        if not ok:
            return ""
        if url.strip():
            return url.strip()
        path, _ = QFileDialog.getOpenFileName(self, "Choose a datastore pack", "", "Quire packs (*.quirepack *.tar);;"
                                              "All files (*)")
        return path

    def use_selected(self) -> None:
        row = self._selected()
        if row and row["installed"]:
            name = row["name"]
            self._client.use_model(name, self._used)

    @Slot(object)
    def _used(self, choice: Any) -> None:
        self.progress_label.setText(f"Now using {choice.model.name}" + (f" — {choice.warning}" if choice.warning
                                                                         else ""))
        self.refresh()

    def _start(self, label: str, start: LongJob, done: str = "Installed and verified.") -> None:
        """Run one long client job (download, install, embed) with this dialog's progress bar and Cancel."""
        self._done_text = done
        token = CancelToken()
        self._cancel = token
        self.progress_label.setText(label + "…")
        self.progress_bar.setRange(0, 0)  # busy until the size is known
        self._set_busy(True)
        emit = self._relay.progress.emit
        start(emit, token, self._finished, self._stopped)

    def cancel_download(self) -> None:
        if self._cancel is not None:
            self._cancel.cancel()
            self.progress_label.setText("Cancelling… (what was downloaded is kept for next time)")

    @Slot(object)
    def _on_progress(self, progress: Progress) -> None:
        if self._cancel is None:
            return
        if progress.total > 0:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(1000 * progress.fraction))
            self.progress_label.setText(
                f"{progress.label}: {human_size(progress.done)} of {human_size(progress.total)}")
        else:
            self.progress_label.setText(f"{progress.label} ({progress.stage})")

    @Slot(object)
    def _finished(self, _result: object) -> None:
        self._cancel = None
        self._set_busy(False)
        self.progress_label.setText(self._done_text)
        self.refresh()

    def _stopped(self) -> None:
        cancelled = self._cancel is not None and self._cancel.cancelled
        self._cancel = None
        self._set_busy(False)
        self.progress_label.setText("Cancelled; the next download resumes where this one stopped." if cancelled
                                    else "Stopped; see the message for why.")
        self.refresh()

    def _set_busy(self, busy: bool) -> None:
        self.progress_bar.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self._update_buttons()

    @property
    def downloading(self) -> bool:
        return self._cancel is not None

    def reject(self) -> None:
        self.cancel_download()  # closing the dialog must not leave a download running unseen
        super().reject()


def server_state(info: Any) -> str:
    """The Embedder column of a server datastore: whether it answers now, and its model."""
    if info.state != "connected":
        return f"⚠ {info.state}"
    return f"connected at {info.location} · {info.embedding_model or 'keyword search only'}"
