"""Generation throughput with scripted generators: candidates per hour and where the time
goes (model wait, build, verify), and the funnel plot.

The generators are the scripted stand-ins of benchmarks/_support/generators.py behind a
real OpenAI-compatible server on loopback (they answer at once, so "model wait" is the
HTTP round trip only); builds and verifies are real (offline Docker builds on
termgrade/base:local, oracle --repeat times and nop once). Each copy of the spec asks
one candidate per scripted generator; --copies repeats the set.

    .venv/bin/python benchmarks/generation.py [--copies 2] [--max-repairs 1]
        [--max-containers 2] [--out /tmp/termgrade-generation-bench]

Prints the funnel table, candidates per hour and the time split; writes funnel.png.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._support.generators import REPO, generators, scripted_generators, spec_yaml
from termgrade.agent.client import Endpoint
from termgrade.generate import expand, generate_tasks, load_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=2, help="Candidates per generator.")
    parser.add_argument("--max-repairs", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--max-containers", type=int, default=2)
    parser.add_argument("--max-requests", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    out = args.out or Path(tempfile.mkdtemp(prefix="termgrade-generation-bench-"))
    spec_file = out / "spec.yaml"
    out.mkdir(parents=True, exist_ok=True)
    topics = list(generators()) * args.copies
    spec_file.write_text(spec_yaml(topics))
    specs = expand(load_spec(spec_file))
    with scripted_generators() as server:
        report = generate_tasks(
            specs, endpoint=Endpoint(server.url, server.model, api_key_env=None),
            out_dir=out / "run", max_repairs=args.max_repairs, repeat=args.repeat,
            corpus=[REPO / "environments"], max_requests=args.max_requests,
            max_containers=args.max_containers)
        requests = server.requests

    print(f"{'stage':16s} {'count':>6s} {'share':>8s}")
    for stage in report.funnel.stages:
        print(f"{stage.stage:16s} {stage.count:6d} {stage.share:8.1%}")
    print(f"kept {report.funnel.share_kept:.1%} (paper: {report.funnel.paper_share_kept:.1%}); "
          f"drops: {report.funnel.drops}")
    rounds = sum(len(r.rounds) for r in report.records)
    s = report.funnel.seconds
    busy = s["model"] + s["build"] + s["verify"]
    print()
    print(f"candidates: {len(report.records)}, rounds: {rounds}, model requests: {requests}, "
          f"containers at once: {args.max_containers}, repeat: {args.repeat}")
    print(f"wall: {report.wall_s:.1f} s -> {report.candidates_per_hour:.0f} candidates/hour")
    for key in ("model", "build", "verify"):
        print(f"  {key:7s} {s[key]:8.1f} s summed over candidates "
              f"({s[key] / busy if busy else 0:.1%} of model+build+verify)")
    print(f"  waiting for a container slot: {s['container_wait']:.1f} s summed")
    print(f"funnel plot: {report.paths.funnel_png}")


if __name__ == "__main__":
    main()
