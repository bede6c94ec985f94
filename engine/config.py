"""One settings object, persisted as TOML with a schema version; every value overridable.

Where data lives: ``--home`` or ``QUIRE_HOME`` when given (then settings live there too, so a
test or a second library is fully isolated), otherwise the platform's user data and config
directories from platformdirs.
"""

from __future__ import annotations

import codecs
import logging
import os
import reprlib
import stat
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs
import tomli_w

from engine.disk import disk_full_message, is_disk_full, replace_whole
from engine.errors import SettingsError

log = logging.getLogger(__name__)

SETTINGS_VERSION = 1
APP_NAME = "Quire"


def setting(default: Any, description: str) -> Any:
    """A settings field: its default and what it does, for the user (docs/settings.md is made from these)."""
    return field(default=default, metadata={"description": description})


@dataclass(frozen=True)
class IngestSettings:
    """How PDFs become passages."""

    passage_words: int = setting(250, "Words in a passage (passages are cut on sentence ends); papers already in "
                                      "the library keep theirs until they are added again.")
    ocr: bool = setting(True, "Read scanned pages with Tesseract OCR when it is installed.")
    ocr_language: str = setting("eng", "Tesseract's language code(s) for OCR, e.g. \"eng\" or \"eng+deu\".")


@dataclass(frozen=True)
class RetrievalSettings:
    """How passages are found."""

    embedder: str = setting("", "Empty: the bundled all-MiniLM-L6-v2 (English); \"multilingual-e5-small\": the "
                                "bundled multilingual model, for papers or questions in other languages (about 10x "
                                "slower to embed); or a local sentence-transformers model folder. Changing it "
                                "re-embeds.")
    multilingual_switch: bool = setting(
        True, "Switch to the multilingual embedder when ingest finds at least 3 papers, and a quarter of the "
              "library, not in English (it re-embeds the library).")
    embedder_int8: bool = setting(
        True, "Embed with int8 weights on the CPU (ONNX Runtime where the model allows): 2.3x faster, the same "
              "hybrid nDCG@10 on the dev set (benchmarks/embed_onnx.py). Changing it re-embeds.")
    rewrite: bool = setting(False, "Let the language model turn a question into keyword queries first (skipped "
                                   "with a model too small to rewrite usefully). Off: with the 1.5B writer it cost "
                                   "~14 s a question and found the LitQA2 key passage in the top 10 no more often "
                                   "(docs/answers.md).")
    reranker: str = setting("auto", "\"auto\" (what the dev-set measurement chose), \"cross-encoder\", \"lm\" or "
                                    "\"none\".")
    top_n: int = setting(12, "Passages an answer is made from (docs/answers.md: 8 -> 12 lifted how often the key "
                             "passage is cited).")
    spelling: bool = setting(True, "Also search for the papers' spelling of a misspelled question word.")


@dataclass(frozen=True)
class GenerationSettings:
    """How answers are written."""

    model: str = setting("", "A GGUF language model file; empty: the bundled SmolLM2-135M-Instruct (too small to "
                             "write, so answers show the evidence digest).")
    context_size: int = setting(4096, "The model's context window in tokens.")
    threads: int = setting(0, "CPU threads llama.cpp uses; 0: all physical cores.")
    gpu_layers: int = setting(0, "Layers offloaded to the GPU (-1: all) when llama.cpp was built with one.")
    feedback: bool = setting(False, "OpenScholar-style self-feedback and revision of a written answer: two more "
                                    "model calls (docs/answers.md).")
    digest: bool = setting(False, "Skip writing: answer with the evidence digest (themes with verbatim quotes).")
    read_unsupported: bool = setting(
        True, "A model that can write reads again each written sentence the support judge leaves unsupported "
              "(~2 s a read on a CPU, only for those sentences).")
    answer_reader: bool = setting(
        True, "Rank a passage's sentences with the trained answer reader; off, a hand-weighted score of embedding "
              "cosine and shared words does (faster, and worse: docs/answers.md).")
    retrieval_stride: int = setting(
        0, "Retrieval while writing (In-Context RALM): every this many tokens of a written answer, search again "
           "with the question and the draft's last tokens and swap in the passages found; -1: at each sentence "
           "end; 0: search once, before writing. Off: with the 1.5B writer on a 2-core CPU the writing took "
           "1.3x as long at sentence ends and 2-11x every 4 tokens, and on 30 questions of three sets no "
           "answer cited or stated anything differently (docs/answers.md).")
    retrieval_query_tokens: int = setting(
        32, "The draft's last tokens that a search while writing adds to the question (32 suits BM25, which "
            "that search uses).")
    max_answer_tokens: int = setting(512, "The most tokens a written answer may take (answers are held to 60-160 "
                                          "tokens within it).")


