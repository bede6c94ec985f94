"""The ICU data Qt ships (``libicudata.so.NN``, 32 MB), cut to the parts Qt uses.

Qt links ICU for a few things only: collation (``QCollator``, the file dialog's natural sort),
locale-aware case mapping and normalisation (whose tables are compiled into ``libicuuc``, not
this file), and time-zone display names. The data library also holds what ICU's own formatting
and text APIs need and Qt never asks it for: the names of languages, regions, currencies and
units in some 800 locales, dictionaries for word breaking, transliterators, spelled-out numbers,
and some 200 legacy character-set converters (Qt 6 runs on UTF-8 and Quire decodes no other
encoding through Qt). Those go; the collation tree, the locale bundles, zone names and the core
``.icu``/``.nrm`` files stay.

The data is one "common data" archive (a table of contents, then the items) exported by the
library as the symbol ``icudtNN_dat``; the cut archive is assembled back into a library of the
same name with binutils (``as``, ``ld``), so ``libicuuc`` finds it exactly as before.
"""

from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from pathlib import Path

# Item folders inside the archive that Qt never reads (see the module docstring).
DROPPED_TREES = ("brkitr", "curr", "lang", "rbnf", "region", "translit", "unit")
ALIGN = 16


def _data_symbol(library: Path) -> tuple[str, int, int]:
    """The archive's symbol in ``library``: its name, file offset and size."""
    symbols = subprocess.run(["readelf", "--dyn-syms", "--wide", str(library)], capture_output=True, text=True,
                             check=True).stdout
    found = re.search(r"^\s*\d+:\s+([0-9a-f]+)\s+(\d+|0x[0-9a-f]+)\s+OBJECT\s+GLOBAL\s+\S+\s+\d+\s+(icudt\d+_dat)\s*$",
                      symbols, flags=re.MULTILINE)
    if found is None:
        raise ValueError(f"{library} exports no icudtNN_dat archive")
    address, size = int(found.group(1), 16), int(found.group(2), 0)
    sections = subprocess.run(["readelf", "--sections", "--wide", str(library)], capture_output=True, text=True,
                              check=True).stdout
    for line in sections.splitlines():
        fields = line.replace("[ ", "[").split()
        if len(fields) > 5 and fields[1] == ".rodata":
            section_address, section_offset = int(fields[3], 16), int(fields[4], 16)
            return found.group(3), address - section_address + section_offset, size
    raise ValueError(f"{library} has no .rodata section")


def items(archive: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """The archive's header and its (name, bytes) items, in table-of-contents order."""
    header_size = struct.unpack_from("<H", archive, 0)[0]
    if archive[2:4] != b"\xda\x27":
        raise ValueError("not an ICU data archive")
    count = struct.unpack_from("<I", archive, header_size)[0]
    entries = [struct.unpack_from("<II", archive, header_size + 4 + 8 * i) for i in range(count)]
    result = []
    for index, (name_offset, data_offset) in enumerate(entries):
        name_start = header_size + name_offset
        name = archive[name_start:archive.index(b"\0", name_start)].decode("ascii")
        end = header_size + entries[index + 1][1] if index + 1 < count else len(archive)
        result.append((name, archive[header_size + data_offset:end]))
    return archive[:header_size], result


def pack(header: bytes, kept: list[tuple[str, bytes]]) -> bytes:
    """An archive of ``kept`` items (sorted names, as ICU's binary search of the table expects).

    Offsets in the table count from the end of the header; every item starts 16-byte aligned.
    """
    names = b"".join(name.encode("ascii") + b"\0" for name, _ in kept)
    table_size = 4 + 8 * len(kept)
    data_start = table_size + len(names)
    data_start += -(len(header) + data_start) % ALIGN
    table, blobs, name_offset, data_offset = [struct.pack("<I", len(kept))], [], table_size, data_start
    for name, blob in kept:
        table.append(struct.pack("<II", name_offset, data_offset))
        name_offset += len(name) + 1
        padded = blob + b"\0" * (-len(blob) % ALIGN)
        blobs.append(padded)
        data_offset += len(padded)
    body = b"".join(table) + names
    return header + body + b"\0" * (data_start - len(body)) + b"".join(blobs)


def keep(name: str) -> bool:
    """Whether the archive item ``name`` (``icudt73l/coll/de.res``, ``icudt73l/ibm-37_P100-1995.cnv``) stays."""
    parts = name.split("/")
    if len(parts) > 2:
        return parts[1] not in DROPPED_TREES
    return not name.endswith(".cnv")


def cut_icu_data(library: Path) -> int:
    """Replace ``library`` (a ``libicudata.so.NN``) by one holding only the items :func:`keep` keeps; bytes saved."""
    symbol, offset, size = _data_symbol(library)
    archive = library.read_bytes()[offset:offset + size]
    header, all_items = items(archive)
    cut = pack(header, [(name, blob) for name, blob in all_items if keep(name)])
    with tempfile.TemporaryDirectory(prefix="quire-icu-") as work:
        folder = Path(work)
        (folder / "data.bin").write_bytes(cut)
        (folder / "data.s").write_text(
            f'\t.section .rodata\n\t.balign {ALIGN}\n\t.globl {symbol}\n\t.type {symbol}, @object\n'
            f'{symbol}:\n\t.incbin "data.bin"\n\t.size {symbol}, . - {symbol}\n'
            '\t.section .note.GNU-stack,"",@progbits\n', encoding="ascii")
        subprocess.run(["as", "-o", "data.o", "data.s"], cwd=folder, check=True)
        subprocess.run(["ld", "-shared", "-z", "noexecstack", "-soname", library.name, "-o", "lib.so", "data.o"],
                       cwd=folder, check=True)
        rebuilt = folder / "lib.so"
        if _data_symbol(rebuilt)[2] != len(cut):
            raise ValueError(f"the rebuilt {library.name} does not export the cut archive")
        before = library.stat().st_size
        library.write_bytes(rebuilt.read_bytes())
    return before - library.stat().st_size
