"""Running the task's verifier in the scoring container and reading what it decided.

The scoring container is a fresh container of the task image that has never run an agent
process. It holds the image, the agent's work (its writable paths, carried over by the
host), the task's tests on a read-only mount, and the attestation plugin. ``test.sh``
runs there with a fixed environment; the reward is read through the engine, and a
reward above 0 counts only when the attested per-test record backs it.
"""

from __future__ import annotations

import json
import math
import posixpath
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from termgrade.records.verdict import Outcome, TestVerdict
from termgrade.scoring.attestation import BROKER_MODULE, Attestation
from termgrade.scoring.closure import PYTHON_NAME, VERIFIER_PATH, Closure
from termgrade.scoring.errors import VerifierError
from termgrade.scoring.grader_procs import LAUNCHERS
from termgrade.scoring.policy import GRADER_DIR, TESTS_SOURCE
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.toolenv import ToolEnv
from termgrade.scoring.verdict_parsers import parse_ctrf, parse_junit, parse_pytest_summary
from termgrade.task import CONTAINER, Task

MAX_STDOUT_COPY = 1 << 20
"""test.sh's output is also kept in /logs/verifier/test-stdout.txt (Harbor), capped."""
MAX_VERIFIER_OUTPUT = 32 << 20
"""Bytes of /logs/verifier read back (reports, reward, stdout copy)."""
OPENSSL_FILE = "openssl.cnf"
"""The image's own OpenSSL configuration, staged in the grader's read-only directory."""


GIT_OVERRIDES = {"core.fsmonitor": "false"}
"""Git settings the verifier's environment forces over any config the agent wrote (a
repository's ``core.fsmonitor`` would run an agent program on every ``git status``)."""


def verifier_path(image_env: list[str] | None = None) -> str:
    """test.sh's ``PATH``: the image's (as Harbor runs it), then any directory of
    :data:`VERIFIER_PATH` it lacks."""
    image = next((e.split("=", 1)[1] for e in image_env or [] if e.startswith("PATH=")), "")
    dirs = [d for d in image.split(":") if d.startswith("/")]
    return ":".join([*dirs, *(d for d in VERIFIER_PATH.split(":") if d not in dirs)])


def verifier_env(task: Task, plugin: str, *, path: str = VERIFIER_PATH,
                 shell: str = "/bin/bash") -> dict[str, str]:
    """The environment test.sh sees: the image's ``ENV`` (the engine's exec inherits it),
    under these fixed variables, under the task's ``[verifier] env``.

    ``USER``, ``LOGNAME``, ``SHELL`` and ``HOME`` are set so that neither bash nor
    Python's ``getpass`` asks NSS who runs them (that would load the modules
    ``/etc/nsswitch.conf`` names); ``OPENSSL_CONF`` names the image's own configuration,
    staged read-only by the grader, so no provider the agent configured is loaded.
    Plugin autoloading is off: entry points are found along all of ``sys.path``, where a
    ``.pth`` (an editable install) or the working directory puts the agent's files, and an
    autoloaded plugin would run before the attestation plugin. The attestation plugin, the
    only one ``PYTEST_PLUGINS`` names, registers the closure's own plugins itself
    (``pytest11`` entry points of distributions in the interpreter's own prefixes, under
    their entry-point names), so ``--json-report``, ``--ctrf`` and the like still work."""
    git = {"GIT_CONFIG_COUNT": str(len(GIT_OVERRIDES))}
    for number, (key, value) in enumerate(GIT_OVERRIDES.items()):
        git[f"GIT_CONFIG_KEY_{number}"], git[f"GIT_CONFIG_VALUE_{number}"] = key, value
    return {
        "PATH": path,
        "HOME": "/root",
        "USER": "root",
        "LOGNAME": "root",
        "SHELL": shell,
        "OPENSSL_CONF": f"{GRADER_DIR}/{OPENSSL_FILE}",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PIP_COMPILE": "0",  # pip writes no bytecode (PIP_NO_COMPILE=1 means the opposite)
        "PYTHONPATH": GRADER_DIR,
        "PYTHONSTARTUP": "",
        "PYTEST_ADDOPTS": "",
        "PYTEST_PLUGINS": plugin,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "BASH_ENV": "",
        "ENV": "",
        "LD_PRELOAD": "",
        "LD_LIBRARY_PATH": "",
        **git,
        **task.config.verifier.env,
    }


