"""The review: which of the agent's writes reach the scoring container, and which are
findings.

One pass over the container's writable layer (linear in its entries). With the task's
transfer set (:mod:`termgrade.scoring.review.transfer`), an entry outside it stays in the agent's
layer and is counted as left out (no finding: it never reaches the verifier); a
directory the set only passes through is made in the scoring container with the image's
metadata. An entry inside the set is the agent's work and is carried, unless it would
stand in for the verifier (:mod:`termgrade.scoring.review.standins`) or changes the verifier's
closure or the grader's paths: a finding, whether the agent added, modified, deleted or
retyped it. Only a directory the kernel copied up unchanged (its mode and owner equal the
image's) is no change at all, and the loader cache and bytecode caches are never
carried and no finding (see :data:`~termgrade.scoring.review.policy.KEPT_PRISTINE`). The
closure is also mounted read-only in the scoring container, so a finding missed here
still cannot change the verifier while it runs. The walk also keeps the run's footprint:
the top-most paths the agent changed (``verify`` records the reference solution's).
"""

from __future__ import annotations

import stat
import time
from collections.abc import Iterable

from termgrade.sandbox.base import ChangeKind
from termgrade.sandbox.overlay_diff import MAX_RELATIVE_BYTES, LowerView, UpperEntry, change_kind
from termgrade.scoring.errors import IntegrityBudgetError
from termgrade.scoring.review.accounts import merge_account_file
from termgrade.scoring.review.carried_links import judge_links
from termgrade.scoring.review.layer_review import (
    MAX_FOOTPRINT,
    MAX_LISTED_FINDINGS,
    MAX_LISTED_LEFT_OUT,
    LayerReview,
)
from termgrade.scoring.review.links_in_b import TRANSIENT_PREFIXES
from termgrade.scoring.review.lookup_order import makefile_near
from termgrade.scoring.review.pathset import MarkedDirs, PathSet
from termgrade.scoring.review.policy import KEPT_PRISTINE, GradingPolicy
from termgrade.scoring.review.standins import stands_in, startup_or_config, suspect_name
from termgrade.scoring.review.tests_programs import tests_programs_reach
from termgrade.scoring.review.transfer import ACCOUNT_FILES, TransferSet

__all__ = ["MAX_FOOTPRINT", "MAX_LISTED_LEFT_OUT", "LayerReview", "review_layer"]

QUIET_LEFT_OUT = frozenset({
    "/etc/passwd-", "/etc/group-", "/etc/shadow-", "/etc/gshadow-", "/etc/subuid-",
    "/etc/subgid-", "/etc/.pwd.lock", "/etc/ld.so.cache", "/var/cache/ldconfig/aux-cache"})
"""Backup, lock and cache files tools derive from what is merged or rebuilt (``useradd``'s
``/etc/passwd-`` and lock, ``ldconfig``'s cache): an image file changed here is not
carried and not listed as left out (B's own are made from what reaches it)."""
DEFAULT_BUDGET_S = 30.0
BUDGET_PER_ENTRY_S = 60e-6
"""The review's time budget grows by this much per entry walked (60 s a million): an
honest million-file layer is reviewed, an adversarial slow one is stopped."""


def _same_directory(entry: UpperEntry, lower: LowerView) -> bool:
    below = lower.lstat(entry.path)
    return (below is not None and stat.S_ISDIR(below.st_mode)
            and stat.S_IMODE(below.st_mode) == stat.S_IMODE(entry.mode)
            and (below.st_uid, below.st_gid) == (entry.uid, entry.gid))


