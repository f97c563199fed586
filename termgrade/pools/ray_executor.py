"""Trials on a Ray cluster (``termgrade[ray]``): the executor behind ``--ray ADDRESS``.

:class:`RayExecutor` is a :class:`concurrent.futures.Executor` whose work runs as Ray
tasks on the cluster's nodes, so the runners (``grade``, ``verify``) that own the journal,
the retries and the progress display are the very same as with local threads: only the
driver writes records. Its futures behave like a thread pool's: at most ``slots`` pieces
of work are handed to Ray at once and the rest wait on the driver, where ``cancel()`` and
``shutdown(cancel_futures=True)`` drop them before they ever start; work already handed to
Ray runs to its end (a trial is never cut in half). A Ray task is never retried by Ray
(``max_retries=0``): a worker or node lost mid-trial makes the future raise, and the runner
decides (``grade`` records the loss uncounted and runs the attempt again).

Each node runs its work on its own Docker engine, with its own TermGrade install: on
connecting, one probe per node checks that it imports TermGrade (this driver's version),
answers on Docker and has the base image. A node that lacks TermGrade (or has another
version) gets this driver's ``termgrade`` package code shipped with every task (Ray's
``py_modules``), its dependencies must be installed there already. See ``docs/ray.md``.

Only this module imports ``ray``, and only when ``--ray`` connects to a cluster.
"""

from __future__ import annotations

import gc
import ipaddress
import logging
import os
import socket
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from termgrade.core.errors import OptionError
from termgrade.core.settings import SETTINGS
from termgrade.core.version import __version__
from termgrade.pools.errors import RayUnavailableError
from termgrade.pools.pool import Pool

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_NUM_CPUS = 1.0
"""Ray CPUs one piece of work holds (a trial: two containers, mostly waiting on them)."""
CONNECT_TIMEOUT_S = 5.0
"""How long the head's port may take to accept a TCP connection before we give up."""
PROBE_TIMEOUT_S = 120.0
"""How long every node has to answer the probe (a worker start, a Docker ping)."""

START_FIX = ("start one: `ray start --head --port 6379 --node-ip-address=127.0.0.1` "
             "(or the head's own address), then `ray start --address=HEAD:6379` on each other "
             "node; see docs/ray.md")
NODE_FIX = ("on each node named: a Docker engine, `pip install 'termgrade[ray]'` (this "
            "driver's version), `termgrade base-image build`; see docs/ray.md")


LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Set to ``0``, Ray keeps a one-machine cluster on loopback: without it Ray replaces
``127.0.0.1`` with the machine's outward address, in ``ray start --node-ip-address`` and in
the driver's ``ray.init`` alike, and then listens and connects there."""


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise OptionError("--ray needs Ray, which is not installed",
                          fix="pip install 'termgrade[ray]'") from exc
    return ray


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _stay_on_loopback(address: str) -> None:
    """For a cluster at a loopback address, make this driver keep to loopback too (see
    :data:`LOOPBACK_ENV`); Ray reads the switch when it is imported, so an already imported
    Ray gets the same setting directly."""
    where = _split_address(address)
    if where is None or not _is_loopback(where[0]):
        return
    # Ray's own switch, set here for Ray (and left as the user set it): not a TermGrade
    # setting, so it is not in termgrade.core.settings.
    os.environ.setdefault(LOOPBACK_ENV, "0")
    if os.environ[LOOPBACK_ENV] != "0":
        return
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None and getattr(constants, "ENABLE_RAY_CLUSTER", False):
        constants.ENABLE_RAY_CLUSTER = False  # type: ignore[attr-defined]


# -- connecting -------------------------------------------------------------------------


def _split_address(address: str) -> tuple[str, int] | None:
    """``host:port`` of a GCS address; None for what Ray resolves itself (``auto``,
    ``ray://`` clients). OptionError for an address with no usable port."""
    if address == "auto" or "://" in address:
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise OptionError(f"--ray {address!r}: expected HOST:PORT, e.g. 127.0.0.1:6379",
                          fix="pass the address `ray start --head` printed (its GCS port, "
                          "6379 unless --port said otherwise)")
    return host.strip("[]"), int(port)


