"""Check that a file is a usable GGUF before llama.cpp touches it.

llama.cpp answers almost every bad file with the same "failed to load model", and a truncated
file can get as far as reading garbage through mmap. So :func:`read_gguf` parses the header
itself (pure Python, no llama.cpp): magic, version, every metadata key, every tensor's
description, and checks that the tensor data the header promises is actually in the file.
:func:`validate_gguf` adds the one thing only the installed llama.cpp knows: whether it has
an implementation for the file's architecture.

The GGUF layout (little-endian): ``b"GGUF"``, uint32 version, uint64 tensor count, uint64
metadata count, the metadata key/value pairs, the tensor infos (name, dims, ggml type, offset),
then the tensor data from the next ``general.alignment`` boundary.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import ModelFileError, ModelNotFoundError

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)  # llama.cpp dropped version 1 long ago
DEFAULT_ALIGNMENT = 32
KEEP_ARRAY_ITEMS = 64  # longer arrays (the vocabulary, merges) are summarised, not kept

# value type -> struct format of the scalar types
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9

# ggml type -> (elements per block, bytes per block), from ggml's type traits. Types missing here
# are still accepted; only the exact file-size check is skipped for their tensors.
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110),
    22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
    29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66),
}


@dataclass(frozen=True)
class ArraySummary:
    """A metadata array too long to keep (e.g. 49,152 vocabulary entries)."""

    item_type: int
    length: int


@dataclass(frozen=True)
class GGUFInfo:
    """What the header of a GGUF file says."""

    path: Path
    version: int
    tensor_count: int
    file_size: int
    data_size: int  # bytes of tensor data the header promises (a lower bound for unknown types)
    metadata: dict[str, Any] = field(repr=False)

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name", "") or self.path.stem)

    @property
    def context_length(self) -> int | None:
        """The context the model was trained with, if the file says."""
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if isinstance(value, int) else None

    @property
    def chat_template(self) -> str | None:
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) and value.strip() else None


class _Truncated(Exception):
    """The header asked for bytes past the end of the file."""


class _Reader:
    """A bounds-checked cursor over the mapped file."""

    def __init__(self, buffer: mmap.mmap | bytes) -> None:
        self.buffer = buffer
        self.position = 0
        self.size = len(buffer)

    def take(self, count: int) -> bytes:
        end = self.position + count
        if count < 0 or end > self.size:
            raise _Truncated
        chunk = self.buffer[self.position:end]
        self.position = end
        return chunk

    def skip(self, count: int) -> None:
        if count < 0 or self.position + count > self.size:
            raise _Truncated
        self.position += count

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.take(self.scalar("<Q")).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        self.skip(self.scalar("<Q"))

    def value(self, value_type: int) -> Any:
        if value_type in _SCALARS:
            return self.scalar(_SCALARS[value_type])
        if value_type == _STRING:
            return self.string()
        if value_type == _ARRAY:
            item_type, length = self.scalar("<I"), self.scalar("<Q")
            if length <= KEEP_ARRAY_ITEMS:
                return [self.value(item_type) for _ in range(length)]
            self.skip_array(item_type, length)
            return ArraySummary(item_type, length)
        raise ValueError(f"unknown metadata value type {value_type}")

    def skip_array(self, item_type: int, length: int) -> None:
        if item_type in _SCALARS:
            self.skip(struct.calcsize(_SCALARS[item_type]) * length)
        elif item_type == _STRING:
            for _ in range(length):
                self.skip_string()
        else:
            for _ in range(length):
                self.value(item_type)


def read_gguf(path: str | Path) -> GGUFInfo:
    """Parse and check a GGUF header; raise ModelNotFoundError / ModelFileError with the reason."""
    model_path = Path(path).expanduser()
    if not model_path.exists():
        raise ModelNotFoundError(f"{model_path}: no such model file. Choose an existing .gguf file "
                                 "(Settings → generation.model), or leave it empty for the bundled model.")
    if model_path.is_dir():
        raise ModelNotFoundError(f"{model_path}: is a folder; choose the .gguf file inside it.")
    file_size = model_path.stat().st_size
    if file_size < 24:
        raise ModelFileError(str(model_path), f"only {file_size} bytes, too small to be a GGUF model file.")
    with model_path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        return _parse(model_path, mapped, file_size)


# What a file chosen by mistake usually is, by its first bytes: said in words, never as Python bytes.
_KNOWN_STARTS = ((b"%PDF", "it is a PDF document"), (b"PK\x03\x04", "it is a ZIP archive"),
                 (b"\x89PNG", "it is a PNG image"), (b"{", "it looks like a JSON or text file"))


def _what_it_is(magic: bytes) -> str:
    for start, words in _KNOWN_STARTS:
        if magic.startswith(start):
            return words
    if magic.isascii() and magic.decode("ascii").isprintable():
        return f"it starts with the text “{magic.decode('ascii')}”"
    return "its first bytes are not a GGUF header"


def _parse(path: Path, buffer: mmap.mmap, file_size: int) -> GGUFInfo:
    reader = _Reader(buffer)
    magic = reader.take(4)
    if magic != GGUF_MAGIC:
        raise ModelFileError(str(path), f"not a GGUF model file ({_what_it_is(magic)}). Quire runs llama.cpp "
                             "GGUF files; choose a .gguf file, or convert other formats with llama.cpp's tools.")
    version = reader.scalar("<I")
    if version not in SUPPORTED_VERSIONS:
        if struct.unpack(">I", struct.pack("<I", version))[0] in SUPPORTED_VERSIONS:
            raise ModelFileError(str(path), "a big-endian GGUF, which this machine cannot run; "
                                 "download the little-endian build of the model.")
        raise ModelFileError(str(path), f"GGUF version {version} is not supported (llama.cpp reads versions "
                             f"{', '.join(map(str, SUPPORTED_VERSIONS))}); download a current conversion.")
    tensor_count, kv_count = reader.scalar("<Q"), reader.scalar("<Q")
    # Every entry takes at least 8 bytes, so larger counts can only come from a damaged header.
    if tensor_count > file_size // 8 or kv_count > file_size // 8:
        raise ModelFileError(str(path), f"the header is damaged (it claims {tensor_count} tensors and "
                             f"{kv_count} metadata entries); download the file again.")
    metadata: dict[str, Any] = {}
    try:
        for _ in range(kv_count):
            key = reader.string()
            metadata[key] = reader.value(reader.scalar("<I"))
        tensors = [_tensor_info(reader) for _ in range(tensor_count)]
    except _Truncated:
        raise ModelFileError(str(path), f"the file ends inside its header ({file_size:,} bytes); it is "
                             "truncated — an interrupted download or copy. Download it again.") from None
    except (ValueError, struct.error) as exc:
        raise ModelFileError(str(path), f"the metadata cannot be read ({exc}); the file is damaged. "
                             "Download it again.") from None
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment <= 0:
        alignment = DEFAULT_ALIGNMENT
    data_start = -(-reader.position // alignment) * alignment
    data_size = max((offset + size for offset, size in tensors), default=0)
    if tensors and data_start + data_size > file_size:
        raise ModelFileError(str(path), f"the file is truncated: its tensors need {data_start + data_size:,} "
                             f"bytes but it has {file_size:,} — an interrupted download or copy. Download it again.")
    if tensor_count and not metadata.get("general.architecture"):
        raise ModelFileError(str(path), "the GGUF has no general.architecture entry; it is not a model llama.cpp "
                             "can load.")
    return GGUFInfo(path=path, version=version, tensor_count=tensor_count, file_size=file_size,
                    data_size=data_size, metadata=metadata)


def _tensor_info(reader: _Reader) -> tuple[int, int]:
    """One tensor's (offset, size in bytes); size 0 when its ggml type is not in our table."""
    reader.skip_string()  # the tensor's name
    n_dims = reader.scalar("<I")
    if n_dims > 8:
        raise ValueError(f"a tensor with {n_dims} dimensions")
    elements = 1
    for _ in range(n_dims):
        elements *= reader.scalar("<Q")
    ggml_type, offset = reader.scalar("<I"), reader.scalar("<Q")
    block = GGML_BLOCKS.get(ggml_type)
    size = elements // block[0] * block[1] if block else 0
    return offset, size


def validate_gguf(path: str | Path, *, check_architecture: bool = True) -> GGUFInfo:
    """:func:`read_gguf`, then ask the installed llama.cpp whether it knows the architecture.

    The architecture check loads only the vocabulary (no weights), a fraction of a second even
    for a multi-gigabyte model. Raises :class:`~engine.errors.UnsupportedModelError` when
    llama.cpp has no implementation for the file's architecture.
    """
    info = read_gguf(path)
    if check_architecture:
        from engine.generate.backend import probe_model  # imports llama.cpp only when asked

        probe_model(info.path, info.architecture)
    return info
