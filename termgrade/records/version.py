"""Record formats: the ``schema_version`` every record carries, checked whenever one is read.

A record model declares its format by annotating its ``schema_version`` field with a
:class:`RecordFormat`::

    schema_version: Annotated[str, TRIAL_FORMAT] = Field(TRIAL_FORMAT.version, ...)

Validation (``model_validate_json``, the JSONL reader, the pyarrow fast path) then refuses
a version this TermGrade does not know, with an error that names the version found, the
version supported and how to migrate. The same declaration names the record's JSON Schema
and the command that writes such files, which is how every reader gives the same fix.

A format may still read older versions: ``migrations={"1.0": upgrade_from_1_0}`` maps each
older version to a function that takes one record of it (a JSON object) to the next
version. They are applied in one place, :func:`validate_record`, which every reader of
record files goes through (the JSONL reader :mod:`termgrade.records.jsonl`, the journals);
the pyarrow fast path (:mod:`termgrade.trialsets.fastpath`) vouches only for files of the
current version and leaves older ones to that reader. A version neither current nor
migratable (a newer one above all) is refused as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, GetCoreSchemaHandler, ValidationError
from pydantic_core import PydanticCustomError, core_schema

M = TypeVar("M", bound=BaseModel)

Migration = Callable[[dict[str, Any]], dict[str, Any]]
"""One record (a JSON object) of an older version -> the same record one version on, its
``schema_version`` set to that version."""

VERSION_ERROR = "schema_version"
"""The pydantic error type of a version mismatch (its ``ctx`` has found/supported/migrate)."""

_NUMBERS = re.compile(r"^\d+(?:\.\d+)*$")


def _newer(found: str, supported: str) -> bool:
    if not (_NUMBERS.match(found) and _NUMBERS.match(supported)):
        return False
    return tuple(map(int, found.split("."))) > tuple(map(int, supported.split(".")))


@dataclass(frozen=True)
class RecordFormat:
    """One record format: its JSON Schema (``schemas/<schema>.schema.json``), the version
    this TermGrade writes (and reads), the command that writes such files, and the
    migrations of the older versions it still reads (see the module's doc)."""

    schema: str
    version: str
    writer: str
    migrations: Mapping[str, Migration] = field(default_factory=dict, compare=False,
                                                hash=False)

    def upgrade(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` migrated, step by step, from its ``schema_version`` to the current one;
        unchanged when it is current (or absent: the current one by default) or when no
        migration starts from it (validation then refuses it, naming the version)."""
        seen: set[str] = set()
        while True:
            found = data.get("schema_version", self.version)
            step = self.migrations.get(str(found))
            if str(found) == self.version or step is None or str(found) in seen:
                return data
            seen.add(str(found))
            data = step(dict(data))

    @property
    def fix(self) -> str:
        """What to do about a malformed record of this format."""
        return (f"make each line one JSON object matching schemas/{self.schema}.schema.json "
                f"(regenerate it with `{self.writer}`)")

    def migrate(self, found: str) -> str:
        """How to get from a file in format ``found`` to one this TermGrade reads."""
        if found in self.migrations:
            return (f"read the file with TermGrade's readers, which upgrade {self.schema} "
                    f"format {found} records to {self.version}, or re-run `{self.writer}`")
        if _newer(found, self.version):
            return (f"this file was written by a newer TermGrade ({self.schema} format "
                    f"{found}): upgrade TermGrade (pip install -U termgrade), or rewrite the "
                    f"file with this one's `{self.writer}`")
        return (f"re-run `{self.writer}` with this TermGrade to rewrite the file in "
                f"{self.schema} format {self.version}")

    def check(self, value: Any) -> Any:
        """``value`` if it is the current version (a number compares as its text); otherwise
        a pydantic error naming both."""
        value_text = str(value)
        if value_text == self.version:
            return value
        value = value_text
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


def _version_refused(exc: ValidationError) -> bool:
    return any(error["type"] == VERSION_ERROR for error in exc.errors())


def validate_record(model: type[M], data: bytes | str | dict[str, Any]) -> M:
    """``data`` (a JSON text, or the object parsed from one) as a ``model``: the one place
    records are migrated. A record of an older version its format can migrate is upgraded
    (:meth:`RecordFormat.upgrade`) and validated again; any other record validates, or
    fails, exactly as ``model_validate_json`` / ``model_validate`` would.

    The current version costs nothing extra: the text is parsed again only when its
    version was refused and the format has migrations."""
    try:
        if isinstance(data, bytes | str):
            return model.model_validate_json(data)
        return model.model_validate(data)
    except ValidationError as exc:
        declared = record_format(model)
        if declared is None or not declared.migrations or not _version_refused(exc):
            raise
        raw = json.loads(data) if isinstance(data, bytes | str) else data
        if not isinstance(raw, dict) or str(raw.get("schema_version")) not in declared.migrations:
            raise
        return model.model_validate(declared.upgrade(raw))
