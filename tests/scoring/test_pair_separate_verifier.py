"""Harbor's separate verifier, natively and offline (issue 31, item 1).

A task declares ``[verifier] environment_mode = "separate"``, a ``tests/Dockerfile`` and
its ``artifacts``. The agent's image here has no Python and no pytest at all (``/opt/venv``
and the system Python are removed) and none of the verifier image's tools; the verifier
image has pytest and a tool of its own (``vtool``). So a reward of 1 means the scoring
container ran the verifier's image with that image's closure (a closure found in the
agent's image has no Python to run the broker), and the declared artifacts (one in a
directory only the agent's image has) reached it.
"""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName, ScriptAgent
from termgrade.sandbox.errors import ImageBuildError
from termgrade.sandbox.images import build_task_image, build_verifier_image
from termgrade.scoring.review.closure import find_closure
from termgrade.scoring.trial import RunOutcome, run_task, scoring_image
from termgrade.task import load_task
from termgrade.verify.runner import verify_task
from termgrade.verify.verdict import Verdict
from tests.support.task_dirs import STANDARD_TEST_SH, write_task

pytestmark = pytest.mark.docker

AGENT_DOCKERFILE = textwrap.dedent("""\
    FROM termgrade/base:local
    RUN rm -rf /opt/venv /usr/bin/python3* /usr/lib/python3* /usr/local/lib/python3* \
     && mkdir -p /srv/deliver && chmod 0750 /srv/deliver
    WORKDIR /app
    """)
VERIFIER_DOCKERFILE = textwrap.dedent("""\
    FROM termgrade/base:local
    RUN printf '#!/bin/sh\\necho verifier-image-tool\\n' > /usr/local/bin/vtool \\
     && chmod 0755 /usr/local/bin/vtool
    WORKDIR /app
    COPY . /tests/
    """)
TOML = textwrap.dedent("""\
    schema_version = "1.4"
    artifacts = ["/app/out.txt", "/srv/deliver"]

    [verifier]
    timeout_sec = 90.0
    environment_mode = "separate"

    [agent]
    timeout_sec = 60.0
    """)
CHECKS = textwrap.dedent("""\
    import subprocess
    from pathlib import Path


    def test_output():
        assert Path("/app/out.txt").read_text().strip() == "hello"


    def test_directory_artifact():
        assert Path("/srv/deliver/report.txt").read_text().strip() == "done"


    def test_the_verifier_images_own_tool():
        out = subprocess.run(["vtool"], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "verifier-image-tool"
    """)
PROBE_SH = ('echo "TOOL: $(vtool)"\n'
            'echo "DELIVER-MODE: $(stat -c %a /srv/deliver)"\n'
            'quota=$( (cat /sys/fs/cgroup/cpu.max || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us)'
            ' 2>/dev/null | cut -d" " -f1)\n'
            'echo "MARK: ${VERIFIER_MARK:-unset} CPU-QUOTA: $quota"\n'
            '[ -e /app/undeclared.txt ] && echo UNDECLARED-ARRIVED\n'
            '[ -e /opt/venv/bin/pytest ] && echo VERIFIER-PYTEST\n')
TEST_SH = "#!/usr/bin/env bash\n" + PROBE_SH + STANDARD_TEST_SH.split("\n", 1)[1]
SOLVE = "echo hello > /app/out.txt\necho done > /srv/deliver/report.txt\n"


def separate_task(parent: Path, task_id: str = "sep-task", **pieces: str) -> Path:
    root = write_task(parent, task_id, solve=SOLVE, tests=CHECKS,
                      test_sh=TEST_SH,
                      dockerfile=AGENT_DOCKERFILE, toml=pieces.pop("toml", TOML))
    (root / "tests" / "Dockerfile").write_text(pieces.pop("verifier", VERIFIER_DOCKERFILE))
    return root


def in_image(image: str, command: str) -> tuple[int, str]:
    done = subprocess.run(["docker", "run", "--rm", "--network", "none", "--entrypoint",
                           "/bin/sh", image, "-c", command],
                          capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, done.stdout + done.stderr


def test_verifier_image_is_built_offline_and_cached_by_content(tmp_path: Path) -> None:
    task = load_task(separate_task(tmp_path))
    agent_image = build_task_image(task).tag  # builds the verifier image too
    first = build_verifier_image(task)
    assert first is not None and first.tag.startswith("termgrade/verifier-sep-task:")
    again = build_verifier_image(task)
    assert again is not None and (again.tag, again.image_id) == (first.tag, first.image_id)
    assert again.duration_s == 0.0  # found by its digest, not rebuilt
    assert scoring_image(task, agent_image) == first.tag
    # The two images really differ where it matters.
    lacks = "command -v python3 || command -v pytest || command -v vtool || ls /opt/venv"
    assert in_image(agent_image, lacks)[0] != 0
    code, out = in_image(first.tag, "vtool && /opt/venv/bin/python -m pytest --version")
    assert code == 0 and "verifier-image-tool" in out
    assert find_closure(first.tag).pytest_pythons
    assert not find_closure(agent_image).pytest_pythons
    assert not [f for f in find_closure(agent_image).files if "python" in f]
    # A changed test file is a new verifier image.
    (task.paths.tests_dir / "test_outputs.py").write_text(CHECKS + "\n# changed\n")
    changed = build_verifier_image(load_task(task.paths.root))
    assert changed is not None and changed.tag != first.tag


def test_verifier_image_build_has_no_network(tmp_path: Path) -> None:
    needs_network = VERIFIER_DOCKERFILE.replace(
        "WORKDIR /app", "RUN getent hosts pypi.org || "
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 3)'\n"
        "WORKDIR /app")
    root = separate_task(tmp_path, "sep-online", verifier=needs_network)
    with pytest.raises(ImageBuildError) as caught:
        build_verifier_image(load_task(root))
    assert "tests/Dockerfile must build with no network" in str(caught.value)
    record = verify_task(root, repeat=1)
    assert record.verdict is Verdict.BUILD_FAILED, record


