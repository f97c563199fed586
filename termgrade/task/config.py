"""``task.toml``: a typed model that accepts real Harbor task configs.

Harbor schema versions 1.0-1.4 load; unknown keys are kept (``extra="allow"``) so a
task round-trips; the legacy top-level ``version`` key, ``memory``/``storage`` size
strings and ``allow_internet`` are migrated here and nowhere else.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from termgrade.task.paths import CONTAINER

SUPPORTED_SCHEMA_VERSIONS = ("1.0", "1.1", "1.2", "1.3", "1.4")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B?)?\s*$", re.IGNORECASE)
_UNIT_MB = {"": 1 / (1024 * 1024), "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


def parse_size_mb(value: str) -> int:
    """``"2G"`` -> 2048, ``"512M"`` -> 512, ``"1.5GiB"`` -> 1536 (binary units)."""
    match = _SIZE.match(value)
    if not match:
        raise ValueError(f"cannot read size {value!r}: use a number and a unit, e.g. '2G'")
    number, unit, _ = match.groups()
    return max(1, round(float(number) * _UNIT_MB[unit.upper()]))


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow")


class ServiceConfig(_Section):
    """A process the agent's work provides, restarted by the grader for the tests."""

    command: str = Field(description="Shell command that starts it (run with /bin/bash -c).")
    ready: str | None = Field(None, description="Shell command that succeeds once it serves.")
    ready_timeout_sec: float = Field(30.0, gt=0, description="How long to wait for `ready`.")
    workdir: str = Field("/app", description="Working directory of `command`.")


class VerifierConfig(_Section):
    timeout_sec: float = Field(600.0, gt=0, description="Wall-clock limit of test.sh.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra env for test.sh.")
    writable_paths: list[str] = Field(
        default_factory=list,
        description="Paths the agent may change besides the defaults (TermGrade extension).")
    services: list[ServiceConfig] = Field(
        default_factory=list,
        description="Processes started afresh in the scoring container, after the grader's "
                    "attestation took its key and before the first test (TermGrade extension).")

    @field_validator("writable_paths")
    @classmethod
    def _check_writable(cls, paths: list[str]) -> list[str]:
        for path in paths:
            clean = path.rstrip("/")
            if not path.startswith("/") or clean in ("", "/") or "/../" in f"{clean}/":
                raise ValueError(f"writable_paths entry {path!r} must be an absolute directory "
                                 "other than /, e.g. '/srv/shop'")
            for owned in map(str, CONTAINER.grader_owned):
                if clean == owned or clean.startswith(owned + "/") or owned.startswith(clean + "/"):
                    raise ValueError(f"writable_paths entry {path!r} overlaps {owned}, which the "
                                     "grader owns; choose a path outside it")
        return [p.rstrip("/") for p in paths]


class AgentConfig(_Section):
    timeout_sec: float | None = Field(None, gt=0, description="Limit of the agent phase.")


class SolutionConfig(_Section):
    env: dict[str, str] = Field(default_factory=dict, description="Extra env for solve.sh.")


class EnvironmentConfig(_Section):
    build_timeout_sec: float = Field(600.0, gt=0, description="Limit of the image build.")
    docker_image: str | None = Field(None, description="A prebuilt image to use instead.")
    cpus: float | None = Field(None, gt=0, description="CPU limit of the container.")
    memory_mb: int | None = Field(None, gt=0, description="Memory limit in MiB.")
    storage_mb: int | None = Field(None, gt=0, description="Disk limit in MiB (advisory).")
    pids: int | None = Field(None, gt=0, description="Process limit (TermGrade extension).")
    allow_internet: bool | None = Field(None, description="Legacy Harbor network switch.")
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate_sizes(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for legacy, new in (("memory", "memory_mb"), ("storage", "storage_mb")):
            if legacy in data:
                raw = data.pop(legacy)
                data.setdefault(new, parse_size_mb(raw) if isinstance(raw, str) else raw)
        return data


class TaskConfig(_Section):
    schema_version: str = Field("1.4", description="Harbor task.toml schema version.")
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    source: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate_version(cls, data: Any) -> Any:
        if isinstance(data, dict) and "version" in data:
            data = dict(data)
            data.setdefault("schema_version", str(data.pop("version")))
        return data

    @field_validator("schema_version", mode="before")
    @classmethod
    def _check_version(cls, value: Any) -> str:
        text = str(value)
        if text not in SUPPORTED_SCHEMA_VERSIONS:
            raise ValueError(
                f"unsupported schema_version {text!r}; supported: "
                + ", ".join(SUPPORTED_SCHEMA_VERSIONS)
            )
        return text

    @property
    def difficulty(self) -> str | None:
        value = self.metadata.get("difficulty")
        return str(value) if value is not None else None

    @property
    def domain(self) -> str | None:
        value = self.metadata.get("domain") or self.metadata.get("category")
        return str(value) if value is not None else None
