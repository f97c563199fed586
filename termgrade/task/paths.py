"""The on-disk layout of one task directory (Harbor format); no other module joins these.

::

    <task_id>/
    ├── task.toml              # config: [metadata] [verifier] [agent] [environment] ...
    ├── instruction.md         # what the agent is asked to do
    ├── environment/
    │   └── Dockerfile         # FROM termgrade/base:local; the build context is environment/
    ├── solution/              # optional: third-party corpora often keep it private
    │   └── solve.sh           # the reference solution, run as `bash /solution/solve.sh`
    └── tests/
        ├── test.sh            # the verifier: writes /logs/verifier/reward.txt
        ├── test_*.py          # named assertions
        └── Dockerfile         # optional: a separate verifier's image (context: tests/)

Inside the container the same pieces live at ``/solution``, ``/tests`` and
``/logs/verifier`` (:class:`ContainerPaths`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath


@dataclass(frozen=True)
class TaskPaths:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "task.toml"

    @property
    def instruction(self) -> Path:
        return self.root / "instruction.md"

    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def dockerfile(self) -> Path:
        return self.environment_dir / "Dockerfile"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def solve_script(self) -> Path:
        return self.solution_dir / "solve.sh"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def test_script(self) -> Path:
        return self.tests_dir / "test.sh"

    @property
    def verifier_dockerfile(self) -> Path:
        """A separate-mode verifier's image recipe; its build context is ``tests/``."""
        return self.tests_dir / "Dockerfile"

    @property
    def verifier_compose(self) -> Path:
        """Harbor's compose form of a separate verifier (not supported by TermGrade)."""
        return self.tests_dir / "docker-compose.yaml"

    def required(self) -> list[tuple[Path, str]]:
        """Files every task must have, with what each one is for. The reference solution
        is not one of them: without it the task loads, and ``verify`` says ``no_solution``."""
        return [
            (self.config, "the task config"),
            (self.instruction, "the instruction shown to the agent"),
            (self.dockerfile, "the image recipe"),
            (self.test_script, "the verifier entry point"),
        ]


class ContainerPaths:
    """Where a task's pieces live inside its container (Harbor's EnvironmentPaths)."""

    tests_dir = PurePosixPath("/tests")
    solution_dir = PurePosixPath("/solution")
    logs_dir = PurePosixPath("/logs")
    agent_dir = PurePosixPath("/logs/agent")
    verifier_dir = PurePosixPath("/logs/verifier")
    reward_text = PurePosixPath("/logs/verifier/reward.txt")
    reward_json = PurePosixPath("/logs/verifier/reward.json")
    ctrf_report = PurePosixPath("/logs/verifier/ctrf.json")
    junit_report = PurePosixPath("/logs/verifier/junit.xml")
    test_stdout = PurePosixPath("/logs/verifier/test-stdout.txt")
    grader_dir = PurePosixPath("/opt/termgrade-grader")
    """TermGrade's attestation plugin, mounted read-only at scoring time."""
    grader_run_dir = PurePosixPath("/run/termgrade")
    """The per-run attestation config (read and deleted by the plugin before any test)."""
    grader_owned = (tests_dir, logs_dir, grader_dir, grader_run_dir)
    """Paths the grader writes in the scoring container; no writable path may overlap them."""


CONTAINER = ContainerPaths()
