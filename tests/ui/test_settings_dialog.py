"""The settings dialog edits the engine's Settings and the client persists them as TOML."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from engine.config import Settings, load_settings
from ui.engine_client import EngineClient
from ui.settings_dialog import SettingsDialog

TIMEOUT_MS = 30_000


def test_edited_settings_are_saved_and_reloaded(qtbot: QtBot, client: EngineClient, tmp_path: Path) -> None:
    loaded: list[Settings] = []
    client.load_settings(loaded.append)
    qtbot.waitUntil(lambda: bool(loaded), timeout=TIMEOUT_MS)

    dialog = SettingsDialog(loaded[0])
    qtbot.addWidget(dialog)
    dialog.model_edit.setText("  /models/qwen.gguf ")
    dialog.threads_box.setValue(6)
    dialog.gpu_layers_box.setValue(-1)
    dialog.top_n_box.setValue(12)
    dialog.feedback_box.setChecked(False)
    dialog.rewrite_box.setChecked(False)
    dialog.spelling_box.setChecked(False)
    dialog.reader_box.setChecked(False)
    dialog.while_writing_box.setCurrentIndex(dialog.while_writing_box.findData(-1))
    edited = dialog.settings()
    saved: list[Settings] = []
    client.save_settings(edited, saved.append)
    qtbot.waitUntil(lambda: bool(saved), timeout=TIMEOUT_MS)

    on_disk = load_settings(client.home / "settings.toml")
    assert on_disk.generation.model == "/models/qwen.gguf"
    assert (on_disk.generation.threads, on_disk.generation.gpu_layers) == (6, -1)
    assert on_disk.retrieval.top_n == 12
    assert not on_disk.generation.feedback and not on_disk.retrieval.rewrite and not on_disk.retrieval.spelling
    assert not on_disk.generation.answer_reader
    assert on_disk.generation.retrieval_stride == -1  # at each sentence end
    assert on_disk.ingest == Settings().ingest  # untouched sections stay as they were

    again = SettingsDialog(on_disk)
    qtbot.addWidget(again)
    assert again.threads_box.value() == 6 and not again.feedback_box.isChecked()
    assert not again.spelling_box.isChecked() and not again.reader_box.isChecked()
    assert again.while_writing_box.currentText().startswith("At each sentence end")
    again._restore_defaults()
    assert again.settings().generation == Settings().generation


def test_a_bad_model_file_is_refused_in_the_dialog_named_as_the_dialog_names_it(
        qtbot: QtBot, tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model\n")  # 12 bytes named .gguf
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.show()
    for bad, words in ((str(tmp_path / "missing.gguf"), "no such model file"), (str(fake), "model.gguf")):
        dialog.model_edit.setText(bad)
        dialog.accept()
        qtbot.waitUntil(lambda: bool(dialog.problems) and dialog.buttons.isEnabled(), timeout=TIMEOUT_MS)
        assert dialog.isVisible() and dialog.result() != SettingsDialog.DialogCode.Accepted
        text = dialog.problem_label.text()
        assert text.startswith("Model file: ") and words in text, text
        assert "generation.model" not in text
        dialog.problems = {}

    dialog.model_edit.setText("")  # back to the bundled model: nothing to check
    dialog.embedder_edit.setText(str(tmp_path))  # a folder without a model
    dialog.accept()
    qtbot.waitUntil(lambda: bool(dialog.problems), timeout=TIMEOUT_MS)
    assert dialog.problem_label.text().startswith("Embedder: ")
    dialog.embedder_edit.setText("")
    dialog.accept()
    assert dialog.result() == SettingsDialog.DialogCode.Accepted


def test_the_dialog_says_when_settings_apply_and_what_a_small_model_skips(qtbot: QtBot) -> None:
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.show()
    assert "next question" in dialog.applies_label.text() and dialog.applies_label.isVisible()
    from engine.models import default_lm_path

    if default_lm_path() is not None:  # the bundled SmolLM2: self-feedback and rewriting do not run
        assert dialog.small_model_label.isVisible()
        assert "Written answer" in dialog.small_model_label.text()


def test_notes_appearing_never_squash_the_path_fields(qtbot: QtBot, tmp_path: Path) -> None:
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.resize(dialog.width(), dialog.minimumSizeHint().height())  # as small as the user can make it
    dialog.model_edit.setText(str(tmp_path / "missing.gguf"))
    dialog.accept()  # the problem note appears, several lines long, beside the small-model note
    qtbot.waitUntil(lambda: bool(dialog.problems), timeout=TIMEOUT_MS)
    dialog.model_edit.setText("")  # the small-model note comes back too
    qtbot.wait(50)
    for edit in (dialog.model_edit, dialog.embedder_edit):
        assert edit.height() >= edit.sizeHint().height(), edit.accessibleName()
    assert dialog.small_model_label.isVisible() and dialog.problem_label.isVisible()
    assert dialog.height() >= dialog.layout().minimumSize().height()


def test_a_preset_sets_its_options_keeps_the_model_and_default_undoes_it(qtbot: QtBot) -> None:
    from dataclasses import replace

    mine = replace(Settings(), generation=replace(Settings().generation, model="/models/writer.gguf", threads=3))
    dialog = SettingsDialog(mine)
    qtbot.addWidget(dialog)
    names = [dialog.preset_box.itemData(i) for i in range(dialog.preset_box.count())]
    assert dialog.preset_box.currentData() == "default"  # what the settings already match
    dialog.preset_box.activated.emit(names.index("quick"))
    assert (dialog.top_n_box.value(), dialog.rewrite_box.isChecked()) == (8, False)
    chosen = dialog.settings()
    assert (chosen.retrieval.top_n, chosen.retrieval.rewrite, chosen.generation.read_unsupported) == (8, False, False)
    assert (chosen.generation.model, chosen.generation.threads) == ("/models/writer.gguf", 3)
    dialog.preset_box.activated.emit(names.index("default"))
    assert dialog.settings().to_dict() == mine.to_dict()


def test_the_preset_box_shows_the_preset_in_effect_or_custom(qtbot: QtBot) -> None:
    from dataclasses import replace

    from engine.presets import apply_preset

    quick = SettingsDialog(apply_preset(Settings(), "quick"))
    custom = SettingsDialog(replace(Settings(), retrieval=replace(Settings().retrieval, top_n=5)))
    for dialog in (quick, custom):
        qtbot.addWidget(dialog)
    assert quick.preset_box.currentData() == "quick"
    assert custom.preset_box.currentText() == "Custom"


def test_a_stride_the_list_lacks_is_shown_and_kept(qtbot: QtBot) -> None:
    from dataclasses import replace

    settings = Settings()
    dialog = SettingsDialog(replace(settings, generation=replace(settings.generation, retrieval_stride=8)))
    qtbot.addWidget(dialog)
    assert dialog.while_writing_box.currentText() == "Every 8 tokens"
    assert dialog.settings().generation.retrieval_stride == 8
    assert "docs/answers.md" in dialog.while_writing_box.toolTip()


def test_the_multilingual_embedder_is_chosen_by_its_box_not_typed_as_a_folder(qtbot: QtBot) -> None:
    from dataclasses import replace

    from engine.embed.e5 import MULTILINGUAL_EMBEDDER

    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    folder_row = dialog.embedder_edit.parentWidget()
    assert not dialog.multilingual_box.isChecked() and folder_row.isEnabled()
    dialog.multilingual_box.setChecked(True)
    assert not folder_row.isEnabled()
    assert dialog.settings().retrieval.embedder == MULTILINGUAL_EMBEDDER
    with qtbot.waitSignal(dialog.accepted, timeout=TIMEOUT_MS):  # a name, not a folder: nothing to refuse
        dialog.accept()

    chosen = replace(Settings(), retrieval=replace(Settings().retrieval, embedder=MULTILINGUAL_EMBEDDER))
    again = SettingsDialog(chosen)
    qtbot.addWidget(again)
    assert again.multilingual_box.isChecked() and again.embedder_edit.text() == ""
    again.multilingual_box.setChecked(False)
    assert again.settings().retrieval.embedder == ""
