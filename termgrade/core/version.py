"""The installed TermGrade's version: one number, pyproject.toml's, read from the package's
metadata (a checkout imported without being installed reports the number written here)."""

from __future__ import annotations

from importlib import metadata

_CHECKOUT_VERSION = "0.1.0"
"""pyproject.toml's version; a test keeps the two equal."""


def _installed() -> str:
    try:
        return metadata.version("termgrade")
    except metadata.PackageNotFoundError:
        return _CHECKOUT_VERSION


__version__ = _installed()
