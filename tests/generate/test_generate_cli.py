"""``termgrade generate`` through the CLI runner, once with Docker and once on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from termgrade.cli import generate as generate_cli
from tests.support.scripted_generators import ScriptedGenerators, spec_yaml


def invoke(*args: str) -> Result:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    generate_cli.register(app)
    return CliRunner().invoke(app, ["generate", *args])


def test_a_bad_spec_is_one_message_naming_file_and_field(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("domains: [text]\ndifficulties: [impossible]\n")
    result = invoke("--spec", str(spec), "--model", "m", "--base-url",
                    "http://127.0.0.1:9/v1", "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "spec.yaml [difficulties.0]" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.docker
def test_generate_prints_the_funnel_and_keeps_the_valid_task(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_yaml(["scripted-valid", "scripted-garbage"]))
    out = tmp_path / "out"
    with ScriptedGenerators() as server:
        result = invoke("--spec", str(spec), "--model", server.model, "--base-url",
                        server.url, "-o", str(out), "--max-repairs", "0", "--json",
                        "--api-key-env", "")
    assert result.exit_code == 0, result.stderr
    funnel = json.loads(result.stdout)
    assert [s["count"] for s in funnel["stages"]] == [2, 1, 1, 1, 1, 1, 1, 1]
    assert funnel["share_kept"] == 0.5 and funnel["drops"] == {"unparsable": 1}
    assert "termgrade generate: funnel" in result.stderr
    assert "unparsable" in result.stderr and "seconds: model" in result.stderr
    assert [p.name for p in (out / "kept").iterdir()] == ["gen-text-processing-easy-000"]


def test_an_output_with_a_journal_is_not_started_over_without_resume(tmp_path: Path) -> None:
    """What was paid for is not thrown away: no --resume on a journal is refused, and the
    journal is left as it was."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_yaml(["scripted-valid"]))
    out = tmp_path / "out"
    out.mkdir()
    journal = out / "journal.jsonl"
    journal.write_text('{"candidate_id": "gen-text-processing-easy-000"}\n')
    result = invoke("--spec", str(spec), "--model", "m", "--base-url",
                    "http://127.0.0.1:9/v1", "-o", str(out), "--api-key-env", "")
    assert result.exit_code == 1
    said = " ".join(result.stderr.split())
    assert f"{out} holds the journal of an earlier run (1 finished candidate(s)" in said
    assert "add --resume to keep them, or pass a fresh -o" in said
    assert "Traceback" not in result.stderr
    assert journal.read_text() == '{"candidate_id": "gen-text-processing-easy-000"}\n'
