"""Lazy package exports: a name loads its module on first use (PEP 562)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
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


class _CallableModule(ModuleType):
    """A subpackage that calls its namesake function when called (see
    :func:`callable_package`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, self.__dict__["__callable__"])(*args, **kwargs)


def callable_package(package: str, function: str) -> None:
    """Make ``package`` (``termgrade.publish``) call its ``function`` (``publish``) when
    called. Importing a subpackage binds it on its parent over the parent's lazy export
    of the same name (``from termgrade.publish import PublishOptions`` makes
    ``termgrade.publish`` the package), so the top-level name ``tg.publish(...)`` keeps
    working whichever was imported first, and dotted imports of its modules still do."""
    module = sys.modules[package]
    module.__dict__["__callable__"] = function
    module.__class__ = _CallableModule
