"""The dynamic section of an ELF file: what the loader reads to find its libraries.

A small, bounded reader (the standard library's :mod:`struct` only): ELF32 and ELF64,
little- and big-endian. From the program headers it takes the ``PT_DYNAMIC`` segment and
the ``PT_LOAD`` segments (to map the string table's address to a file offset), and from
the dynamic section the names the loader uses: ``DT_NEEDED``, ``DT_SONAME``, ``DT_RPATH``
and ``DT_RUNPATH``. Every read is bounded; a file that is not ELF, is truncated or is
malformed gives None or empty fields, never an exception.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["ElfDynamic", "read_dynamic"]

ELF_MAGIC = b"\x7fELF"
PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29
MAX_PHNUM = 512
"""Program headers read at most (real files have a dozen)."""
MAX_DYNAMIC_BYTES = 1 << 16
"""Bytes of the dynamic section read at most (4,096 64-bit entries)."""
MAX_STRING = 4096
"""Bytes of one string (a library name, a search path) read at most."""
MAX_NAMES = 256
"""``DT_NEEDED`` entries kept at most."""


@dataclass(frozen=True)
class ElfDynamic:
    """What an ELF file's dynamic section tells the loader."""

    needed: tuple[str, ...] = ()
    soname: str | None = None
    rpath: tuple[str, ...] = ()
    """``DT_RPATH``'s directories (searched for this object's and, unless it also has a
    RUNPATH, its dependencies' libraries, before ``LD_LIBRARY_PATH``)."""
    runpath: tuple[str, ...] = ()
    """``DT_RUNPATH``'s directories (searched for this object's own ``DT_NEEDED``)."""


def read_dynamic(path: str) -> ElfDynamic | None:
    """The dynamic section of the ELF file at ``path`` (a host path), or None: not ELF,
    unreadable, or with no dynamic section (a static executable)."""
    try:
        with open(path, "rb") as handle:
            return _read(handle)
    except (OSError, struct.error, ValueError, OverflowError):
        return None


def _read(handle: BinaryIO) -> ElfDynamic | None:
    ident = handle.read(64)
    if len(ident) < 52 or not ident.startswith(ELF_MAGIC):
        return None
    klass, data = ident[4], ident[5]
    if klass not in (1, 2) or data not in (1, 2):
        return None
    end = "<" if data == 1 else ">"
    wide = klass == 2
    if wide:
        if len(ident) < 64:
            return None
        phoff, = struct.unpack_from(end + "Q", ident, 32)
        phentsize, phnum = struct.unpack_from(end + "HH", ident, 54)
        want = 56
    else:
        phoff, = struct.unpack_from(end + "I", ident, 28)
        phentsize, phnum = struct.unpack_from(end + "HH", ident, 42)
        want = 32
    if phoff == 0 or phnum == 0 or phnum > MAX_PHNUM or phentsize < want:
        return None
    handle.seek(phoff)
    table = handle.read(phentsize * phnum)
    loads: list[tuple[int, int, int]] = []  # (vaddr, offset, filesz)
    dynamic: tuple[int, int] | None = None
    for index in range(len(table) // phentsize):
        at = index * phentsize
        if wide:
            kind, _flags, offset, vaddr, _paddr, filesz = struct.unpack_from(
                end + "IIQQQQ", table, at)
        else:
            kind, offset, vaddr, _paddr, filesz = struct.unpack_from(end + "IIIII", table, at)
        if kind == PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif kind == PT_DYNAMIC and dynamic is None:
            dynamic = (offset, filesz)
    if dynamic is None:
        return None
    handle.seek(dynamic[0])
    section = handle.read(min(dynamic[1], MAX_DYNAMIC_BYTES))
    fmt = end + ("qQ" if wide else "iI")
    entries: list[tuple[int, int]] = []
    step = 16 if wide else 8
    for at in range(0, len(section) - step + 1, step):
        tag, value = struct.unpack_from(fmt, section, at)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    strtab = next((v for t, v in entries if t == DT_STRTAB), None)
    strsz = next((v for t, v in entries if t == DT_STRSZ), None)
    if strtab is None:
        return ElfDynamic()
    base = _file_offset(strtab, loads)
    if base is None:
        return ElfDynamic()

    def string(offset: int) -> str | None:
        if offset < 0 or (strsz is not None and offset >= strsz):
            return None
        handle.seek(base + offset)
        raw = handle.read(MAX_STRING).split(b"\0", 1)[0]
        return raw.decode("utf-8", "replace")

    needed: list[str] = []
    soname: str | None = None
    rpath: list[str] = []
    runpath: list[str] = []
    for tag, value in entries:
        if tag == DT_NEEDED and len(needed) < MAX_NAMES:
            name = string(value)
            if name:
                needed.append(name)
        elif tag == DT_SONAME and soname is None:
            soname = string(value)
        elif tag in (DT_RPATH, DT_RUNPATH):
            text = string(value)
            if text:
                (rpath if tag == DT_RPATH else runpath).extend(text.split(":"))
    return ElfDynamic(tuple(needed), soname, tuple(rpath), tuple(runpath))


def _file_offset(address: int, loads: list[tuple[int, int, int]]) -> int | None:
    """The file offset of virtual address ``address`` through the ``PT_LOAD`` segments
    (an object with none, or an address outside them: the address itself, as in a
    prelinked-at-zero shared object)."""
    for vaddr, offset, filesz in loads:
        if vaddr <= address < vaddr + filesz:
            return address - vaddr + offset
    return address if not loads else None
