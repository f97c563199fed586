"""What the Terminus-2-style scaffold adds per turn: typing keys and reading a frame.

In one warm container of a task's image, a tmux session (termgrade/agent/tmux.py) gets
``--turns`` turns of one short command each, with no wait (a ``duration`` of 0): each turn
times ``send`` (one ``tmux send-keys`` exec), ``alive`` (``tmux has-session``, asked after
the keys) and ``frame`` (one or two ``capture-pane`` execs), i.e. what the
scaffold costs beyond the model's latency and the durations the model asks for. Beside
it, the bash tool-calling scaffold's one ``bash`` call per turn
(termgrade/agent/shell.py) on the same container, for scale. No model is involved.

    .venv/bin/python benchmarks/terminus_turns.py [--task word-frequency] [--turns 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from termgrade.agent.shell import run_command  # noqa: E402
from termgrade.agent.tmux import TmuxSession  # noqa: E402
from termgrade.sandbox.docker_sandbox import DockerSandbox  # noqa: E402
from termgrade.sandbox.images import build_task_image  # noqa: E402
from termgrade.task import load_task  # noqa: E402


def timed(action: Callable[[], object]) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def summary(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return (f"{name:<34} median {statistics.median(seconds) * 1000:7.1f} ms   "
            f"p90 {p90 * 1000:7.1f} ms   n={len(seconds)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="word-frequency")
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    task = load_task(ROOT / "environments" / args.task)
    image = build_task_image(task).tag
    box = DockerSandbox.start(image)
    try:
        session = TmuxSession(box, task.config.environment.workdir or "/app")
        start = timed(session.start)
        session.frame()
        alive, sends, frames, bash = [], [], [], []
        for n in range(args.turns):
            alive.append(timed(session.alive))
            sends.append(timed(lambda n=n: session.send(f"echo turn {n}\n")))
            frames.append(timed(session.frame))
            bash.append(timed(lambda n=n: run_command(box, f"echo turn {n}", timeout_s=30,
                                                      workdir="/app", env=None)))
        session.stop()
    finally:
        box.close()
    print(f"task {args.task}, {args.turns} turns, one warm container")
    print(f"{'tmux session start (first prompt drawn)':<34} {start * 1000:7.1f} ms")
    print(summary("terminus-2: session alive?", alive))
    print(summary("terminus-2: send keys", sends))
    print(summary("terminus-2: frame", frames))
    print(summary("terminus-2: a turn (all three)",
                  [a + s + f for a, s, f in zip(alive, sends, frames, strict=True)]))
    print(summary("bash-tool: one bash call", bash))


if __name__ == "__main__":
    main()
