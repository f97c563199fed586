"""The agent_code_isolated check: tests that load agent code into pytest's process fail it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from termgrade.audit import read_harbor, run_checks
from termgrade.audit.agent_code import FIX, agent_code_findings, agent_code_reason, is_agent_path
from termgrade.audit.documents import SourceFile
from termgrade.task import discover_tasks

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parents[1] / "fixtures" / "audit" / "corpus"
BASE = "csv-column-sum"
MARK = "# <-"
"""Ends the line a snippet's finding must name."""

FLAGGED: dict[str, str] = {
    "sys.path.insert": "import sys\nsys.path.insert(0, '/app')  # <-\n",
    "sys.path.append": "import sys\nsys.path.append('/app/lib')  # <-\n",
    "sys.path.extend": "import sys\nsys.path.extend(['/srv/tool', '/opt/lib'])  # <-\n",
    "sys.path slice": "import sys\nsys.path[:0] = ['/workspace']  # <-\n",
    "sys.path +=": "import sys\nsys.path += ['/root/src']  # <-\n",
    "sys.path from a constant": "import sys\nfrom pathlib import Path\nAPP = Path('/app')\n"
                                "SRC = APP / 'src'\nsys.path.insert(0, str(SRC))  # <-\n",
    "from sys import path": "from sys import path as p\np.insert(0, '/app')  # <-\n",
    "site.addsitedir": "import site\nsite.addsitedir('/home/agent/lib')  # <-\n",
    "monkeypatch.syspath_prepend": "def test_x(monkeypatch):\n"
                                   "    monkeypatch.syspath_prepend('/app')  # <-\n",
    "PYTHONPATH item": "import os\nos.environ['PYTHONPATH'] = '/opt/lib:/app'  # <-\n",
    "PYTHONPATH setdefault": "import os\nos.environ.setdefault('PYTHONPATH', '/app')  # <-\n",
    "PYTHONPATH update": "from os import environ\nenviron.update(PYTHONPATH='/tmp/mods')  # <-\n",
    "PYTHONPATH putenv": "import os\nos.putenv('PYTHONPATH', '/app')  # <-\n",
    "PYTHONPATH monkeypatch": "def test_x(monkeypatch):\n"
                              "    monkeypatch.setenv('PYTHONPATH', '/app')  # <-\n",
    "import_module after sys.path": "import importlib\nimport sys\n\n\ndef test_x():\n"
                                    "    sys.path.insert(0, '/app')\n"
                                    "    importlib.import_module('solver')  # <-\n",
    "__import__ after module-level sys.path": "import sys\n\n\ndef load():\n"
                                              "    return __import__('solver')  # <-\n\n\n"
                                              "sys.path.append('/app')\n",
    "importorskip after sys.path": "import sys\n\nimport pytest\n\nsys.path.insert(0, '/app')\n"
                                   "mod = pytest.importorskip('solver')  # <-\n",
    "import_module of a path": "from importlib import import_module as load\n"
                               "from pathlib import Path\n"
                               "load(Path('/app/solver.py').stem)  # <-\n",
    "spec_from_file_location": "import importlib.util\n"
                               "spec = importlib.util.spec_from_file_location('s', "
                               "'/app/solve.py')  # <-\n",
    "SourceFileLoader": "from importlib.machinery import SourceFileLoader\n"
                        "SourceFileLoader('m', '/app/m.py').load_module()  # <-\n",
    "runpy.run_path": "import runpy\nname = 'main'\nrunpy.run_path(f'/app/{name}.py')  # <-\n",
    "runpy.run_module after sys.path": "import runpy\nimport sys\nsys.path.append('/app')\n"
                                       "runpy.run_module('tool')  # <-\n",
    "exec of a file": "exec(open('/app/x.py').read())  # <-\n",
    "exec of a with-bound file": "with open('/tmp/x.py') as fh:\n    exec(fh.read())  # <-\n",
    "exec of compiled agent text": "from pathlib import Path\n"
                                   "exec(compile(Path('/app/x.py').read_text(), 'x', 'exec'))"
                                   "  # <-\n",
    "pickle.load": "import pickle\nresult = pickle.load(open('/app/r.pkl', 'rb'))  # <-\n",
    "fileConfig": "import logging.config\nlogging.config.fileConfig('/app/logging.ini')  # <-\n",
    "a deliverable in /opt": "import sys\nsys.path.insert(0, '/opt/tool')  # <-\n",
    "ctypes.CDLL": "import ctypes\nlib = ctypes.CDLL('/app/build/libfoo.so')  # <-\n",
    "cdll.LoadLibrary": "from ctypes import cdll\ncdll.LoadLibrary('/app/libfoo.so')  # <-\n",
    "a path outside /tests and the closure": "import sys\n"
                                             "sys.path.append('/application')  # <-\n",
}

