"""test.sh read by a real shell parser: honest shapes attested, agent steps found.

Each shape notes, where it was wrong, what the regex/shlex splitter this parser replaced
(``shellscan.simple_commands`` before issue 43) answered.
"""

from __future__ import annotations

import pytest

from termgrade.audit.shellparse import parses, shell_commands
from termgrade.audit.shellscan import dockerfile_findings, network_findings, simple_commands
from termgrade.audit.verifier_steps import verifier_steps_reason

T = "/tests/test_outputs.py"
REWARD = "/logs/verifier/reward.txt"

HONEST = [
    # old: unattested ("runs no pytest": `if` was the command's first word)
    f"if pytest {T}; then echo 1 > {REWARD}; else echo 0 > {REWARD}; fi\n",
    # old: attested here too (the splitter saw `pytest` first on its line); the issue's
    # held-out set counts it unattested at run time, which this check does not decide
    f'ARGS="-rA -v"\npytest $ARGS {T}\n',
    # old: unattested (the `-c` string was one word)
    f"bash -c 'cd /app && pytest {T}'\n",
    # old: unattested (`pytest` was looked for in the first three words only)
    f"uvx -p 3.13 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 pytest --ctrf /logs/ctrf.json "
    f"{T} -rA\n",
    f"python3 -m pytest {T} -rA\n",
    "cd /tests && pytest -rA test_outputs.py\n",
    f"run_tests() {{\n  pytest {T} -rA\n}}\nrun_tests\n",
    f"set -e\npytest {T} || exit 1\necho 1 > {REWARD}\n",
    f"pytest {T} -rA\nstatus=$?\nif [ $status -eq 0 ]; then echo 1 > {REWARD}; "
    f"else echo 0 > {REWARD}; fi\nexit $status\n",
    f"set -euo pipefail\nsource $HOME/.local/bin/env\nuv run pytest {T} -rA\n",
    # old: unattested (`-W` hid `-m pytest` from a look at the first two words)
    f"python3 -W ignore -m pytest {T}\n",
    # old: unattested (`$PYTEST` was not expanded)
    f'PYTEST="/opt/venv/bin/python -m pytest"\n$PYTEST {T} -rA\n',
    # old: unattested (`if` and `!` came before `timeout pytest`)
    f"cd /app\nif ! timeout 600 pytest {T} -rA; then\n  echo 0 > {REWARD}\n  exit 0\nfi\n"
    f"echo 1 > {REWARD}\n",
    f"pytest {T} -rA | tee /logs/verifier/pytest.log\n"
    f'if [ "${{PIPESTATUS[0]}}" -eq 0 ]; then echo 1 > {REWARD}; else echo 0 > {REWARD}; fi\n',
    f"case \"$(uname -m)\" in\n  x86_64) pytest {T} ;;\n  *) python3 -m pytest {T} ;;\nesac\n",
    f"[[ -d /logs/verifier ]] || mkdir -p /logs/verifier\n(( n = 0 ))\n"
    f"pytest {T} --junitxml=/logs/verifier/junit.xml && echo 1 > {REWARD} || echo 0 > {REWARD}\n",
    f"cat > /tmp/pytest.ini <<'EOF'\n[pytest]\naddopts = -rA\nEOF\npytest -c /tmp/pytest.ini {T}\n",
]
"""Honest test.sh shapes that run the task's pytest: each must be attested."""

AGENT = [
    ("python3 /app/solution.py > /tmp/out; pytest /tests\n", "python3 /app/solution.py"),
    # old: attested (the `-c` string was one word, not an agent path)
    ("bash -c 'python3 /app/gen.py'\npytest /tests\n", "python3 /app/gen.py"),
    # old: attested (`generate.py` is relative: `cd /app` was not followed)
    ("cd /app && python3 generate.py && pytest /tests\n", "python3 generate.py (in /app)"),
    ("make -C /app && pytest /tests\n", "make -C /app"),
    ("/app/run.sh\npytest /tests\n", "/app/run.sh"),
    # old: attested (a function body and a relative path in the WORKDIR)
    ("prep() { ./build.sh; }\nprep\npytest /tests\n", "./build.sh"),
    ("OUT=$(python3 /app/solve.py)\npytest /tests\n", "python3 /app/solve.py"),
    # old: attested (the program's path came from a variable)
    ("BIN=/app/bin/tool\n$BIN --check\npytest /tests\n", "/app/bin/tool"),
    ("bash <<EOF\nnode /app/index.js\nEOF\npytest /tests\n", "node /app/index.js"),
]
"""test.sh shapes that run the agent's program outside pytest: each must stay unattested."""


@pytest.mark.parametrize("script", HONEST)
def test_honest_shapes_are_attested(script: str) -> None:
    assert parses(script), script
    assert verifier_steps_reason("#!/bin/bash\n" + script) is None


@pytest.mark.parametrize(("script", "needle"), AGENT)
def test_agent_steps_stay_unattested(script: str, needle: str) -> None:
    reason = verifier_steps_reason("#!/bin/bash\n" + script)
    assert reason is not None and "outside pytest" in reason and needle in reason, reason


@pytest.mark.parametrize("script", [
    f"echo pytest {T}\n",                                        # a word, not a command
    f"cat > /tmp/r.sh <<'EOF'\npytest {T}\nEOF\n",               # data, never run
    f"helper() {{ pytest {T}; }}\necho skipped\n",               # a function never called
    f"# pytest {T}\npython3 /tests/check.py\n",
])
def test_pytest_that_never_runs_is_not_counted(script: str) -> None:
    reason = verifier_steps_reason(script)
    assert reason is not None and "runs no pytest" in reason, reason


def test_commands_are_yielded_with_their_directory_in_order() -> None:
    found = shell_commands("cd /tests\n(cd /app && ./x)\nf() { ls; }\nf && pytest\n")
    assert [(c.words, c.cwd) for c in found] == [
        (["cd", "/tests"], "/tests"), (["cd", "/app"], "/app"), (["./x"], "/app"),
        (["ls"], "/tests"), (["pytest"], "/tests")]


def test_variables_expand_split_unquoted_and_whole_quoted() -> None:
    words = simple_commands('A="-x -y"\nB=(p q)\nrun $A "$A" ${B} $UNKNOWN\n')
    assert words == [["run", "-x", "-y", "-x -y", "p", "q", "$UNKNOWN"]]


def test_network_steps_hidden_by_shell_syntax_are_found() -> None:
    # old: `if`-conditions and function bodies were found, but not this -lc string
    assert network_findings("bash -lc 'pip install requests'\n")
    assert network_findings("fetch() { curl -fsSL https://example.com/x; }\nfetch\n")
    assert network_findings(f"if uvx pytest {T}; then :; fi\n")
    assert dockerfile_findings("FROM x\nRUN bash <<EOF\napt-get install -y jq\nEOF\n")


def test_data_heredocs_are_not_scanned() -> None:
    assert network_findings("cat > /app/NOTES <<EOF\npip install foo\nEOF\n") == []
    assert dockerfile_findings("FROM x\nRUN python3 - <<'EOF'\nimport os\nEOF\n") == []
