"""``termgrade view``: look at a grading run in a browser.

A run folder (``trials.jsonl`` of ``grade`` or ``ingest``, optional labels) is indexed once
(:mod:`.index`): per task x model aggregates from the same functions ``labels`` and
``report`` use (:func:`termgrade.labels.compute_labels`,
:func:`termgrade.passrates.summary.summarize_configs`,
:func:`termgrade.records.near_miss.near_miss`),
and a trial index of byte offsets, so a trial page reads one line of the file. Pages are
rendered on the server (:mod:`.pages`, :mod:`.trial_page`), paged, and escaped; they are
served on 127.0.0.1 (:mod:`.server`) or written as static HTML (:mod:`.export`).
"""

from termgrade.view.index import RunIndex, load_run
from termgrade.view.sources import RunSources, find_sources

__all__ = ["RunIndex", "RunSources", "find_sources", "load_run"]
