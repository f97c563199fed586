"""Entry-point plugins of the agent's never load in a keyed pytest (issue 43, item 4).

pytest autoloads ``pytest11`` entry points from every distribution along ``sys.path``,
before ``PYTEST_PLUGINS``, so before the attestation plugin. An editable install of the
task's package puts its source (the agent's work) on ``sys.path`` through a ``.pth`` in
the image's site-packages; ``python -m pytest`` run in the working directory would put
that directory there (the grader's ``sitecustomize`` takes it off again). A
``.dist-info`` the agent writes in either declares a plugin that turns every failure
into a pass. The grader turns autoloading off and the attestation plugin registers the
closure's own plugins itself: the attack scores exactly 0, and exactly 1 with
autoloading on (the defence patched out). An honest twin on the same image whose
``test.sh`` needs an image plugin (``--ctrf``, pytest-json-ctrf in the base image)
scores exactly 1, attested.
"""

from __future__ import annotations

import hashlib
import secrets
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName, ScriptAgent
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import load_task
from tests.support.grading import patch_watch_source
from tests.support.task_dirs import task_toml, write_task

pytestmark = pytest.mark.docker

SECRET = secrets.token_hex(16)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()
SITE = "/opt/venv/lib/python3.11/site-packages"
# What `pip install -e /app` of a src layout leaves in the image: a path .pth.
EDITABLE_IMAGE = textwrap.dedent(f"""\
    FROM termgrade/base:local
    WORKDIR /app
    RUN mkdir -p /app/src/answerlib && touch /app/src/answerlib/__init__.py \\
        && echo /app/src > {SITE}/__editable__.answerlib-0.1.pth
    """)
TESTS = textwrap.dedent(f"""\
    import hashlib
    from pathlib import Path


    def test_answer_exists():
        assert Path("/app/answer.txt").exists()


    def test_preimage():
        text = Path("/app/answer.txt").read_text().strip()
        assert hashlib.sha256(text.encode()).hexdigest() == "{DIGEST}"
    """)
FLAGS = "-c /dev/null --rootdir=/tests --confcutdir=/tests -p no:cacheprovider -rA"
REWARD = "if [ $? -eq 0 ]; then r=1; else r=0; fi\necho $r > /logs/verifier/reward.txt\n"
TEST_SH = {
    "editable-src": ("#!/usr/bin/env bash\nmkdir -p /logs/verifier\ncd /tests || exit 1\n"
                     f"/opt/venv/bin/python -m pytest {FLAGS} /tests/test_outputs.py\n" + REWARD),
    "python-m-in-workdir": ("#!/usr/bin/env bash\nmkdir -p /logs/verifier\ncd /app || exit 1\n"
                            f"/opt/venv/bin/python -m pytest {FLAGS} /tests/test_outputs.py\n"
                            + REWARD),
}
FORCE_PASS = textwrap.dedent("""\
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        made = yield
        report = made.get_result()
        if report.failed:
            report.outcome, report.longrepr = "passed", None
    """)


def plant(where: str, answer: str = "nope", plugin: str = FORCE_PASS) -> str:
    """solve.sh: ``answer``, and a distribution in ``where`` whose pytest11 entry point is
    ``plugin`` (FORCE_PASS: every failure reads passed)."""
    info = f"{where}/tg_helper-1.0.dist-info"
    return (f"echo {answer} > /app/answer.txt\nmkdir -p {info}\n"
            f"printf 'Metadata-Version: 2.1\\nName: tg-helper\\nVersion: 1.0\\n' "
            f"> {info}/METADATA\n"
            f"printf '[pytest11]\\ntg = tg_plugin\\n' > {info}/entry_points.txt\n"
            f"cat > {where}/tg_plugin.py <<'TGEOF'\n{plugin}TGEOF\n")


WHERE = {"editable-src": "/app/src", "python-m-in-workdir": "/app"}


