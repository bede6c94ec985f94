"""The Models & Datastores dialog on a real engine, downloading from a 127.0.0.1 "Hugging Face"."""

from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from pathlib import Path

import pytest
from fixtures.http_server import FileServer
from pytestqt.qtbot import QtBot

import engine.manager.catalog as catalog_module
from engine.config import Settings
from engine.manager.catalog import CatalogModel
from engine.manager.download import partial_path
from engine.models import default_lm_path
from engine.service import Engine
from ui.engine_client import EngineClient
from ui.models_dialog import ROW, ModelsDialog

SLOW = os.urandom(4 * 1024 * 1024)


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch):
    """A local stand-in for huggingface.co, and a catalog whose entries it serves."""
    smol = default_lm_path()
    if smol is None:
        pytest.skip("the bundled SmolLM2 is not installed")
    data = smol.read_bytes()
    real_catalog = catalog_module.load_catalog()
    test_entries = [
        CatalogModel(name="smol", kind="llm", title="SmolLM2 135M (test)", repo="org/smol", file="smol.gguf",
                     license="Apache-2.0", sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data),
                     n_layers=30, n_kv_heads=3, head_dim=64, parameters_b=0.135),
        CatalogModel(name="slow", kind="llm", title="A slow download (test)", repo="org/slow", file="slow.gguf",
                     license="MIT", sha256=hashlib.sha256(SLOW).hexdigest(), size_bytes=len(SLOW)),
        CatalogModel(name="tampered", kind="llm", title="Tampered (test)", repo="org/tampered",
                     file="tampered.gguf", license="MIT", sha256=hashlib.sha256(b"the real one").hexdigest()),
    ]
    monkeypatch.setattr(catalog_module, "load_catalog", lambda: real_catalog + test_entries)
    with FileServer() as server:
        server.add("/org/smol/resolve/main/smol.gguf", data)
        server.add("/org/slow/resolve/main/slow.gguf", SLOW, delay_per_chunk_s=0.02)
        server.add("/org/tampered/resolve/main/tampered.gguf", b"GGUF" + os.urandom(100_000))
        monkeypatch.setenv("QUIRE_HF_ENDPOINT", server.base_url)
        yield server


@pytest.fixture
def dialog(qtbot: QtBot, client: EngineClient, hub: FileServer) -> ModelsDialog:
    shown = ModelsDialog(client)
    qtbot.addWidget(shown)
    qtbot.waitUntil(lambda: bool(shown.snapshot), timeout=30_000)
    return shown


def test_it_shows_the_catalog_and_the_hardware_without_downloading(dialog: ModelsDialog, hub: FileServer) -> None:
    names = [dialog.models_tree.topLevelItem(i).data(0, ROW)["name"]
             for i in range(dialog.models_tree.topLevelItemCount())]
    assert {"llama-3.1-8b-instruct", "qwen2.5-7b-instruct", "phi-3.5-mini-instruct", "smol"} <= set(names)
    assert "RAM" in dialog.hardware_label.text() and "Recommended:" in dialog.recommendation_label.text()
    assert dialog.row_status("phi-3.5-mini-instruct") == "available"
    assert dialog.row_status("all-minilm-l6-v2") == "bundled"
    assert dialog.datastores_tree.topLevelItemCount() == 0
    assert not dialog.progress_bar.isVisible() and hub.requests == [], "nothing downloads until asked"
    dialog.select_model("all-minilm-l6-v2")
    assert not dialog.download_button.isEnabled() and not dialog.use_button.isEnabled()


def test_download_then_use(qtbot: QtBot, dialog: ModelsDialog, client: EngineClient, tmp_path: Path) -> None:
    assert dialog.select_model("smol") and dialog.download_button.isEnabled()
    dialog.download_button.click()
    assert dialog.downloading and not dialog.download_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.row_status("smol") == "installed", timeout=60_000)
    assert not dialog.downloading and dialog.progress_label.text() == "Installed and verified."
    assert dialog.select_model("smol") and dialog.use_button.isEnabled()
    dialog.use_button.click()
    qtbot.waitUntil(lambda: dialog.row_status("smol") == "in use", timeout=30_000)
    assert (tmp_path / "home" / "models" / "smol.gguf").exists()
    assert "Now using smol" in dialog.progress_label.text()


