"""A planted near-duplicate (a fixture task copied with light edits) is flagged."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from termgrade.audit import AuditSettings, audit_corpus, read_harbor
from termgrade.audit.neardup import near_duplicates

CORPUS = Path(__file__).parents[1] / "fixtures" / "audit" / "corpus"

EDITS = {
    "instruction.md": [("Column sums", "Summing a column"), ("adds up", "totals"),
                       ("orders.csv", "sales.csv"), ("exit 3", "exit 4")],
    "tests/test_outputs.py": [("orders.csv", "sales.csv"), ("119.75", "88.10"),
                              ("def test_large_file", "def test_many_rows")],
}


def corpus_with_copy(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    copy = corpus / "csv-total"
    shutil.copytree(CORPUS / "csv-column-sum", copy)
    for relative, replacements in EDITS.items():
        path = copy / relative
        text = path.read_text()
        for old, new in replacements:
            if old not in text:
                raise AssertionError(f"{old!r} not in {path}")
            text = text.replace(old, new)
        path.write_text(text)
    return corpus


def test_planted_copy_is_flagged_for_instruction_and_tests(tmp_path: Path) -> None:
    report = audit_corpus([corpus_with_copy(tmp_path)], progress=False)
    flagged = {(p.field, p.task_a, p.task_b) for p in report.pairs}
    assert flagged == {("instruction", "csv-column-sum", "csv-total"),
                       ("tests", "csv-column-sum", "csv-total")}
    for pair in report.pairs:
        assert pair.estimated_jaccard >= 0.6
        assert 0.6 <= pair.jaccard < 1.0  # light edits: similar, not identical
        assert abs(pair.estimated_jaccard - pair.jaccard) < 0.15
    by_id = {t.task_id: t for t in report.tasks}
    assert not by_id["csv-total"].passed and not by_id["csv-column-sum"].passed
    assert by_id["log-level-count"].passed and by_id["env-file-validate"].passed
    assert not report.passed


def test_threshold_above_the_similarity_clears_the_flag(tmp_path: Path) -> None:
    corpus = corpus_with_copy(tmp_path)
    report = audit_corpus([corpus], settings=AuditSettings(threshold=0.99), progress=False)
    assert report.pairs == []
    assert report.passed


def test_identical_tests_give_exact_jaccard_one(tmp_path: Path) -> None:
    docs = [read_harbor(CORPUS / "csv-column-sum"), read_harbor(CORPUS / "log-level-count")]
    clone = tmp_path / "clone"
    shutil.copytree(CORPUS / "csv-column-sum", clone)
    docs.append(read_harbor(clone))
    pairs = near_duplicates(docs, "tests", threshold=0.9, shingle_size=5)
    assert [(p.task_a, p.task_b, p.jaccard, p.estimated_jaccard) for p in pairs] == [
        ("clone", "csv-column-sum", 1.0, 1.0)]


def test_threshold_must_be_a_fraction() -> None:
    with pytest.raises(ValueError, match="threshold"):
        near_duplicates([], "instruction", threshold=1.5, shingle_size=5)
