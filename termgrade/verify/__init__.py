"""Execution filtering: is each task a trustworthy RL environment?"""

from termgrade.verify.journal import Journal
from termgrade.verify.pipeline import VerifyReport, verify_tasks
from termgrade.verify.record import VerifyRecord
from termgrade.verify.runner import verify_task
from termgrade.verify.verdict import Verdict, classify

__all__ = ["Journal", "Verdict", "VerifyRecord", "VerifyReport", "classify", "verify_task",
           "verify_tasks"]
