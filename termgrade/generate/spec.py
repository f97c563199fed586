"""The generation spec: domains x difficulties x counts, optionally with seed topics.

::

    # spec.yaml
    domains: [text-processing, sqlite]
    difficulties: [easy, medium]
    count: 3                 # candidates per domain x difficulty
    counts:                  # optional overrides, "domain/difficulty": n
      sqlite/medium: 5
    seed_topics:             # optional: topics handed out in turn, per domain
      text-processing: [word frequency of a log, align a markdown table]

Each candidate gets a stable id, ``gen-<domain>-<difficulty>-<nnn>``, so a resumed run
finds its journaled work.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from termgrade.core.errors import OptionError

_DOMAIN = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
Difficulty = Literal["easy", "medium", "hard"]


class GenerationSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domains: list[str] = Field(min_length=1, description="Task domains, e.g. text-processing.")
    difficulties: list[Difficulty] = Field(min_length=1, description="easy | medium | hard.")
    count: int = Field(1, ge=0, le=100_000, description="Candidates per domain x difficulty.")
    counts: dict[str, int] = Field(
        default_factory=dict, description='Per "domain/difficulty" overrides of count.')
    seed_topics: dict[str, list[str]] = Field(
        default_factory=dict, description="Per domain, topics handed out in turn.")

    @field_validator("domains")
    @classmethod
    def _check_domains(cls, domains: list[str]) -> list[str]:
        for domain in domains:
            if not _DOMAIN.match(domain):
                raise ValueError(f"domain {domain!r}: use lowercase letters, digits and '-'")
        if len(set(domains)) != len(domains):
            raise ValueError("a domain is listed twice")
        return domains


class CandidateSpec(BaseModel):
    """What one candidate is asked to be."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    candidate_id: str
    domain: str
    difficulty: Difficulty
    topic: str | None = None


def load_spec(path: Path) -> GenerationSpec:
    """Read a spec file; :class:`OptionError` naming the file, the field and the fix."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise OptionError(f"{path}: cannot read the spec: {exc.strerror or exc}",
                          fix="pass --spec a YAML file") from exc
    except yaml.YAMLError as exc:
        raise OptionError(f"{path}: not valid YAML: {exc}", fix="fix its syntax") from exc
    if not isinstance(raw, dict):
        raise OptionError(f"{path}: the spec is not a mapping",
                          fix="write domains:, difficulties: and count: keys")
    try:
        spec = GenerationSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise OptionError(f"{path} [{field}]: {first['msg']}",
                          fix="see docs/generation.md for the spec's fields") from exc
    for key in spec.counts:
        domain, _, difficulty = key.partition("/")
        if domain not in spec.domains or difficulty not in spec.difficulties:
            raise OptionError(f"{path} [counts.{key}]: not one of the spec's domain/difficulty "
                              "pairs", fix='write "domain/difficulty" from the lists above')
    for domain in spec.seed_topics:
        if domain not in spec.domains:
            raise OptionError(f"{path} [seed_topics.{domain}]: not a domain of the spec",
                              fix="add it to domains or remove its topics")
    return spec


def expand(spec: GenerationSpec) -> list[CandidateSpec]:
    """Every candidate the spec asks for, in a stable order with stable ids."""
    out = []
    for domain in spec.domains:
        topics = spec.seed_topics.get(domain) or []
        for difficulty in spec.difficulties:
            n = spec.counts.get(f"{domain}/{difficulty}", spec.count)
            for index in range(n):
                out.append(CandidateSpec(
                    candidate_id=f"gen-{domain}-{difficulty}-{index:03d}", domain=domain,
                    difficulty=difficulty,
                    topic=topics[index % len(topics)] if topics else None))
    return out
