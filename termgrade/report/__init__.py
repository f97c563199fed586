"""The grading report: pass@k, paired tests, Jaccard, cost, near-misses, turns, figures."""

from termgrade.report.build import ReportOptions, build_report, write_report
from termgrade.report.inputs import ReportInputs, load_inputs
from termgrade.report.models import Report

__all__ = ["Report", "ReportInputs", "ReportOptions", "build_report", "load_inputs",
           "write_report"]
