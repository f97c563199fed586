"""A daemon of agent code a wider-scoped fixture started lives until that fixture ends
(``incontainer/termgrade_attest.py``: ``pytest_fixture_setup``, ``_FIXTURE_PROCS``).

The honest idiom: the tests start the agent's ``start.sh``, which puts its server in the
background and exits, from a module-scoped fixture, and several tests talk to the server.
The reaper killed every orphan when the first test ended, so the second test found no
server (an honest 0, round 7 of the cold rounds); now the server lives until the module's
tests are done, and the control (the plugin without the fixture hook) shows the old 0. A
function-scoped fixture's daemon still dies with its test."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from termgrade.sandbox.images import build_task_image
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.verifier import attestation
from termgrade.task import load_task
from tests.support.grading import play_script
from tests.support.task_dirs import task_toml, write_task

pytestmark = pytest.mark.docker

START = textwrap.dedent("""\
    cat > /app/server.py <<'EOF'
    import os
    import socketserver

    class Echo(socketserver.StreamRequestHandler):
        def handle(self):
            self.wfile.write(b"pong %d " % os.getpid() + self.rfile.readline())

    socketserver.TCPServer.allow_reuse_address = True
    socketserver.TCPServer(("127.0.0.1", 7071), Echo).serve_forever()
    EOF
    cat > /app/start.sh <<'EOF'
    #!/bin/sh
    nohup python3 /app/server.py > /app/server.log 2>&1 &
    EOF
    chmod 755 /app/start.sh
    """)


def verifier_tests(scope: str) -> str:
    return textwrap.dedent(f"""\
        import socket
        import subprocess
        import time

        import pytest


        @pytest.fixture(scope="{scope}")
        def server():
            subprocess.run(["/app/start.sh"], check=True)
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", 7071), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            yield


        SEEN = []


        def ask(word):
            with socket.create_connection(("127.0.0.1", 7071), timeout=5) as conn:
                conn.sendall(word.encode() + b"\\n")
                pong, pid, said = conn.makefile().readline().split()
                SEEN.append(pid)
                return pong + " " + said


        def test_first(server):
            assert ask("one") == "pong one"


        def test_second(server):
            assert ask("two") == "pong two"
            # one server for the module; a server of its own for each test
            assert (SEEN[0] == SEEN[1]) == ("{scope}" == "module")
        """)


def _task(parent: Path, scope: str) -> Path:
    root = write_task(parent, f"daemon-{scope}", tests=verifier_tests(scope),
                      toml=task_toml(verifier_s=60.0, agent_s=30.0), solve=START,
                      instruction="Write /app/start.sh, which starts an echo server on "
                                  "127.0.0.1:7071 in the background and returns.\n")
    build_task_image(load_task(root))
    return root


def _play(root: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    return play_script(root, START, tmp_path, reference=ReferenceRecord(task_digest="none"))


def test_a_module_scoped_fixtures_daemon_serves_every_test_of_the_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _task(tmp_path, "module")
    outcome = _play(root, tmp_path)
    assert outcome.reward == 1.0 and outcome.attested, (
        outcome.failure, outcome.verifier and outcome.verifier.output[-2000:])
    # the control: without the fixture hook the first test's end reaps the server
    source = attestation.plugin_source()
    hook = b"def pytest_fixture_setup("
    assert hook in source
    monkeypatch.setattr(attestation, "plugin_source",
                        lambda: source.replace(hook, b"def _no_fixture_setup("))
    again = _play(root, tmp_path)
    assert again.reward == 0.0
    assert again.verifier is not None
    assert {t.name: t.outcome for t in again.verifier.tests}.get("test_second") == "failed"


def test_a_function_scoped_fixtures_daemon_still_dies_with_its_test(tmp_path: Path) -> None:
    """Each test starts it anew: the first test's server is gone when the second starts
    its own (a server left over would hold the port: start.sh's second server fails)."""
    outcome = _play(_task(tmp_path, "function"), tmp_path)
    assert outcome.reward == 1.0 and outcome.attested, (
        outcome.failure, outcome.verifier and outcome.verifier.output[-2000:])
