"""Task generation (stage 1 of the pipeline): an LLM writes whole tasks from a spec, a
repair loop feeds the execution filter's failures back, the audit gates what is kept.

Names load lazily (``from termgrade.generate import generate_tasks`` imports what it
needs; the records alone import no client, audit or plotting code)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from termgrade.core.lazy import lazy_exports

_API: dict[str, str] = {
    "GeneratedTask": "termgrade.generate.answer",
    "parse_answer": "termgrade.generate.answer",
    "STAGES": "termgrade.generate.funnel",
    "Funnel": "termgrade.generate.funnel",
    "funnel": "termgrade.generate.funnel",
    "GenerationReport": "termgrade.generate.pipeline",
    "generate_tasks": "termgrade.generate.pipeline",
    "CandidateRecord": "termgrade.generate.records",
    "Round": "termgrade.generate.records",
    "CandidateSpec": "termgrade.generate.spec",
    "GenerationSpec": "termgrade.generate.spec",
    "expand": "termgrade.generate.spec",
    "load_spec": "termgrade.generate.spec",
}

__all__ = ["STAGES", "CandidateRecord", "CandidateSpec", "Funnel",
           "GeneratedTask", "GenerationReport", "GenerationSpec", "Round", "expand", "funnel",
           "generate_tasks", "load_spec", "parse_answer"]


__getattr__ = lazy_exports(__name__, _API)


if TYPE_CHECKING:
    from termgrade.generate.answer import GeneratedTask, parse_answer
    from termgrade.generate.funnel import STAGES, Funnel, funnel
    from termgrade.generate.pipeline import GenerationReport, generate_tasks
    from termgrade.generate.records import CandidateRecord, Round
    from termgrade.generate.spec import CandidateSpec, GenerationSpec, expand, load_spec
