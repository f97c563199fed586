"""The agent's carried symlinks, judged by where they resolve in the scoring container once
the whole walk is known (:func:`judge_links`): one into the grader's paths or through a
per-reader magic link is a finding; one that shows the agent's work where a tool looks is
judged as that work would be there; one only the tests' own writes could fill is left
out, said; one to a file of the image's is watched while the tests run."""

from __future__ import annotations

import bisect
import dataclasses
import stat

from termgrade.sandbox.base import ChangeKind
from termgrade.sandbox.overlay_diff import LowerView, UpperEntry
from termgrade.scoring.review.layer_review import MAX_LISTED_LEFT_OUT, LayerReview
from termgrade.scoring.review.links_in_b import carried_link, link_target_in_b
from termgrade.scoring.review.policy import GradingPolicy
from termgrade.scoring.review.standins import stands_in
from termgrade.scoring.review.transfer import TransferSet

__all__ = ["RUNTIME_TREES", "judge_links"]

RUNTIME_TREES = ("/dev/", "/proc/", "/sys/")
"""What the engine and the kernel provide in every container at its start (a link to
``/dev/null`` or ``/proc/self/fd/1`` is not dangling)."""


def judge_links(review: LayerReview, lower: LowerView, transfer: TransferSet,
                 policy: GradingPolicy) -> None:
    """Every carried symlink judged by where it resolves in the scoring container, once
    the whole walk is known (a link may resolve through one carried after it): one into
    the grader's paths, through a per-reader magic link or to a transient path B lacks is
    a finding; one B could only fill by the tests' own writes (a link the agent created at
    a path only the tests name, or to a path B lacks at its start) is left out, said."""
    if not review.links:
        return
    present: dict[str, UpperEntry] | None = None
    ordered: list[str] | None = None
    bad: dict[str, str] = {}
    carried: set[str] = set()

    def carried_paths() -> set[str]:
        if not carried:
            carried.update(e.path for e in review.carried)
        return carried

    out: dict[str, str] = {}
    for path, host in review.links.items():
        why = carried_link(path, host, lower, review.links, review.transient)
        if why:
            bad[path] = why
            continue
        final = link_target_in_b(path, host, lower, review.links)
        if transfer.tests_only(path) and lower.lstat(path) is None:
            # carried when it resolves to a file B has at its start (a unit's `.wants`
            # link, a tool linked into PATH), watched: a write of the tests through it
            # changes that file, a finding; to a directory, or to nothing, left out
            kind = _kind_in_b(final, review, lower)
            if kind != "file":
                out[path] = ("a link the agent made at a path only the tests name, to "
                             f"{'a directory' if kind == 'dir' else 'nothing B has'}: what "
                             "they write there would land where it points")
                continue
            review.watched_links[path] = str(final)
        elif final is not None and lower.lstat(path) is None and _image_file(final, lower) \
                and final not in carried_paths():
            # a link the agent made to a file of the image's (an answer linked to where the
            # tests write their expected value): watched too, wherever the link lies
            review.watched_links[path] = str(final)
        if final is None or final in review.links or final.startswith(RUNTIME_TREES):
            continue  # the engine's and the kernel's
        if present is None:
            present = {e.path: e for e in review.carried}
        if final in present:
            if ordered is None:
                ordered = sorted(present)
            why = _through_link(path, final, present, ordered, lower, policy,
                                asked=transfer.asked(path))
            if why:
                out[path] = why
        elif lower.lstat(final) is None:
            out[path] = (f"a link to {final}, which the scoring container lacks at its "
                         "start (only the tests' run could make it)")
    for path, why in bad.items():
        review.add(ChangeKind.ADDED if lower.lstat(path) is None else ChangeKind.MODIFIED,
                   path, why)
        review.held.append(path)  # a symlink is a leaf: putting it back after its parents
    for path, why in out.items():
        review.held.append(path)
        review.left_out += 1
        if len(review.left_out_paths) < MAX_LISTED_LEFT_OUT:
            review.left_out_paths.append(path)
            review.left_out_notes[path] = why
    gone = bad.keys() | out.keys()
    if gone:
        review.carried = [e for e in review.carried if e.path not in gone]
        review.replay = [(v, e) for v, e in review.replay if e.path not in gone]


def _image_file(path: str, lower: LowerView) -> bool:
    below = lower.lstat(path)
    return below is not None and stat.S_ISREG(below.st_mode)


def _kind_in_b(final: str | None, review: LayerReview, lower: LowerView) -> str | None:
    """What ``final`` is in B at its start: ``file`` (anything but a directory), ``dir``,
    or None (B lacks it, or the link loops)."""
    if final is None or final in review.links:
        return None
    entry = next((e for e in review.carried if e.path == final), None)
    if entry is not None:
        return "dir" if entry.is_dir else "file"
    if final in review.deleted:
        return None
    found = lower.lstat(final)
    if found is None:
        return None
    return "dir" if stat.S_ISDIR(found.st_mode) else "file"


MAX_THROUGH_LINK = 20_000
"""Carried entries re-judged below one directory link (past this many, the link is left
out: a tree that large behind a link in a system tree is no plain deliverable)."""


def _through_link(link: str, final: str, present: dict[str, UpperEntry],
                  ordered: list[str], lower: LowerView, policy: GradingPolicy, *,
                  asked: bool) -> str | None:
    """Why the agent's work a carried link resolves to would stand in for something when
    seen at the link's path (where a tool looks), or None: a link judged by where it
    resolves, the stand-in rules applied to what it shows. ``/usr/<triplet>/bin/as`` as a
    link to ``/srv/as``, or ``/usr/<triplet>`` as a link to a directory holding ``bin/as``,
    is what a real file there would be."""
    target = present[final]
    below = [target]
    if target.is_dir:  # the carried paths under it: one range of the sorted paths ('0'
        # follows '/'), so many directory links (a pnpm tree) cost no walk each
        start = bisect.bisect_left(ordered, final + "/")
        end = bisect.bisect_left(ordered, final + "0", start)
        below = [present[p] for p in ordered[start:end]]
    if len(below) > MAX_THROUGH_LINK:
        return f"a link to {final}, a tree of over {MAX_THROUGH_LINK:,} entries"
    for entry in below:
        seen = link + entry.path[len(final):]
        shown = dataclasses.replace(entry, path=seen)
        why = (policy.watches(seen) and policy.shadows(
            seen, executable=bool(entry.mode & 0o111) and not entry.is_dir,
            is_dir=entry.is_dir, existed=lower.lstat(seen) is not None)) or stands_in(
            shown, lower, policy, asked=asked, created=True)
        if why:
            return f"through this link, {seen} {why}"
    return None
