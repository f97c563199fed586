"""Scripted task generators for ``benchmarks/generation.py``, behind a loopback endpoint.

Each generator is a fixed list of answers, one per round (the last repeats): it never
reads the feedback it is sent, so it is a script, never a model. A request goes to the
generator named by the candidate's seed topic (the ``Topic:`` line of its first user
message); the round is the number of assistant messages the conversation holds.

``scripted-valid``          a valid task, first time
``scripted-repaired``       a broken task (its solution is wrong), fixed on the first repair
``scripted-never-fixed``    the same broken task, every round
``scripted-garbage``        prose, never the answer format
``scripted-vacuous``        tests the untouched container passes, every round
``scripted-copy-corpus``    the corpus task ``environments/word-frequency``, verbatim
``scripted-imports-solution`` tests that import the solution into pytest's own process
``scripted-network``        a Dockerfile that downloads its data at build time

(The same scripts serve the generate tests, from their own copy in ``tests/support/``.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks._support.chat import LoopbackChat, assistant_turns

BASE = "termgrade/base:local"
DOMAIN = "text-processing"
DIFFICULTY = "easy"
REPO = Path(__file__).resolve().parents[2]
"""The checkout's root (this file is benchmarks/_support/generators.py)."""
TEST_SH = (REPO / "termgrade" / "generate" / "prompts" / "v1" / "test.sh").read_text()
TOML = f"""schema_version = "1.4"

[metadata]
domain = "{DOMAIN}"
difficulty = "{DIFFICULTY}"
author = "termgrade-generate"
source = "generated"

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 60.0

[environment]
build_timeout_sec = 120.0
"""


def answer(files: Mapping[str, str]) -> str:
    """Files as the answer format's blocks."""
    return "".join(f"=== file: {path} ===\n{text}=== end ===\n" for path, text in files.items())


def task(instruction: str, tests: str, solve: str, *, dockerfile: str | None = None,
         extra: Mapping[str, str] | None = None) -> str:
    files = {"task.toml": TOML, "instruction.md": instruction,
             "environment/Dockerfile": dockerfile or f"FROM {BASE}\nWORKDIR /app\n",
             "tests/test.sh": TEST_SH, "tests/test_outputs.py": tests,
             "solution/solve.sh": "#!/usr/bin/env bash\nset -euo pipefail\n" + solve,
             **(extra or {})}
    return answer(files)


SUM_TESTS = '''from pathlib import Path

import pytest

SUM = Path("/app/sum.txt")


def test_sum_file_exists():
    assert SUM.is_file()


def test_sum_is_the_total_of_the_numbers():
    assert SUM.read_text().strip() == "12"


@pytest.mark.parametrize("probe", ["digits", "one-line", "no-spaces", "newline", "positive",
                                   "ascii", "short", "integer"])
def test_sum_format(probe):
    text = SUM.read_text()
    checks = {"digits": text.strip().isdigit(), "one-line": text.count("\\n") <= 1,
              "no-spaces": " " not in text.strip(), "newline": text.endswith("\\n"),
              "positive": int(text) > 0, "ascii": text.isascii(), "short": len(text) < 8,
              "integer": str(int(text)) == text.strip()}
    assert checks[probe]
'''
VALID = task(
    "Add up the integers in /app/numbers.txt (one per line) and write their sum, followed "
    "by a newline, to /app/sum.txt.\n",
    SUM_TESTS, "awk '{s += $1} END {print s}' /app/numbers.txt > /app/sum.txt\n",
    dockerfile=f"FROM {BASE}\nWORKDIR /app\nCOPY numbers.txt /app/numbers.txt\n",
    extra={"environment/numbers.txt": "3\n4\n5\n"})

REVERSE_TESTS = '''import subprocess
from pathlib import Path

import pytest

OUT = Path("/app/reversed.txt")
LINES = ["alpha", "bravo", "charlie", "delta", "echo"]


def test_output_exists():
    assert OUT.is_file()


@pytest.mark.parametrize("index", [0, 1, 2, 3, 4])
def test_line_is_in_reverse_position(index):
    assert OUT.read_text().splitlines()[index] == LINES[::-1][index]


def test_same_number_of_lines():
    assert len(OUT.read_text().splitlines()) == len(LINES)


def test_input_left_unchanged():
    assert Path("/app/lines.txt").read_text().splitlines() == LINES


def test_ends_with_newline():
    assert OUT.read_text().endswith("\\n")


def test_matches_tac():
    done = subprocess.run(["tac", "/app/lines.txt"], capture_output=True, text=True)
    assert OUT.read_text() == done.stdout
'''


