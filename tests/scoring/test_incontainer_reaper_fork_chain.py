"""The plugin's reaper freezes before it kills (issue 43, item 1, attack round 5 (C)).

A fork chain (each process forks its successor and exits at once) outran the old reaper
(three passes of "list the new processes, SIGKILL each"): by the time a pass signalled a
pid, the chain had moved on to a new one, so a daemon a test started lived into the next
test and overwrote that test's file between its write and its ``cmp``. Repeating "list,
SIGSTOP each" until a list shows none running loses the same race (measured here with 16
chains: a list can miss every live link twice in a row). The reaper now freezes the whole
container at once (``kill(-1, SIGSTOP)``: every process but pytest and init, under one
kernel lock), again until two scans name the same processes and each is stopped (one in
the middle of a fork is not yet), then SIGKILLs those and SIGCONTs the rest; processes
that cannot be frozen within the cap raise an alarm (scored 0).

These run the plugin's own ``_reap`` against a real C fork chain on this machine, in a
pid namespace of its own (``unshare``; no container) whose first process is the driver
(it reaps the chain's orphans, as the container's init does): every other process of
the namespace is the chain's, and the namespace ends with its first process, so nothing
else on this machine is touched. The old loop, kept below as the patched-out defence,
leaves the chain running; the new one leaves nothing. The chain's heartbeat file shows
whether any link still runs. The honest twin, in a real scoring container: tests that
start and stop a daemon, or leave one to the reaper, still score 1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import ScriptAgent
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.trial import run_task
from termgrade.scoring.verifier.attestation import plugin_source
from termgrade.task import load_task
from tests.support.task_dirs import write_task

CHAIN_C = r"""
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
/* argv[1]: heartbeat file. 32 chains, each link forks its successor and exits at once. */
int main(int argc, char **argv) {
    time_t end = time(NULL) + 15;
    if (fork()) _exit(0);
    setsid();
    for (int i = 1; i < 32; i++) if (fork() == 0) break;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
    unsigned long turn = 0;
    while (time(NULL) < end) {
        pid_t p = fork();
        if (p > 0) _exit(0);
        if (p < 0) continue;
        if ((++turn & 63) == 0) write(fd, ".", 1);
    }
    return 0;
}
"""
DRIVER = textwrap.dedent("""\
    import importlib.util, json, os, signal, subprocess, sys, threading, time
    how, cap = sys.argv[1:3]
    plugin, chain, beat = (os.environ[k] for k in ("PLUGIN", "CHAIN", "BEAT"))
    spec = importlib.util.spec_from_file_location("tg_reaper_probe", plugin)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # no broker here: no key, no channel
    alarms = []
    mod._alarm = lambda kind, path: alarms.append((kind, path))
    mod._FREEZE_ALL = True  # this namespace is the container: kill(-1) stops it only

    def pick(now):  # every process of this namespace but its first (this one)
        return now - {1}

    def alive():  # the chain's processes still running (not zombies)
        return [pid for pid in pick(mod._pids()) if mod._state(pid) not in ("", "Z", "X")]

    def old_reap():  # the reaper before, as it was: three passes of list-then-SIGKILL
        for _ in range(3):
            left = []
            for pid in sorted(pick(mod._pids())):
                info = mod._stat(pid)
                if info is None:
                    continue
                try:
                    os.kill(pid, signal.SIGKILL)
                    left.append(pid)
                except OSError:
                    pass
            if not left:
                return

    def size():
        return os.path.getsize(beat) if os.path.exists(beat) else 0

    subprocess.run([chain, beat], check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def reap_zombies():  # this is the namespace's first process: orphans are its children
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                time.sleep(0.01)

    threading.Thread(target=reap_zombies, daemon=True).start()
    time.sleep(0.5)
    running = size() > 0
    began = time.monotonic()
    if how == "old":
        old_reap()
    else:
        if how == "stuck":  # the chain never seems to stop: the cap must end the wait
            frozen, mod._frozen = mod._frozen, lambda pid: False
        mod._reap(set(), "test", cap=float(cap), pick=pick)
        if how == "stuck":
            mod._frozen = frozen
    took = time.monotonic() - began
    time.sleep(0.3)
    first = size()
    time.sleep(0.7)
    print(json.dumps({"running_before": running, "grew_after": size() > first,
                      "alive_after": len(alive()), "took": took,
                      "alarms": alarms}))
    mod._reap(set(), "cleanup", cap=30.0, pick=pick)
    """)


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("gcc") is None or subprocess.run(
            ["unshare", "--fork", "--pid", "--mount-proc", "true"],
            capture_output=True).returncode != 0:
        pytest.skip("needs gcc (to build the fork chain) and unshare with a pid namespace")
    where = tmp_path_factory.mktemp("chain")
    (where / "chain.c").write_text(CHAIN_C)
    subprocess.run(["gcc", "-O2", "-o", str(where / "chain"), str(where / "chain.c")],
                   check=True)
    return where / "chain"


def reap(chain: Path, tmp_path: Path, how: str, cap: float = 5.0) -> dict[str, object]:
    plugin = tmp_path / "plugin.py"
    plugin.write_bytes(plugin_source())
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    beat = tmp_path / "beat"
    # in a pid namespace of its own, as in the scoring container: the driver is its first
    # process (it reaps the chain's orphans) and its /proc shows that namespace only
    done = subprocess.run(["unshare", "--fork", "--pid", "--mount-proc", sys.executable,
                           str(driver), how, str(cap)], capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
                               "PLUGIN": str(plugin), "CHAIN": str(chain),
                               "BEAT": str(beat)})
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["running_before"], result
    return result


def test_the_freezing_reaper_leaves_no_link_of_a_fork_chain(chain: Path, tmp_path: Path
                                                             ) -> None:
    result = reap(chain, tmp_path, "new")
    assert result["alive_after"] == 0 and not result["grew_after"], result
    assert result["alarms"] == [], result  # (how long it took is no test's business: a
    # loaded CI machine took 15 s once; the reaper's own cap is what raises an alarm)


def test_the_old_reaper_is_outrun_by_the_same_chain(chain: Path, tmp_path: Path) -> None:
    """The defence patched out: list-then-kill, three passes, leaves the chain running
    (measured: in about half the tries, by the machine's load; here any of up to 10)."""
    outrun = []
    for _ in range(10):
        outrun.append(reap(chain, tmp_path, "old"))
        if outrun[-1]["alive_after"]:
            break
    assert outrun[-1]["alive_after"], outrun


def test_processes_that_cannot_be_frozen_within_the_cap_raise_an_alarm(
        chain: Path, tmp_path: Path) -> None:
    """The reaper's loop is bounded: past the cap it kills what it found and says so."""
    result = reap(chain, tmp_path, "stuck", cap=0.2)
    assert result["alarms"] and result["alarms"][0][0] == "reaper", result  # type: ignore[index]


# The honest twin in a real scoring container: tests that start a daemon and stop it, and
# a daemon a test leaves running (reaped at its end), all score 1 and stay attested.
DAEMON_TESTS = textwrap.dedent("""\
    import subprocess, time
    from pathlib import Path


    def test_a_daemon_started_and_stopped():
        server = subprocess.Popen(["sleep", "30"])
        time.sleep(0.2)
        assert server.poll() is None
        server.terminate()
        assert server.wait(5) is not None


    def test_a_daemon_left_running_is_reaped():
        subprocess.run(["bash", "-c", "(sleep 30 &) ; (while :; do sleep 0.01; done &)"],
                       check=True)
        assert Path("/app/out.txt").read_text().strip() == "hello"


    def test_next_test_runs_normally(tmp_path):
        expected = tmp_path / "expected.txt"
        expected.write_text("hello\\n")
        assert subprocess.run(["cmp", "-s", str(expected), "/app/out.txt"]).returncode == 0
    """)


@pytest.mark.docker
def test_a_test_that_starts_and_stops_a_daemon_still_scores_one(tmp_path: Path) -> None:
    root = write_task(tmp_path, "reaper-honest", tests=DAEMON_TESTS)
    task = load_task(root)
    build_task_image(task)
    script = tmp_path / "honest.sh"
    script.write_text("#!/usr/bin/env bash\necho hello > /app/out.txt\n")
    outcome = run_task(task, task.image_tag, ScriptAgent("honest", script))
    assert outcome.reward == 1.0, (outcome.failure,
                                   outcome.verifier and outcome.verifier.output[-3000:])
    assert outcome.verifier is not None and outcome.verifier.attested
    assert sorted(t.outcome.value for t in outcome.verifier.tests) == ["passed"] * 3
