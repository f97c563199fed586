"""What an agent phase may not touch: the verifier's toolchain and inputs.

The check reads ``docker diff`` (the engine's view of the container's writable layer),
so nothing inside the container can hide a change from it. Any finding forces the
trial's reward to 0 and is recorded on the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatch
from pathlib import PurePosixPath

from termgrade.sandbox.base import Change, ChangeKind

TOOLCHAIN_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt/venv", "/etc/alternatives")
"""Existing files here must not change or disappear: the shell, coreutils, Python, pytest."""

PLANTED_ANYWHERE = (
    "sitecustomize.py", "usercustomize.py", "*.pth", "conftest.py",
    "pytest.ini", ".pytest.ini", "pytest_*.py",
)
"""Files that change how Python or pytest starts, wherever they are added."""

PLANTED_EXACT = (
    "/pytest.ini", "/tox.ini", "/setup.cfg", "/pyproject.toml", "/conftest.py",
    "/etc/ld.so.preload", "/etc/environment", "/etc/python3", "/etc/bash.bashrc",
)
PLANTED_PREFIXES = ("/etc/python3",)
"""Debian's Python reads /etc/python3.X/sitecustomize.py at every start."""
VERIFIER_INPUTS = ("/tests", "/logs/verifier")
"""The scorer replaces these; anything the agent put there is an attempt to forge."""

TASK_OWNED = ("/usr/local",)
"""Under a toolchain root but the task's to change (its own scripts and tools) ..."""
TASK_OWNED_EXCEPT = ("/usr/local/bin/python*", "/usr/local/lib/python*", "/usr/local/bin/pytest*")
"""... except a Python installed there."""

ALLOWED_ADDITIONS = ("/app", "/root", "/home", "/tmp", "/srv", "/var", "/data", "/workspace")
"""Where an agent's own conftest.py or pytest.ini is legitimate project work."""


def _is_directory_entry(change: Change, paths: set[str]) -> bool:
    prefix = change.path.rstrip("/") + "/"
    return change.kind is ChangeKind.MODIFIED and any(p.startswith(prefix) for p in paths)


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _is_toolchain(path: str) -> bool:
    if any(fnmatch(path, pattern) for pattern in TASK_OWNED_EXCEPT):
        return True
    return _under(path, TOOLCHAIN_ROOTS) and not _under(path, TASK_OWNED)


def find_tampering(changes: Iterable[Change]) -> list[str]:
    """Findings as ``"<kind> <path>: <why>"``, sorted; empty when the run is clean."""
    changes = list(changes)
    paths = {c.path for c in changes}
    findings: list[str] = []
    for change in changes:
        path = change.path
        name = PurePosixPath(path).name
        kind = change.kind.value
        if _is_directory_entry(change, paths):
            continue
        if _under(path, VERIFIER_INPUTS) and path not in VERIFIER_INPUTS:
            findings.append(f"{kind} {path}: planted verifier input")
        elif path in PLANTED_EXACT or path.startswith(PLANTED_PREFIXES):
            findings.append(f"{kind} {path}: changes how the verifier starts")
        elif change.kind is not ChangeKind.ADDED and _is_toolchain(path):
            findings.append(f"{kind} {path}: verifier toolchain modified")
        elif (
            change.kind is ChangeKind.ADDED
            and any(fnmatch(name, pattern) for pattern in PLANTED_ANYWHERE)
            and not _under(path, ALLOWED_ADDITIONS)
        ):
            findings.append(f"{kind} {path}: planted Python/pytest start-up hook")
        elif change.kind is ChangeKind.ADDED and _under(path, ("/opt/venv",)) and (
            "pytest" in path or "pluggy" in path
        ):
            findings.append(f"{kind} {path}: planted pytest plugin")
    return sorted(findings)
