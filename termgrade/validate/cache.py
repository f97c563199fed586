"""What earlier validations of a repo found clean, by content hash: a file, or a whole
config split, that has not changed since it passed is not checked again.

The cache lives *beside* the staged repo (``dist/<repo>.validate-cache.json``, never
published, like the secrets baseline). An entry is the sha256 of the file's bytes, the
row model it holds and the sha256 of that model's JSON Schema, and the TermGrade version
that checked it, so a new schema or a new TermGrade checks everything again. Passes are
recorded, and a check that finds only what a person may accept (a secret scan's findings,
judged against the baseline on every run) can store its result under its key to be
recalled instead of redone; a file with a finding that fails is checked every time.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from termgrade.builders.layout import RepoPaths
from termgrade.core.atomic import atomic_write_text
from termgrade.core.version import __version__

CACHE_FORMAT = 2
_CHUNK = 1 << 20


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def cache_path(paths: RepoPaths) -> Path:
    return paths.root.parent / f"{paths.root.name}.validate-cache.json"


class ValidationCache:
    """Keys of checks that passed. ``enabled=False`` remembers nothing and hits nothing."""

    def __init__(self, paths: RepoPaths, *, enabled: bool = True) -> None:
        self.path = cache_path(paths)
        self.enabled = enabled
        self.passed: set[str] = set()
        self.stored: dict[str, Any] = {}
        self.hits = 0
        self._count = threading.Lock()  # checks may run in two threads
        self._digests: dict[Path, str] = {}
        if enabled and self.path.is_file():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}
            if data.get("format") == CACHE_FORMAT and data.get("termgrade") == __version__:
                self.passed = set(data.get("passed", []))
                stored = data.get("stored", {})
                self.stored = stored if isinstance(stored, dict) else {}

    def digest(self, path: Path) -> str:
        if path not in self._digests:
            self._digests[path] = file_digest(path)
        return self._digests[path]

    def rows_key(self, path: Path, row_schema: str, schema_text: str) -> str:
        schema = hashlib.sha256(schema_text.encode()).hexdigest()
        return f"rows:{row_schema}:{schema}:{self.digest(path)}"

    def load_key(self, config: str, split: str, files: list[Path]) -> str:
        combined = hashlib.sha256("\n".join(self.digest(p) for p in files).encode())
        return f"load:{config}/{split}:{combined.hexdigest()}"

    def hit(self, key: str) -> bool:
        found = self.enabled and key in self.passed
        if found:
            with self._count:
                self.hits += 1
        return found

    def remember(self, key: str) -> None:
        if self.enabled:
            self.passed.add(key)

    def recall(self, key: str) -> Any | None:
        """The result stored under ``key`` by an earlier run, or None."""
        if not self.enabled or key not in self.stored:
            return None
        with self._count:
            self.hits += 1
        return self.stored[key]

    def store(self, key: str, result: Any) -> None:
        """Keep a JSON-able result under ``key`` (saved when ``key`` is in ``keep``)."""
        if self.enabled:
            self.stored[key] = result

    def save(self, keep: set[str]) -> None:
        """Write the entries in ``keep`` (this run's passes and stored results): stale
        ones are dropped."""
        if not self.enabled:
            return
        atomic_write_text(self.path, json.dumps(
            {"format": CACHE_FORMAT, "termgrade": __version__,
             "passed": sorted(keep & self.passed),
             "stored": {k: v for k, v in sorted(self.stored.items()) if k in keep}},
            indent=0) + "\n")
