"""The errors records/ raises on its own: a record model whose field roles are not declared."""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class RoleError(TermGradeError, TypeError):
    """A record model's field declares no :class:`~termgrade.records.roles.Role`, more than
    one, or roles that contradict each other (a field copied into rows but not published)."""

    def __init__(self, model: str, field: str, problem: str, *, fix: str | None = None) -> None:
        self.model = model
        self.field = field
        super().__init__(f"{model}.{field}: {problem}", fix=fix)
