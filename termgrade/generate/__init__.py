"""Task generation (stage 1 of the pipeline): an LLM writes whole tasks from a spec, a
repair loop feeds the execution filter's failures back, the audit gates what is kept."""

from termgrade.generate.answer import AnswerError, GeneratedTask, parse_answer
from termgrade.generate.funnel import STAGES, Funnel, funnel
from termgrade.generate.pipeline import GenerationReport, generate_tasks
from termgrade.generate.records import CandidateRecord, Round
from termgrade.generate.spec import CandidateSpec, GenerationSpec, expand, load_spec

__all__ = ["STAGES", "AnswerError", "CandidateRecord", "CandidateSpec", "Funnel",
           "GeneratedTask", "GenerationReport", "GenerationSpec", "Round", "expand", "funnel",
           "generate_tasks", "load_spec", "parse_answer"]