SECTIONS: dict[str, type] = {
    "ingest": IngestSettings,
    "retrieval": RetrievalSettings,
    "generation": GenerationSettings,
}


@dataclass(frozen=True)
class Settings:
    """Everything a user can set. Sections mirror the engine's stages."""

    ingest: IngestSettings = field(default_factory=IngestSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    generation: GenerationSettings = field(default_factory=GenerationSettings)
    version: int = SETTINGS_VERSION

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "settings") -> Settings:
        """Build settings from TOML data; unknown keys are logged and skipped, so old files keep working.

        A known key of the wrong type or out of range raises :class:`SettingsError` naming it:
        a wrong value must not surface later as a traceback or as a failed PDF.
        """
        _warn_unknown(data, where)
        sections: dict[str, Any] = {}
        for name, section_type in SECTIONS.items():
            section_data = data.get(name, {})
            if not isinstance(section_data, dict):
                raise SettingsError(f"{where}: [{name}] must be a section (a table of keys), not "
                                    f"{section_data!r}; fix it or delete that line to use the defaults.")
            known = {f.name: f for f in fields(section_type)}
            values = {k: v for k, v in section_data.items() if k in known}
            for key, value in values.items():
                _check_value(name, key, value, known[key].default, where)
            sections[name] = section_type(**values)
        return cls(**sections, version=SETTINGS_VERSION)


# The range each numeric setting may take. The upper bounds are far above any useful value; they
# stop a typo (an extra zero run, `context_size = 100000000000`) before it asks llama.cpp for
# terabytes or makes a search fetch millions of passages.
_RANGE: dict[str, tuple[int, int]] = {
    "passage_words": (20, 5_000),
    "top_n": (1, 200),
    "context_size": (256, 1 << 20),  # the longest contexts GGUF models are trained for: 1M tokens
    "threads": (0, 1024),
    "gpu_layers": (-1, 10_000),
    "max_answer_tokens": (1, 1 << 16),
    "retrieval_stride": (-1, 1 << 16),
    "retrieval_query_tokens": (1, 1024),
}
# Keys older versions wrote that no longer set anything: a settings file that still has one loads
# quietly. (``[retrieval] per_paper``: answers apply the measured cap in engine.tuning instead.)
RETIRED = {"retrieval": frozenset({"per_paper"})}
_KIND = {bool: "true or false", int: "a whole number", str: "a text in quotes"}


def unknown_keys(data: dict[str, Any]) -> list[str]:
    """The sections and keys of settings data that Quire does not know, as "[section]" or "[section] key"."""
    unknown = [f"[{name}]" for name in data if name not in SECTIONS and name != "version"]
    for name, section_type in SECTIONS.items():
        section_data = data.get(name)
        if isinstance(section_data, dict):
            known = {f.name for f in fields(section_type)} | RETIRED.get(name, frozenset())
            unknown += [f"[{name}] {key}" for key in section_data if key not in known]
    return unknown


_NAMED_UNKNOWN = 20


def _warn_unknown(data: dict[str, Any], where: str) -> None:
    """Log the sections and keys Quire does not know: a misspelt key would otherwise change nothing, silently."""
    unknown = unknown_keys(data)
    if unknown:
        # Characters that do not print are written escaped (an ESC in a key must not reach the terminal
        # raw), and at most _NAMED_UNKNOWN names: 200,000 unknown keys must not make a 4 MB warning line.
        named = ["".join(c if c.isprintable() else ascii(c)[1:-1] for c in name)
                 for name in unknown[:_NAMED_UNKNOWN]]
        if len(unknown) > _NAMED_UNKNOWN:
            named.append(f"{len(unknown) - _NAMED_UNKNOWN:,} more")
        log.warning("%s: Quire does not know %s and ignores %s; check the spelling (the settings are listed in "
                    "the README's Settings section).", where, ", ".join(named), "it" if len(unknown) == 1 else "them")


