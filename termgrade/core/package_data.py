"""Data files the installed package reads, shipped inside it.

The repository's top-level ``schemas/``, ``DATASET_CARD.md`` and ``base_image/`` are the
sources a maintainer edits; ``termgrade/_data/`` holds copies that ship in the wheel, so
an installed TermGrade never looks for a repository. One way only: sources -> copies.
``python -m termgrade.core.package_data`` refreshes the copies; ``--check`` (and a test) fail
while they differ.
"""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path

SOURCES = ("schemas/*.schema.json", "DATASET_CARD.md", "base_image/Dockerfile",
           "base_image/bootstrap_os.sh", "base_image/certs/README.md")
"""Globs relative to the repository root; each match is copied to the same place in _data."""


def data_path(*parts: str) -> Path:
    """A path inside the installed package's data (``termgrade/_data``)."""
    return Path(str(resources.files("termgrade"))).joinpath("_data", *parts)


def repo_root() -> Path | None:
    """The checkout this package was imported from, or None when installed from a wheel."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "schemas").is_dir() else None


def _sources(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for pattern in SOURCES
            for p in sorted(root.glob(pattern)) if p.is_file()}


def _copies() -> dict[str, Path]:
    base = data_path()
    return {p.relative_to(base).as_posix(): p for p in sorted(base.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def stale(root: Path) -> list[str]:
    """Relative paths whose package copy is missing, different or left over."""
    sources, copies = _sources(root), _copies()
    changed = [name for name, path in sources.items()
               if name not in copies or copies[name].read_bytes() != path.read_bytes()]
    return sorted(changed + [name for name in copies if name not in sources])


def sync(root: Path) -> list[str]:
    """Make the package copies equal the sources; returns what changed."""
    changed = stale(root)
    sources = _sources(root)
    for name in changed:
        target = data_path(name)
        if name in sources:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(sources[name], target)
        else:
            target.unlink()
    return changed


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = repo_root()
    if root is None:
        print("not a TermGrade checkout: nothing to sync", file=sys.stderr)
        return 1
    if "--check" in args:
        found = stale(root)
        for name in found:
            print(f"stale: termgrade/_data/{name} (run `python -m termgrade.core.package_data`)",
                  file=sys.stderr)
        return 1 if found else 0
    for name in sync(root):
        print(f"synced termgrade/_data/{name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
