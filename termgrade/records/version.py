"""Record formats: the ``schema_version`` every record carries, checked whenever one is read.

A record model declares its format by annotating its ``schema_version`` field with a
:class:`RecordFormat`::

    schema_version: Annotated[str, TRIAL_FORMAT] = Field(TRIAL_FORMAT.version, ...)

Validation (``model_validate_json``, the JSONL reader, the pyarrow fast path) then refuses
a version this TermGrade does not know, with an error that names the version found, the
version supported and how to migrate. The same declaration names the record's JSON Schema
and the command that writes such files, which is how every reader gives the same fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, GetCoreSchemaHandler
from pydantic_core import PydanticCustomError, core_schema

VERSION_ERROR = "schema_version"
"""The pydantic error type of a version mismatch (its ``ctx`` has found/supported/migrate)."""

_NUMBERS = re.compile(r"^\d+(?:\.\d+)*$")


def _newer(found: str, supported: str) -> bool:
    if not (_NUMBERS.match(found) and _NUMBERS.match(supported)):
        return False
    return tuple(map(int, found.split("."))) > tuple(map(int, supported.split(".")))


@dataclass(frozen=True)
class RecordFormat:
    """One record format: its JSON Schema (``schemas/<schema>.schema.json``), the one
    version this TermGrade reads and writes, and the command that writes such files."""

    schema: str
    version: str
    writer: str

    @property
    def fix(self) -> str:
        """What to do about a malformed record of this format."""
        return (f"make each line one JSON object matching schemas/{self.schema}.schema.json "
                f"(regenerate it with `{self.writer}`)")

    def migrate(self, found: str) -> str:
        """How to get from a file in format ``found`` to one this TermGrade reads."""
        if _newer(found, self.version):
            return (f"this file was written by a newer TermGrade ({self.schema} format "
                    f"{found}): upgrade TermGrade (pip install -U termgrade), or rewrite the "
                    f"file with this one's `{self.writer}`")
        return (f"re-run `{self.writer}` with this TermGrade to rewrite the file in "
                f"{self.schema} format {self.version}")

    def check(self, value: str) -> str:
        """``value`` if it is the supported version; otherwise a pydantic error naming both."""
        if value == self.version:
            return value
        reason = (f"{self.schema} format {value!r} is not supported (this TermGrade reads "
                  f"{self.version!r}): {self.migrate(value)}")
        raise PydanticCustomError(VERSION_ERROR, "{reason}", {
            "reason": reason, "found": value, "supported": self.version,
            "migrate": self.migrate(value)})

    def __get_pydantic_core_schema__(self, source: Any,
                                     handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))


def record_format(model: type[BaseModel]) -> RecordFormat | None:
    """The format ``model`` declares on its ``schema_version`` field, if any."""
    info = model.model_fields.get("schema_version")
    if info is None:
        return None
    return next((m for m in info.metadata if isinstance(m, RecordFormat)), None)
