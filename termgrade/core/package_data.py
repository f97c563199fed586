"""The data files TermGrade reads: JSON Schemas, the dataset card template, the base image.

They have one source, the repository's top-level ``schemas/``, ``DATASET_CARD.md`` and
``base_image/``. Building a wheel copies them into the package as ``termgrade/_data/``
(``setup.py``'s ``build_py`` calls :func:`copy_sources`); nothing under ``termgrade/_data``
is committed. :func:`data_path` reads the checkout's files when TermGrade runs from a
checkout (an editable install, ``PYTHONPATH``) and the package's ``_data`` when it runs
from an installed wheel, so an installed TermGrade never looks for a repository.

Only the standard library is imported here: ``setup.py`` loads this file before TermGrade
is installed.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

SOURCES = ("schemas/*.schema.json", "DATASET_CARD.md", "base_image/Dockerfile",
           "base_image/bootstrap_os.sh", "base_image/certs/README.md")
"""Globs relative to the repository root; each match ships at the same place in _data."""

PACKAGE_DATA_DIR = "_data"
"""Where, inside the installed package, the wheel carries the sources."""


def repo_root() -> Path | None:
    """The checkout this package was imported from, or None when installed from a wheel."""
    root = Path(__file__).resolve().parents[2]
    marks = ("pyproject.toml", "DATASET_CARD.md", "schemas", "base_image")
    return root if all((root / mark).exists() for mark in marks) else None


def data_path(*parts: str) -> Path:
    """A path in TermGrade's data: the checkout's own file, else the installed package's."""
    root = repo_root()
    base = root if root is not None else Path(str(resources.files("termgrade"))) / PACKAGE_DATA_DIR
    return base.joinpath(*parts)


def sources(root: Path) -> dict[str, Path]:
    """The data files of the checkout at ``root``, by path relative to it."""
    return {p.relative_to(root).as_posix(): p for pattern in SOURCES
            for p in sorted(root.glob(pattern)) if p.is_file()}


def copy_sources(root: Path, target: Path) -> list[str]:
    """Copy the data files of the checkout at ``root`` into ``target`` (a build's
    ``termgrade/_data``); returns their relative paths. Fails when one is missing."""
    found = sources(root)
    missing = [pattern for pattern in SOURCES
               if not any(Path(name).match(pattern) for name in found)]
    if missing:
        raise FileNotFoundError(f"{root} has no {', '.join(missing)}: build TermGrade from a "
                                "checkout or from its sdist")
    for name, path in found.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / name)
    return sorted(found)
