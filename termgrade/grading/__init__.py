"""Scoring: rewards, per-test verdicts, tamper findings."""

from termgrade.grading.reports import Outcome, TestVerdict
from termgrade.grading.tamper import find_tampering
from termgrade.grading.verifier import VerifierResult, parse_reward, score

__all__ = ["Outcome", "TestVerdict", "VerifierResult", "find_tampering", "parse_reward", "score"]
