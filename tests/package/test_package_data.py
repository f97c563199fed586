"""The data files have one source, the repository's; a wheel carries a copy made at build
time. A checkout reads the repository's files, an installed wheel its own ``_data``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from termgrade.builders.card import DATASET_CARD_TEMPLATE
from termgrade.core import package_data
from termgrade.core.package_data import SOURCES, copy_sources, data_path, repo_root, sources
from termgrade.sandbox.images import BASE_IMAGE_DIR
from termgrade.validate.schemas import SCHEMA_DIR, load_schema

ROOT = Path(__file__).resolve().parents[2]


def test_a_checkout_reads_the_repositorys_own_files() -> None:
    assert repo_root() == ROOT
    assert (SCHEMA_DIR, DATASET_CARD_TEMPLATE, BASE_IMAGE_DIR) == (
        ROOT / "schemas", ROOT / "DATASET_CARD.md", ROOT / "base_image")
    assert (BASE_IMAGE_DIR / "Dockerfile").is_file()
    assert load_schema("verify_record")["title"] == "VerifyRecord"


def test_the_data_is_committed_once() -> None:
    tracked = subprocess.run(["git", "ls-files", "termgrade/_data"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
    assert tracked == ""
    assert not (ROOT / "termgrade" / "_data").exists()


def test_an_installed_package_reads_its_own_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(package_data, "repo_root", lambda: None)
    assert data_path("schemas") == ROOT / "termgrade" / "_data" / "schemas"


def test_the_build_copies_every_source_into_the_package(tmp_path: Path) -> None:
    target = tmp_path / "build" / "termgrade" / "_data"
    copied = copy_sources(ROOT, target)
    assert copied == sorted(sources(ROOT))
    assert all(any(Path(name).match(pattern) for name in copied) for pattern in SOURCES)
    assert "DATASET_CARD.md" in copied and "base_image/Dockerfile" in copied
    for name in copied:
        assert (target / name).read_bytes() == (ROOT / name).read_bytes(), name


def test_a_build_without_the_sources_fails_naming_them(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    with pytest.raises(FileNotFoundError, match=r"DATASET_CARD\.md"):
        copy_sources(tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()