def test_cancel_stops_the_download_and_keeps_the_partial_file(qtbot: QtBot, dialog: ModelsDialog,
                                                              tmp_path: Path) -> None:
    dialog.select_model("slow")
    dialog.download_button.click()
    qtbot.waitUntil(lambda: dialog.progress_bar.maximum() == 1000 and dialog.progress_bar.value() > 0,
                    timeout=30_000)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: not dialog.downloading, timeout=30_000)
    assert "Cancelled" in dialog.progress_label.text()
    assert dialog.row_status("slow") == "available"
    assert partial_path(tmp_path / "home" / "models" / "slow.gguf").stat().st_size > 0
    assert dialog.download_button.isEnabled(), "the user can resume"


def test_a_tampered_file_is_reported_and_not_installed(qtbot: QtBot, dialog: ModelsDialog,
                                                        client: EngineClient) -> None:
    dialog.select_model("tampered")
    with qtbot.waitSignal(client.error, timeout=30_000) as error:
        dialog.download_button.click()
    assert "failed its checksum" in error.args[0]
    qtbot.waitUntil(lambda: not dialog.downloading, timeout=30_000)
    assert dialog.row_status("tampered") == "available"


def test_datastores_can_be_embedded_and_removed_from_the_dialog(
        qtbot: QtBot, client: EngineClient, tmp_path: Path, confirmations) -> None:
    records = tmp_path / "tiny.jsonl"
    records.write_text("".join(
        f'{{"id": "r{n}", "title": "Paper {n}", "text": "Dense retrieval of scientific papers, number {n}."}}\n'
        for n in range(3)), encoding="utf-8")
    with Engine(client.home) as engine:
        engine.add_datastore(records, "tiny", embed=False)
    shown = ModelsDialog(client)
    qtbot.addWidget(shown)
    qtbot.waitUntil(lambda: bool(shown.snapshot), timeout=60_000)
    assert shown.select_datastore("tiny")
    assert shown.datastores_tree.currentItem().text(4).startswith("not embedded")
    assert shown.embed_datastore_button.isEnabled() and shown.remove_datastore_button.isEnabled()

    shown.embed_datastore_button.click()
    qtbot.waitUntil(lambda: not shown.downloading and shown.select_datastore("tiny")
                    and not shown.datastores_tree.currentItem().text(4).startswith("not embedded"), timeout=300_000)

    confirmations.answer = False
    shown.remove_datastore_button.click()
    assert confirmations.asked == ["Remove the datastore “tiny”?"]
    confirmations.answer = True
    shown.remove_datastore_button.click()
    qtbot.waitUntil(lambda: shown.datastores_tree.topLevelItemCount() == 0, timeout=60_000)
    with Engine(client.home) as engine:
        assert engine.datastores() == []


def test_the_model_in_use_is_listed_even_when_chosen_from_elsewhere(
        qtbot: QtBot, client: EngineClient, tmp_path: Path) -> None:
    smol = default_lm_path()
    if smol is None:
        pytest.skip("the bundled SmolLM2 is not installed")
    elsewhere = tmp_path / "downloads" / "my-model.gguf"  # a model file outside Quire's models folder
    elsewhere.parent.mkdir()
    elsewhere.symlink_to(smol)
    loaded: list[Settings] = []
    client.load_settings(loaded.append)
    qtbot.waitUntil(lambda: bool(loaded), timeout=60_000)
    saved: list[object] = []
    client.save_settings(replace(loaded[0], generation=replace(loaded[0].generation, model=str(elsewhere))),
                         saved.append)
    qtbot.waitUntil(lambda: bool(saved), timeout=60_000)
    shown = ModelsDialog(client)
    qtbot.addWidget(shown)
    qtbot.waitUntil(lambda: bool(shown.snapshot), timeout=60_000)
    assert shown.row_status(str(elsewhere)) == "in use"