def test_separate_task_verifies(tmp_path: Path) -> None:
    record = verify_task(separate_task(tmp_path), repeat=2)
    assert record.verdict is Verdict.VERIFIED, record
    assert record.oracle_rewards == [1.0, 1.0] and record.nop_reward == 0.0
    assert record.n_assertions == 3


def _grade(root: Path, agent: AgentName | ScriptAgent) -> RunOutcome:
    task = load_task(root)
    image = build_task_image(task).tag
    return run_task(task, image, agent)


def test_oracle_scores_1_and_nop_0_in_the_verifier_image(tmp_path: Path) -> None:
    root = separate_task(tmp_path)
    oracle = _grade(root, AgentName.ORACLE)
    assert oracle.reward == 1.0, (oracle.error, oracle.failure, oracle.verifier)
    assert oracle.verifier is not None
    assert "TOOL: verifier-image-tool" in oracle.verifier.output
    assert "VERIFIER-PYTEST" in oracle.verifier.output
    assert "DELIVER-MODE: 750" in oracle.verifier.output  # the agent image's directory
    assert "MARK: unset" in oracle.verifier.output
    nop = _grade(root, AgentName.NOP)
    assert nop.error is None and nop.reward == 0.0


def _agent(tmp_path: Path, body: str) -> ScriptAgent:
    script = tmp_path / "agent.sh"
    script.write_text("#!/usr/bin/env bash\n" + body)
    return ScriptAgent("scripted", script)


def test_declared_artifacts_arrive(tmp_path: Path) -> None:
    root = separate_task(tmp_path)
    outcome = _grade(root, _agent(tmp_path, SOLVE + "echo extra > /app/undeclared.txt\n"))
    assert outcome.reward == 1.0, (outcome.error, outcome.failure)


def test_an_undeclared_file_does_not_arrive(tmp_path: Path) -> None:
    root = separate_task(tmp_path)
    outcome = _grade(root, _agent(tmp_path, SOLVE + "echo extra > /app/undeclared.txt\n"))
    assert outcome.verifier is not None and outcome.reward == 1.0
    assert "UNDECLARED-ARRIVED" not in outcome.verifier.output


def test_a_missing_artifact_scores_0(tmp_path: Path) -> None:
    """Control: the directory artifact is needed (one artifact alone is not enough)."""
    root = separate_task(tmp_path)
    outcome = _grade(root, _agent(tmp_path, "echo hello > /app/out.txt\n"))
    assert outcome.error is None and outcome.reward == 0.0


def test_prebuilt_verifier_image_is_used(tmp_path: Path) -> None:
    """``[verifier.environment] docker_image`` names an image that is here: used as is,
    with that table's env and limits (the agent's container keeps the task's)."""
    toml = TOML + textwrap.dedent("""
        [environment]
        cpus = 2
        [verifier.environment]
        docker_image = "termgrade/base:local"
        cpus = 1
        env = { VERIFIER_MARK = "from-verifier-environment" }
        """)
    root = separate_task(tmp_path, "sep-prebuilt", toml=toml)
    (root / "tests" / "test_outputs.py").write_text(CHECKS.split("\n\n\ndef test_the")[0])
    task = load_task(root)
    assert scoring_image(task, "unused") == "termgrade/base:local"
    outcome = _grade(root, AgentName.ORACLE)
    assert outcome.reward == 1.0, (outcome.error, outcome.failure)
    assert outcome.verifier is not None
    assert "VERIFIER-PYTEST" in outcome.verifier.output
    # 1 CPU (the verifier's table), not the task's 2: a quota of 100000 per 100000 us.
    assert "MARK: from-verifier-environment CPU-QUOTA: 100000\n" in outcome.verifier.output


def test_a_missing_prebuilt_verifier_image_leaves_the_trial_unscored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERMGRADE_PULL", "0")  # no registry is asked
    toml = TOML + ('\n[verifier.environment]\n'
                   'docker_image = "termgrade/no-such-verifier:never"\n')
    root = separate_task(tmp_path, "sep-missing", toml=toml)
    task = load_task(root)
    with pytest.raises(ImageBuildError) as caught:
        build_verifier_image(task)
    assert "docker_image" in str(caught.value)
    outcome = run_task(task, "termgrade/base:local", AgentName.NOP)
    assert outcome.reward is None and "termgrade/no-such-verifier:never" in str(outcome.error)
