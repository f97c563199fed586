"""Honest work that is not the reference's scores 1 through ``termgrade grade``, with and
without a reference solution in the task, as a researcher regrades a third-party corpus.

The "model" is a scripted stand-in behind a loopback endpoint that replays a third-party
solution (one bash call, then ``finish``): it reaches the deliverables another way than
the task's own ``solve.sh``, puts its tool where the instruction says rather than where
the reference does, and leaves things of its own: a cache (scratch: left out and said,
never a finding) and a helper of a new name on ``PATH`` (created work: carried, it
shadows nothing).
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from termgrade.agent import Endpoint, ScaffoldConfig
from termgrade.agent.kinds import ModelAgent
from termgrade.grade import TRIALS_FILE, grade_model
from tests.support.scripted_tools import ScriptedToolEndpoint, replay_solution
from tests.support.task_dirs import write_task

pytestmark = [pytest.mark.docker, pytest.mark.slow]

INSTRUCTION = ("Install a command `/usr/local/bin/greet` that prints `hello, NAME` for its "
               "argument, and write the shop's settings to /etc/shop/shop.conf with the line "
               "`port=8080`.\n")
TESTS = textwrap.dedent("""\
    import subprocess
    from pathlib import Path


    def test_greet():
        done = subprocess.run(["greet", "ada"], capture_output=True, text=True)
        assert done.stdout.strip() == "hello, ada"


    def test_settings():
        assert "port=8080" in Path("/etc/shop/shop.conf").read_text().splitlines()
    """)
REFERENCE = textwrap.dedent("""\
    mkdir -p /srv/greet /etc/shop
    printf '#!/bin/sh\\necho "hello, $1"\\n' > /srv/greet/greet
    chmod 755 /srv/greet/greet
    ln -s /srv/greet/greet /usr/local/bin/greet
    echo port=8080 > /etc/shop/shop.conf
    """)
THIRD_PARTY = textwrap.dedent("""\
    python3 - <<'PY'
    import os, pathlib
    tool = pathlib.Path("/usr/local/bin/greet")
    tool.write_text('#!/usr/bin/env python3\\nimport sys\\nprint("hello, " + sys.argv[1])\\n')
    tool.chmod(0o755)
    pathlib.Path("/etc/shop").mkdir(exist_ok=True)
    pathlib.Path("/etc/shop/shop.conf").write_text("# settings\\nport=8080\\n")
    PY
    mkdir -p /root/.cache/scratch && echo junk > /root/.cache/scratch/notes
    printf '#!/bin/sh\\necho helper\\n' > /usr/local/bin/my-helper
    chmod 755 /usr/local/bin/my-helper
    """)


@pytest.mark.parametrize("with_reference", [True, False], ids=["reference", "no-reference"])
def test_a_third_party_solution_scores_one(tmp_path: Path, with_reference: bool) -> None:
    task_dir = write_task(tmp_path / "tasks", "greet-shop", tests=TESTS, solve=REFERENCE,
                          instruction=INSTRUCTION)
    if not with_reference:
        shutil.rmtree(task_dir / "solution")
    from termgrade.sandbox.images import build_task_image
    from termgrade.task import load_task

    build_task_image(load_task(task_dir))
    if with_reference:  # verify records the reference run the grader then judges with
        from termgrade.scoring.reference import reference_for
        from termgrade.verify import Verdict, verify_task

        assert verify_task(task_dir, repeat=1).verdict is Verdict.VERIFIED
        assert reference_for(load_task(task_dir)) is not None
    with ScriptedToolEndpoint(replay_solution(THIRD_PARTY)) as endpoint:
        agent = ModelAgent(Endpoint(endpoint.url, endpoint.model, api_key_env=None),
                           ScaffoldConfig())
        grade_model([tmp_path / "tasks"], agent, tmp_path / "graded", k=1, workers=1,
                    progress=False)
    [trial] = [json.loads(line) for line in
               (tmp_path / "graded" / TRIALS_FILE).read_text().splitlines() if line.strip()]
    assert trial["reward"] == 1.0, (trial.get("exception_message"), trial.get("tests"))
    # its cache stayed behind, said in the record; its helper is created work, carried
    assert "/root/.cache" in trial["left_out"]
    assert "/usr/local/bin/my-helper" not in trial["left_out"]
