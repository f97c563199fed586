"""Lazy package exports: a name loads its module on first use (PEP 562)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, api: Mapping[str, str], *,
                 keep: bool = False) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``api`` maps each exported name to the
    module that defines it, imported on first use. ``keep`` sets the name on the package
    then (later uses skip the hook); not for a package whose exported name is also one of
    its submodules' (``generate.funnel``), which setting it would hide."""
    def __getattr__(name: str) -> Any:
        module = api.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        if keep:
            setattr(sys.modules[package], name, value)
        return value
    return __getattr__
