"""What each field of a record is for, declared on the field itself.

A record model whose fields several parts of TermGrade split (the trial record:
:class:`~termgrade.records.trial.TrialRecord`) declares every field's roles once, as one
:class:`Role` in the field's ``Annotated`` metadata::

    reward: Annotated[float | None, Role.SCORED | Role.ROW | Role.SHOWN] = Field(...)
    job_id: Annotated[str | None, Role.NONE] = Field(...)

The lists those parts used to keep by hand are derived from it (:func:`fields_with`,
:func:`fields_without`): ``regrade``'s ``SCORED``, the trajectories builder's
``UNPUBLISHED_TRIAL_FIELDS`` and ``COPIED_TRIAL_FIELDS``, the viewer's ``TRIAL_FIELDS``.
A field with no role, two roles or contradictory ones is a :class:`RoleError` naming the
field and the fix, raised where a list is derived (so at import) and by
:func:`declared_roles`. The marker is ignored by pydantic: the JSON Schema and the Arrow
types are unchanged by it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from pydantic import BaseModel

from termgrade.records.errors import RoleError


class Role(enum.Flag):
    """The roles of one record field; combine them with ``|``."""

    NONE = 0
    """No role: kept by the record only (no column of its name publishes it; ``episode`` is
    published as ``steps``, which the builder derives), never recomputed by a regrade,
    not shown in the viewer's summaries."""
    SCORED = enum.auto()
    """Recomputed by a regrade (``termgrade regrade``): the new scoring's value, never the
    source run's. Everything else of a regraded trial is the source trial's (the agent's
    side) or the new run's identity."""
    PUBLISHED = enum.auto()
    """Goes to the trajectories repo: an ``sft`` or ``episodes`` column of its name holds
    it, as is or derived from it (a field without it is in ``UNPUBLISHED_TRIAL_FIELDS``)."""
    COPIED = enum.auto()
    """Published as the record has it (its JSON form): ``trajectory_row`` copies it
    (``COPIED_TRIAL_FIELDS``). Only with PUBLISHED."""
    SHOWN = enum.auto()
    """A column of the viewer's trial summaries (``/api/trials``: ``TRIAL_FIELDS``)."""
    ROW = PUBLISHED | COPIED
    """Published as is: the usual role of a field the rows hold."""


_FIX = ("annotate the field in its model with its roles, e.g. "
        "`name: Annotated[str, Role.ROW] = Field(...)` (Role.NONE for none); "
        "see termgrade/records/roles.py")


@cache
def declared_roles(model: type[BaseModel]) -> Mapping[str, Role]:
    """Each field's declared roles, in field order; :class:`RoleError` for the first field
    that declares none, declares twice, or is COPIED without being PUBLISHED."""
    out: dict[str, Role] = {}
    for name, info in model.model_fields.items():
        found = [m for m in info.metadata if isinstance(m, Role)]
        if not found:
            raise RoleError(model.__name__, name, "declares no roles", fix=_FIX)
        if len(found) > 1:
            raise RoleError(model.__name__, name, f"declares roles {len(found)} times",
                            fix="combine them into one: Role.A | Role.B")
        roles = found[0]
        if Role.COPIED in roles and Role.PUBLISHED not in roles:
            raise RoleError(model.__name__, name, "is COPIED but not PUBLISHED",
                            fix="declare Role.ROW (published as is), or drop Role.COPIED")
        out[name] = roles
    return MappingProxyType(out)


def fields_with(model: type[BaseModel], role: Role) -> tuple[str, ...]:
    """The fields of ``model`` that have every role of ``role``, in field order (every
    field for ``Role.NONE``)."""
    return tuple(name for name, roles in declared_roles(model).items() if role in roles)


def fields_without(model: type[BaseModel], role: Role) -> tuple[str, ...]:
    """The fields of ``model`` that lack ``role``, in field order."""
    return tuple(name for name, roles in declared_roles(model).items() if role not in roles)
