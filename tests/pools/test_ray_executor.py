"""The Ray executor on a real one-node Ray cluster on this machine (loopback).

The cluster is started once for the module with this venv's ``ray start --head``, so its
workers import TermGrade from the same venv; it is stopped by killing exactly the
processes it started (never ``ray stop``, which would stop any other Ray on the machine).
Work travels by name, so the functions submitted here are the stdlib's.
"""

from __future__ import annotations

import contextlib
import math
import operator
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from termgrade.core.errors import OptionError, TermGradeError
from termgrade.pools.errors import RayUnavailableError
from termgrade.records.trial import TrialRecord
from tests.support.scripted_tools import STAND_IN_MODEL, ScriptedToolEndpoint, replay_solution

ray = pytest.importorskip("ray")

from termgrade.pools.executors import Pool, make_pool  # noqa: E402
from termgrade.pools.ray_executor import (  # noqa: E402
    LOOPBACK_ENV,
    NodeProbe,
    RayExecutor,
    needs_code,
    ray_pool,
)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RAY_BIN = Path(sys.executable).parent / "ray"
WORD_FREQUENCY = ROOT / "environments" / "word-frequency"


def _free_port() -> int:
    """A free TCP port outside Ray's default worker ports (10002-19999)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if not 10000 <= port < 20000:
            return port


def _processes() -> dict[int, tuple[int, int]]:
    """pid -> (ppid, pgid) of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return table


def _cluster_pids(pgid: int) -> set[int]:
    """The processes ``ray start`` left in its process group, and their descendants (the
    workers, which the raylet puts in groups of their own)."""
    table = _processes()
    pids = {pid for pid, (_, group) in table.items() if group == pgid}
    grew = True
    while grew:
        children = {pid for pid, (ppid, _) in table.items() if ppid in pids} - pids
        pids |= children
        grew = bool(children)
    return pids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited (its parent may never reap it)


