"""Scoring time for an agent that changed very many paths.

In a real container of the base image, an agent phase adds ADDED files under /app (its
work) and modifies MODIFIED files of the verifier's closure (findings: the venv's
site-packages). Then, as the grader does after every agent phase: freeze the container,
review its writable layer, carry the work into the layer of a scoring container created
(not started) with the closure mounted read-only, kill the agent's container and start
the scoring one. The scoring container then counts the files it sees (a check that the
carry is complete, not timed).

    .venv/bin/python benchmarks/scoring_scale.py [--added 96000] [--modified 4000] [--flat]
Targets: review of 100,000 changed paths under 2 s (linear in the entries); scoring
(freeze, review, carry) of a 1,000,000-entry carry under 60 s (``--added 1000000``).
"""

from __future__ import annotations

import argparse
import time

from termgrade.core.settings import SETTINGS
from termgrade.sandbox.docker_sandbox import DockerSandbox
from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.review.carry import CarryStats, carry_work
from termgrade.scoring.review.closure import find_closure
from termgrade.scoring.review.integrity import LayerReview, review_layer
from termgrade.scoring.review.policy import GradingPolicy

AGENT = r"""
set -e
mkdir -p {where}
cd {where}
python3 - <<PY
import os
for d in range({added} // 1000):
    if {flat}:
        if d == 0:
            os.mkfifo("held.fifo")
        prefix = f"d{{d}}_"
    else:
        os.makedirs(f"d{{d}}", exist_ok=True)
        prefix = f"d{{d}}/"
    for f in range(1000):
        with open(f"{{prefix}}f{{f}}.txt", "w") as out:
            out.write("x")
PY
find /opt/venv/lib -xdev -type f 2>/dev/null | head -n {modified} | while read -r f; do
  printf 'y' >> "$f"
done
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--added", type=int, default=96_000)
    parser.add_argument("--modified", type=int, default=4_000)
    parser.add_argument("--flat", action="store_true",
                        help="Write the files straight into the image's /srv beside a FIFO "
                        "(the worst case: a FIFO is never carried, so /srv cannot move as "
                        "one piece and every file moves alone).")
    args = parser.parse_args()
    where = "/srv" if args.flat else "/app/work"

    closure = find_closure(SETTINGS.base_image)
    policy = GradingPolicy(closure=closure.dirs + closure.files)
    agent = DockerSandbox.start(SETTINGS.base_image, label="bench-scale")
    score = DockerSandbox.create(SETTINGS.base_image, label="bench-scale-score",
                                 read_only=closure.mounts())
    try:
        made = agent.exec(["bash", "-c", AGENT.format(
            added=args.added, modified=args.modified, where=where, flat=args.flat)],
                          timeout_s=1800)
        assert made.exit_code == 0, made.output[-2000:]
        started = time.monotonic()
        agent.halt()
        frozen = time.monotonic()
        layer = agent.writable_layer()
        assert layer is not None, "needs a local overlay2 engine"
        upper, lowers = layer
        review = review_layer(walk_upper(upper), LowerView(lowers), policy,
                              grader_paths=agent.engine_paths())
        reviewed = time.monotonic()
        target = score.writable_layer()
        assert target is not None
        stats = carry_work(target[0], layer, review).finish()
        carried = time.monotonic()
        agent.halt(kill=True)
        score.begin()
        started_b = time.monotonic()
        seen = score.exec(["bash", "-c", f"find {where} -type f -name '*f*.txt' | wc -l"],
                          timeout_s=600)
        report(args.added, where, review, stats, seen.output.strip(),
               (started, frozen, reviewed, carried, started_b))
    finally:
        for box in (agent, score):  # a million-file layer takes the engine minutes to remove
            box.close_later()


def report(added: int, where: str, review: LayerReview, stats: CarryStats, seen: str,
           marks: tuple[float, float, float, float, float]) -> None:
    started, frozen, reviewed, carried, started_b = marks
    print(f"entries in the writable layer: {review.entries:,}")
    print(f"findings: {len(review.findings) + review.unlisted:,} "
          f"(listed {len(review.findings)}), carried entries: {len(review.carried):,} "
          f"({stats.trees:,} directories moved whole, {stats.held:,} held entries put back, "
          f"{stats.moved:,} files moved one by one, {stats.copied:,} copied, "
          f"{stats.directories:,} directories made)")
    print(f"files the scoring container sees under {where}: {seen} "
          f"(made: {added:,})")
    print(f"freeze:  {frozen - started:6.3f} s")
    print(f"review:  {reviewed - frozen:6.3f} s  (target < 2 s for 100,000 changed paths)")
    print(f"carry:   {carried - reviewed:6.3f} s  (into the scoring layer on the host)")
    print(f"start:   {started_b - carried:6.3f} s  (the agent's container killed, the scoring "
          "one started)")
    print(f"scoring: {started_b - started:6.3f} s  (freeze + review + carry + start; target "
          "< 60 s for 1,000,000 entries)")


if __name__ == "__main__":
    main()
