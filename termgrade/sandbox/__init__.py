"""Execution environments: one small interface, a Docker implementation behind it."""

from termgrade.sandbox.base import Change, ChangeKind, ExecResult, Limits, OutputCap, Sandbox

__all__ = ["Change", "ChangeKind", "ExecResult", "Limits", "OutputCap", "Sandbox"]