def _check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Fail in seconds, where ``ray.init`` would retry for minutes."""
    where = _split_address(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout_s):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RayUnavailableError(f"no Ray cluster answers at {address}: {reason}",
                                  fix=f"check the address and that the head runs there; "
                                  f"{START_FIX}") from exc


_CONNECTION_LOCK = threading.Lock()
_connection: dict[str, Any] = {"address": None, "users": 0, "ours": False}
"""This process's one Ray connection: the address, how many executors use it, and whether
we opened it (a connection the caller opened is never closed here)."""


def _connect(address: str) -> None:
    _stay_on_loopback(address)
    ray = _ray()
    with _CONNECTION_LOCK:
        if _connection["users"]:
            if _connection["address"] != address:
                raise OptionError(
                    f"this process is already connected to the Ray cluster at "
                    f"{_connection['address']}, not {address}",
                    fix="shut the other pool down first; one process talks to one cluster")
            _connection["users"] += 1
            return
        if ray.is_initialized():
            _connection.update(address=address, users=1, ours=False)
            return
        _check_reachable(address)
        try:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False,
                     logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
            raise RayUnavailableError(f"cannot connect to the Ray cluster at {address}: {exc}",
                                      fix="the driver needs the cluster's Ray and Python "
                                      f"versions; {START_FIX}") from exc
        _connection.update(address=address, users=1, ours=True)


def _disconnect() -> None:
    with _CONNECTION_LOCK:
        _connection["users"] = max(0, _connection["users"] - 1)
        if _connection["users"]:
            return
        if _connection["ours"]:
            # An ObjectRef freed after ray.shutdown() ends this process (Ray's QuickExit:
            # "the language frontend accesses the Ray's worker after it is shutdown"; seen
            # once under CI as a silent exit 1): the ones held only by reference cycles
            # (a stored exception's traceback) are freed now, while the worker lives.
            gc.collect()
            _ray().shutdown()  # this driver's connection only; the cluster keeps running
        _connection.update(address=None, ours=False)


# -- checking the nodes -------------------------------------------------------------------


def _probe_node() -> dict[str, str | None]:
    """Runs on a node (by value: it must run where TermGrade is missing). Stdlib only
    until TermGrade imports."""
    report: dict[str, str | None] = {"termgrade": None, "problem": None}
    try:
        from termgrade.core.settings import SETTINGS
        from termgrade.core.version import __version__
        from termgrade.sandbox.engine import docker_client, image_exists
    except ImportError as exc:
        report["problem"] = f"cannot import TermGrade: {exc}"
        return report
    report["termgrade"] = __version__
    try:
        docker_client()
        if not image_exists(SETTINGS.base_image):
            report["problem"] = (f"base image {SETTINGS.base_image} is missing "
                                 "(run `termgrade base-image build` there)")
    except Exception as exc:
        report["problem"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return report


# Pickled by value (cloudpickle ships __main__'s functions whole): a node without
# TermGrade cannot import this module to find it by name.
_probe_node.__module__ = "__main__"


@dataclass(frozen=True)
class NodeProbe:
    """What probing one Ray node found: its address, its TermGrade version, its problem."""

    node: str
    """The node's address (and id prefix)."""
    termgrade: str | None
    """The TermGrade version it imported; None when it could not."""
    problem: str | None


def _probe_nodes(ray: Any, num_cpus: float, runtime_env: Mapping[str, Any] | None,
                 timeout_s: float) -> list[NodeProbe]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [n for n in ray.nodes()
             if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= num_cpus]
    probe = ray.remote(_probe_node)
    refs = {}
    for node in nodes:
        name = f"{node['NodeManagerAddress']} ({node['NodeID'][:8]})"
        options: dict[str, Any] = {
            "num_cpus": 0, "max_retries": 0,
            "scheduling_strategy": NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)}
        if runtime_env:
            options["runtime_env"] = dict(runtime_env)
        refs[name] = probe.options(**options).remote()
    ready, _ = ray.wait(list(refs.values()), num_returns=len(refs), timeout=timeout_s)
    reports = []
    for name, ref in refs.items():
        if ref not in ready:
            ray.cancel(ref, force=True)
            reports.append(NodeProbe(name, None, f"no answer in {timeout_s:.0f} s"))
            continue
        try:
            answer = ray.get(ref)
        except Exception as exc:
            reports.append(NodeProbe(name, None, f"{type(exc).__name__}: {exc}"
                                      .splitlines()[0]))
            continue
        reports.append(NodeProbe(name, answer["termgrade"], answer["problem"]))
    return reports