def _stop(pgid: int) -> None:
    """Like ``ray stop --force``, for this cluster's processes only."""
    pids = _cluster_pids(pgid)
    for sig, grace in ((signal.SIGTERM, 2), (signal.SIGKILL, 10)):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.1)
        pids = {p for p in pids if _alive(p)}
        if not pids:
            return


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The address (``127.0.0.1:PORT``) of a fresh 4-CPU Ray head on loopback."""
    if not RAY_BIN.is_file():
        pytest.skip(f"no {RAY_BIN}")
    temp = tempfile.mkdtemp(prefix="tg-ray-")  # short: Ray's socket paths live under it
    port = _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", LOOPBACK_ENV: "0"}
    command = [str(RAY_BIN), "start", "--head", "--node-ip-address=127.0.0.1",
               f"--port={port}", "--num-cpus=4", "--include-dashboard=false",
               "--disable-usage-stats", f"--temp-dir={temp}",
               f"--ray-client-server-port={_free_port()}",
               f"--dashboard-port={_free_port()}",
               f"--dashboard-agent-listen-port={_free_port()}",
               f"--dashboard-agent-grpc-port={_free_port()}",
               f"--metrics-export-port={_free_port()}",
               f"--runtime-env-agent-port={_free_port()}"]
    start = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = start.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        _stop(start.pid)
        pytest.fail("`ray start --head` took more than 90 s")
    try:
        if start.returncode != 0:
            pytest.fail(f"`ray start --head` failed:\n{output}")
        yield f"127.0.0.1:{port}"
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _stop(start.pid)
        shutil.rmtree(temp, ignore_errors=True)


def test_results_and_exceptions_come_back(cluster: str) -> None:
    pool = ray_pool(cluster, 2, check_nodes=False)  # the node check needs Docker
    try:
        assert isinstance(pool.executor, RayExecutor)
        assert (pool.slots, pool.where) == (2, cluster)
        sums = [pool.executor.submit(operator.add, i, 10) for i in range(6)]
        assert [f.result(timeout=60) for f in sums] == list(range(10, 16))
        assert pool.executor.submit(sorted, [3, 1, 2], reverse=True).result(60) == [3, 2, 1]
        # Everything stays on loopback: the node, and where its work says it runs.
        assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
        node_ip = pool.executor.submit(ray.util.get_node_ip_address).result(timeout=60)
        assert node_ip == "127.0.0.1"
        # What fn raised on the node is what the future raises, as with a thread.
        with pytest.raises(ValueError, match="math domain error") as raised:
            pool.executor.submit(math.sqrt, -1).result(timeout=60)
        assert type(raised.value) is ValueError
        assert isinstance(raised.value.__cause__, ray.exceptions.RayTaskError)
        # A worker that dies mid-task: the future raises, Ray does not retry.
        with pytest.raises(ray.exceptions.RayError):
            pool.executor.submit(os._exit, 1).result(timeout=60)
        assert pool.executor.submit(operator.mul, 6, 7).result(timeout=60) == 42
    finally:
        pool.executor.shutdown()
    assert not ray.is_initialized()  # the driver's connection is closed...
    with socket.create_connection(("127.0.0.1", int(cluster.rsplit(":", 1)[1])), 5):
        pass
    # ...the cluster keeps running, and slots default to its CPUs // CPUs per task.
    executor = RayExecutor(cluster, num_cpus=2, check_nodes=False)
    try:
        assert executor.slots == 2
    finally:
        executor.shutdown()


def test_shutdown_with_cancel_futures_drops_queued_work(cluster: str, tmp_path: Path) -> None:
    marks = [tmp_path / f"mark-{i}" for i in range(3)]
    executor = RayExecutor(cluster, max_in_flight=1, check_nodes=False)
    started = time.monotonic()
    slow = executor.submit(time.sleep, 2)
    queued = [executor.submit(os.mkdir, str(mark)) for mark in marks]
    assert queued[0].cancel()  # a future still waiting on the driver cancels alone
    deadline = time.monotonic() + 30
    while executor.in_flight < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert executor.in_flight == 1 and not slow.cancel()  # handed to Ray: it runs to its end
    executor.shutdown(wait=True, cancel_futures=True)
    assert slow.done() and slow.result() is None
    assert all(f.cancelled() for f in queued)
    assert not any(mark.exists() for mark in marks)
    assert time.monotonic() - started < 30
    with pytest.raises(RuntimeError, match="after shutdown"):
        executor.submit(operator.add, 1, 2)
    executor.shutdown()  # twice is fine
    # Without wait, the work in Ray still ends before the connection closes.
    executor = RayExecutor(cluster, max_in_flight=1, check_nodes=False)
    last = executor.submit(time.sleep, 1)
    dropped = executor.submit(os.mkdir, str(marks[0]))
    deadline = time.monotonic() + 30
    while executor.in_flight < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    executor.shutdown(wait=False, cancel_futures=True)
    assert ray.is_initialized()
    assert last.result(timeout=60) is None and dropped.cancelled()
    deadline = time.monotonic() + 30
    while ray.is_initialized() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not ray.is_initialized() and not marks[0].exists()


@pytest.mark.docker
def test_the_nodes_are_checked_and_get_the_variables_asked_for(
        cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RayUnavailableError, match="termgrade/nope:missing is missing") as raised:
        ray_pool(cluster, 1, env={"TERMGRADE_BASE_IMAGE": "termgrade/nope:missing"})
    assert "termgrade base-image build" in str(raised.value) and not ray.is_initialized()
    monkeypatch.setenv("TG_RAY_TEST", "from the driver")
    monkeypatch.setenv("TERMGRADE_RAY_ENV", "TG_RAY_TEST, TG_RAY_UNSET")
    pool = ray_pool(cluster, 1)
    try:
        assert not pool.executor.ships_code  # the workers import TermGrade from this venv
        assert pool.executor.submit(os.getenv, "TG_RAY_TEST").result(60) == "from the driver"
    finally:
        pool.executor.shutdown()


def test_an_unreachable_address_fails_at_once_with_the_fix() -> None:
    port = _free_port()
    started = time.monotonic()
    with pytest.raises(RayUnavailableError) as raised:
        make_pool(2, f"127.0.0.1:{port}")
    assert time.monotonic() - started < 15
    message = str(raised.value)
    assert f"127.0.0.1:{port}" in message and "ray start --head" in message
    assert isinstance(raised.value, TermGradeError) and not ray.is_initialized()
    with pytest.raises(OptionError, match="HOST:PORT"):
        ray_pool("no-port-here", 1)


def test_nodes_without_termgrade_get_the_drivers_code() -> None:
    ok = NodeProbe("10.0.0.1 (ab)", "0.1.0", None)
    assert not needs_code([ok], "0.1.0")
    assert needs_code([ok, NodeProbe("10.0.0.2 (cd)", None, "cannot import TermGrade")],
                      "0.1.0")
    assert needs_code([NodeProbe("10.0.0.3 (ef)", "0.0.9", None)], "0.1.0")
    assert not needs_code([NodeProbe("10.0.0.4 (gh)", "0.1.0", "no Docker")], "0.1.0")


def test_verify_refuses_local_seams_on_a_remote_pool(tmp_path: Path) -> None:
    from termgrade.verify import verify_tasks

    remote = Pool(ThreadPoolExecutor(max_workers=1), 1, "10.0.0.1:6379")
    try:
        with pytest.raises(OptionError, match=r"10\.0\.0\.1:6379"):
            verify_tasks([tmp_path], pool=remote, build_image=lambda task: None)  # type: ignore
    finally:
        remote.shutdown()


def test_help_never_imports_ray() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from termgrade.cli.app import app\n"
        "for args in (['--help'], ['verify', '--help']):\n"
        "    result = CliRunner().invoke(app, args)\n"
        "    assert result.exit_code == 0, result.output\n"
        "assert '--ray' in result.output, result.output\n"
        "assert 'ray' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def _shape(record: object) -> dict[str, object]:
    data = record.model_dump(mode="json")  # type: ignore[attr-defined]
    data["durations"] = sorted(data["durations"])
    for test in data.get("test_evidence") or []:  # how long each test took varies
        test.pop("duration_s", None)
    return data


@pytest.mark.docker
def test_verify_on_ray_matches_a_local_run(cluster: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from termgrade.verify import Journal, Verdict, verify_tasks

    monkeypatch.chdir(ROOT)  # a relative task path: it goes to the nodes made absolute
    journal = Journal(tmp_path / "journal.jsonl")
    pool = ray_pool(cluster, 2)
    try:
        on_ray = verify_tasks([Path("environments/word-frequency")], repeat=1, pool=pool,
                              journal=journal, progress=False)
    finally:
        pool.shutdown()
    local = verify_tasks([WORD_FREQUENCY], repeat=1, workers=1, progress=False)
    assert [r.verdict for r in on_ray.records] == [Verdict.VERIFIED]
    assert _shape(on_ray.records[0]) == _shape(local.records[0])
    assert journal.load() == {"word-frequency": on_ray.records[0]}  # written by the driver


# Fields of a trial record that do not depend on where or when it ran.
_TRIAL_FIELDS = ("trial_id", "task_id", "model", "scaffold", "attempt", "reward", "passed",
                 "counted", "retry_index", "exception_type", "n_tests_passed", "n_tests_failed")


def _trial_shape(record: TrialRecord) -> tuple[object, ...]:
    """The compared fields; a trial id without its run's id (each run has its own)."""
    dumped = record.model_dump()
    dumped["trial_id"] = record.trial_id.removeprefix(f"{record.job_id}__")
    return tuple(dumped[f] for f in _TRIAL_FIELDS)


