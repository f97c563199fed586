"""The Docker sandbox really enforces its limits: network, privileges, memory, pids, output."""

from __future__ import annotations

import os
import resource
import socket
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import pytest

from termgrade.core.settings import SETTINGS
from termgrade.sandbox import Limits
from termgrade.sandbox.docker_sandbox import DockerSandbox

pytestmark = pytest.mark.docker


@pytest.fixture
def sandbox() -> Iterator[DockerSandbox]:
    box = DockerSandbox.start(SETTINGS.base_image, limits=Limits(cpus=1, memory_mb=256, pids=64,
                                                                  output_bytes=64 * 1024))
    try:
        yield box
    finally:
        box.close()


def sh(box: DockerSandbox, script: str, timeout_s: float = 60):
    return box.exec(["bash", "-c", script], timeout_s=timeout_s)


def test_no_network_but_loopback(sandbox: DockerSandbox) -> None:
    links = sh(sandbox, "ls /sys/class/net").output.split()
    assert links == ["lo"]
    assert sh(sandbox, "curl -sS -m 5 http://deb.debian.org/ >/dev/null").exit_code != 0
    # its own namespace (networking disabled, no --network none): not the host's
    assert sh(sandbox, "readlink /proc/self/ns/net").output.strip() != \
        os.readlink("/proc/self/ns/net")
    # what the engine gives a container without network: loopback served, localhost
    # resolved, no ::1, writable /etc files
    served = sh(sandbox, "python3 -c 'import socket; s = socket.create_server((\"localhost\", 0));"
                " c = socket.create_connection(s.getsockname()); print(s.accept()[1][0])'")
    assert served.output.strip() == "127.0.0.1", served.output
    assert sh(sandbox, "cat /proc/sys/net/ipv6/conf/lo/disable_ipv6").output.strip() == "1"
    assert sh(sandbox, "echo '127.0.0.2 api.local' >> /etc/hosts && getent hosts api.local"
              " && hostname > /dev/null && test -f /etc/resolv.conf").exit_code == 0


HOST_PROBE = ("python3 -c 'import socket, sys; socket.create_connection((\"127.0.0.1\", "
              "int(sys.argv[1])), timeout=3); print(\"reached\")' {port}")


def test_a_listener_on_the_host_loopback_is_out_of_reach() -> None:
    """The attack: reach a service on the host's loopback. Its twin, a container in the
    host's namespace, reaches it: the probe can tell."""
    from termgrade.sandbox.engine import docker_client

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    box = DockerSandbox.start(SETTINGS.base_image, label="netprobe")
    try:
        assert "reached" not in sh(box, HOST_PROBE.format(port=port)).output
    finally:
        box.close()
    twin = docker_client().containers.run(SETTINGS.base_image, ["bash", "-c",
                                          HOST_PROBE.format(port=port)],
                                          network_mode="host", remove=True)
    listener.close()
    assert b"reached" in twin


def test_each_container_has_its_own_etc_files_removed_with_it() -> None:
    first = DockerSandbox.start(SETTINGS.base_image, label="etc-a")
    second = DockerSandbox.start(SETTINGS.base_image, label="etc-b")
    try:
        assert sh(first, "echo '10.9.9.9 agent.example' >> /etc/hosts").exit_code == 0
        assert "agent.example" not in sh(second, "cat /etc/hosts").output
        homes = [Path(box.host_writable()[0]) for box in (first, second)]
        assert all((home / "hosts").is_file() for home in homes)
    finally:
        first.close()
        second.close()
    assert not any(home.exists() for home in homes)


def test_privileges_are_dropped(sandbox: DockerSandbox) -> None:
    assert sh(sandbox, "mknod /tmp/dev c 1 3").exit_code != 0          # CAP_MKNOD
    assert sh(sandbox, "ip link add dummy0 type dummy").exit_code != 0  # CAP_NET_ADMIN
    assert sh(sandbox, "mount -t tmpfs none /mnt").exit_code != 0       # CAP_SYS_ADMIN
    assert sh(sandbox, "chown nobody /tmp && echo ok").output.strip() == "ok"  # kept
    # set-user-id tools work for a non-root user (sudo, su, crontab), as on a plain engine,
    # and gain no capability root here lacks
    made = sh(sandbox, "cp /usr/bin/id /usr/local/bin/suid-id && "
                       "chmod u+s /usr/local/bin/suid-id && "
                       "runuser -u nobody -- /usr/local/bin/suid-id -u && "
                       "runuser -u nobody -- /usr/local/bin/suid-id -ru")
    assert made.output.split() == ["0", "65534"], made.output
    bounded = sh(sandbox, "runuser -u nobody -- grep CapBnd /proc/self/status").output
    assert bounded.split()[-1] == "00000000000000fb"  # the seven kept capabilities


