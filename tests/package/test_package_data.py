"""The installed package carries its data; the repository's files stay the sources."""

from __future__ import annotations

import shutil
from pathlib import Path

from termgrade.builders.card import DATASET_CARD_TEMPLATE
from termgrade.core.package_data import data_path, repo_root, stale, sync
from termgrade.sandbox.images import BASE_IMAGE_DIR
from termgrade.validate.schemas import SCHEMA_DIR, load_schema

ROOT = Path(__file__).resolve().parents[2]


def test_package_copies_equal_the_sources() -> None:
    assert repo_root() == ROOT
    assert stale(ROOT) == [], (
        "run `python -m termgrade.core.package_data` and commit termgrade/_data")


def test_the_package_reads_only_its_own_data() -> None:
    package = data_path()
    for path in (SCHEMA_DIR, DATASET_CARD_TEMPLATE, BASE_IMAGE_DIR):
        assert path.is_relative_to(package), path
    assert (BASE_IMAGE_DIR / "Dockerfile").is_file()
    assert load_schema("verify_record")["title"] == "VerifyRecord"


def test_a_changed_source_is_stale_until_synced(tmp_path: Path) -> None:
    fake = tmp_path / "repo"
    for name in ("schemas", "base_image"):
        shutil.copytree(ROOT / name, fake / name)
    shutil.copy(ROOT / "DATASET_CARD.md", fake / "DATASET_CARD.md")
    assert stale(fake) == []
    (fake / "DATASET_CARD.md").write_text("changed\n")
    assert stale(fake) == ["DATASET_CARD.md"]
    try:
        assert sync(fake) == ["DATASET_CARD.md"]
        assert data_path("DATASET_CARD.md").read_text() == "changed\n"
    finally:
        sync(ROOT)
    assert stale(ROOT) == []
