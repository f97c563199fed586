"""A test.sh that sets its own ``PYTHONPATH`` without keeping the grader's (``export
PYTHONPATH=/app``, ``PYTHONPATH=/app pytest``) stays attested and scores 1 for honest work.

That idiom drops the grader's read-only directory from ``sys.path``: pytest then failed to
import the plugin ``PYTEST_PLUGINS`` names (``ImportError: Error importing plugin
"termgrade_attest_<hex>"``) and every trial scored 0, the oracle's too ("no attested
pytest session ran the tests"). Now the grader's ``sitecustomize`` and plugin are also in
a read-only archive mounted at the path every closure Python already lists right after
``PYTHONPATH`` (``<base prefix>/lib/python3XY.zip``, ``pair/containers.py:
startup_mounts``). Planted modules stay stand-ins: a ``hashlib.py`` in ``/app`` (on the
tests' ``PYTHONPATH``) is not the one pytest imports, and a ``sitecustomize.py`` there
(ahead of the archive, as it is ahead of the grader's directory for ``/app:$PYTHONPATH``)
gets no attested session. Control: with the archive's mount patched out the 0 comes back.
"""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import pytest

from termgrade.audit.attestable import attestability
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.outcome import RunOutcome
from termgrade.scoring.pair import containers
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.verifier.attestable import ATTESTED
from termgrade.task import load_task
from tests.support.grading import play_script
from tests.support.task_dirs import STANDARD_TEST_SH, task_toml, write_task

pytestmark = pytest.mark.docker

SECRET = "open sesame, 4c1f"
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
TESTS = textwrap.dedent(f"""\
    import hashlib
    import subprocess
    from pathlib import Path


    def test_greets():  # the agent's module, found on the PYTHONPATH test.sh set
        run = subprocess.run(["python3", "-c", "from greet import greet; print(greet('ann'))"],
                             capture_output=True, text=True)
        assert run.stdout.strip() == "hello ann", run.stderr


    def test_the_key_checks_out():
        got = Path("/app/key.txt").read_bytes().strip()
        assert hashlib.sha256(got).hexdigest() == "{DIGEST}"
    """)
GREET = "printf 'def greet(name):\\n    return \"hello \" + name\\n' > /app/greet.py\n"
HONEST = GREET + f"echo '{SECRET}' > /app/key.txt\n"
NOP = "true\n"
# no honest agent knows the preimage: only a stand-in for hashlib passes the key test
FAKE_HASHLIB = textwrap.dedent(f"""\
    class _D:
        def hexdigest(self):
            return "{DIGEST}"
    def sha256(data=b""):
        return _D()
    """)
ATTACK_MODULE = GREET + "echo guess > /app/key.txt\n" + \
    f"cat > /app/hashlib.py <<'EOF'\n{FAKE_HASHLIB}EOF\n"
# a sitecustomize on the tests' PYTHONPATH that registers with the broker as the grader's
# would (running the grader's own first), then swaps the standard hashlib's sha256
ATTACK_SITE = GREET + "echo guess > /app/key.txt\n" + textwrap.dedent(f"""\
    cat > /app/sitecustomize.py <<'EOF'
    import hashlib
    _real = "/opt/termgrade-grader/sitecustomize.py"
    try:
        exec(compile(open(_real).read(), _real, "exec"), {{"__file__": _real,
                                                           "__name__": "sitecustomize"}})
    except Exception:
        pass
    class _D:
        def hexdigest(self):
            return "{DIGEST}"
    hashlib.sha256 = lambda data=b"": _D()
    EOF
    """)

RUN = "/opt/venv/bin/python -m pytest"
SHAPES = {
    "export": STANDARD_TEST_SH.replace("cd /tests || exit 1\n",
                                       "cd /tests || exit 1\nexport PYTHONPATH=/app\n"),
    "prefix-pytest": STANDARD_TEST_SH.replace(RUN, "PYTHONPATH=/app /opt/venv/bin/pytest"),
    "prefix-two-dirs": STANDARD_TEST_SH.replace(RUN, f"PYTHONPATH=/app:/opt/lib {RUN}"),
    "export-keep": STANDARD_TEST_SH.replace(
        "cd /tests || exit 1\n", "cd /tests || exit 1\nexport PYTHONPATH=/app:$PYTHONPATH\n"),
}


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    parent = tmp_path_factory.mktemp("task-pythonpath")
    out = {}
    for name, test_sh in SHAPES.items():
        assert test_sh != STANDARD_TEST_SH
        out[name] = write_task(parent, f"task-pythonpath-{name}", tests=TESTS,
                               test_sh=test_sh, solve=HONEST,
                               toml=task_toml(verifier_s=60.0, agent_s=30.0),
                               instruction="Write /app/greet.py (greet(name) returns "
                               f"'hello ' + name) and put '{SECRET}' in /app/key.txt.\n")
        build_task_image(load_task(out[name]))
    return out


