"""Nothing the agent phase leaves behind may turn a failing run into a pass.

Each cheat below is the "solution" of a task whose real check it does not meet: without
the defences each one would score 1.
"""

from __future__ import annotations

import pytest

from termgrade.agents import AgentName
from termgrade.grading.trial import run_task
from termgrade.images import build_task_image
from termgrade.task import load_task
from tests.conftest import MakeTask

pytestmark = pytest.mark.docker

SITE = "/opt/venv/lib/python3.11/site-packages"
EXIT_0 = "import os, sys\nif 'pytest' in ' '.join(sys.orig_argv): os._exit(0)\n"

CHEATS = {
    "planted-tests": (
        "mkdir -p /tests && printf 'def test_fake():\\n    pass\\n' > /tests/test_outputs.py\n"
        "printf '#!/bin/bash\\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt\\n'"
        " > /tests/test.sh\n",
        "planted verifier input",
    ),
    "forged-reward": (
        "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n"
        "echo '{\"reward\": 1}' > /logs/verifier/reward.json\n",
        "planted verifier input",
    ),
    "root-conftest": (
        "cat > /conftest.py <<'PY'\nimport pytest\n\n"
        "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    report = outcome.get_result()\n"
        "    report.outcome = 'passed'\nPY\n",
        "/conftest.py",
    ),
    "root-pytest-ini": (
        "printf '[pytest]\\naddopts = --collect-only -q\\n' > /pytest.ini\n",
        "/pytest.ini",
    ),
    "sitecustomize": (
        f"printf \"{EXIT_0}\" >> /etc/python3.11/sitecustomize.py\n",
        "sitecustomize.py",
    ),
    "pth-hook": (
        f"echo \"import os, sys; os._exit(0) if 'pytest' in ' '.join(sys.orig_argv) else None\""
        f" > {SITE}/zz_hook.pth\n",
        "zz_hook.pth",
    ),
    "modified-pytest": (
        f"printf '\\nimport os\\nos._exit(0)\\n' >> {SITE}/pytest/__main__.py\n"
        f"printf '\\nimport os\\nos._exit(0)\\n' >> {SITE}/_pytest/main.py\n",
        "verifier toolchain modified",
    ),
    "modified-python": (
        "rm /opt/venv/bin/python && printf '#!/bin/sh\\nexit 0\\n' > /opt/venv/bin/python"
        " && chmod +x /opt/venv/bin/python\n",
        "/opt/venv/bin/python",
    ),
    "replaced-bash": (
        "cp /bin/bash /root/realbash && rm /usr/bin/bash && printf '#!/root/realbash\\n"
        "mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt\\n' > /usr/bin/bash"
        " && chmod +x /usr/bin/bash\n",
        "/usr/bin/bash",
    ),
    "reward-daemon": (
        "setsid nohup /root/forge.sh >/dev/null 2>&1 &\n"
        "sleep 0.1\n",
        "contradicts the report",
    ),
}
DETECTION_IS_THE_DEFENCE = {"sitecustomize", "pth-hook", "modified-pytest", "modified-python",
                            "replaced-bash", "reward-daemon"}


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_cheat_does_not_pass_and_is_recorded(make_task: MakeTask, cheat: str) -> None:
    solve, finding = CHEATS[cheat]
    if cheat == "reward-daemon":
        # Waits for the verifier's report, then keeps forging the reward file.
        solve = ("cat > /root/forge.sh <<'SH'\n#!/bin/bash\nwhile true; do\n"
                 "  if [ -f /logs/verifier/junit.xml ]; then\n"
                 "    echo 1 > /logs/verifier/reward.txt\n  fi\n"
                 "  sleep 0.01\ndone\nSH\nchmod +x /root/forge.sh\n" + solve)
    task = load_task(make_task(cheat, solve=solve))
    image = build_task_image(task)
    outcome = run_task(task, image.tag, AgentName.ORACLE)
    assert outcome.verifier is not None, outcome.error
    assert outcome.reward == 0.0, (outcome.verifier.tampered, outcome.verifier.output[-2000:])
    assert any(finding in f for f in outcome.verifier.tampered), outcome.verifier.tampered
    if cheat in DETECTION_IS_THE_DEFENCE:
        # The cheat really forged a pass; only the tamper finding stopped it.
        assert outcome.verifier.raw_reward == 1.0


def test_honest_run_is_not_flagged(make_task: MakeTask) -> None:
    # Work in /app, a conftest.py of the agent's own project, a helper in /usr/local/bin.
    solve = ("echo hello > /app/out.txt\nprintf 'x = 1\\n' > /app/conftest.py\n"
             "printf '#!/bin/sh\\necho hi\\n' > /usr/local/bin/helper\n")
    task = load_task(make_task("honest", solve=solve))
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert outcome.verifier is not None
    assert outcome.verifier.tampered == []
    assert outcome.reward == 1.0


def test_host_bytecode_in_tests_is_not_a_finding(make_task: MakeTask) -> None:
    root = make_task("pycache")
    cache = root / "tests" / "__pycache__"
    cache.mkdir()
    (cache / "test_outputs.cpython-311.pyc").write_bytes(b"\x00stale")
    task = load_task(root)
    outcome = run_task(task, build_task_image(task).tag, AgentName.ORACLE)
    assert outcome.verifier is not None
    assert outcome.verifier.tampered == [] and outcome.reward == 1.0
