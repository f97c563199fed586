"""Near-duplicates inside the corpus: MinHash signatures, LSH candidates, exact check.

Each task's text is cut into word shingles (:func:`termgrade.audit.textsim.shingles`);
``datasketch``'s MinHashLSH proposes candidate pairs, queried with a band threshold a
little under the flag threshold so that pairs near it are not lost to banding; a pair
is flagged when its MinHash-estimated Jaccard reaches the threshold, and the exact
Jaccard of the two shingle sets is reported beside the estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from datasketch import MinHashLSH

from termgrade.audit.documents import AuditDoc
from termgrade.audit.records import NearDuplicate, TextField
from termgrade.audit.textsim import DEFAULT_NUM_PERM, estimated_jaccard, jaccard, minhash, shingles

LSH_SLACK = 0.15
"""How far under the flag threshold the LSH banding aims, to keep borderline pairs."""

FIELD_TEXT: dict[TextField, Callable[[AuditDoc], str]] = {
    "instruction": lambda doc: doc.instruction,
    "tests": lambda doc: doc.test_code,
}


@lru_cache(maxsize=16)
def _bands(threshold: float, num_perm: int) -> tuple[int, int]:
    """datasketch's (bands, rows) for a threshold; computing it is slow, so it is cached."""
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    return int(lsh.b), int(lsh.r)


def near_duplicates(
    docs: Sequence[AuditDoc],
    field: TextField,
    *,
    threshold: float,
    shingle_size: int,
    num_perm: int = DEFAULT_NUM_PERM,
) -> list[NearDuplicate]:
    """Flagged pairs among ``docs`` for one field, sorted by estimate (highest first)."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"near-duplicate threshold must be in (0, 1], got {threshold}")
    sets = [shingles(FIELD_TEXT[field](doc), shingle_size) for doc in docs]
    signatures = [minhash(items, num_perm) for items in sets]
    lsh = MinHashLSH(num_perm=num_perm,
                     params=_bands(round(max(0.05, threshold - LSH_SLACK), 4), num_perm))
    for index, signature in enumerate(signatures):
        if sets[index]:
            lsh.insert(str(index), signature)
    pairs: list[NearDuplicate] = []
    for index, signature in enumerate(signatures):
        if not sets[index]:
            continue
        for key in lsh.query(signature):
            other = int(key)
            if other <= index:
                continue
            estimate = estimated_jaccard(signature, signatures[other])
            if estimate >= threshold:
                a, b = sorted((docs[index].task_id, docs[other].task_id))
                pairs.append(NearDuplicate(
                    field=field, task_a=a, task_b=b, estimated_jaccard=round(estimate, 4),
                    jaccard=round(jaccard(sets[index], sets[other]), 4)))
    return sorted(pairs, key=lambda p: (-p.estimated_jaccard, p.task_a, p.task_b))
