"""Small Harbor task directories written on disk, for any test that needs a task.

:func:`write_task` writes one (every piece can be overridden); the ``make_task`` fixture
of ``tests/conftest.py`` calls it under the test's ``tmp_path``. The default task writes
``hello`` to ``/app/out.txt`` on ``termgrade/base:local`` and checks it with pytest.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

STANDARD_TEST_SH = """\
#!/usr/bin/env bash
mkdir -p /logs/verifier
cd /tests || exit 1
/opt/venv/bin/python -m pytest -c /dev/null --rootdir=/tests --confcutdir=/tests \\
  -p no:cacheprovider --junitxml /logs/verifier/junit.xml -rA /tests/test_outputs.py
if [ $? -eq 0 ]; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""

CHECKS_HELLO = """\
from pathlib import Path


def test_output_exists():
    assert Path("/app/out.txt").is_file()


def test_output_content():
    assert Path("/app/out.txt").read_text().strip() == "hello"
"""

def task_toml(*, verifier_s: float = 60.0, agent_s: float = 30.0) -> str:
    """A minimal task.toml with these time limits (the attack and idiom tests' victims)."""
    return (f'schema_version = "1.4"\n[verifier]\ntimeout_sec = {verifier_s}\n'
            f"[agent]\ntimeout_sec = {agent_s}\n")


MakeTask = Callable[..., Path]
"""The ``make_task`` fixture's type: ``make_task(task_id="fixture-task", **pieces)``."""


DEFAULT_TOML = """\
schema_version = "1.4"
[metadata]
difficulty = "easy"
domain = "fixtures"
[verifier]
timeout_sec = 60.0
[agent]
timeout_sec = 60.0
"""


def write_task(
    parent: Path,
    task_id: str = "fixture-task",
    *,
    solve: str = "echo hello > /app/out.txt\n",
    tests: str = CHECKS_HELLO,
    test_sh: str = STANDARD_TEST_SH,
    dockerfile: str = "FROM termgrade/base:local\nWORKDIR /app\n",
    toml: str = "",
    extra_test_files: dict[str, str] | None = None,
    instruction: str = "Write hello to /app/out.txt.\n",
) -> Path:
    """Write a small Harbor task under ``parent``; every piece can be overridden."""
    root = parent / task_id
    for sub in ("environment", "solution", "tests"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "task.toml").write_text(toml or DEFAULT_TOML)
    (root / "instruction.md").write_text(instruction)
    (root / "environment" / "Dockerfile").write_text(dockerfile)
    (root / "solution" / "solve.sh").write_text("#!/usr/bin/env bash\n" + solve)
    (root / "tests" / "test.sh").write_text(test_sh)
    (root / "tests" / "test_outputs.py").write_text(tests)
    for name, text in (extra_test_files or {}).items():
        (root / "tests" / name).write_text(text)
    return root


IMAGE_CHECKER = """\
import hashlib, sys
got = open(sys.argv[1], "rb").read().strip()
sys.exit(0 if hashlib.sha256(got).hexdigest() == sys.argv[2] else 1)
"""
"""An image's own checker (``/opt/validator/validate.py``) the tests run: exit 0 when the
answer file's SHA-256 is the digest given (the attack tests' victims trust it)."""