CLEAN: dict[str, str] = {
    "subprocess of /app/x.py": "import subprocess\nimport sys\n"
                               "subprocess.run([sys.executable, '/app/x.py'], cwd='/app')\n",
    "reading a file as text": "from pathlib import Path\nimport ast\n"
                              "text = open('/app/x.py').read()\n"
                              "tree = ast.parse(Path('/app/x.py').read_text())\n",
    "PYTHONPATH for a subprocess": "import os\nimport subprocess\nimport sys\n"
                                   "env = {**os.environ, 'PYTHONPATH': '/app'}\n"
                                   "subprocess.run([sys.executable, '-m', 'tool'], env=env)\n",
    "bridge code in a string": "import subprocess\nimport sys\n"
                               "CODE = 'import sys; sys.path.insert(0, \"/app\"); import tool'\n"
                               "subprocess.run([sys.executable, '-c', CODE])\n",
    "the tests' own folder on sys.path": "import sys\nfrom pathlib import Path\n"
                                         "sys.path.insert(0, str(Path(__file__).parent))\n"
                                         "import importlib\nimportlib.import_module('helpers')\n",
    "stdlib import_module": "import importlib\njson = importlib.import_module('json')\n",
    "re.compile of a path": "import re\nPATTERN = re.compile('/app/.*[.]py')\n",
    "own compile helper": "import subprocess\n\n\ndef compile(source):\n"
                          "    return subprocess.run(['gcc', source])\n\n\n"
                          "compile('/app/main.c')\n",
    "exec of a constant": "exec('x = 1')\n",
    "system library": "import ctypes\nlibc = ctypes.CDLL('libc.so.6')\n",
    "the verifier's closure": "import sys\n"
                              "sys.path.append('/opt/venv/lib/python3.11/site-packages')\n"
                              "sys.path.append('/usr/lib/python3/dist-packages')\n",
    "a compile syntax check": "from pathlib import Path\n"
                              "compile(Path('/app/x.py').read_text(), '/app/x.py', 'exec')\n",
    "json of an agent file": "import json\nresult = json.load(open('/app/r.json'))\n",
}


def task_with(tmp_path: Path, snippet: str, name: str = "test_outputs.py") -> tuple[Path, int]:
    """A copy of the clean fixture task with ``snippet`` appended to ``tests/<name>``, and the
    line of that file the snippet marks (0 when unmarked)."""
    task = tmp_path / BASE
    shutil.copytree(CORPUS / BASE, task)
    path = task / "tests" / name
    before = path.read_text() if path.exists() else ""
    text = before + ("\n\n" if before else "") + snippet
    path.write_text(text)
    marked = [n for n, line in enumerate(text.splitlines(), 1) if line.endswith(MARK)]
    return task, marked[0] if marked else 0


@pytest.mark.parametrize("pattern", list(FLAGGED))
def test_pattern_fails_the_check(tmp_path: Path, pattern: str) -> None:
    task, line = task_with(tmp_path, FLAGGED[pattern])
    verdicts = run_checks(read_harbor(task))
    failed = {name for name, reason in verdicts.items() if reason is not None}
    assert failed == {"agent_code_isolated"}, verdicts
    reason = verdicts["agent_code_isolated"]
    assert reason is not None
    assert f"tests/test_outputs.py:{line}: " in reason, reason
    assert reason.endswith(f"fix: {FIX}")


@pytest.mark.parametrize("pattern", list(CLEAN))
def test_clean_code_passes(tmp_path: Path, pattern: str) -> None:
    task, _ = task_with(tmp_path, CLEAN[pattern])
    verdicts = run_checks(read_harbor(task))
    assert all(reason is None for reason in verdicts.values()), verdicts


def test_any_python_file_under_tests_counts(tmp_path: Path) -> None:
    task, line = task_with(tmp_path, "import sys\n\nsys.path.insert(0, '/app')  # <-\n",
                           name="conftest.py")
    reason = run_checks(read_harbor(task))["agent_code_isolated"]
    assert reason is not None and f"tests/conftest.py:{line}: " in reason


def test_old_in_process_fixture_names_both_lines() -> None:
    """The pattern the py-fix tasks used before they moved the agent's code to a child."""
    text = ("import importlib\nimport sys\n\nimport pytest\n\nsys.path.insert(0, '/app')\n\n\n"
            "@pytest.fixture(scope='module')\ndef cron():\n"
            "    return importlib.import_module('cronlib')\n")
    found = agent_code_findings([SourceFile("tests/test_outputs.py", text)])
    assert [(f.line, f.what) for f in found] == [
        (6, "sys.path.insert(0, '/app') puts an agent path on the import path"),
        (11, "importlib.import_module('cronlib') loads code after the import-path change "
             "on line 6"),
    ]


def test_loader_before_a_function_level_change_is_not_blamed() -> None:
    text = ("import importlib\nimport sys\n\n\ndef test_a():\n"
            "    importlib.import_module('json')\n\n\ndef test_b():\n"
            "    sys.path.insert(0, '/app')\n")
    found = agent_code_findings([SourceFile("tests/test_outputs.py", text)])
    assert [f.line for f in found] == [10]


def test_unparsable_and_non_python_files_are_skipped() -> None:
    sources = [SourceFile("tests/test_outputs.py", "def (:\n"),
               SourceFile("tests/notes.txt", "sys.path.insert(0, '/app')\n")]
    assert agent_code_reason(sources) is None


def test_many_findings_are_counted_not_listed() -> None:
    text = "import sys\n" + "".join(f"sys.path.append('/app/{n}')\n" for n in range(8))
    reason = agent_code_reason([SourceFile("tests/test_outputs.py", text)])
    assert reason is not None
    assert reason.count("tests/test_outputs.py:") == 5 and "(+3 more)" in reason


@pytest.mark.parametrize("text, agent", [
    ("/app", True), ("/app/", True), ("/app/x.py", True), ("/tmp", True), ("/home/u/.local", True),
    ("/opt/lib:/workspace/src", True), ("/srv", True), ("/root/x", True),
    ("/application", False), ("/opt/app", True), ("/opt/venv/lib", False), ("app/x.py", False),
    ("/tests/app", False), ("/usr/local/bin/tool", True), ("/usr/lib/python3", False),
    ("", False), ("https://example.com/app", False),
])
def test_agent_paths(text: str, agent: bool) -> None:
    assert is_agent_path(text) is agent


def test_corpus_tests_keep_agent_code_out_of_process() -> None:
    reasons = {path.name: agent_code_reason(read_harbor(path).test_sources)
               for path in discover_tasks(REPO / "environments")}
    assert reasons and not {name: r for name, r in reasons.items() if r is not None}
