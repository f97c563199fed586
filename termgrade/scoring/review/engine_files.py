"""The engine's per-container files (``/etc/hosts``, ``/etc/hostname``, ``/etc/resolv.conf``)
in the transfer rule.

Each container gets its own copy of these files, bind-mounted over the image's
(:mod:`termgrade.sandbox.etc_files`), so an agent's edit of ``/etc/hosts`` never lands in
its writable layer and the review never sees it. They are judged here as image files
changed: carried into the scoring container B (its own copy written before it starts)
only where the task asks for the path (named by the instruction, declared, changed by the
reference solution); otherwise said in ``left_out``, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping

from termgrade.sandbox.etc_files import MAX_ENGINE_FILE
from termgrade.scoring.review.integrity import MAX_FOOTPRINT, MAX_LISTED_LEFT_OUT, LayerReview
from termgrade.scoring.review.transfer import TransferSet

__all__ = ["NOT_ASKED", "sort_engine_files"]

NOT_ASKED = ("the engine's per-container file: name it in the instruction to have it "
             "carried")
TOO_LARGE = f"over {MAX_ENGINE_FILE >> 20} MiB: not carried"


def sort_engine_files(changed: Mapping[str, bytes | None], transfer: TransferSet | None,
                      review: LayerReview) -> dict[str, bytes]:
    """Of the engine files the agent changed (``changed``: path to content, None when too
    large), those B gets (path to content); the rest counted and named in ``review``'s
    left-out entries. Every changed one joins the footprint (a reference solution's edit
    is then asked for). With no transfer set (the rule switched off) all are carried."""
    carried: dict[str, bytes] = {}
    for path, data in sorted(changed.items()):
        if path not in review.footprint and len(review.footprint) < MAX_FOOTPRINT:
            review.footprint.append(path)
        asked = transfer is None or transfer.asked(path)
        if asked and data is not None:
            carried[path] = data
            continue
        review.left_out += 1
        if len(review.left_out_paths) < MAX_LISTED_LEFT_OUT:
            review.left_out_paths.append(path)
            review.left_out_notes[path] = TOO_LARGE if asked else NOT_ASKED
    return carried
