"""Every config a trajectories card declares loads with ``datasets`` from the Hub (the
loopback Hub): ``sft``, ``episodes`` and ``traces``, which earlier builds declared over
the JSONL trace files and ``datasets`` could not read (ArrowInvalid)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from termgrade.builders.trajectories import build_trajectories
from termgrade.publish import PublishOptions, RetryPolicy, publish
from tests.support.hf_env import subprocess_env
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import HubServer
from tests.support.records import trial, write_trials
from tests.support.task_dirs import MakeTask

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
REPO = "org/traj"


@pytest.mark.slow
def test_every_declared_config_loads_from_the_hub(
        tmp_path: Path, make_task: MakeTask, hub: HubServer, hf_home: Path,  # noqa: F811
) -> None:
    tasks = make_task("alpha").parent
    records = [trial(i) for i in range(4)]
    out = tmp_path / "dist" / "traj"
    build_trajectories(out, trials=write_trials(tmp_path / "t.jsonl", records),
                       task_roots=[tasks], repo_id=REPO)
    # The default validator: it loads every config locally before anything is pushed.
    publish(out, PublishOptions(repo_id=REPO, endpoint=hub.url, token="hf_dummy",
                                state_dir=tmp_path / "state", retry=RetryPolicy(base_s=0.01)))
    code = f"""
import json, datasets
from huggingface_hub import DatasetCard
card = DatasetCard.load({REPO!r}, repo_type="dataset")
names = [c["config_name"] for c in card.data.configs]
rows = {{name: datasets.load_dataset({REPO!r}, name, split="train").num_rows
        for name in names}}
traces = datasets.load_dataset({REPO!r}, "traces", split="train")
print(json.dumps({{"rows": rows, "paths": sorted(traces["path"])}}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=subprocess_env(hf_home, hub.url), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["rows"] == {"sft": 4, "episodes": 4, "traces": 4}
    assert got["paths"] == sorted(f"traces/train/alpha/alpha__{i}.jsonl" for i in range(4))
