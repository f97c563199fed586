"""The one registry idiom of the doors (termgrade/core/registry.py): register by name, one
error for an unknown or duplicate name (naming the known ones and the recipe), ``module:attr``
lookups, entry-point groups; and the three doors (scaffolds, repo kinds, validate checks)
all raise that one error type."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from termgrade.agent.scaffolds import SCAFFOLDS, scaffold_for
from termgrade.builders.kinds import KINDS, repo_kind
from termgrade.core.errors import OptionError, RegistryError
from termgrade.core.registry import Registry, resolve
from termgrade.validate.checks import CHECKS, register_check


@pytest.fixture
def toy_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module outside the package, importable by name."""
    name = "toy_registry_module"
    (tmp_path / f"{name}.py").write_text("THING = 'outside'\nOTHER = 'other'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_register_look_up_and_list_in_order() -> None:
    doors: Registry[str] = Registry("gadget", recipe="Adding a gadget")
    doors.register("b", "bee")
    doors.register("a", "ay")
    assert doors.get("a") == "ay" and doors.names() == ("b", "a") and "b" in doors
    assert doors.register("a", "ay") == "ay"  # the same thing again is not a duplicate
    version = doors.version
    doors.unregister("a")
    assert doors.names() == ("b",) and doors.version == version + 1


def test_a_duplicate_and_an_unknown_name_are_one_error_naming_the_fix() -> None:
    doors: Registry[str] = Registry("gadget", recipe="Adding a gadget", group="toy.gadgets")
    doors.register("spanner", "one")
    with pytest.raises(RegistryError, match="gadget 'spanner' is already registered") as dup:
        doors.register("spanner", "two")
    assert dup.value.fix is not None and dup.value.door == "gadget"
    with pytest.raises(RegistryError, match="no gadget 'spaner'") as unknown:
        doors.get("spaner")
    assert "known: spanner" in str(unknown.value)
    assert "'Adding a gadget'" in str(unknown.value) and "toy.gadgets" in str(unknown.value)
    # one type, caught as what each door raised before: an option error and a failed lookup
    assert isinstance(unknown.value, OptionError) and isinstance(unknown.value, KeyError)
    assert str(unknown.value).startswith("no gadget")  # not KeyError's quoted form


def test_module_colon_attr_loads_and_registers_under_its_own_name(toy_module: str) -> None:
    doors: Registry[str] = Registry("gadget", recipe="Adding a gadget")
    assert doors.get(f"{toy_module}:THING") == "outside"
    assert doors.names() == ("THING",)
    assert resolve(f"{toy_module}:OTHER") == "other"
    with pytest.raises(RegistryError, match="has no MISSING"):
        doors.get(f"{toy_module}:MISSING")
    with pytest.raises(RegistryError, match="cannot import no_such_module_here"):
        doors.get("no_such_module_here:X")


def test_an_entry_point_of_the_group_is_found(toy_module: str, tmp_path: Path) -> None:
    info = tmp_path / "toy_gadgets-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-gadgets\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[toy.gadgets]\nwrench = {toy_module}:THING\n")
    doors: Registry[str] = Registry("gadget", recipe="Adding a gadget", group="toy.gadgets")
    assert doors.get("wrench") == "outside" and doors.names() == ("wrench",)
    without: Registry[str] = Registry("gadget", recipe="Adding a gadget")  # no group: unseen
    with pytest.raises(RegistryError):
        without.get("wrench")


def test_every_door_raises_the_one_error() -> None:
    for lookup in (lambda: scaffold_for("no-such"), lambda: repo_kind("no-such"),
                   lambda: CHECKS.get("no-such")):
        with pytest.raises(RegistryError, match=r"no .* 'no-such'"):
            lookup()
    with pytest.raises(RegistryError, match="already registered"):
        register_check("card", lambda repo, report: None)
    assert (SCAFFOLDS.door, KINDS.door, CHECKS.door) == ("scaffold", "repo kind",
                                                          "validate check")
