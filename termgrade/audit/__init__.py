"""Corpus audit: static checks, near-duplicates, contamination against external benchmarks."""

from termgrade.audit.documents import AuditDoc, find_tasks, read_harbor, read_task, read_tbench
from termgrade.audit.pipeline import audit_corpus
from termgrade.audit.records import (
    AuditReport,
    AuditSettings,
    ContaminationMatch,
    NearDuplicate,
    TaskAudit,
)
from termgrade.audit.static_checks import CHECKS, CheckOptions, run_checks
from termgrade.audit.testcode import TestInventory, inventory

__all__ = [
    "CHECKS",
    "AuditDoc",
    "AuditReport",
    "AuditSettings",
    "CheckOptions",
    "ContaminationMatch",
    "NearDuplicate",
    "TaskAudit",
    "TestInventory",
    "audit_corpus",
    "find_tasks",
    "inventory",
    "read_harbor",
    "read_task",
    "read_tbench",
    "run_checks",
]