def review_layer(
    entries: Iterable[UpperEntry],
    lower: LowerView,
    policy: GradingPolicy,
    *,
    grader_paths: tuple[str, ...] = (),
    budget_s: float = DEFAULT_BUDGET_S,
    transfer: TransferSet | None = None,
    standins: TransferSet | None = None,
) -> LayerReview:
    """Sort the agent's writes into work (carried), deletions, findings, and (with a
    ``transfer`` set) what lies outside the set: left in the agent's layer and counted.

    ``grader_paths`` are what the engine itself put into the container (its init, mount
    points): neither findings nor carried. ``standins``: with no ``transfer``, apply the
    stand-in review to every entry, with this set's asked-for paths (the review of B's
    layer after the verifier's processes, agent code among them, wrote to it). Raises
    IntegrityBudgetError past ``budget_s`` plus :data:`BUDGET_PER_ENTRY_S` per entry; the
    walk's own errors (DiffTooLargeError, OSError) propagate.
    """
    review = LayerReview()
    started = time.monotonic()
    engine = PathSet(grader_paths)
    plain: dict[str, bool] = {}
    image_dirs: dict[str, bool] = {}
    tops = _Tops(review, policy)
    reach: PathSet | None = None  # where the tests' image programs look (read when needed)
    for entry in entries:
        review.entries += 1
        if review.entries % 4096 == 0:
            allowed = budget_s + review.entries * BUDGET_PER_ENTRY_S
            if time.monotonic() - started > allowed:
                raise IntegrityBudgetError(
                    f"reviewing the agent's {review.entries:,} changes took over "
                    f"{allowed:.0f} s")
        if len(tops.blocked) and _inside_left_out(entry, transfer, engine, review, tops):
            continue
        if _copied_up_unchanged(entry, lower, tops, image_dirs):
            continue  # opened for writing, never written: B has the image's own
        created = False
        if transfer is not None and not transfer.carries_changes(entry.path):
            if tops.dropped.below(entry.path):  # inside a created directory left out
                review.held.append(entry.path)
                review.left_out += 1
                continue
            created = _created(entry, lower, tops)
            if not created or not transfer.carries_created(entry.path) \
                    or policy.in_closure(entry.path) or policy.grader_owned(entry.path) \
                    or policy.above_protected(entry.path):
                _outside(entry, lower, transfer, engine, review, tops)
                continue
            shadow = policy.watches(entry.path) and policy.shadows(
                entry.path, executable=bool(entry.mode & 0o111) and not entry.is_dir,
                is_dir=entry.is_dir, existed=False)
            if not shadow and stat.S_ISREG(entry.mode) and entry.nlink > 1 \
                    and transfer.tests_only(entry.path):
                shadow = ("a hard link the agent made where only the tests name a path: "
                          "what they write there would land in its other name")
            if shadow:  # created where the task asked for nothing: not carried, and said
                _leave_out(entry, transfer, review, tops, shadow, hard=True, lower=lower)
                continue
        if stat.S_ISREG(entry.mode):  # most entries: a file in a plain directory
            parent = entry.path.rpartition("/")[0] or "/"
            known = plain.get(parent)
            if known is None:  # once per directory; make may read a new file beside a makefile
                known = plain[parent] = parent not in engine and policy.plain_dir(parent) \
                    and not ((transfer or standins) is not None
                             and makefile_near(parent, lower))
            if known and not policy.named(entry.path) and entry.path not in engine.exact \
                    and not tops.withheld_below(entry.path) \
                    and not ((transfer or standins) is not None and (
                        suspect_name(entry.path) or policy.tool_env.watched(entry.path)
                        or policy.near_tests_program(entry.path)
                        or entry.path in (reach := reach or PathSet(tests_programs_reach(
                            lower, policy.path_dirs, policy.tests_words,
                            policy.tests_paths))))):
                review.carried.append(entry)
                review.replay.append(("carry", entry))
                review.carried_bytes += entry.size
                tops.changed(entry.path)
                if entry.path.startswith(TRANSIENT_PREFIXES):
                    review.transient.add(entry.path)
                continue
        verdict = _sort(entry, lower, policy, engine, review, created=created)
        if verdict != "hold" and tops.withheld_below(entry.path):
            verdict = "hold"  # below a finding: reviewed, never carried
        if verdict == "carry" and (transfer or standins) is not None:
            task_set = transfer or standins
            asked = task_set is not None and task_set.asked(entry.path)
            why = stands_in(entry, lower, policy, asked=asked,
                            named=task_set is not None and task_set.names(entry.path),
                            texts=task_set is not None and stat.S_ISLNK(entry.mode)
                            and task_set.in_texts(entry.path),  # read for links alone
                            created=created,
                            changes=task_set is not None and task_set.carries_changes(
                                entry.path),
                            changes_at=task_set.carries_changes if task_set else None,
                            names_at=task_set.names if task_set else None)
            if why and transfer is not None and (created or (
                    not asked and startup_or_config(entry.path))):
                # created where the task asked for nothing, or a start-up file or a tool's
                # configuration changed where only the working directory's rule carries
                # changes (a home as WORKDIR: `git config --global`, a line added to
                # ~/.bashrc, incidental to the work): not carried, and said
                hard = stands_in(entry, lower, policy, asked=True, named=True) is not None
                _leave_out(entry, transfer, review, tops, why, hard=hard, lower=lower)
                continue
            if why:
                review.add(change_kind(entry, lower), entry.path, why)
                verdict = "hold"
        if verdict == "carry" and stat.S_ISLNK(entry.mode):
            review.links[entry.path] = entry.host_path
        elif verdict == "carry" and entry.path.startswith(TRANSIENT_PREFIXES):
            review.transient.add(entry.path)
        if verdict != "unchanged" and entry.path not in engine:
            tops.changed(entry.path, covers=not _image_directory(entry, lower))
        if verdict == "carry":
            review.carried.append(entry)
            if stat.S_ISREG(entry.mode):
                review.carried_bytes += entry.size

        elif verdict == "whiteout":
            review.deleted.append(entry.path)
        if verdict == "hold" and transfer is not None and _special(entry) \
                and entry.path not in engine:
            _leave_out(entry, transfer, review, tops, "a FIFO, socket or device: the scoring "
                       "container gets none from the agent's work")
            continue
        if verdict == "hold":
            review.held.append(entry.path)
            if entry.is_dir and entry.path not in engine and (
                    entry.opaque or not _same_directory(entry, lower)):
                tops.withheld.add(entry.path)  # a finding: nothing below it reaches B
        else:
            review.replay.append((verdict, entry))
    if transfer is not None:  # B's layer after the tests holds their own links: not judged
        judge_links(review, lower, transfer, policy)
        _merge_accounts(review, lower, transfer)
    return review


