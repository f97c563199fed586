"""The broker's names watch without an engine (``incontainer/watch_names.py``, as staged):
a named file it cannot watch is reported written (the host then excuses no copy-up of it:
nothing saw it unwritten), and a name made and removed in a watched directory is
reported gone while one renamed over its target in the same directory is not."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from termgrade.scoring.verifier.attestation import watch_source


class Events:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def emit(self, event: dict[str, Any]) -> None:
        self.lines.append(event)


def _names_class() -> Any:
    namespace: dict[str, Any] = {"__name__": "termgrade_watch"}
    exec(compile(watch_source(), "termgrade_watch.py", "exec"), namespace)
    return namespace["Names"]


def test_a_named_file_that_cannot_be_watched_is_reported_written(tmp_path: Path) -> None:
    named = tmp_path / "expected.txt"
    named.write_text("42\n")
    signer = Events()
    names = _names_class()([], signer, [], [str(named)])
    names.fd = -1  # no inotify to be had
    names.start(background=False)
    names.finish()
    assert {"e": "written", "path": str(named), "mode": 0} in signer.lines
    watched = Events()  # the same file watched: nothing written, nothing reported
    ok = _names_class()([], watched, [], [str(named)])
    ok.start(background=False)
    ok.finish()
    assert not [e for e in watched.lines if e["e"] == "written"], watched.lines


def test_made_and_removed_is_gone_renamed_into_place_is_not(tmp_path: Path) -> None:
    signer = Events()
    names = _names_class()([[str(tmp_path), 0]], signer, [], [])
    names.start(background=False)
    (tmp_path / "strict.pm").write_text("1;\n")
    names.drain()
    (tmp_path / "strict.pm").unlink()
    (tmp_path / "config.lock").write_text("x\n")
    names.drain()
    os.rename(tmp_path / "config.lock", tmp_path / "config")
    names.finish()
    gone = {e["path"] for e in signer.lines if e["e"] == "gone"}
    assert gone == {str(tmp_path / "strict.pm")}, signer.lines