def tool_env_of(task: Task, image_env: list[str] | None) -> ToolEnv:
    """What test.sh's environment (the image's ``ENV`` under :func:`verifier_env`'s
    variables) adds to the image's tools' search paths and start-up reads."""
    fixed = verifier_env(task, "")  # the grader's variables replace the image's
    image = dict(e.split("=", 1) for e in image_env or [] if "=" in e)
    return ToolEnv.from_env({k: v for k, v in image.items() if k not in fixed}
                            | dict(task.config.verifier.env))


def verifier_command(task: Task, python: str, bash: str = "/bin/bash",
                     python_home: str | None = None) -> list[str]:
    """The broker (by the closure's ``python``, reading its configuration and the key
    from this command's standard input), then ``bash test.sh`` by absolute paths of the
    image's own (``python``, ``bash``, ``tee``, ``head`` resolved in its view: no ``PATH``
    lookup, no ``/bin`` symlink), its output teed (capped) to test-stdout.txt, then a
    signal to the broker, which writes the end marker. No secret appears in this command
    line, and none in any file."""
    broker = f"{GRADER_DIR}/{BROKER_MODULE}.py"
    # -I would ignore PYTHONHOME: -s -S and an explicit home and path instead (the script's
    # own directory, first on sys.path, is the grader's read-only one).
    home = python_home or posixpath.dirname(posixpath.dirname(python))
    script = (
        f"broker=$(PYTHONHOME={home} PYTHONPATH= {python} -s -S {broker}) || "
        "{ echo 'termgrade: the attestation broker "
        "did not start' >&2; exit 97; }; exec </dev/null; "
        f"{bash} {CONTAINER.tests_dir}/test.sh 2>&1 | /usr/bin/tee -p "
        f">(/usr/bin/head -c {MAX_STDOUT_COPY} > {CONTAINER.test_stdout}); "
        "status=${PIPESTATUS[0]}; kill -USR1 \"$broker\"; "
        # bash builtins only: a read that times out on a pipe nobody writes to (opened
        # once), every 5 ms for at most 5 s; the broker ends at once on the signal.
        "exec 9<> <(:); for ((i = 0; i < 1000; i++)); do kill -0 \"$broker\" 2>/dev/null "
        "|| break; read -r -t 0.005 -u 9 _; done; "
        "exit $status"
    )
    return [bash, "-c", script]


def install_roots(task: Task, closure: Closure) -> tuple[str, ...]:
    """The verifier's own site directories (a virtual environment's prefix) that stay
    writable in B, watched by the broker rather than mounted read-only, when the task
    ships a wheel in ``tests/``: ``test.sh`` may ``pip install`` it before the first
    pytest session is keyed. Whatever appears there must be, byte for byte, a member of a
    wheel the task ships (pip's ``.dist-info`` bookkeeping and its console-script
    launchers aside); nothing there may change afterwards (``termgrade_broker.Writable``)."""
    ships = next(task.paths.tests_dir.rglob("*.whl"), None) is not None
    return closure.sites if ships else ()


def attest_config(task: Task, key: bytes, closure: Closure, *, socket: str,
                  launchers: tuple[str, ...] = (),
                  transfer_roots: list[str] | None = None) -> bytes:
    """What the broker reads on its standard input before test.sh starts: one JSON line
    (the key, the socket name, what it trusts), never written to any file."""
    services = [s.model_dump(include={"command", "ready", "ready_timeout_sec", "workdir"})
                for s in task.config.verifier.services]
    trusted = [*closure.dirs, *closure.files, str(CONTAINER.tests_dir), GRADER_DIR]
    tools = sorted({*(f for f in closure.files if posixpath.basename(f) in LAUNCHERS),
                    *launchers})
    pythons = [f for f in closure.files if PYTHON_NAME.match(posixpath.basename(f))]
    return json.dumps({"key": key.hex(), "socket": socket, "trusted": trusted,
                       "services": services, "tools": tools, "pythons": pythons,
                       "transfer_roots": list(transfer_roots or []),
                       "install_dirs": list(install_roots(task, closure)),
                       "tests_source": f"{GRADER_DIR}/{TESTS_SOURCE}",
                       "tests_dir": str(CONTAINER.tests_dir)}).encode() + b"\n"


