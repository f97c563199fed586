"""Switching the grader's first layer off, to show the second one is load-bearing.

The transfer set is the first defence: nothing the agent wrote outside it reaches the
scoring container. The grader's other defences (its own processes by absolute paths, the
mapping check, the loader mount) stand behind it; a test shows each is load-bearing by
turning the transfer set off first: every change of the agent's is then in the set and
asked for, and no stand-in inside it is a finding, as the grader before the transfer set
carried all of it outside the closure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.agent.kinds import ScriptAgent
from termgrade.scoring import trial
from termgrade.scoring.outcome import RunOutcome
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.review.transfer import TransferRoot, TransferSet
from termgrade.task import load_task

EVERYTHING = TransferSet((TransferRoot("/", "declared"),))


def transfer_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every change in the set, asked for, and no stand-in finding inside it."""
    from termgrade.scoring.review import integrity

    monkeypatch.setattr(trial, "transfer_set_for", lambda *args, **kwargs: EVERYTHING)
    monkeypatch.setattr(integrity, "stands_in", lambda *args, **kwargs: None)
    # links judged where they resolve are the first layer too (a /lib64 repointed at the
    # agent's loader is caught there, before the loader mount this switch shows)
    monkeypatch.setattr(integrity, "judge_links", lambda *args, **kwargs: None)


def play_script(root: Path, body: str, tmp_path: Path, *, name: str = "agent",
                reference: ReferenceRecord | None = None) -> RunOutcome:
    """Grade the task at ``root`` (its image built) with ``body`` as a bash agent script
    named ``name``; ``reference``: the record to judge against (default: the recorded one,
    if any; ``ReferenceRecord(task_digest="none")`` for none)."""
    script = tmp_path / "agent.sh"
    script.write_text("#!/usr/bin/env bash\n" + body)
    task = load_task(root)
    return trial.run_task(task, task.image_tag, ScriptAgent(name, script), reference=reference)


def patch_watch_source(monkeypatch: pytest.MonkeyPatch, live: bytes, inert: bytes, *,
                       which: str = "watch_source") -> None:
    """A control: the staged watch module (``termgrade_watch`` as B gets it; ``which``
    names another staged source of ``verifier/attestation.py``: ``sitecustomize_source``,
    ``plugin_source``) with ``live``, which must occur exactly once, replaced by
    ``inert``."""
    from termgrade.scoring.pair import containers

    real = getattr(containers.attest, which)

    def staged() -> bytes:
        source = real()
        assert source.count(live) == 1, live
        return source.replace(live, inert, 1)

    monkeypatch.setattr(containers.attest, which, staged)
