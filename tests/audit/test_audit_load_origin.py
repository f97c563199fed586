"""Tests that load the deliverable into pytest from any path are unattestable (issue 42, 5).

The rule (:mod:`termgrade.audit.pyorigin`): a load of code from a path that is not under
``/tests`` nor the verifier's closure is the agent's, and so is one through a path computed
at run time. Each attack shape makes ``agent_code_isolated`` fail (the task unattested
before any trial); each honest twin passes; with the origin rule patched out the run-time
shapes pass again (the tests depend on the rule).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from termgrade.audit import pyorigin
from termgrade.audit.agent_code import agent_code_findings
from termgrade.audit.attestable import attestability
from termgrade.audit.documents import SourceFile
from termgrade.task import load_task
from tests.support.task_dirs import MakeTask

MARK = "# <-"

LOADS: dict[str, str] = {
    "spec_from_file_location of /tmp": (
        "import importlib.util\n"
        "spec = importlib.util.spec_from_file_location('m', '/tmp/solution.py')  # <-\n"),
    "runpy.run_path of /tmp": "import runpy\nrunpy.run_path('/tmp/x.py')  # <-\n",
    "exec of /tmp text": "exec(open('/tmp/x.py').read())  # <-\n",
    "machinery.SourceFileLoader": (
        "import importlib.machinery\n"
        "importlib.machinery.SourceFileLoader('m', '/tmp/m.py').load_module()  # <-\n"),
    "sys.path /tmp then import": "import sys\nsys.path.insert(0, '/tmp')  # <-\nimport x\n",
    "__import__ after /tmp on the path": (
        "import sys\n\n\ndef test_x():\n    sys.path.insert(0, '/tmp')  # <-\n"
        "    __import__('solution')\n"),
    "a helper's parameter (the third-party shape)": (
        "import importlib.util\nfrom pathlib import Path\n\n\n"
        "def load(name, file_path):\n"
        "    spec = importlib.util.spec_from_file_location(name, file_path)  # <-\n"
        "    return spec\n\n\n"
        "def test_x():\n    load('fixed', str(Path('/tmp/fixed.py')))\n"),
    "os.environ": ("import os\nimport runpy\n"
                   "runpy.run_path(os.environ['SOLUTION'])  # <-\n"),
    "an f-string of a run-time value": (
        "import os\nimport runpy\nBASE = os.getenv('OUT', '/srv')\n"
        "runpy.run_path(f'{BASE}/solution.py')  # <-\n"),
    "a fixture's folder": (
        "import importlib.util\n\n\ndef test_x(tmp_path):\n"
        "    importlib.util.spec_from_file_location('m', tmp_path / 'm.py')  # <-\n"),
    "tempfile": ("import importlib.util\nimport os\nimport tempfile\n"
                 "where = os.path.join(tempfile.gettempdir(), 'solution.py')\n"
                 "importlib.util.spec_from_file_location('m', where)  # <-\n"),
    "a relative path": ("import importlib.util\n"
                        "importlib.util.spec_from_file_location('m', 'solution.py')  # <-\n"),
    "a folder above /tests": (
        "import os\nimport sys\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))  # <-\n"
        "from src.calculator import add\n"),
    "Path(__file__).parents[1]": (
        "import sys\nfrom pathlib import Path\n"
        "sys.path.append(str(Path(__file__).parents[1] / 'app'))  # <-\n"),
    "a path outside /tests and the closure": (
        "import runpy\nrunpy.run_path('/usr/share/checker/run.py')  # <-\n"),
    "exec of a name read at run time": (
        "from pathlib import Path\n\n\ndef test_x(name):\n"
        "    code = Path(name).read_text()\n    exec(code)  # <-\n"),
    "eval of what a program printed": (
        "import subprocess\n\n\ndef test_x():\n"
        "    out = subprocess.run(['/tmp/solve'], capture_output=True, text=True).stdout\n"
        "    assert eval(out) == 3  # <-\n"),
    "pickle.loads of a program's output": (
        "import pickle\nimport subprocess\n"
        "data = subprocess.run(['/tmp/solve'], capture_output=True).stdout\n"
        "pickle.loads(data)  # <-\n"),
    "ctypes from a computed path": (
        "import ctypes\nimport os\n"
        "ctypes.CDLL(os.path.join(os.environ['BUILD'], 'libx.so'))  # <-\n"),
}

HONEST: dict[str, str] = {
    "subprocess of the /tmp deliverable": (
        "import subprocess\nimport sys\n\n\ndef test_x():\n"
        "    out = subprocess.run([sys.executable, '/tmp/solution.py'], capture_output=True,\n"
        "                         text=True, check=True)\n    assert out.stdout == '3\\n'\n"),
    "own helper through __file__ on sys.path": (
        "import os\nimport sys\n"
        "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"
        "import helpers\n"),
    "own helper by spec beside __file__": (
        "import importlib.util\nfrom pathlib import Path\nHERE = Path(__file__).resolve().parent\n"
        "spec = importlib.util.spec_from_file_location('helpers', HERE / 'helpers.py')\n"),
    "own helper by its /tests path": (
        "import importlib.util\nimport runpy\n"
        "importlib.util.spec_from_file_location('h', '/tests/helpers.py')\n"
        "for script in ['/tests/gen_a.py', '/tests/gen_b.py']:\n"
        "    runpy.run_path(script)\n"),
    "the image's modules": "import json\n\nimport numpy\nimport importlib\n"
                           "yaml = importlib.import_module('yaml')\n",
    "exec of the file's own text": (
        "import textwrap\nCODE = '''\nx = 1\n'''\nexec(textwrap.dedent(CODE))\n"
        "exec(compile('y = 2', '<test>', 'exec'))\n"),
    "ctypes of a system library": ("import ctypes\nimport ctypes.util\n"
                                   "libm = ctypes.CDLL(ctypes.util.find_library('m'))\n"),
    "the tests' data read as text": (
        "import json\nfrom pathlib import Path\n"
        "expected = json.loads((Path(__file__).parent / 'expected.json').read_text())\n"
        "result = json.load(open('/tmp/out.json'))\n"),
    "the verifier's site directory": (
        "import site\nsite.addsitedir('/opt/venv/lib/python3.11/site-packages')\n"),
}


def _marked(text: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.endswith(MARK))


@pytest.mark.parametrize("shape", list(LOADS))
def test_a_load_from_outside_tests_is_agent_code(shape: str) -> None:
    text = LOADS[shape]
    found = agent_code_findings([SourceFile("tests/test_outputs.py", text)])
    assert _marked(text) in [f.line for f in found], found


@pytest.mark.parametrize("shape", list(HONEST))
def test_the_tests_own_code_and_the_image_are_not(shape: str) -> None:
    assert agent_code_findings([SourceFile("tests/test_outputs.py", HONEST[shape])]) == []


def test_a_helper_deeper_under_tests_may_reach_up_to_tests() -> None:
    text = ("import sys\nfrom pathlib import Path\n"
            "sys.path.insert(0, str(Path(__file__).parent.parent))\n")
    assert agent_code_findings([SourceFile("tests/unit/test_a.py", text)]) == []
    assert agent_code_findings([SourceFile("tests/test_a.py", text)]) != []


def test_the_reason_says_why_the_path_is_the_agents() -> None:
    found = agent_code_findings([SourceFile("tests/test_outputs.py", LOADS["os.environ"])])
    assert len(found) == 1 and "a path computed at run time" in found[0].what
    found = agent_code_findings([SourceFile("tests/test_outputs.py",
                                            LOADS["a path outside /tests and the closure"])])
    assert "/usr/share/checker/run.py (outside /tests and the verifier's Python)" \
        in found[0].what


RUNTIME_SHAPES = ["a helper's parameter (the third-party shape)", "os.environ",
                  "a fixture's folder", "a relative path", "exec of a name read at run time"]


@pytest.mark.parametrize("shape", RUNTIME_SHAPES)
def test_the_rule_patched_out_lets_the_shape_pass(shape: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the origin rule (every expression judged neutral), these loads are not seen:
    the tests above fail only because of it."""
    monkeypatch.setattr(pyorigin.Origins, "path", lambda self, node: None)
    monkeypatch.setattr(pyorigin.Origins, "code", lambda self, node: None)
    assert agent_code_findings([SourceFile("tests/test_outputs.py", LOADS[shape])]) == []


@pytest.mark.parametrize("shape", ["a helper's parameter (the third-party shape)",
                                   "exec of /tmp text"])
def test_such_a_task_is_unattested_before_any_trial(make_task: MakeTask, shape: str,
                                                     tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERMGRADE_REFERENCE_DIR", str(tmp_path / "references"))
    tests = LOADS[shape] + "\n\ndef test_answer():\n    assert True\n"
    found = attestability(load_task(make_task(tests=tests)))
    assert not found.attested
    assert found.reason is not None and found.reason.startswith("agent_code_isolated:")


def test_the_honest_twin_stays_attestable(make_task: MakeTask, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERMGRADE_REFERENCE_DIR", str(tmp_path / "references"))
    tests = HONEST["subprocess of the /tmp deliverable"]
    assert attestability(load_task(make_task(tests=tests))).attested
