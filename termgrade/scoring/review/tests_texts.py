"""The task's test files as text: what the carry rule reads for the paths the tests name,
and the stand-in review for the programs they run and the ``PYTHONPATH`` they export."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["ABSOLUTE_PATH", "MAX_TEST_BYTES", "TEXT_SUFFIXES", "read_test_texts", "tests_paths",
           "tests_words"]

TEXT_SUFFIXES = frozenset({".py", ".sh", ".bash", ".txt", ".md", ".json", ".toml", ".yaml",
                           ".yml", ".cfg", ".ini", ".conf", ".js", ".ts", ".rb", ".pl", ".c",
                           ".h", ".go", ".rs", ".java", ".sql", ".mk", ""})
MAX_TEST_BYTES = 2 << 20
"""Bytes of test files read, all together (a huge fixture adds nothing but time)."""


def read_test_texts(tests_dir: Path) -> Iterator[tuple[str, str]]:
    """(path relative to ``tests_dir``, text) of each text file of the tests, in name
    order, until :data:`MAX_TEST_BYTES` are read (no links, no bytecode caches)."""
    budget = MAX_TEST_BYTES
    if not tests_dir.is_dir():
        return
    for path in sorted(tests_dir.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.suffix not in TEXT_SUFFIXES:
            continue
        if "__pycache__" in path.parts:
            continue
        try:
            data = path.read_bytes()[:budget]
        except OSError:
            continue
        budget -= len(data)
        yield str(path.relative_to(tests_dir)), data.decode("utf-8", "replace")
        if budget <= 0:
            return


_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def tests_words(texts: Iterable[str]) -> frozenset[str]:
    """Every word of the tests' texts that could be a program's file name (which programs
    the tests run: :mod:`termgrade.scoring.review.tool_reads`)."""
    return frozenset(w for text in texts for w in _WORD.findall(text))


ABSOLUTE_PATH = re.compile(r"(?<![\w.~/$-])(/[A-Za-z0-9._+@%=-]+(?:/[A-Za-z0-9._+@%=-]+)*)")
"""An absolute path in code or prose (``/opt/checker/check.py``)."""


def tests_paths(texts: Iterable[str]) -> frozenset[str]:
    """Every absolute path the tests' texts name (the image programs they run by path:
    :mod:`termgrade.scoring.review.tool_reads`)."""
    return frozenset(m.group(1) for text in texts for m in ABSOLUTE_PATH.finditer(text)
                     if m.group(1).count("/") > 1)