@pytest.fixture(scope="module")
def victims(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("autoload-victims")
    made = {}
    for name, test_sh in TEST_SH.items():
        made[name] = write_task(root, name, toml=task_toml(verifier_s=60.0, agent_s=30.0),
                                solve=plant(WHERE[name]), tests=TESTS, test_sh=test_sh,
                                dockerfile=EDITABLE_IMAGE)
        build_task_image(load_task(made[name]))
    return made


def said(outcome: RunOutcome) -> tuple[object, ...]:
    return (outcome.failure, outcome.verifier and outcome.verifier.outcomes,
            outcome.verifier and outcome.verifier.output[-2500:])


def oracle(task_dir: Path) -> RunOutcome:
    task = load_task(task_dir)
    return run_task(task, task.image_tag, AgentName.ORACLE)


@pytest.mark.parametrize("name", sorted(TEST_SH))
def test_an_agent_entry_point_plugin_scores_exactly_zero(victims: dict[str, Path],
                                                         name: str) -> None:
    outcome = oracle(victims[name])
    assert outcome.error is None, outcome.error
    assert outcome.reward == 0.0, said(outcome)
    tests = outcome.verifier.outcomes if outcome.verifier else {}
    assert tests.get("test_outputs.py::test_preimage") == "failed", said(outcome)


def test_with_autoload_on_the_editable_attack_earns_one(victims: dict[str, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The defence patched out (autoloading as pytest's default): the plugin on the
    editable install's path loads before the attestation plugin and the wrong answer earns
    a full, attested reward. (The working-directory variant is closed a second time: the
    grader's ``sitecustomize`` drops an agent ``cwd`` from a pytest's ``sys.path``.)"""
    import termgrade.scoring.verifier.run as score
    from termgrade.scoring.verifier.command import verifier_env as fixed


    def autoloading(*args: object, **kwargs: object) -> dict[str, str]:
        env = fixed(*args, **kwargs)  # type: ignore[arg-type]
        return {k: v for k, v in env.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}

    monkeypatch.setattr(score, "verifier_env", autoloading)
    # the grader's sitecustomize seals pytest's start too (an autoloaded plugin outside the
    # closure is no module then, and the plugin reports one imported before it:
    # test_verifier_sealed_start.py): both patched out as well
    patch_watch_source(monkeypatch, b"(cls.sealed or (cls.guarded and (\n"
                       b"                fullname in PROBED or _closure_imports())))",
                       b"(False)", which="sitecustomize_source")
    patch_watch_source(monkeypatch, b"    for _name, _module in list(sys.modules.items()):",
                       b"    for _name, _module in []:", which="plugin_source")
    patch_watch_source(monkeypatch, b"    for _hook in _finders:", b"    for _hook in []:",
                       which="plugin_source")
    outcome = oracle(victims["editable-src"])
    assert outcome.reward == 1.0, said(outcome)


CTRF_TEST_SH = ("#!/usr/bin/env bash\nmkdir -p /logs/verifier\ncd /app || exit 1\n"
                f"/opt/venv/bin/python -m pytest {FLAGS} --ctrf /logs/verifier/ctrf.json "
                "/tests/test_outputs.py\nstatus=$?\n[ -s /logs/verifier/ctrf.json ] "
                "&& [ $status -eq 0 ]\n" + REWARD)


def test_honest_twin_with_an_image_plugin_scores_exactly_one(tmp_path: Path) -> None:
    """The same editable image, a right answer, a harmless plugin of the agent's in the
    working directory, and test.sh that needs the image's pytest-json-ctrf (``--ctrf``):
    exactly 1, attested, the image plugin registered under its entry-point name."""
    task_dir = write_task(tmp_path, "autoload-honest", toml=task_toml(verifier_s=60.0),
                          solve=plant("/app", SECRET, "print('a harmless plugin')\n"),
                          tests=TESTS, test_sh=CTRF_TEST_SH, dockerfile=EDITABLE_IMAGE)
    task = load_task(task_dir)
    build_task_image(task)
    outcome = run_task(task, task.image_tag, AgentName.ORACLE)
    assert (outcome.reward, outcome.failure) == (1.0, None), said(outcome)
    assert outcome.verifier is not None and outcome.verifier.attested
    honest = tmp_path / "honest.sh"
    honest.write_text(f"#!/usr/bin/env bash\necho {SECRET} > /app/answer.txt\n")
    other = run_task(task, task.image_tag, ScriptAgent("honest", honest))
    assert (other.reward, other.failure) == (1.0, None), said(other)
