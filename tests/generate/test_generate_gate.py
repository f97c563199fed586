"""Without Docker: the audit gate over written candidates, and an endpoint failure
recorded (not raised) and redone on resume, against a real loopback server."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from pathlib import Path

import jsonschema
import pytest

from termgrade.agent.client import Endpoint
from termgrade.core.retry import RetryPolicy
from termgrade.generate import expand, generate_tasks, load_spec, parse_answer
from termgrade.generate.funnel import stages_reached
from termgrade.generate.gate import audit_candidates
from termgrade.generate.paths import write_task
from termgrade.validate.schemas import load_schema, stale_schemas
from termgrade.verify.record import VerifyRecord
from termgrade.verify.verdict import Verdict
from tests.support.scripted_generators import (
    BASE,
    DIFFICULTY,
    DOMAIN,
    IMPORTS_SOLUTION,
    REPO,
    VALID,
    ScriptedGenerators,
    corpus_copy,
    spec_yaml,
)


def written(tmp_path: Path, name: str, text: str) -> Path:
    target = tmp_path / "work" / name
    write_task(parse_answer(text, base_image=BASE, domain=DOMAIN, difficulty=DIFFICULTY),
               target)
    return target


@pytest.mark.slow
def test_gate_drops_in_process_imports_copies_and_the_second_of_a_pair(tmp_path: Path) -> None:
    dirs = [written(tmp_path, "gen-a", VALID), written(tmp_path, "gen-b", VALID),
            written(tmp_path, "gen-c", IMPORTS_SOLUTION),
            written(tmp_path, "gen-d", corpus_copy(REPO / "environments" / "word-frequency"))]
    findings = audit_candidates(dirs, corpus=[REPO / "environments"])
    assert findings["gen-a"] == []  # the first of a near-duplicate pair is kept
    assert any("near-duplicate of candidate gen-a" in f for f in findings["gen-b"])
    assert any(f.startswith("agent_code_isolated:") for f in findings["gen-c"])
    assert any("near-duplicate of corpus task word-frequency" in f for f in findings["gen-d"])
    assert audit_candidates(dirs[2:3], against=[REPO / "environments"])["gen-c"] == [
        f for f in findings["gen-c"] if f.startswith("agent_code_isolated")]
    bench = tmp_path / "bench"
    written(bench, "tb-sum", VALID)
    flagged = audit_candidates(dirs[:1], against=[bench / "work"])
    assert any(f.startswith("contamination:") and "tb-sum" in f for f in flagged["gen-a"])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def never_verify(path: Path) -> VerifyRecord:
    raise AssertionError(f"nothing should be verified: {path}")


def test_endpoint_failure_is_a_record_and_resume_redoes_it(tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec_yaml(["scripted-valid", "scripted-garbage"]))
    specs = expand(load_spec(spec_file))
    with ScriptedGenerators() as server:
        wrong = Endpoint(f"http://127.0.0.1:{free_port()}/v1", server.model, api_key_env=None)
        report = generate_tasks(specs, endpoint=wrong, out_dir=tmp_path / "out",
                                max_repairs=1, progress=False, verify=never_verify,
                                retry=RetryPolicy(attempts=2, base_s=0.01, max_s=0.01))
        assert [r.outcome for r in report.records] == ["endpoint_error", "endpoint_error"]
        assert "gave up after 2 tries" in (report.records[0].rounds[0].endpoint_error or "")
        assert [stages_reached(r) for r in report.records] == [1, 1]
        assert report.funnel.counts["kept"] == 0 and report.funnel.drops == {
            "endpoint_error": 2}
        assert (tmp_path / "out" / "funnel.png").is_file()
        # The written records agree with their JSON Schemas (generated from the models).
        assert not {"candidate.schema.json", "generation_funnel.schema.json"} & set(
            stale_schemas())
        history = tmp_path / "out" / "history" / f"{specs[0].candidate_id}.json"
        jsonschema.validate(json.loads(history.read_text()), load_schema("candidate"))
        jsonschema.validate(json.loads((tmp_path / "out" / "funnel.json").read_text()),
                            load_schema("generation_funnel"))
        # Resumed against the right endpoint, the failed candidate is redone (the garbage
        # generator: no Docker needed).
        right = Endpoint(server.url, server.model, api_key_env=None)
        again = generate_tasks(specs[1:], endpoint=right, out_dir=tmp_path / "out",
                               max_repairs=1, progress=False, resume=True,
                               verify=never_verify)
        assert again.resumed == 0
        assert [r.outcome for r in again.records] == ["unparsable"]
        assert len(again.records[0].rounds) == 2


def test_bad_limits_are_refused(tmp_path: Path) -> None:
    from termgrade.core.errors import OptionError

    with pytest.raises(OptionError, match="max_requests"):
        generate_tasks([], endpoint=Endpoint("http://127.0.0.1:9/v1", "m"),
                       out_dir=tmp_path, max_requests=0)


class CountingVerifier:
    """A stand-in for the execution filter that only counts how many run at once (the
    behaviour under test is the bound, not the verdict): it says ``verified``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.calls = 0

    def __call__(self, path: Path) -> VerifyRecord:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.most = max(self.most, self.now)
        time.sleep(0.2)
        with self.lock:
            self.now -= 1
        return VerifyRecord(task_id=path.name, task_digest="x", verdict=Verdict.VERIFIED,
                            oracle_rewards=[1.0, 1.0], nop_reward=0.0, n_assertions=10,
                            tests=[], tampered=[], durations={"build": 0.0}, error=None)


def test_requests_and_containers_are_bounded(tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec_yaml(["scripted-valid"] * 8))
    verifier = CountingVerifier()
    with ScriptedGenerators(delay_s=0.2) as server:
        report = generate_tasks(
            expand(load_spec(spec_file)), out_dir=tmp_path / "out", progress=False,
            endpoint=Endpoint(server.url, server.model, api_key_env=None),
            max_requests=2, max_containers=1, verify=verifier)
        assert len(server.requests) == 8 and verifier.calls == 8
        assert server.max_in_flight == 2 and verifier.most == 1
    # Eight copies of one task: the audit keeps the first, drops the rest as duplicates.
    assert report.funnel.counts["not_flaky"] == 8 and report.funnel.counts["kept"] == 1
    assert report.funnel.drops == {"audit:near-duplicate": 7}


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    """The first run stands for a run stopped after two candidates; the resumed run of the
    full spec asks only for the rest. A verified candidate whose directory is gone is redone
    (the audit needs its files)."""
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(spec_yaml(["scripted-valid", "scripted-garbage"] * 2))
    specs = expand(load_spec(spec_file))
    verifier = CountingVerifier()
    with ScriptedGenerators() as server:
        endpoint = Endpoint(server.url, server.model, api_key_env=None)
        common = {"endpoint": endpoint, "out_dir": tmp_path / "out", "max_repairs": 0,
                  "progress": False, "verify": verifier}
        first = generate_tasks(specs[:2], **common)
        assert [r.outcome for r in first.records] == ["verified", "unparsable"]
        assert len(server.requests) == 2
        rest = generate_tasks(specs, resume=True, **common)
        assert rest.resumed == 2 and len(server.requests) == 4 and verifier.calls == 2
        assert [r.outcome for r in rest.records] == ["verified", "unparsable"] * 2
        shutil.rmtree(tmp_path / "out" / "work" / specs[0].candidate_id)
        again = generate_tasks(specs, resume=True, **common)
        assert again.resumed == 3 and len(server.requests) == 5 and verifier.calls == 3
