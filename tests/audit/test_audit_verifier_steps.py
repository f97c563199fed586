"""The ``verifier_attested`` check: what of test.sh the grader cannot attest."""

from __future__ import annotations

import pytest

from termgrade.audit.verifier_steps import verifier_steps_reason

PYTEST = "/opt/venv/bin/python -m pytest /tests/test_outputs.py\n"


@pytest.mark.parametrize("script", [
    PYTEST,
    "cd /tests\npytest -rA test_outputs.py && echo 1 > /logs/verifier/reward.txt\n",
    "timeout 600 python3 -m pytest /tests\n",
    "pytest --version\npytest --collect-only -q /tests\n" + PYTEST,
    "python3 /tests/make_fixtures.py\n" + PYTEST,       # the task's own helper
    "uv run pytest /tests\n",
])
def test_attested_shapes_pass(script: str) -> None:
    assert verifier_steps_reason("#!/bin/bash\n" + script) is None


@pytest.mark.parametrize(("script", "needle"), [
    ("python3 /tests/check.py && echo 1 > /logs/verifier/reward.txt\n", "runs no pytest"),
    ("bash /app/run.sh\n" + PYTEST, "bash /app/run.sh"),
    ("python3 /app/setup.py\n" + PYTEST, "python3 /app/setup.py"),
    ("/app/build.sh --fast\n" + PYTEST, "/app/build.sh"),
    ("make -C /app\n" + PYTEST, "make -C /app"),
    (PYTEST + "/opt/tool/report.sh > /tmp/r\n", "/opt/tool/report.sh"),
])
def test_unattested_shapes_are_named(script: str, needle: str) -> None:
    reason = verifier_steps_reason("#!/bin/bash\n" + script)
    assert reason is not None and needle in reason, reason