def _grade_cli(out: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TERMGRADE_PROGRESS": "0"}
    return subprocess.run(
        [sys.executable, "-m", "termgrade", "grade", "environments/word-frequency", "--model",
         STAND_IN_MODEL, "--base-url", url, "-k", "2", "-w", "2", "-o", str(out), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.docker
def test_grade_on_ray_writes_the_records_a_local_run_writes(cluster: str,
                                                            tmp_path: Path) -> None:
    """`termgrade grade --ray`: trials run in Ray workers (calling the scripted endpoint
    themselves), the driver journals them, a rerun resumes, and the records match a local
    run's field for field."""
    from termgrade.grade import TRIALS_FILE, TrialJournal

    solve = (WORD_FREQUENCY / "solution" / "solve.sh").read_text()
    with ScriptedToolEndpoint(replay_solution(solve)) as llm:
        on_ray = _grade_cli(tmp_path / "ray", llm.url, "--ray", cluster)
        assert on_ray.returncode == 0, on_ray.stdout + on_ray.stderr
        again = _grade_cli(tmp_path / "ray", llm.url, "--ray", cluster)
        assert again.returncode == 0, again.stdout + again.stderr
        local = _grade_cli(tmp_path / "local", llm.url)
        assert local.returncode == 0, local.stdout + local.stderr
    ray_records = TrialJournal(tmp_path / "ray" / TRIALS_FILE).load()
    local_records = TrialJournal(tmp_path / "local" / TRIALS_FILE).load()
    assert f"on the Ray cluster at {cluster}" in on_ray.stderr
    assert "on this machine" in local.stderr
    assert len(ray_records) == 2 and "resumed" in again.stdout + again.stderr
    assert len({r.trial_id for r in ray_records}) == 2
    shape = sorted(_trial_shape(r) for r in ray_records)
    assert shape == sorted(_trial_shape(r)
                           for r in local_records)
    assert all(r.passed and r.reward == 1.0 and r.messages for r in ray_records)
