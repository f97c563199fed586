"""A release-sized run: 36,144 trials (six configurations x 1,004 tasks, k = 8 x4 and
2 x2), paged; no page or answer holds more than one page of the run."""

from __future__ import annotations

import dataclasses
import json
import re
import urllib.request
import warnings
from pathlib import Path

import pytest

from termgrade.core.errors import DataWarning
from termgrade.trialsets import write_trials
from termgrade.trialsets.synthetic import generate
from termgrade.trialsets.synthetic_config import PAPER_LIKE, SyntheticConfig
from termgrade.view import find_sources, load_run
from termgrade.view.server import ViewServer

pytestmark = pytest.mark.slow


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return str(answer.read().decode())


def test_36144_trials_are_paged(tmp_path: Path) -> None:
    models = tuple(dataclasses.replace(m, infra_error_rate=0.0) for m in PAPER_LIKE)
    corpus = generate(SyntheticConfig(models=models))
    assert write_trials(tmp_path / "trials.jsonl", corpus.records) == 36_144
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        index = load_run(find_sources(tmp_path))
    assert len(index.trials) == 36_144 and len(index.cells) == 6 * 1004
    with ViewServer(index) as server:
        first = _get(server.url)
        assert "page 1 of 21" in first
        assert len(re.findall(r'<tr data-task="', first)) == 50
        assert len(first) < 400_000
        last = _get(server.url + "?page=21")
        assert re.findall(r'<tr data-task="([^"]+)"', last)[-1] == "synthetic-task-1004"
        trials = _get(server.url + "trials?page=723")
        assert "page 723 of 723" in trials
        assert len(re.findall(r'class="trial-link"', trials)) == 36_144 - 722 * 50
        api = json.loads(_get(server.url + "api/trials?page=2&near_miss=1"))
        assert len(api["trials"]) == 50 and api["n_trials"] == int(index.trials["near_miss"].sum())
        row = len(index.trials) // 2
        page = _get(server.url + f"trial/{row}")
        assert str(index.trials.iloc[row]["trial_id"]) in page
        assert len(page) < 50_000
