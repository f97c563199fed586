"""Shingles, Jaccard, containment and the MinHash estimate."""

from __future__ import annotations

import pytest

from termgrade.audit.textsim import (
    containment,
    estimated_jaccard,
    jaccard,
    minhash,
    shingles,
    tokens,
)


def test_tokens_ignore_case_punctuation_and_markup() -> None:
    assert tokens("# Write `/app/colsum`, NOW!") == ["write", "app", "colsum", "now"]


def test_shingles_are_word_ngrams() -> None:
    assert shingles("a b c d", 3) == {"a b c", "b c d"}


def test_short_text_is_one_shingle_and_empty_text_none() -> None:
    assert shingles("only two", 5) == {"only two"}
    assert shingles(" \n ", 5) == frozenset()


def test_shingle_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="shingle size"):
        shingles("a b", 0)


def test_jaccard_and_containment_exact_values() -> None:
    a = frozenset({"1", "2", "3", "4"})
    b = frozenset({"3", "4", "5", "6", "7", "8"})
    assert jaccard(a, b) == pytest.approx(2 / 8)
    assert containment(a, b) == pytest.approx(2 / 4)
    assert containment(b, a) == pytest.approx(2 / 6)


def test_empty_sets_never_match() -> None:
    empty: frozenset[str] = frozenset()
    assert jaccard(empty, empty) == 0.0
    assert containment(empty, frozenset({"x"})) == 0.0
    assert estimated_jaccard(minhash([]), minhash(["x"])) == 0.0


def test_minhash_estimate_tracks_exact_jaccard() -> None:
    a = frozenset(f"w{i}" for i in range(0, 600))
    b = frozenset(f"w{i}" for i in range(200, 800))  # exact Jaccard 400/800 = 0.5
    estimate = estimated_jaccard(minhash(a), minhash(b))
    assert abs(estimate - jaccard(a, b)) < 0.1
    assert estimate == estimated_jaccard(minhash(a), minhash(b))  # fixed seed