@dataclass
class VerifierResult:
    reward: float | None
    """None only when unscored: the engine failed, never the agent."""
    tests: list[TestVerdict] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)
    """Integrity findings: each one forces the reward to 0."""
    failure: str | None = None
    """Why scoring failed after the agent phase began: the trial scores 0 (the agent's)."""
    duration_s: float = 0.0
    """Wall time of test.sh inside the container."""
    output: str = ""
    raw_reward: float | None = None
    """What test.sh wrote, before findings, failures or the attestation forced 0."""
    attested: bool = False
    """The reward was computed from the signed per-test record: true on every trial of an
    attestable task (set by the trial), false when the task is unattestable and
    ``test.sh``'s own reward was taken (:func:`decide_unattested`)."""
    outcomes: dict[str, str] = field(default_factory=dict)
    """Per attested test: passed, failed, error, skipped, xfailed, xpassed or deselected
    (:meth:`Attestation.outcomes`); what ``verify`` records of the reference's run."""
    evidence: dict[str, dict[str, object]] = field(default_factory=dict)
    """Per attested test (keyed as ``outcomes``): duration and, for a failure, its message,
    short repr and printed output (:meth:`Attestation.evidence`, bounded). Display data,
    set only on attestable tasks (an unattestable task's pytest runs agent code that could
    forge it); the reward never reads it."""
    image_changes: list[str] = field(default_factory=list)
    """The image's files changed while the tests ran (:mod:`termgrade.scoring.during`);
    what ``verify`` records of the reference's run, to tell the tests' own changes from
    agent code's."""

    @property
    def passed(self) -> bool:
        return self.reward is not None and self.reward >= 1.0

    def fail(self, reason: str) -> VerifierResult:
        """Score 0 for a reason the agent caused (first reason wins)."""
        self.failure = self.failure or reason
        self.reward = 0.0
        return self


def parse_reward(raw: bytes, source: PurePosixPath) -> float:
    """A finite number from reward.txt or reward.json; VerifierError names what is wrong."""
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        raise VerifierError(f"{source} is empty", fix="test.sh must write a number, e.g. 1 or 0")
    try:
        value: object = json.loads(text) if source.suffix == ".json" else float(text)
    except ValueError as exc:
        raise VerifierError(f"{source} holds {text[:80]!r}, not a number",
                            fix="write 1 or 0 (reward.json: {\"reward\": 1})") from exc
    if isinstance(value, dict):
        value = value.get("reward", next(iter(value.values()), None) if len(value) == 1 else None)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise VerifierError(f"{source} has no numeric reward: {text[:80]!r}",
                            fix='reward.json must be {"reward": <number>}')
    if not math.isfinite(float(value)):
        raise VerifierError(f"{source} holds a non-finite reward {value!r}")
    return float(value)


def read_tests(outputs: dict[str, bytes], output: str) -> list[TestVerdict]:
    """Per-test verdicts from the reports test.sh wrote (informational; untrusted)."""
    # JUnit first: it keeps parametrize ids, which pytest-json-ctrf drops.
    reports = ((CONTAINER.junit_report, parse_junit), (CONTAINER.ctrf_report, parse_ctrf))
    for path, parser in reports:
        data = outputs.get(path.name)
        if data:
            try:
                return parser(data)
            except (ValueError, KeyError, TypeError):
                continue
    return parse_pytest_summary(output)


def read_reward(outputs: dict[str, bytes]) -> tuple[float, PurePosixPath]:
    """The lowest of reward.json and reward.txt (each can only lower the reward).
    VerifierError if neither exists or one is malformed."""
    found = []
    for source in (CONTAINER.reward_json, CONTAINER.reward_text):
        raw = outputs.get(source.name)
        if raw is not None:
            found.append((parse_reward(raw, source), source))
    if not found:
        raise VerifierError(f"wrote no reward; it must write {CONTAINER.reward_text}")
    return min(found, key=lambda pair: pair[0])


def read_weights(task: Task) -> dict[str, float] | None:
    """``tests/weights.json``: test name -> weight, for partial credit (as SETA ships).

    VerifierError names the file and what is wrong with it.
    """
    path = task.paths.tests_dir / WEIGHTS_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise VerifierError(f"{path}: not JSON ({exc})",
                            fix='write {"test_name": weight, ...}') from exc
    if not isinstance(doc, dict) or not doc or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
            for v in doc.values()) or sum(doc.values()) <= 0:
        raise VerifierError(f"{path}: must map test names to non-negative numbers with a "
                            "positive sum", fix='write {"test_name": weight, ...}')
    return {str(k): float(v) for k, v in doc.items()}


