"""The generation pipeline end to end: scripted generators behind a real loopback HTTP
server, the real execution filter (offline Docker builds, oracle and nop runs) and the
real audit. Every scripted generator of the issue is exercised here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from termgrade.agent.client import Endpoint
from termgrade.generate import expand, generate_tasks, load_spec
from termgrade.generate.records import CandidateRecord
from termgrade.sandbox.engine import image_exists
from termgrade.task.model import image_tag_for
from tests.support.scripted_generators import (
    GARBAGE,
    REPO,
    ScriptedGenerators,
    generators,
    spec_yaml,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_scripted_generators_through_verify_and_audit(tmp_path: Path) -> None:
    topics = list(generators())
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec_yaml(topics))
    specs = expand(load_spec(spec_file))
    out = tmp_path / "out"
    with ScriptedGenerators() as server:
        endpoint = Endpoint(server.url, server.model, api_key_env=None)
        report = generate_tasks(specs, endpoint=endpoint, out_dir=out, max_repairs=1,
                                repeat=2, corpus=[REPO / "environments"], max_requests=4,
                                max_containers=2, progress=False)
        requests = len(server.requests)
        by: dict[str | None, CandidateRecord] = {r.topic: r for r in report.records}

        valid = by["scripted-valid"]
        assert valid.kept and len(valid.rounds) == 1, valid.drop_reason

        repaired = by["scripted-repaired"]
        assert repaired.kept and len(repaired.rounds) == 2, repaired.drop_reason
        first = repaired.rounds[0].verify
        assert first is not None and first.verdict.value == "unsatisfiable"
        assert "verdict: unsatisfiable" in repaired.rounds[1].prompt  # the failure fed back
        assert "test_line_is_in_reverse_position" in repaired.rounds[1].prompt

        never = by["scripted-never-fixed"]
        assert never.outcome == "unsatisfiable" and len(never.rounds) == 2 and not never.kept

        garbage = by["scripted-garbage"]
        assert garbage.outcome == "unparsable" and len(garbage.rounds) == 2
        assert garbage.rounds[0].response == GARBAGE
        assert "outside a file block" in (garbage.rounds[0].parse_error or "")
        assert "outside a file block" in garbage.rounds[1].prompt

        vacuous = by["scripted-vacuous"]
        assert vacuous.outcome == "vacuous" and not vacuous.kept
        assert "untouched container passes" in (vacuous.drop_reason or "")

        copy = by["scripted-copy-corpus"]
        assert copy.verified and not copy.kept
        assert "near-duplicate of corpus task word-frequency" in (copy.drop_reason or "")

        # Tests that import the solution into pytest make the task unattested: verify
        # grades it as its author meant (it passes), and the audit drops it.
        imports = by["scripted-imports-solution"]
        assert imports.outcome == "verified" and not imports.kept
        assert "agent_code_isolated" in (imports.drop_reason or ""), imports.drop_reason

        network = by["scripted-network"]
        assert network.outcome == "build_failed" and not network.kept
        assert "must build with no network" in (network.drop_reason or "")

        counts = report.funnel.counts
        assert counts == {"candidates": 8, "parsed": 7, "built": 6, "oracle_passed": 5,
                          "nop_failed": 4, "not_flaky": 4, "audit_clean": 2, "kept": 2}
        assert report.funnel.share_kept == pytest.approx(2 / 8)
        assert report.funnel.drops == {"audit:near-duplicate": 1, "build_failed": 1,
                                       "audit:agent_code_isolated": 1, "unparsable": 1,
                                       "unsatisfiable": 1, "vacuous": 1}
        # the imports candidate verifies on its first draft now (the audit drops it): 1
        assert requests == 1 + 2 + 2 + 2 + 2 + 1 + 2 + 1

        # Outputs: the funnel as JSON and PNG, a history per candidate, the kept tasks.
        saved = json.loads((out / "funnel.json").read_text())
        assert [s["count"] for s in saved["stages"]] == list(counts.values())
        assert (out / "funnel.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        history = CandidateRecord.model_validate_json(
            (out / "history" / f"{repaired.candidate_id}.json").read_text())
        assert [r.response for r in history.rounds] == list(
            generators()["scripted-repaired"])
        assert history.system_prompt.startswith("You write executable Linux tasks")
        assert sorted(p.name for p in (out / "kept").iterdir()) == sorted(
            [valid.candidate_id, repaired.candidate_id])
        assert (out / "kept" / valid.candidate_id / "environment" / "numbers.txt").is_file()

        # Each candidate's image was removed after its verify.
        assert not image_exists(image_tag_for(valid.candidate_id))

        # Resume: every candidate comes from the journal, no request is sent again.
        again = generate_tasks(specs, endpoint=endpoint, out_dir=out, max_repairs=1,
                               repeat=2, corpus=[REPO / "environments"], resume=True,
                               progress=False)
        assert len(server.requests) == requests
        assert again.resumed == 8 and again.funnel.counts == counts
