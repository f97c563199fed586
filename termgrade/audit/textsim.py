"""Text similarity primitives: tokens, word n-gram shingles, Jaccard, containment, MinHash.

Shingles are word n-grams over a normalised token stream (lowercased runs of letters,
digits and ``_``), so whitespace, punctuation and Markdown or code formatting do not
matter. Two measures, after Broder (1997), "On the resemblance and containment of
documents":

* resemblance (Jaccard) ``|A ∩ B| / |A ∪ B|``: symmetric, used for near-duplicates;
* containment ``|A ∩ B| / |A|``: how much of ``A`` appears in ``B``, used for
  contamination (a short task copied into a longer external one still scores 1.0).

Both are 0.0 when the set they divide by is empty (nothing to compare is never a match).
MinHash signatures come from the ``datasketch`` library with a fixed seed, so estimates
are reproducible from run to run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from datasketch import MinHash

_TOKEN = re.compile(r"\w+", re.UNICODE)

DEFAULT_NUM_PERM = 256
"""MinHash permutations: standard error of the estimate is about sqrt(J(1-J)/256) <= 0.03."""

MINHASH_SEED = 1


def tokens(text: str) -> list[str]:
    """Lowercased word tokens (letters, digits, ``_``); everything else separates."""
    return _TOKEN.findall(text.lower())


def shingles(text: str, n: int) -> frozenset[str]:
    """The set of word n-grams of ``text``.

    A text shorter than ``n`` tokens (but not empty) yields one shingle, itself, so short
    texts can still be compared.
    """
    if n < 1:
        raise ValueError(f"shingle size must be >= 1, got {n}")
    words = tokens(text)
    if not words:
        return frozenset()
    if len(words) < n:
        return frozenset({" ".join(words)})
    return frozenset(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Exact resemblance of two shingle sets; 0.0 when both are empty."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def containment(a: frozenset[str], b: frozenset[str]) -> float:
    """Fraction of ``a``'s shingles found in ``b``; 0.0 when ``a`` is empty."""
    return len(a & b) / len(a) if a else 0.0


def minhash(items: Iterable[str], num_perm: int = DEFAULT_NUM_PERM) -> MinHash:
    """A MinHash signature of a shingle set (fixed seed: reproducible)."""
    signature = MinHash(num_perm=num_perm, seed=MINHASH_SEED)
    signature.update_batch([item.encode("utf-8") for item in items])
    return signature


def estimated_jaccard(a: MinHash, b: MinHash) -> float:
    """The MinHash estimate of the resemblance of the two sets behind ``a`` and ``b``."""
    if a.is_empty() or b.is_empty():
        return 0.0
    return float(a.jaccard(b))