def _special(entry: UpperEntry) -> bool:
    """A FIFO, socket or device the agent made (a whiteout is a deletion, not one)."""
    return not (entry.whiteout or entry.is_dir or stat.S_ISREG(entry.mode)
                or stat.S_ISLNK(entry.mode))


def _merge_accounts(review: LayerReview, lower: LowerView, transfer: TransferSet) -> None:
    """The carried account databases, merged into the image's (new users and groups
    only, :mod:`termgrade.scoring.review.accounts`); one that cannot be merged stays out."""
    new_users: frozenset[str] = frozenset()
    entries = sorted((e for e in review.carried if e.path in ACCOUNT_FILES),
                     key=lambda e: e.path != "/etc/passwd")  # its new users first
    for entry in entries:
        if not transfer.accounts(entry.path) or lower.lstat(entry.path) is None:
            continue
        review.carried_bytes -= entry.size if stat.S_ISREG(entry.mode) else 0
        carry, notes, added = merge_account_file(entry, lower, new_users)
        if entry.path == "/etc/passwd":
            new_users = frozenset(added)
        review.account_notes += notes
        if carry:
            review.carried_bytes += entry.size
            continue
        review.carried.remove(entry)
        review.replay = [(v, e) for v, e in review.replay if e is not entry]
        review.held.append(entry.path)


def _outside(entry: UpperEntry, lower: LowerView, transfer: TransferSet, engine: PathSet,
             review: LayerReview, tops: _Tops) -> None:
    """An entry outside the transfer set: a directory the set passes through is made in
    the scoring container (with the image's metadata); anything else stays in the agent's
    layer, counted as left out (a directory the kernel merely copied up is no change)."""
    if entry.path in engine or tops.withheld_below(entry.path):  # below a finding: held
        review.held.append(entry.path)
        return
    if entry.is_dir and transfer.above(entry.path):
        below = lower.lstat(entry.path)
        if below is None:  # a directory the agent made, which the set passes through
            review.replay.append(("ancestor", entry))
            tops.changed(entry.path)
            return
        if stat.S_ISDIR(below.st_mode) and not entry.opaque and transfer.asked_below(
                entry.path) and not _same_directory(entry, lower):
            # its mode or owner is part of the access to the asked-for path below it
            # (the permissions of a named file fixed where its directory denied them)
            review.replay.append(("carry", entry))
            review.carried.append(entry)
            tops.changed(entry.path, covers=False)
            return
        if stat.S_ISDIR(below.st_mode):  # made in B as the image has it
            review.replay.append(("ancestor", entry))
            if entry.opaque or not _same_directory(entry, lower):
                _ancestor_changed(entry, review, tops)
            return
    # anything else: a directory where the image has a file or link is a change of type
    review.held.append(entry.path)
    if entry.is_dir and not entry.opaque and not entry.too_deep \
            and _same_directory(entry, lower):
        return
    _leave_out(entry, transfer, review, tops, None, lower=lower)


def _image_directory(entry: UpperEntry, lower: LowerView) -> bool:
    """Is ``entry`` a directory where the image has one too (its mode or owner changed,
    or deleted and made anew)? What changed in it is recorded path by path."""
    if not entry.is_dir:
        return False
    below = lower.lstat(entry.path)
    return below is not None and stat.S_ISDIR(below.st_mode)


