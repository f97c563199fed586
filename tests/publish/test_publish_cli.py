"""``termgrade publish`` through the CLI runner, against the loopback Hub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

import termgrade.publish.validation as validation
from termgrade.cli import publish as publish_cli
from termgrade.publish import ValidationOutcome
from tests.support.hub_fixtures import hf_home, hub  # noqa: F401
from tests.support.hub_server import HubServer
from tests.support.staging import stage_environments_repo

pytestmark = pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
TASK = Path(__file__).resolve().parents[2] / "environments" / "word-frequency"


def invoke(*args: str) -> Result:
    app = typer.Typer()

    @app.callback()
    def root() -> None:
        """Test root."""

    publish_cli.register(app)
    return CliRunner().invoke(app, ["publish", *args])


@pytest.fixture
def staged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(validation, "library_validator", lambda root: ValidationOutcome(True))
    return stage_environments_repo(tmp_path / "dist", {"unseen": [TASK]})


def test_dry_run_then_publish_then_noop(hub: HubServer, staged: Path, tmp_path: Path) -> None:  # noqa: F811
    common = [str(staged), "--repo-id", "org/envs", "--state-dir", str(tmp_path / "state")]
    dry = invoke(*common, "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    record = json.loads(dry.stdout)
    assert record["dry_run"] and record["commits"] == [] and "README.md" in record["plan"]["add"]
    assert "plan:" in dry.stderr and "+ README.md" in dry.stderr
    done = invoke(*common, "--tag", "v1")
    assert done.exit_code == 0, done.output
    assert "published org/envs@main: 1 commit(s)" in done.stdout and "tagged v1" in done.stdout
    again = invoke(*common, "--json")
    assert json.loads(again.stdout)["commits"] == [] and "0 to add" in again.stderr


def test_refusals_exit_1_with_a_fix_and_no_traceback(hub: HubServer, tmp_path: Path,  # noqa: F811
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validation, "library_validator",
                        lambda root: ValidationOutcome(False, ["card: README.md: no configs"]))
    staged = stage_environments_repo(tmp_path / "dist", {"unseen": [TASK]})
    result = invoke(str(staged), "--repo-id", "org/envs")
    assert result.exit_code == 1 and "no configs" in result.output and "fix:" in result.output
    assert "Traceback" not in result.output and hub.requests == []
    bad_id = invoke(str(staged), "--repo-id", "not a repo")
    assert bad_id.exit_code == 1 and "namespace/name" in bad_id.output


def test_the_checkpoint_model_repo_validates_and_publishes(hub: HubServer,  # noqa: F811
                                                           tmp_path: Path) -> None:
    """`build checkpoint-card` stages a model repo; the real validator accepts it as one, and
    it publishes as a model repo."""
    from huggingface_hub import HfApi

    from termgrade.training.checkpoint_card import build_checkpoint_card
    from termgrade.validate import validate_repo

    staged = tmp_path / "dist" / "adapter"
    build_checkpoint_card(staged, repo_id="org/adapter")  # the id it is published to
    report = validate_repo(staged)
    assert report.ok, report.findings
    done = invoke(str(staged), "--repo-id", "org/adapter", "--repo-type", "model",
                  "--state-dir", str(tmp_path / "state"))
    assert done.exit_code == 0, done.output
    files = HfApi(endpoint=hub.url).list_repo_files("org/adapter", repo_type="model")
    assert {"README.md", "training_config.yaml"} <= set(files)
    # A dataset card without configs is still refused: the model exemption is narrow.
    (staged / "data").mkdir()
    assert any("configs" in f.message for f in validate_repo(staged).findings)


def test_a_card_built_for_another_repo_id_is_refused_with_the_fix(tmp_path: Path) -> None:
    """The card's quick start loads the repo it was built for: published under another
    id it would load nothing. Refused before any Hub request, --dry-run included."""
    from termgrade.training.checkpoint_card import build_checkpoint_card

    staged = tmp_path / "dist" / "adapter"
    build_checkpoint_card(staged, repo_id="org/adapter")
    done = invoke(str(staged), "--repo-id", "org/other", "--repo-type", "model", "--dry-run")
    said = " ".join(done.output.split())
    assert done.exit_code == 1
    assert "the card was built for 'org/adapter'" in said and "not --repo-id 'org/other'" in said
    assert "--repo-id org/other`, or publish with --repo-id org/adapter" in said


def test_publish_fails_fast_when_the_hub_does_not_resolve(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline (a host name that cannot resolve): one clear error in seconds, no minute of
    retries."""
    import time

    from termgrade.training.checkpoint_card import build_checkpoint_card

    staged = tmp_path / "dist" / "adapter"
    build_checkpoint_card(staged, repo_id="org/adapter")
    monkeypatch.setenv("HF_ENDPOINT", "http://hub.invalid")
    monkeypatch.setattr(validation, "library_validator", lambda root: ValidationOutcome(True))
    began = time.monotonic()
    done = invoke(str(staged), "--repo-id", "org/adapter", "--repo-type", "model", "--dry-run",
                  "--state-dir", str(tmp_path / "state"))
    said = " ".join(done.output.split())
    assert done.exit_code == 1
    assert "cannot reach the Hub" in said and "does not resolve" in said and "fix:" in said
    assert time.monotonic() - began < 20
