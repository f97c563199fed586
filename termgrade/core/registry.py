"""One registry idiom for TermGrade's doors: scaffolds, repo kinds, validate checks.

A :class:`Registry` holds named things of one kind. Each door keeps one instance and
gives it one call shape (a scaffold is an object with ``run``; a repo kind a record with a
builder; a validate check a function of the staged repo and the report). Every door then
behaves the same way:

* :meth:`Registry.register` adds a name; a name held by something else is a
  :class:`~termgrade.core.errors.RegistryError` (registering the same thing again is not);
* :meth:`Registry.get` looks a name up; an unknown name is a ``RegistryError`` that names
  the known ones and the door's recipe. A name of the form ``module:attr`` (how Harbor
  names agents) imports ``module``, takes ``attr`` and registers it under its own name;
* :meth:`Registry.names` / :meth:`Registry.items` list them, in registration order,
  after the door's built-in modules are imported and the door's entry-point group is read
  (an installed package of yours declares ``[project.entry-points."termgrade.scaffolds"]``
  ``my-scaffold = "my_pkg.mod:MyScaffold"``; a lookup that misses, and
  :meth:`Registry.refresh`, read the group again).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from termgrade.core.errors import RegistryError

T = TypeVar("T")


def resolve(target: str) -> Any:
    """The object a ``module:name`` string names (``module:Outer.inner`` walks attributes);
    a :class:`RegistryError` naming what failed otherwise."""
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise RegistryError("module:name", target, f"{target!r} is not of the form module:name",
                            fix="name the module and the object in it, e.g. my_pkg.mod:MyClass")
    try:
        found: Any = importlib.import_module(module)
    except ImportError as exc:
        raise RegistryError("module:name", target, f"{target}: cannot import {module} ({exc})",
                            fix=f"make {module} importable (install it, or put its folder on "
                                "PYTHONPATH)") from exc
    for part in name.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise RegistryError("module:name", target, f"{target}: {module} has no {name}",
                                fix=f"check the spelling of {name!r} in {module}") from None
    return found


class Registry(Generic[T]):
    """Named things of one door; see the module docstring.

    ``door`` names what it holds in messages ("scaffold", "repo kind"); ``recipe`` is the
    section of docs/architecture.md that says how to add one; ``built_in`` the modules whose
    import registers the shipped ones; ``group`` the entry-point group read for others;
    ``adopt(name, obj)`` turns what a ``module:attr`` or an entry point loads into the
    registered thing and its name (default: ``obj`` itself under ``name``); ``same(a, b)``
    says two registrations are one (default: identity)."""

    def __init__(self, door: str, *, recipe: str, built_in: tuple[str, ...] = (),
                 group: str | None = None,
                 adopt: Callable[[str, Any], tuple[str, T]] | None = None,
                 same: Callable[[T, T], bool] | None = None) -> None:
        self.door = door
        self.recipe = recipe
        self.built_in = built_in
        self.group = group
        self._adopt = adopt or (lambda name, obj: (name, obj))
        self._same = same or (lambda a, b: a is b)
        self.entries: dict[str, T] = {}
        self.version = 0
        """Bumped on every (un)registration: readers cache what they derive per version."""
        self._loaded = False
        self._loading = False

    # -- registering ------------------------------------------------------------------

    def register(self, name: str, item: T) -> T:
        """Add ``item`` as ``name``; the thing already registered when it is the same one."""
        held = self.entries.get(name)
        if held is not None:
            if self._same(held, item):
                return held
            raise RegistryError(self.door, name, f"{self.door} {name!r} is already registered",
                                fix=f"give the new {self.door} its own name")
        self.entries[name] = item
        self.version += 1
        return item

    def unregister(self, name: str) -> T | None:
        """Remove ``name`` (a test's own entry, once the test is done)."""
        item = self.entries.pop(name, None)
        if item is not None:
            self.version += 1
        return item

    pop = unregister

    def adopt(self, name: str, obj: Any) -> T:
        """Register what ``module:attr`` or an entry point loaded, under its own name."""
        own, item = self._adopt(name, obj)
        return self.register(own, item)

    # -- looking up -------------------------------------------------------------------

    def get(self, name: str) -> T:
        """The thing registered as ``name``, or loaded from ``module:attr``."""
        self._load()
        if name in self.entries:
            return self.entries[name]
        if ":" in name:
            return self.adopt(name.partition(":")[2].rpartition(".")[2], resolve(name))
        self._read_group()
        if name in self.entries:
            return self.entries[name]
        raise self.unknown(name)

    def unknown(self, name: str) -> RegistryError:
        """The error of a name no entry holds, naming the known ones and the recipe."""
        known = ", ".join(self.entries) or "none"
        group = (f", or install one under the entry-point group {self.group!r}"
                 if self.group else "")
        return RegistryError(self.door, name,
                             f"no {self.door} {name!r}: no such {self.door} is registered "
                             f"(known: {known})",
                             fix=f"choose one of {known}, name yours as module:attr{group} "
                                 f"(docs/architecture.md, {self.recipe!r})")

    def refresh(self) -> dict[str, T]:
        """:meth:`items`, the entry-point group read again (a package installed since)."""
        self._load()
        self._read_group()
        return dict(self.entries)

    def names(self) -> tuple[str, ...]:
        self._load()
        return tuple(self.entries)

    def items(self) -> dict[str, T]:
        """Name -> thing, in registration order (a copy)."""
        self._load()
        return dict(self.entries)

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self.entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    # -- loading ----------------------------------------------------------------------

    def _load(self) -> None:
        if self._loaded or self._loading:
            return
        self._loading = True
        try:
            for module in self.built_in:
                importlib.import_module(module)
            self._read_group()
            self._loaded = True
        finally:
            self._loading = False

    def _read_group(self) -> None:
        """Register each entry point of the door's group not registered yet."""
        if self.group is None:
            return
        for point in entry_points(group=self.group):
            if point.name in self.entries:
                continue
            try:
                loaded = point.load()
            except (ImportError, AttributeError) as exc:
                raise RegistryError(self.door, point.name,
                                    f"entry point {point.name} = {point.value} "
                                    f"({self.group}): {exc}",
                                    fix="install the package that provides it, or fix its "
                                        "entry point") from exc
            self.adopt(point.name, loaded)
