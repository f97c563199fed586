"""Contamination: for each task of ours, the closest external task by word n-gram overlap.

External tasks (Harbor or Terminal-Bench format, e.g. a Terminal-Bench checkout) are
indexed once per field: each word n-gram maps to the external tasks holding it. For one
of our tasks the index gives, in one pass over its n-grams, how many it shares with
every external task; the closest is the one with the highest score
``max(|A ∩ B| / |A|, |A ∩ B| / |B|)`` (containment either way, so a copy that was
trimmed or padded still scores high). Ties go to the external id that sorts first.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from termgrade.audit.documents import AuditDoc
from termgrade.audit.neardup import FIELD_TEXT
from termgrade.audit.records import ContaminationMatch, TextField
from termgrade.audit.textsim import shingles


@dataclass
class ExternalIndex:
    """An inverted n-gram index over external tasks for one field."""

    field: TextField
    ngram: int
    docs: list[AuditDoc]
    sizes: list[int]
    postings: dict[str, list[int]]

    @classmethod
    def build(cls, docs: Sequence[AuditDoc], field: TextField, ngram: int) -> ExternalIndex:
        postings: dict[str, list[int]] = defaultdict(list)
        sizes = []
        for index, doc in enumerate(docs):
            grams = shingles(FIELD_TEXT[field](doc), ngram)
            sizes.append(len(grams))
            for gram in grams:
                postings[gram].append(index)
        return cls(field, ngram, list(docs), sizes, dict(postings))

    def closest(self, doc: AuditDoc, threshold: float) -> ContaminationMatch | None:
        """The best-scoring external task for ``doc``; None when nothing is shared."""
        grams = shingles(FIELD_TEXT[self.field](doc), self.ngram)
        shared: Counter[int] = Counter()
        for gram in grams:
            shared.update(self.postings.get(gram, ()))
        if not shared:
            return None

        def score(index: int) -> tuple[float, str]:
            common = shared[index]
            best = max(common / len(grams), common / self.sizes[index])
            return -best, self.docs[index].task_id

        best = min(shared, key=score)
        common = shared[best]
        forward, reverse = common / len(grams), common / self.sizes[best]
        return ContaminationMatch(
            field=self.field, external_id=self.docs[best].task_id,
            external_path=str(self.docs[best].root), containment=round(forward, 4),
            reverse_containment=round(reverse, 4), flagged=max(forward, reverse) >= threshold)