def _shown(value: Any) -> str:
    """A value for a message, cut short and shallow (a wrong value may be megabytes long or nested deep)."""
    return reprlib.repr(value)


def _check_value(section: str, key: str, value: Any, default: Any, where: str) -> None:
    expected = type(default)
    # bool is a subclass of int in Python, not in TOML: `top_n = true` is a mistake, not 1.
    wrong_type = isinstance(value, bool) != (expected is bool) or not isinstance(value, expected)
    if wrong_type:
        raise SettingsError(f"{where}: [{section}] {key} must be {_KIND.get(expected, expected.__name__)}, not "
                            f"{_shown(value)}; fix it, or delete the line to use the default ({default!r}).")
    if isinstance(value, str) and (len(value) > MAX_TEXT_SETTING or any(ord(c) < 32 for c in value)):
        problem = f"longer than {MAX_TEXT_SETTING:,} characters" if len(value) > MAX_TEXT_SETTING else \
            "holding a control character (such as \\u0000)"
        raise SettingsError(f"{where}: [{section}] {key} is {problem}, which no path or name holds; fix it, or delete "
                            f"the line to use the default ({default!r}).")
    bounds = _RANGE.get(key)
    if bounds is not None and value < bounds[0]:
        raise SettingsError(f"{where}: [{section}] {key} must be at least {bounds[0]}, not {_shown(value)}; fix it, or "
                            f"delete the line to use the default ({default!r}).")
    if bounds is not None and value > bounds[1]:
        raise SettingsError(f"{where}: [{section}] {key} must be at most {bounds[1]:,}, not {value:,}; fix it, or "
                            f"delete the line to use the default ({default!r}).")


@dataclass(frozen=True)
class Paths:
    """Where this library's files live."""

    home: Path
    config_file: Path

    @property
    def catalog(self) -> Path:
        return self.home / "library.db"

    @property
    def models(self) -> Path:
        return self.home / "models"

    @property
    def datastores(self) -> Path:
        return self.home / "datastores"


def resolve_paths(home: str | Path | None = None) -> Paths:
    """``home`` (or QUIRE_HOME) isolates everything; otherwise use the platform's directories."""
    if home is not None and not str(home).strip():
        # `--home "$UNSET_VARIABLE"` would otherwise open the user's real library, which a
        # script meant to keep apart (a test, a scratch library) could then change.
        raise SettingsError("--home was given an empty path; give it a folder (or leave --home out to use your "
                            "library).")
    chosen = home or os.environ.get("QUIRE_HOME")
    if chosen:
        root = Path(chosen).expanduser().resolve()
        return Paths(home=root, config_file=root / "settings.toml")
    return Paths(home=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
                 config_file=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "settings.toml")


def ensure_home(home: Path) -> None:
    """Create the data folder, or say plainly why it cannot be one (a file in the way, a read-only disk)."""
    try:
        home.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise SettingsError(f"{home} is a file, not a folder, so Quire cannot keep its library there; give "
                            "--home (or QUIRE_HOME) a folder path.") from None
    except NotADirectoryError:
        raise SettingsError(f"{home} cannot be Quire's data folder: part of that path is a file, not a folder; "
                            "give --home (or QUIRE_HOME) a path made of folders.") from None
    except OSError as exc:
        raise SettingsError(f"Quire cannot create its data folder {home} ({exc.strerror}): the place is read-only "
                            "or you lack permission there; give --home (or QUIRE_HOME) a folder you can write "
                            "to.") from None


# A settings file is a few hundred bytes; a cap keeps a wrong file (a log, /dev/zero behind a link)
# from being read whole. Far above any real one, so nobody who writes comments in theirs meets it.
MAX_SETTINGS_BYTES = 1 << 20
MAX_TEXT_SETTING = 4096  # a path or a model name; longer is a mistake, not a setting
_BROKEN_COPIES = 1000  # numbered copies of broken settings files kept before the oldest is reused


def load_settings(path: Path) -> Settings:
    """Read settings; a missing file gives defaults, a broken one is reported and set aside."""
    return read_settings(path)[0]