def _play(root: Path, body: str, tmp_path: Path) -> RunOutcome:
    assert attestability(load_task(root)) == ATTESTED
    return play_script(root, body, tmp_path, reference=ReferenceRecord(task_digest="none"))


def _why(outcome: RunOutcome) -> object:
    return outcome.error, outcome.failure, outcome.verifier and outcome.verifier.output[-2000:]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_honest_work_scores_one_attested(roots: dict[str, Path], tmp_path: Path,
                                         shape: str) -> None:
    outcome = _play(roots[shape], HONEST, tmp_path)
    assert outcome.reward == 1.0 and outcome.attested is True, _why(outcome)
    assert outcome.verifier is not None and {t.name: t.outcome for t in
                                             outcome.verifier.tests} == {
        "test_greets": "passed", "test_the_key_checks_out": "passed"}
    nop = _play(roots[shape], NOP, tmp_path)
    assert nop.error is None and nop.reward == 0.0, _why(nop)


@pytest.mark.parametrize("shape", ["export", "export-keep"])
def test_a_planted_hashlib_fools_no_test(roots: dict[str, Path], tmp_path: Path,
                                         shape: str) -> None:
    outcome = _play(roots[shape], ATTACK_MODULE, tmp_path)
    assert outcome.error is None and outcome.reward == 0.0, _why(outcome)
    names = {t.name: t.outcome for t in outcome.verifier.tests} if outcome.verifier else {}
    assert names.get("test_the_key_checks_out") != "passed", _why(outcome)


@pytest.mark.parametrize("shape", ["export", "prefix-pytest", "export-keep"])
def test_a_planted_sitecustomize_scores_zero(roots: dict[str, Path], tmp_path: Path,
                                             shape: str) -> None:
    outcome = _play(roots[shape], ATTACK_SITE, tmp_path)
    assert outcome.error is None and outcome.reward == 0.0, _why(outcome)


def test_without_the_startup_archive_the_zero_comes_back(
        roots: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(containers, "startup_mounts", lambda closure, staged: {})
    outcome = _play(roots["export"], HONEST, tmp_path)
    assert outcome.reward == 0.0 and outcome.failure, _why(outcome)
    assert "no attested pytest session" in outcome.failure
    kept = _play(roots["export-keep"], HONEST, tmp_path)
    assert kept.reward == 1.0 and kept.attested is True, _why(kept)


SITE_IMAGE = ("FROM termgrade/base:local\nWORKDIR /app\n"
              "RUN printf '\\nimport os as _o\\nopen(\"/tmp/site-ran\", \"a\").write("
              "\"%%d\\\\n\" %% _o.getpid())\\n' >> /etc/python3.11/sitecustomize.py\n")
SITE_TESTS = textwrap.dedent("""\
    import subprocess


    def test_the_images_own_sitecustomize_runs_once_in_each_python():
        child = subprocess.run(["/usr/bin/python3", "-c", "import os; print(os.getpid())"],
                               capture_output=True, text=True, check=True)
        ran = open("/tmp/site-ran").read().split()
        assert ran.count(child.stdout.strip()) == 1, ran
    """)


@pytest.mark.parametrize("shape", ["export", "export-keep"])
def test_the_images_own_sitecustomize_still_runs_once(tmp_path: Path, shape: str) -> None:
    """The grader's ``sitecustomize`` runs the image's own next, once: the standard-library
    zip path now holds the grader's startup directory, whose ``sitecustomize`` is the
    grader's again, and taking it for the image's ran the grader's file over and over
    until the recursion limit (each Python of B about a second slower, and the image's
    own hook never ran)."""
    root = write_task(tmp_path, f"own-site-{shape}", tests=SITE_TESTS, test_sh=SHAPES[shape],
                      dockerfile=SITE_IMAGE, solve="true\n",
                      toml=task_toml(verifier_s=60.0, agent_s=30.0))
    build_task_image(load_task(root))
    outcome = play_script(root, "true\n", tmp_path, reference=ReferenceRecord(task_digest="none"))
    assert outcome.reward == 1.0 and outcome.attested, _why(outcome)


def test_control_the_startup_directory_taken_for_the_images_hook_fails_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.scoring.pair import containers

    real = containers.attest.sitecustomize_source

    def unguarded() -> bytes:
        source = real()
        assert b' or entry.endswith(".zip")' in source
        return source.replace(b' or entry.endswith(".zip")', b"")

    monkeypatch.setattr(containers.attest, "sitecustomize_source", unguarded)
    root = write_task(tmp_path, "own-site-control", tests=SITE_TESTS,
                      test_sh=SHAPES["export"], dockerfile=SITE_IMAGE, solve="true\n",
                      toml=task_toml(verifier_s=60.0, agent_s=30.0))
    build_task_image(load_task(root))
    outcome = play_script(root, "true\n", tmp_path, reference=ReferenceRecord(task_digest="none"))
    assert outcome.reward == 0.0
