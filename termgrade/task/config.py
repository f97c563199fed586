"""``task.toml``: a typed model that accepts real Harbor task configs.

Harbor schema versions 1.0-1.4 load; unknown keys are kept (``extra="allow"``) so a
task round-trips; the legacy top-level ``version`` key, ``memory``/``storage`` size
strings and ``allow_internet`` are migrated here and nowhere else.

Harbor's separate verifier is read here too: ``[verifier] environment_mode``
(``"shared"``, the default, or ``"separate"``), ``[verifier.environment]`` (the verifier
container's own environment; setting it implies ``"separate"``) and the task-level
``artifacts`` list (the paths the verifier gets from the agent's container). Which image
the separate verifier runs in (``[verifier.environment] docker_image``, else
``tests/Dockerfile``, else a fresh container of the task's own image) is a question of
files as well as config: :meth:`termgrade.task.model.Task.verifier_image_source`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from termgrade.task.paths import CONTAINER

SUPPORTED_SCHEMA_VERSIONS = ("1.0", "1.1", "1.2", "1.3", "1.4")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B?)?\s*$", re.IGNORECASE)
_UNIT_MB = {"": 1 / (1024 * 1024), "K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


DIFFICULTY_ORDER = ("easy", "medium", "hard")
"""The authored difficulties of ``[metadata] difficulty``, easiest first (others sort after)."""


def difficulty_key(level: str) -> tuple[int, str]:
    """Sort key of a difficulty: :data:`DIFFICULTY_ORDER` first, then any other by name."""
    order = DIFFICULTY_ORDER.index(level) if level in DIFFICULTY_ORDER else len(DIFFICULTY_ORDER)
    return order, level


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


def _check_container_path(path: str, field: str, example: str) -> str:
    """``path`` as an absolute, normalised container path outside the grader's own
    paths; ValueError naming ``field`` otherwise."""
    clean = path.rstrip("/")
    if not path.startswith("/") or clean in ("", "/") or ".." in clean.split("/") \
            or posixpath.normpath(clean) != clean:
        raise ValueError(f"{field} entry {path!r} must be an absolute path without '..' "
                         f"or '//', other than /, e.g. {example!r}")
    for owned in map(str, CONTAINER.grader_owned):
        if clean == owned or clean.startswith(owned + "/") or owned.startswith(clean + "/"):
            raise ValueError(f"{field} entry {path!r} overlaps {owned}, which the grader "
                             "owns; choose a path outside it")
    return clean


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
    environment_mode: Literal["shared", "separate"] | None = Field(
        None,
        description="Harbor's verifier mode: 'shared' grades in the agent's environment, "
                    "'separate' in a container of its own that gets only the declared "
                    "`artifacts`. Unset: 'separate' when [verifier.environment] is set, "
                    "else 'shared'.")
    environment: EnvironmentConfig | None = Field(
        None,
        description="The separate verifier's environment (same keys as [environment]); its "
                    "`docker_image` names a prebuilt verifier image. Setting it implies "
                    "environment_mode = 'separate'.")

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

    @model_validator(mode="after")
    def _check_mode(self) -> VerifierConfig:
        if self.environment_mode == "shared" and self.environment is not None:
            raise ValueError("environment_mode = 'shared' cannot have a [verifier.environment]: "
                             "remove that table or set environment_mode = 'separate'")
        return self

    @property
    def separate(self) -> bool:
        """Harbor's resolution: an explicit mode wins; a [verifier.environment] implies
        'separate'; otherwise 'shared'."""
        if self.environment_mode is not None:
            return self.environment_mode == "separate"
        return self.environment is not None


class AgentConfig(_Section):
    timeout_sec: float | None = Field(None, gt=0, description="Limit of the agent phase.")


class SolutionConfig(_Section):
    env: dict[str, str] = Field(default_factory=dict, description="Extra env for solve.sh.")


class ArtifactEntry(_Section):
    """One entry of Harbor's ``artifacts`` list in its table form (a bare string is
    ``{source = "..."}``)."""

    source: str = Field(description="Absolute path in the agent's container; the verifier's "
                                    "container gets it at the same path.")
    destination: str | None = Field(
        None, description="Where Harbor keeps its copy on the host (relative to the trial's "
                          "artifacts directory); no effect on grading.")
    exclude: list[str] = Field(
        default_factory=list,
        description="Patterns (tar --exclude) of files left out of a directory artifact.")
    service: str | None = Field(
        None, description="Compose service to collect from: only the agent's own container "
                          "('main', or unset) is supported.")

    @field_validator("source")
    @classmethod
    def _check_source(cls, value: str) -> str:
        return _check_container_path(value, "artifacts", "/app/output.txt")

    @field_validator("service")
    @classmethod
    def _check_service(cls, value: str | None) -> str | None:
        problem = _service_problem(value)
        if problem:
            raise ValueError(problem)
        return value or None


def _service_problem(service: object) -> str | None:
    if service in (None, "", "main"):
        return None
    return (f"artifacts entry from service {service!r}: TermGrade runs no compose sidecars; "
            "collect from the agent's container (drop `service`, or set it to 'main')")


class TaskConfig(_Section):
    schema_version: str = Field("1.4", description="Harbor task.toml schema version.")
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    source: str | None = None
    artifacts: list[str] = Field(
        default_factory=list,
        description="Harbor's task-level `artifacts`: absolute container paths (files or "
                    "directories) the verifier gets from the agent's container, normalised "
                    "(no trailing '/'); a table entry contributes its `source`. In separate "
                    "mode they are all of the agent's work that reaches the verifier.")
    artifact_entries: list[ArtifactEntry] = Field(
        default_factory=list,
        description="The same entries in full (`exclude` patterns included), one per "
                    "`artifacts` path, in order; filled from `artifacts`.")

    @model_validator(mode="before")
    @classmethod
    def _migrate_version(cls, data: Any) -> Any:
        if isinstance(data, dict) and "version" in data:
            data = dict(data)
            data.setdefault("schema_version", str(data.pop("version")))
        return data

    @model_validator(mode="before")
    @classmethod
    def _split_artifacts(cls, data: Any) -> Any:
        """``artifacts`` as written (strings or tables) -> the paths, plus the full entries
        in ``artifact_entries``."""
        if not isinstance(data, dict) or "artifacts" not in data \
                or "artifact_entries" in data or not isinstance(data["artifacts"], list):
            return data
        entries = [{"source": e} if isinstance(e, str) else e for e in data["artifacts"]]
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            if "source" not in entry:
                raise ValueError(f"artifacts entry {entry!r} has no `source`: name the path "
                                 "in the agent's container, e.g. {source = '/app/out.txt'}")
            problem = _service_problem(entry.get("service"))
            if problem:
                raise ValueError(problem)
        paths = [e.get("source") if isinstance(e, dict) else e for e in entries]
        return {**data, "artifacts": paths, "artifact_entries": entries}

    @field_validator("artifacts")
    @classmethod
    def _check_artifacts(cls, paths: list[str]) -> list[str]:
        return [_check_container_path(p, "artifacts", "/app/output.txt") for p in paths]

    @property
    def separate_verifier(self) -> bool:
        """Whether the verifier runs in a container of its own that gets only the declared
        ``artifacts`` from the agent's (Harbor's ``environment_mode = "separate"``, set or
        implied by ``[verifier.environment]``)."""
        return self.verifier.separate

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