def read_settings(path: Path) -> tuple[Settings, str]:
    """The settings in ``path``, and a notice for the user when the file could not be read ('' otherwise).

    A missing file gives defaults. A broken one is set aside (kept, numbered) and defaults are used:
    the notice says so and where the copy is, for a program to show (the app opens a box; a log line
    alone is lost on a desktop). A file that parses but holds a wrong value raises
    :class:`SettingsError` naming the key (the file is left as it is, for the user to fix). What is
    not a regular file, or is far too large to be settings, is refused by name before it is read whole.
    """
    if not path.exists():
        return Settings(), ""
    raw = _read_bounded(path)
    try:
        text = _decode(raw)
        data = tomllib.loads(text)
    except RecursionError:
        return Settings(), _set_aside(path, "values nested too deeply")
    except (tomllib.TOMLDecodeError, TypeError, UnicodeDecodeError) as exc:
        return Settings(), _set_aside(path, str(exc))
    return Settings.from_dict(data, str(path)), ""


def _read_bounded(path: Path) -> bytes:
    """The file's bytes, at most MAX_SETTINGS_BYTES, from a regular file only (a named pipe would block forever,
    a device never end)."""
    try:
        # O_NONBLOCK: opening a named pipe with no writer returns at once instead of waiting for one.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise SettingsError(f"{path} is a folder, but Quire keeps its settings in a file of that name; move the "
                            "folder elsewhere (Quire then starts with default settings).") from None
    except OSError as exc:
        raise SettingsError(f"The settings file {path} cannot be read ({exc.strerror}); check its permissions, or "
                            "move it aside to start with default settings.") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        if stat.S_ISDIR(mode):
            raise SettingsError(f"{path} is a folder, but Quire keeps its settings in a file of that name; move the "
                                "folder elsewhere (Quire then starts with default settings).")
        raise SettingsError(f"{path} is not a regular file (a named pipe, a device or a socket, perhaps through a "
                            "link), so Quire does not read settings from it; remove it to start with default "
                            "settings, or put a settings file there.")
    with os.fdopen(descriptor, "rb") as handle:
        try:
            raw = handle.read(MAX_SETTINGS_BYTES + 1)
        except OSError as exc:
            raise SettingsError(f"The settings file {path} cannot be read ({exc.strerror}); check the disk, or move "
                                "it aside to start with default settings.") from None
    if len(raw) > MAX_SETTINGS_BYTES:
        raise SettingsError(f"The settings file {path} is larger than {MAX_SETTINGS_BYTES // 2**20} MB, far too large "
                            "for Quire's settings (a few hundred bytes); it is probably another file. Move it aside "
                            "to start with default settings.")
    return raw


def _decode(raw: bytes) -> str:
    """Text of a settings file: UTF-8, with or without the byte-order mark some editors (Notepad) write, or
    UTF-16 with its byte-order mark."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16")
    return raw.decode("utf-8-sig")


def _set_aside(path: Path, why: str) -> str:
    """Move a settings file that cannot be read aside under a name no earlier broken copy has; the notice for
    the user."""
    backup = path.with_name(path.name + ".broken")
    for number in range(2, _BROKEN_COPIES + 2):
        if not backup.exists():
            break
        backup = path.with_name(f"{path.name}.broken.{number}")
    path.replace(backup)
    if len(why) > 300:
        why = why[:297] + "..."
    log.warning("Settings file %s was unreadable (%s); saved it as %s and used defaults.", path, why, backup)
    return (f"Quire could not read its settings file, so it started with the default settings.\n\n{path}: {why}\n\n"
            f"The file is kept as {backup.name} in the same folder. Correct it and rename it back to {path.name} "
            "while Quire is closed, or choose your settings again in Settings.")


def save_settings(settings: Settings, path: Path) -> None:
    """Write atomically: a crash or a full disk mid-write never leaves half a settings file, or a stray one."""
    text = tomli_w.dumps(replace(settings, version=SETTINGS_VERSION).to_dict()).encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A temporary file of its own per save: two saves at once (two windows, two commands) must not
        # write into one shared file, or one renames the other's half-written file into place.
        replace_whole(path, text)
    except OSError as exc:
        if is_disk_full(exc):
            raise SettingsError(disk_full_message(f"the settings file {path.name}", path.parent, len(text))) from None
        if path.is_dir():
            raise SettingsError(f"{path} is a folder, so Quire cannot save its settings there; move the folder "
                                "elsewhere and try again.") from None
        raise SettingsError(f"Quire could not save its settings to {path} ({exc.strerror}); check that the folder is "
                            "writable and try again. The settings in effect were not changed.") from None