def _ancestor_changed(entry: UpperEntry, review: LayerReview, tops: _Tops) -> None:
    """An image directory the transfer set only passes through, changed (its mode or
    owner, or deleted and made anew): B has the image's directory there, so the change is
    left out, said, and in the footprint (a reference that makes it asks for it); what
    the set asks for below it is still carried."""
    tops.changed(entry.path, covers=False)
    review.left_out += 1
    if len(review.left_out_paths) < MAX_LISTED_LEFT_OUT:
        review.left_out_paths.append(entry.path)
        review.left_out_notes[entry.path] = (
            "a directory deleted and made anew" if entry.opaque else
            "a directory whose mode or owner changed") + (
            "; the scoring container has the image's here (the task names only paths "
            "below it)")


def _inside_left_out(entry: UpperEntry, transfer: TransferSet | None, engine: PathSet,
                     review: LayerReview, tops: _Tops) -> bool:
    """Is ``entry`` below a directory left out that B will not have as A has it (a
    stand-in, a directory where the image has a file or link, one deleted and made
    anew)? Then it is not carried either (B would otherwise show it under the image's
    entry, or in a directory made for it): left out, counted, said at that directory."""
    if not tops.blocked.below(entry.path):
        return False
    if transfer is None or entry.path in engine:
        review.held.append(entry.path)
    else:
        _leave_out(entry, transfer, review, tops, None)
    return True


def _leave_out(entry: UpperEntry, transfer: TransferSet, review: LayerReview, tops: _Tops,
               why: str | None, *, hard: bool = False, lower: LowerView | None = None) -> None:
    """Count ``entry`` as left out (it stays in the agent's layer), naming the top-most
    such paths, with why (a stand-in) or a hint (a name the task's text uses). With
    ``lower``, a directory that is a stand-in, or where the image has a file or link, or
    one the image has that was deleted and made anew, takes what is below it along: none
    of it is carried (B has the image's entry there, not the agent's directory; where the
    image has a directory merely changed in mode or owner, or none, B has or makes one)."""
    if review.held[-1:] != [entry.path]:
        review.held.append(entry.path)
    if entry.is_dir and lower is not None and (why is not None or (
            (below := lower.lstat(entry.path)) is not None
            and (entry.opaque or not stat.S_ISDIR(below.st_mode)))):
        tops.blocked.add(entry.path)
    if why is None and entry.path in QUIET_LEFT_OUT and not entry.is_dir:
        tops.changed(entry.path)  # in the footprint, never said: derived, not work
        return
    if entry.is_dir and why is not None:  # a stand-in directory: all of it stays out
        tops.dropped.add(entry.path)
    if hard and len(review.standins) < MAX_LISTED_FINDINGS:
        review.standins.append(f"{entry.path}: {why}")
    tops.changed(entry.path)
    review.left_out += 1
    if not tops.left_out.below(entry.path):
        tops.left_out.add(entry.path)
        if len(review.left_out_paths) < MAX_LISTED_LEFT_OUT:
            review.left_out_paths.append(entry.path)
            note = why or transfer.hint(entry.path,
                                        in_closure=tops.policy.in_closure(entry.path))
            if note:
                review.left_out_notes[entry.path] = note
    elif why is not None or tops.policy.in_closure(entry.path):
        # a stand-in, or a file in the verifier's closure, inside a directory left out
        # (`pip install --user` under /root/.local): said at its top
        top = next((p for p in review.left_out_paths if entry.path.startswith(f"{p}/")), None)
        if top is not None and top not in review.left_out_notes:
            said = why if why is not None else transfer.hint(entry.path, in_closure=True)
            review.left_out_notes[top] = f"{entry.path}{' ' if why else ': '}{said}"


def _copied_up_unchanged(entry: UpperEntry, lower: LowerView, tops: _Tops,
                         image_dirs: dict[str, bool]) -> bool:
    """Is ``entry`` an image file or link the kernel copied up as the image has it (a
    program opened it for writing and wrote nothing: ``sqlite3`` querying a named
    database)? No change, then: not carried, not in the footprint (a reference that only
    queried the database asks for nothing there), not left out. Looked up only in a
    directory the image has (``image_dirs``: one lookup per directory)."""
    if entry.whiteout or not (stat.S_ISREG(entry.mode) or stat.S_ISLNK(entry.mode)) \
            or tops.created.below(entry.path):
        return False
    parent = entry.path.rpartition("/")[0] or "/"
    known = image_dirs.get(parent)
    if known is None:
        below = lower.lstat(parent)
        known = image_dirs[parent] = below is not None and stat.S_ISDIR(below.st_mode)
    return known and lower.unchanged(entry)