WEIGHTS_FILE = "weights.json"


def _weight_of(name: str, weights: dict[str, float]) -> float:
    function = name.split("::")[-1]
    for key in (name, function, function.split("[")[0]):
        if key in weights:
            return weights[key]
    return next((w for k, w in weights.items() if name.endswith(k)), 0.0)


def reference_outcomes(reference: ReferenceRecord | None) -> dict[str, str] | None:
    """The reference run's per-test outcomes the decision rule judges against; None when
    there is no reference or it recorded no attested test."""
    return dict(reference.tests) if reference is not None and reference.tests else None


def credit(attestation: Attestation, weights: dict[str, float] | None,
           reference: dict[str, str] | None = None) -> tuple[float, str | None]:
    """The reward the attested record earns, and why it is not 1 (None when it is).

    Without weights: 1 when every session that ran tests passed (the decision rule of
    :meth:`Attestation.pass_blockers`, against the ``reference`` run's outcomes), else 0.
    With weights: the weighted share of the attested tests that passed, provided the
    record is complete and trusted.
    """
    blockers = attestation.pass_blockers(reference=reference)
    if weights is None or not blockers:
        return (0.0, blockers[0]) if blockers else (1.0, None)
    hard = attestation.pass_blockers(soft=False, reference=reference)
    if hard:
        return 0.0, hard[0]
    earned = sum(_weight_of(v.name, weights) for v in attestation.verdicts()
                 if v.outcome is Outcome.PASSED)
    return min(1.0, earned / sum(weights.values())), blockers[0]


def decide(result: VerifierResult, attestation: Attestation,
           weights: dict[str, float] | None = None,
           reference: ReferenceRecord | None = None) -> VerifierResult:
    """The reward, computed here from the attested record; test.sh's number can only
    lower it.

    Every test of ``reference`` (the reference solution's recorded run), by node id, must
    be in the record. A skip, xfail or deselection is neutral only where ``reference`` had
    the same outcome for the same test; without one, only one that a marker in the tests'
    source caused whose condition the platform alone decides, or test.sh's own ``-k``.
    ``failure`` is set when scoring itself failed (a finding, an untrusted or incomplete
    record) or when test.sh claimed more than the record earns; an ordinary run whose
    attested tests failed scores 0 with no failure, as its tests say why.
    """
    result.outcomes = attestation.outcomes()
    result.evidence = attestation.evidence()
    if result.tampered:
        return result.fail("integrity findings: " + "; ".join(result.tampered[:3]))
    if result.failure is not None or result.raw_reward is None:
        return result.fail(result.failure or "no reward")
    untrusted = attestation.trust_blockers()
    if untrusted:
        result.tampered.extend(untrusted)
        return result.fail("attestation: " + untrusted[0])
    against = reference_outcomes(reference)
    hard = attestation.pass_blockers(soft=False, reference=against)
    if hard:
        return result.fail("attestation: " + hard[0])
    earned, why = credit(attestation, weights, against)
    result.attested = why is None
    result.reward = min(earned, max(0.0, result.raw_reward))
    if result.raw_reward > earned and why is not None:
        result.failure = (f"attestation: test.sh reported {result.raw_reward:g}, the attested "
                          f"record earns {earned:g}: {why}")
    return result


def decide_unattested(result: VerifierResult, attestation: Attestation) -> VerifierResult:
    """The reward of an unattestable task's trial: ``test.sh``'s own number, as Harbor
    reads it (clamped to [0, 1]), with ``attested`` false.

    Integrity findings, a forged or broken attestation channel and any failure to score
    still give 0; alarms about agent code in pytest do not (loading it is how such a task's
    tests work, which is why the task is unattestable).
    """
    result.attested = False
    if result.tampered:
        return result.fail("integrity findings: " + "; ".join(result.tampered[:3]))
    if result.failure is not None or result.raw_reward is None:
        return result.fail(result.failure or "no reward")
    if attestation.problems:
        result.tampered.extend(attestation.problems)
        return result.fail("attestation: " + attestation.problems[0])
    result.reward = min(1.0, max(0.0, result.raw_reward))
    return result


def all_skipped(tests: list[TestVerdict]) -> bool:
    return bool(tests) and all(t.outcome is Outcome.SKIPPED for t in tests)
