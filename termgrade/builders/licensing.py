"""What a card may say about its tasks' license: only what the build knows.

The license comes from, in order: the maintainer (``--license``); the one license every
task's ``task.toml`` ``[metadata] license`` states; TermGrade's own license when every
task is one of TermGrade's originals (``[metadata] source = "termgrade-original"``).
Otherwise it is unknown, and a card claims none: its YAML has no ``license`` field and
its License section says how to set one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

OWN_SOURCE = "termgrade-original"
"""The ``[metadata] source`` of TermGrade's own tasks, released under its license."""
OWN_LICENSE = "apache-2.0"


def _text(metadata: Mapping[str, object], key: str) -> str | None:
    value = metadata.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class Origin:
    """What one task's ``[metadata]`` says of where it is from."""

    license: str | None
    source: str | None

    @classmethod
    def of(cls, metadata: Mapping[str, object]) -> Origin:
        return cls(_text(metadata, "license"), _text(metadata, "source"))


def is_own(origins: Iterable[Origin]) -> bool:
    """Every task is one of TermGrade's originals (and there is at least one)."""
    listed = list(origins)
    return bool(listed) and all(o.source == OWN_SOURCE for o in listed)


def known_license(origins: Iterable[Origin], given: str | None = None) -> str | None:
    """The tasks' license as far as the build knows it (None: unknown)."""
    if given and given.strip():
        return given.strip().lower()
    listed = list(origins)
    stated = {o.license for o in listed}
    if listed and len(stated) == 1 and None not in stated:
        return str(next(iter(stated))).lower()
    return OWN_LICENSE if is_own(listed) else None


def license_section(license_id: str | None, origins: Iterable[Origin], command: str) -> str:
    """The card's License section; ``command``: the build command that sets it."""
    listed = list(origins)
    sources = sorted({o.source or "not recorded" for o in listed})
    where = ", ".join(f"`{s}`" for s in sources) or "not recorded"
    if license_id is None:
        return (f"Not known to this build: the tasks' `task.toml` files state no `license` "
                f"(source: {where}). Check the source's terms before you use or redistribute "
                f"them. The maintainer sets it with `{command} --license SPDX-ID` (or "
                "`license` in each task's `[metadata]`), which fills this section and the "
                "card's `license` field.")
    if is_own(listed) and license_id == OWN_LICENSE:
        return "Apache-2.0 (TermGrade's own tasks, released under TermGrade's license)."
    return f"`{license_id}`, as stated for these tasks (source: {where})."