def test_memory_limit_kills_the_hog(sandbox: DockerSandbox) -> None:
    result = sh(sandbox, "python3 -c 'x = bytearray(1024 * 1024 * 1024); print(len(x))'")
    assert result.exit_code != 0
    assert "1073741824" not in result.output


def test_pid_limit_stops_a_fork_bomb(sandbox: DockerSandbox) -> None:
    limit = sh(sandbox, "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || "
                        "cat /sys/fs/cgroup/pids.max").output.strip()
    assert limit == "64"
    result = sh(sandbox, "for i in $(seq 200); do sleep 3 & done; wait", timeout_s=20)
    assert "Resource temporarily unavailable" in result.output or "fork" in result.output


def test_output_is_capped_without_exhausting_memory(sandbox: DockerSandbox) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = sh(sandbox, "head -c 300000000 /dev/zero | tr '\\0' x; echo; echo END")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert result.exit_code == 0
    assert result.output_bytes > 300_000_000
    assert result.truncated and "bytes of output dropped" in result.output
    assert result.output.rstrip().endswith("END")
    assert len(result.output) < 70 * 1024
    assert after - before < 100 * 1024  # KiB: the 300 MB never sat in memory


def test_timeout_kills_and_reports(sandbox: DockerSandbox) -> None:
    result = sandbox.exec(["sleep", "60"], timeout_s=2)
    assert result.timed_out and result.duration_s < 20


def test_copy_in_and_read_back_through_the_engine(sandbox: DockerSandbox, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "sub" / "b.bin").write_bytes(b"\x00\x01")
    sandbox.copy_in(tmp_path, PurePosixPath("/deep/target"))
    assert sandbox.read_file(PurePosixPath("/deep/target/a.txt")) == b"alpha"
    assert set(sandbox.read_tree(PurePosixPath("/deep/target"))) == {"a.txt", "sub/b.bin"}
    assert sandbox.read_file(PurePosixPath("/nope")) is None
    assert sh(sandbox, "stat -c %U /deep/target/a.txt").output.strip() == "root"


def test_host_side_diff_matches_the_engines(sandbox: DockerSandbox) -> None:
    script = ("echo hi > /app/x; rm /usr/bin/tr; mkdir -p /newdir/a; echo z > /newdir/a/f; "
              "rm -rf /opt/venv/include; echo more >> /etc/bash.bashrc; "
              "rm -rf /var/cache/debconf && mkdir /var/cache/debconf && "
              "touch /var/cache/debconf/n; "
              "ln -s /nowhere /app/dangling; mkfifo /app/pipe")
    assert sh(sandbox, script).exit_code == 0
    fast = sandbox.changes()
    assert sandbox._layers, "overlay2 on a local engine: the host-side walk must be used"
    engine = sandbox._container.diff()
    kinds = {0: "C", 1: "A", 2: "D"}
    assert {(c.path, c.kind.value) for c in fast} == \
        {(d["Path"], kinds[d["Kind"]]) for d in engine}


def test_a_created_container_shows_what_the_host_put_in_its_layer_once_started() -> None:
    """The scoring container is filled on the host before it starts (grading/carry.py)."""
    box = DockerSandbox.create(SETTINGS.base_image, label="created")
    try:
        layer = box.writable_layer()
        assert layer is not None and list(Path(layer[0]).iterdir()) == []
        (Path(layer[0]) / "srv").mkdir()
        (Path(layer[0]) / "srv/from-host.txt").write_text("before start\n")
        box.begin()
        box.begin()  # a started container is left as it is
        assert sh(box, "cat /srv/from-host.txt").output == "before start\n"
    finally:
        box.close()