def reverse_task(solve: str) -> str:
    return task("Write the lines of /app/lines.txt in reverse order (last line first) to "
                "/app/reversed.txt; leave the input unchanged.\n", REVERSE_TESTS, solve,
                dockerfile=f"FROM {BASE}\nWORKDIR /app\nCOPY lines.txt /app/lines.txt\n",
                extra={"environment/lines.txt": "alpha\nbravo\ncharlie\ndelta\necho\n"})


BROKEN = reverse_task("cp /app/lines.txt /app/reversed.txt\n")  # not reversed: unsatisfiable
FIXED = reverse_task("tac /app/lines.txt > /app/reversed.txt\n")

VACUOUS_TESTS = '''from pathlib import Path

import pytest


@pytest.mark.parametrize("folder", ["/app", "/tmp", "/etc", "/usr", "/bin", "/var", "/opt",
                                    "/root", "/proc", "/dev"])
def test_folder_present(folder):
    assert Path(folder).is_dir()
'''
VACUOUS = task("Make sure the usual folders of the file system exist.\n", VACUOUS_TESTS,
               "mkdir -p /app\n")

IMPORT_TESTS = '''import sys

sys.path.insert(0, "/app")

import pytest

import greeter


def test_greet_module_loads():
    assert hasattr(greeter, "greet")


@pytest.mark.parametrize("name", ["ada", "linus", "grace", "ken", "dennis", "barbara",
                                  "guido", "margaret", "alan"])
def test_greet_each_name(name):
    assert greeter.greet(name) == f"Hello, {name}!"
'''
IMPORTS_SOLUTION = task(
    "Write a Python module /app/greeter.py with a function greet(name) that returns "
    "'Hello, <name>!'.\n", IMPORT_TESTS,
    "cat > /app/greeter.py <<'PY'\ndef greet(name):\n    return f\"Hello, {name}!\"\nPY\n")

NETWORK = task(
    "Count the rows of /app/data.csv and write the count to /app/rows.txt.\n",
    SUM_TESTS.replace("sum.txt", "rows.txt"), "wc -l < /app/data.csv > /app/rows.txt\n",
    dockerfile=(f"FROM {BASE}\nWORKDIR /app\nRUN /opt/venv/bin/python -c \"import urllib."
                "request; urllib.request.urlretrieve('https://example.com/data.csv', "
                "'/app/data.csv')\"\n"))

GARBAGE = "I'm sorry, but I can't write that task. Here is a poem about terminals instead."


def corpus_copy(task_dir: Path) -> str:
    """A corpus task's files, verbatim, as one answer."""
    files = {p.relative_to(task_dir).as_posix(): p.read_text()
             for p in sorted(task_dir.rglob("*")) if p.is_file()}
    return answer(files)


def generators(corpus_task: Path = REPO / "environments" / "word-frequency"
               ) -> dict[str, tuple[str, ...]]:
    """Seed topic -> the scripted generator's answers, one per round."""
    return {
        "scripted-valid": (VALID,),
        "scripted-repaired": (BROKEN, FIXED),
        "scripted-never-fixed": (BROKEN,),
        "scripted-garbage": (GARBAGE,),
        "scripted-vacuous": (VACUOUS,),
        "scripted-copy-corpus": (corpus_copy(corpus_task),),
        "scripted-imports-solution": (IMPORTS_SOLUTION,),
        "scripted-network": (NETWORK,),
    }


_TOPIC = re.compile(r"^Topic: (\S+)$", re.MULTILINE)


def scripted_generators(scripts: Mapping[str, Sequence[str]] | None = None) -> LoopbackChat:
    """One loopback endpoint for all the scripted generators, routed by the seed topic."""
    routes = {k: tuple(v) for k, v in (scripts or generators()).items()}

    def reply(messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
        first_user = next((str(m.get("content")) for m in messages if m.get("role") == "user"),
                          "")
        found = _TOPIC.search(first_user)
        script = routes.get(found.group(1) if found else "", (GARBAGE,))
        return {"content": script[min(assistant_turns(messages), len(script) - 1)]}

    return LoopbackChat(reply, model="scripted-generators")


def spec_yaml(topics: Sequence[str]) -> str:
    """A spec asking one candidate per scripted generator (topics handed out in turn)."""
    listed = ", ".join(topics)
    return (f"domains: [{DOMAIN}]\ndifficulties: [{DIFFICULTY}]\ncount: {len(topics)}\n"
            f"seed_topics:\n  {DOMAIN}: [{listed}]\n")
