"""A grading run's defaults, each defined once: the library (:func:`grade_model`,
:class:`~termgrade.grade.adaptive.AdaptiveRule`) and ``termgrade grade`` read them here.
Imports nothing, so the CLI can show them without loading the statistics."""

from __future__ import annotations

DEFAULT_K = 8
"""Attempts per task (an adaptive run's most)."""
DEFAULT_K_MIN = 2
"""An adaptive run's fewest attempts before a task may stop."""
DEFAULT_CONFIDENCE = 0.9
"""The posterior probability that decides a band (adaptive runs)."""
DEFAULT_WORKERS = 4
"""Trials at once on this machine (two containers each)."""
