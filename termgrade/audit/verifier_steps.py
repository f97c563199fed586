"""What of ``test.sh`` the grader cannot attest, statically.

TermGrade computes the reward from the pytest sessions ``test.sh`` starts (each signed
inside the scoring container); ``test.sh``'s own number can only lower it. Two shapes of
``test.sh`` are therefore worth a word before any model is graded:

* no pytest at all: no attested session covers the decision, so the task is
  unattested (:mod:`termgrade.audit.attestable`): graded by test.sh's own reward, and
  left out of labels, selection and training by default;
* a step that runs the agent's program itself, outside pytest (``python3 /app/x.py``,
  ``bash /app/run.sh``, ``/app/build.sh``, ``make -C /app``): that program is a child of
  ``test.sh``, so the grader's broker cannot tell it from a pytest that ``test.sh``
  started, and it could ask for a session key and sign a session of its own. Run it from
  a test instead (a subprocess inside a test is reaped when the test ends). Such a task
  is unattested too.
"""

from __future__ import annotations

import re

from termgrade.audit.agent_code import is_agent_path
from termgrade.audit.shellscan import simple_commands

_PYTEST = re.compile(r"(^|/)(py\.?test)$")
_RUNNERS = re.compile(r"(^|/)(python[\d.]*|bash|sh|dash|node|perl|ruby|make)$")


def _runs_pytest(words: list[str]) -> bool:
    if words[0] in ("uv", "uvx") and "pytest" in words[1:4]:
        return True
    head = words[0]
    if _PYTEST.search(head):
        return True
    return bool(re.search(r"(^|/)python[\d.]*$", head)) and "pytest" in words[1:3]


def _agent_program(words: list[str]) -> str | None:
    head = words[0]
    if is_agent_path(head):
        return " ".join(words[:3])
    if _RUNNERS.search(head):
        target = next((w for w in words[1:] if not w.startswith("-")), "")
        if is_agent_path(target) or (head.endswith("make") and any(
                is_agent_path(w) for w in words[1:])):
            return " ".join(words[:3])
    return None


def verifier_steps_reason(test_script: str) -> str | None:
    """The ``verifier_attested`` check's reason, or None when test.sh is fully attested."""
    commands = simple_commands(test_script)
    if not any(_runs_pytest(words) for words in commands):
        return ("test.sh runs no pytest: no attested session covers its decision, so the task "
                "is unattested (graded by test.sh's own reward, left out of labels, select and "
                "training by default); run the checks as pytest tests to make it attestable")
    direct = [found for words in commands if (found := _agent_program(words))]
    if direct:
        return (f"test.sh runs the agent's program outside pytest ({direct[0]}): such a step "
                "is not attested and could ask for a session key, so the task is unattested; "
                "run it inside a test (subprocess.run) instead")
    return None