def _version_problem(report: NodeProbe, version: str) -> str | None:
    if report.termgrade is None:
        return report.problem or "cannot import TermGrade"
    if report.termgrade != version:
        return f"has TermGrade {report.termgrade}, this driver {version}"
    return None


def needs_code(reports: Sequence[NodeProbe], version: str) -> bool:
    """Whether some node lacks TermGrade or has another version than ``version``."""
    return any(_version_problem(r, version) for r in reports)


def _refuse(address: str, bad: Sequence[tuple[str, str]]) -> RayUnavailableError:
    lines = "\n".join(f"  node {node}: {problem}" for node, problem in bad)
    return RayUnavailableError(f"the Ray cluster at {address} cannot run trials:\n{lines}",
                               fix=NODE_FIX)


def termgrade_code_env() -> dict[str, Any]:
    """A runtime_env that ships this driver's ``termgrade`` package to Ray workers."""
    return {"py_modules": [str(Path(__file__).resolve().parents[1])]}


# -- the executor -------------------------------------------------------------------------


def _call(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    """The Ray task: one piece of work, on whichever node Ray picked."""
    return fn(*args, **kwargs)


class RayExecutor(Executor):
    """``submit(fn, *args)`` runs ``fn(*args)`` as a Ray task on the cluster at ``address``.

    ``fn``, its arguments and its value travel pickled (cloudpickle): a top-level function
    of an installed module travels by name, so each node needs that module. ``max_in_flight``
    (default: the cluster's CPUs // ``num_cpus``) pieces of work are handed to Ray at once;
    the rest wait here. ``num_cpus``: Ray CPUs one piece holds. ``env``: environment
    variables set for the work on every node (e.g. an API key the driver has).
    ``check_nodes``: probe every node first (see the module docstring); ``ship_code``: send
    this driver's ``termgrade`` package to the workers (None: only when a node lacks it).
    """

    def __init__(self, address: str, *, max_in_flight: int | None = None,
                 num_cpus: float = DEFAULT_NUM_CPUS, env: Mapping[str, str] | None = None,
                 check_nodes: bool = True, ship_code: bool | None = None,
                 probe_timeout_s: float = PROBE_TIMEOUT_S) -> None:
        if num_cpus <= 0:
            raise OptionError(f"num_cpus per task must be above 0, not {num_cpus}")
        if max_in_flight is not None and max_in_flight < 1:
            raise OptionError(f"workers must be at least 1, not {max_in_flight}")
        ray = _ray()
        self.address = address
        self.num_cpus = num_cpus
        self._env: dict[str, Any] = {"env_vars": dict(env)} if env else {}
        _connect(address)
        try:
            self._env.update(self._plan_code(ray, check_nodes, ship_code, probe_timeout_s))
            cpus = float(ray.cluster_resources().get("CPU", 0))
            slots = max_in_flight or int(cpus // num_cpus)
            if slots < 1:
                raise RayUnavailableError(
                    f"the Ray cluster at {address} has {cpus:g} CPUs, fewer than the "
                    f"{num_cpus:g} one trial holds",
                    fix="add nodes, or lower TERMGRADE_RAY_NUM_CPUS")
        except BaseException:
            _disconnect()
            raise
        self.slots: int = slots
        options: dict[str, Any] = {"num_cpus": num_cpus, "max_retries": 0}
        if self._env:
            options["runtime_env"] = self._env
        self._remote = ray.remote(_call).options(**options)
        self._ray = ray
        self._threads = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="termgrade-ray")
        self._lock = threading.Lock()
        self._in_ray: set[Any] = set()
        self._closed = False

    def _plan_code(self, ray: Any, check_nodes: bool, ship_code: bool | None,
                   timeout_s: float) -> dict[str, Any]:
        """Probe the nodes; the runtime_env entries the work needs (``py_modules`` when
        this driver's code must travel). RayUnavailableError names every unusable node."""
        ship = termgrade_code_env()
        if not check_nodes:
            return ship if ship_code else {}
        env = {**self._env, **ship} if ship_code else self._env
        reports = _probe_nodes(ray, self.num_cpus, env, timeout_s)
        if not reports:
            raise RayUnavailableError(
                f"no live node of the Ray cluster at {self.address} has {self.num_cpus:g} CPUs "
                "for a trial", fix="add nodes, or lower TERMGRADE_RAY_NUM_CPUS")
        if ship_code is None and needs_code(reports, __version__):
            ship_code = True
            reports = _probe_nodes(ray, self.num_cpus, {**self._env, **ship}, timeout_s)
        bad = [(r.node, problem) for r in reports
               if (problem := _version_problem(r, __version__) or r.problem)]
        if bad:
            raise _refuse(self.address, bad)
        return ship if ship_code else {}

    @property
    def ships_code(self) -> bool:
        """Whether this driver's ``termgrade`` code travels with every task."""
        return "py_modules" in self._env

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            return self._threads.submit(self._run, fn, args, kwargs)

    def _run(self, fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
        ref = self._remote.remote(fn, args, kwargs)
        with self._lock:
            self._in_ray.add(ref)
        try:
            value: T = self._ray.get(ref)
            return value
        except self._ray.exceptions.RayTaskError as exc:
            # fn raised on the node: raise what it raised, as a thread would (Ray's error,
            # with the node's traceback, is the cause).
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from exc
            raise
        finally:
            with self._lock:
                self._in_ray.discard(ref)
            # a traceback kept with the future holds this frame: not the ref (see _disconnect)
            ref = None

    @property
    def in_flight(self) -> int:
        """Pieces of work handed to Ray and not finished."""
        with self._lock:
            return len(self._in_ray)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking work; with ``cancel_futures`` drop what waits here (it never
        reaches Ray). Work handed to Ray runs to its end; then this driver's connection is
        closed (the cluster keeps running). Without ``wait`` that happens in the
        background, and the process waits for it before it exits, as with threads."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._threads.shutdown(wait=False, cancel_futures=cancel_futures)
        if wait:
            self._close()
        else:
            threading.Thread(target=self._close, name="termgrade-ray-close").start()

    def _close(self) -> None:
        try:
            self._threads.shutdown(wait=True)
        finally:
            _disconnect()

    def __repr__(self) -> str:
        return f"RayExecutor({self.address!r}, slots={self.slots}, num_cpus={self.num_cpus:g})"


def ray_pool(address: str, workers: int | None = None, *, num_cpus: float | None = None,
             env: Mapping[str, str] | None = None, check_nodes: bool = True) -> Pool:
    """A :class:`~termgrade.pools.executors.Pool` on the Ray cluster at ``address``.

    ``workers``: pieces of work in flight (default: the cluster's CPUs // ``num_cpus``).
    Knobs from the environment: ``TERMGRADE_RAY_NUM_CPUS`` (Ray CPUs per trial, default 1),
    ``TERMGRADE_RAY_ENV`` (comma-separated names of driver variables to set on the nodes,
    e.g. ``OPENAI_API_KEY``), ``TERMGRADE_RAY_SHIP_CODE`` (``1``: always send this
    driver's code; ``0``: never; default: when a node lacks it)."""
    if num_cpus is None:
        num_cpus = SETTINGS.ray_num_cpus
    cpus = num_cpus if num_cpus is not None else DEFAULT_NUM_CPUS
    executor = RayExecutor(address, max_in_flight=workers, num_cpus=cpus,
                           env={**SETTINGS.ray_env, **(env or {})} or None,
                           check_nodes=check_nodes, ship_code=SETTINGS.ray_ship_code)
    return Pool(executor, executor.slots, address)


__all__ = ["DEFAULT_NUM_CPUS", "NodeProbe", "RayExecutor", "needs_code", "ray_pool",
           "termgrade_code_env"]
