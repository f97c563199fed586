"""How test.sh runs in the scoring container: its command, its environment, the attestation
config handed to the broker.

The scoring container is a fresh container of the task image that has never run an agent
process. It holds the image, the agent's work (its writable paths, carried over by the
host), the task's tests on a read-only mount, and the attestation plugin. ``test.sh``
runs there with a fixed environment (:func:`verifier_env`), by absolute paths
(:func:`verifier_command`).
"""

from __future__ import annotations

import json
import posixpath

from termgrade.scoring.review.closure import PYTHON_NAME, VERIFIER_PATH, Closure
from termgrade.scoring.review.policy import GRADER_DIR, TESTS_SOURCE
from termgrade.scoring.review.toolenv import ToolEnv
from termgrade.scoring.review.watched import Watched
from termgrade.scoring.verifier.attestation import BROKER_MODULE
from termgrade.scoring.verifier.grader_procs import LAUNCHERS
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


def image_pythonpath(image_env: list[str] | None) -> str:
    """The image's own ``PYTHONPATH`` (its absolute directories), which test.sh's follows
    the grader's directory with, as Harbor would run it with the image's."""
    value = next((e.split("=", 1)[1] for e in image_env or [] if e.startswith("PYTHONPATH=")),
                 "")
    return ":".join(d for d in value.split(":") if d.startswith("/"))


def verifier_env(task: Task, plugin: str, *, path: str = VERIFIER_PATH,
                 shell: str = "/bin/bash", pythonpath: str = "") -> dict[str, str]:
    """The environment test.sh sees: the image's ``ENV`` (the engine's exec inherits it),
    under these fixed variables, under the task's ``[verifier] env``. ``pythonpath``: the
    image's own (:func:`image_pythonpath`), after the grader's directory; its directories
    are search paths the review knows (:func:`tool_env_of`).

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
        "PYTHONPATH": ":".join(filter(None, (GRADER_DIR, pythonpath))),
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
    kept = {k: v for k, v in image.items() if k not in fixed}
    if image_pythonpath(image_env):  # test.sh's follows the grader's directory with it
        kept["PYTHONPATH"] = image_pythonpath(image_env)
    return ToolEnv.from_env(kept | dict(task.config.verifier.env))


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
                  transfer_roots: list[str] | None = None, path: str = "",
                  carried: frozenset[str] = frozenset(),
                  names: Watched | None = None,
                  names_skip: tuple[str, ...] = ()) -> bytes:
    """What the broker reads on its standard input before test.sh starts: one JSON line
    (the key, the socket name, what it trusts, test.sh's ``PATH`` directories it watches
    and which of their entries are the agent's carried work, the directories it watches for
    names made and files written while the tests run and the named files it watches
    itself: ``names``, walked to each depth less ``names_skip``), never written to any
    file."""
    dirs = [d for d in path.split(":") if d.startswith("/")]
    on_path = sorted(p for p in carried if posixpath.dirname(p) in dirs)
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
                       "tests_dir": str(CONTAINER.tests_dir),
                       "path_dirs": dirs, "path_carried": on_path,
                       "names": [list(n) for n in names.roots] if names else [],
                       "names_files": sorted(names.files) if names else [],
                       "names_skip": list(names_skip)}
                      ).encode() + b"\n"