def _created(entry: UpperEntry, lower: LowerView, tops: _Tops) -> bool:
    """Did the agent create ``entry`` (the image has nothing at its path)? Below a
    directory the agent created, everything is created (no lookup)."""
    if entry.whiteout:
        return False
    if tops.created.below(entry.path):
        return True
    if lower.lstat(entry.path) is not None:
        return False
    if entry.is_dir:
        tops.created.add(entry.path)
    return True


class _Tops:
    """The top-most changed paths of a walk (parents come first)."""

    def __init__(self, review: LayerReview, policy: GradingPolicy) -> None:
        self.review = review
        self.policy = policy
        self._marked = MarkedDirs()
        self.left_out = MarkedDirs()
        """The top-most left-out paths, marked."""
        self.created = MarkedDirs()
        """Directories the agent created (everything below them is created too)."""
        self.dropped = MarkedDirs()
        """Created directories left out as stand-ins (everything below them stays out)."""
        self.blocked = MarkedDirs()
        """Directories left out that B will not have as A has them (the image lacks one
        there, has a file or link there, or it was deleted and made anew): nothing below
        them is carried, all of it left out."""
        self.withheld = MarkedDirs()
        """Directories held as findings: what is below them is reviewed (a finding of its
        own, maybe), never carried."""

    def withheld_below(self, path: str) -> bool:
        return len(self.withheld) > 0 and self.withheld.below(path)

    def changed(self, path: str, *, covers: bool = True) -> None:
        """``path`` changed: in the footprint unless a changed directory above it covers
        it. ``covers``: it stands for what is below it too (not an image directory whose
        mode or owner alone changed: what changed in it is recorded path by path, so a
        reference that chmods a directory, or empties and refills it, asks for that
        directory, not all the image has in it)."""
        if self._marked.below(path):
            return
        if covers:
            self._marked.add(path)
        if self.policy.in_closure(path) or self.policy.grader_owned(path):
            return  # never a deliverable: the footprint does not carry the verifier
        if len(self.review.footprint) < MAX_FOOTPRINT:
            self.review.footprint.append(path)


def _sort(entry: UpperEntry, lower: LowerView, policy: GradingPolicy, engine: PathSet,
          review: LayerReview, *, created: bool = False) -> str:
    """``carry``, ``whiteout`` (a deletion replayed), ``unchanged`` (a directory the
    kernel copied up as the image had it), or ``hold`` (stays in the agent's layer: a
    finding, the engine's, or a FIFO, socket or device)."""
    path = entry.path
    if entry.too_deep:
        review.add("!", path, f"nested past {MAX_RELATIVE_BYTES} bytes of path; not graded")
        return "hold"
    if path in engine or path in KEPT_PRISTINE:
        return "hold"
    protected = policy.in_closure(path) or policy.grader_owned(path)
    replaced = entry.whiteout or entry.opaque or not entry.is_dir
    if protected or (replaced and policy.above_protected(path)):
        if entry.is_dir and not entry.opaque and _same_directory(entry, lower):
            return "hold"  # copied up because something below it changed
        if policy.silently_kept(path):
            return "hold"
        kind = change_kind(entry, lower)
        where = ("in a directory the grader resets" if policy.grader_owned(path)
                 else "in the verifier's closure (what the verifier runs)")
        review.add(kind, path, f"{_verb(kind)} {where}")
        return "hold"
    looked = entry.is_dir or entry.whiteout or policy.watches(path)
    kind = change_kind(entry, lower) if looked and not created else ChangeKind.ADDED
    why = looked and policy.shadows(
        path, executable=bool(entry.mode & 0o111) and not entry.is_dir,
        is_dir=entry.is_dir, existed=kind is not ChangeKind.ADDED)
    if why:
        review.add(kind, path, why)
        return "hold"
    if entry.whiteout:
        return "whiteout"
    if entry.opaque:
        review.deleted.append(path)
    if entry.is_dir and kind is ChangeKind.MODIFIED and not entry.opaque \
            and _same_directory(entry, lower):
        return "unchanged"  # copied up unchanged: the scoring container has it already
    if not (entry.is_dir or stat.S_ISREG(entry.mode) or stat.S_ISLNK(entry.mode)):
        return "hold"  # FIFOs, sockets and devices are not carried
    return "carry"


def _verb(kind: ChangeKind) -> str:
    return {ChangeKind.ADDED: "added", ChangeKind.MODIFIED: "modified",
            ChangeKind.DELETED: "deleted", ChangeKind.TYPE: "changed in type"}[kind]
