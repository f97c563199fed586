"""The README's examples run as written, on a fresh copy of the checkout, with what the
README tells a user to have (TermGrade installed, `termgrade` on PATH, a Docker engine).

Each fenced code block carries a marker comment just above it: ``readme: run`` (run
here), ``readme: docker`` (run here; needs the engine), or why it is not run here
(``long``, ``network``, ``gpu``, ``hub``, ``endpoint``) with a reason in words. The
runnable blocks run in order, unchanged (no renaming, nothing planted), in one copy of the
checkout without ``runs/`` or ``dist/``: what a fresh clone has.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ("run", "docker")
NOT_RUN = ("long", "network", "gpu", "hub", "endpoint")
MARKER = re.compile(r"<!-- readme: (\w+)(?: \((.+)\))? -->")
FENCE = re.compile(r"^```(\w*)\s*$")
FRESH_CLONE_LACKS = (".git", ".venv*", "dist", "runs", "build", "__pycache__", "*.egg-info",
                     ".mypy_cache", ".pytest_cache", ".ruff_cache", "*.secrets.baseline",
                     "*.validate-cache.json")


@dataclass(frozen=True)
class Block:
    line: int
    language: str
    kind: str | None
    reason: str | None
    code: str


def readme_blocks(text: str) -> list[Block]:
    """Every fenced block, with the marker of the comment lines just above it."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        kind = reason = None
        back = i - 1
        while back >= 0 and lines[back].startswith("<!--"):
            if found := MARKER.match(lines[back]):
                kind, reason = found.group(1), found.group(2)
            back -= 1
        blocks.append(Block(i + 1, fence.group(1), kind, reason,
                            "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return blocks


BLOCKS = readme_blocks((ROOT / "README.md").read_text())


def test_every_readme_block_says_whether_it_runs_here() -> None:
    assert BLOCKS, "README.md has no code blocks"
    for block in BLOCKS:
        where = f"README.md line {block.line}"
        assert block.kind in RUN + NOT_RUN, (
            f"{where}: mark the block with <!-- readme: KIND --> (KIND: {', '.join(RUN)}, "
            f"or why it is not run: {', '.join(NOT_RUN)} with a reason in parentheses)")
        assert block.language in ("bash", "python"), f"{where}: fence it as bash or python"
        if block.kind in NOT_RUN:
            assert block.reason, f"{where}: say why it is not run: ({block.kind} (why))"
    assert any(b.kind == "docker" and b.language == "python" for b in BLOCKS), (
        "README.md lost its Python pipeline")


def test_the_marker_parser_sees_a_block_without_a_marker() -> None:
    text = "<!-- readme: run -->\n```bash\necho a\n```\n\n```python\nprint(1)\n```\n"
    first, second = readme_blocks(text)
    assert (first.kind, first.code) == ("run", "echo a\n")
    assert (second.kind, second.language) == (None, "python")


def fresh_clone(to: Path) -> Path:
    """The checkout as a clone has it: no runs/, dist/, venvs or caches."""
    shutil.copytree(ROOT, to, ignore=shutil.ignore_patterns(*FRESH_CLONE_LACKS))
    return to


def user_path(tmp_path: Path) -> dict[str, str]:
    """The environment of a user with TermGrade installed: `termgrade` and `python` on
    PATH (this interpreter, importing the copy's package as an editable install would)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, command in (("termgrade", f'"{sys.executable}" -m termgrade "$@"'),
                          ("python", f'"{sys.executable}" "$@"')):
        shim = bin_dir / name
        shim.write_text(f"#!/bin/sh\nexec {command}\n")
        shim.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "TERMGRADE_PROGRESS": "0", "PYTHONPATH": ""}


@pytest.mark.docker
@pytest.mark.slow
def test_the_readme_examples_run_as_written(tmp_path: Path) -> None:
    clone = fresh_clone(tmp_path / "clone")
    env = user_path(tmp_path)
    outputs: list[str] = []
    for block in BLOCKS:
        if block.kind not in RUN:
            continue
        if block.language == "bash":
            argv = ["bash", "-euo", "pipefail", "-c", block.code]
        else:  # a script saved in the checkout and run with python, as a user would
            script = clone / f"readme_line_{block.line}.py"
            script.write_text(block.code)
            argv = ["python", script.name]
        done = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True,
                              timeout=900, check=False)
        assert done.returncode == 0, (f"README.md line {block.line} failed:\n"
                                      + done.stdout[-3000:] + done.stderr[-3000:])
        outputs.append(done.stdout)
    said = "".join(outputs)
    assert "'kept': 3" in said, said
    assert "dist/env valid" in said and "dist/traj valid" in said, said
    trials = (clone / "runs" / "trials.jsonl").read_text()
    assert '"source": "synthetic"' in trials and '"model": "synthetic-model-a"' in trials
