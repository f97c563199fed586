"""Test stand-in for a run killed mid-trial: a process that starts a real TermGrade
container (``DockerSandbox.start``, in the scope of a run id) and then waits to be killed.

Run as ``python -m tests.support.leftover_maker IMAGE [RUN_ID]``; it prints the
container's id once the container runs. SIGKILL it and the container is a leftover whose
owner is gone, exactly as a ``grade`` killed mid-trial leaves one.
"""

from __future__ import annotations

import sys
import time

from termgrade.sandbox.docker_sandbox import DockerSandbox
from termgrade.sandbox.ownership import run_scope


def main(argv: list[str]) -> None:
    image, run = argv[0], (argv[1] if len(argv) > 1 else None)
    with run_scope(run):
        box = DockerSandbox.start(image, label="leftover-test")
    print(box.id, flush=True)
    time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1:])
