"""What the review of a layer found (:func:`termgrade.scoring.review.integrity.review_layer`):
the findings, what is carried into the scoring container and in which order, what is
left out and why, the run's footprint and the links to judge once the walk is done."""

from __future__ import annotations

from dataclasses import dataclass, field

from termgrade.sandbox.base import ChangeKind
from termgrade.sandbox.overlay_diff import UpperEntry

__all__ = ["MAX_FOOTPRINT", "MAX_LISTED_FINDINGS", "MAX_LISTED_LEFT_OUT", "LayerReview"]

MAX_LISTED_FINDINGS = 50
"""Findings named one by one; past this many, one line counts the rest."""
MAX_FOOTPRINT = 500
"""Top-most changed paths kept as a run's footprint (``verify`` records the reference's)."""
MAX_LISTED_LEFT_OUT = 20
"""Top-most left-out paths named in a result; the count covers all of them."""


@dataclass
class LayerReview:
    findings: list[str] = field(default_factory=list)
    finding_paths: list[str] = field(default_factory=list)
    """The path of each of ``findings``, in order."""
    unlisted: int = 0
    carried: list[UpperEntry] = field(default_factory=list)
    """The agent's changes that reach the scoring container, parents first."""
    deleted: list[str] = field(default_factory=list)
    """Paths the agent deleted (or replaced wholesale: opaque dirs, which are carried too)."""
    entries: int = 0
    carried_bytes: int = 0
    """Apparent size of the carried regular files (a sparse file counts in full)."""
    replay: list[tuple[str, UpperEntry]] = field(default_factory=list)
    """What reaches the scoring container, in walk order (parents first): ``carry``
    entries, ``whiteout`` deletions as the layer records them, and ``unchanged``
    directories (the kernel copied them up as the image had them because something below
    changed: no change themselves, but carried as one piece with their contents)."""
    held: list[str] = field(default_factory=list)
    """What stays in the agent's layer, in walk order: findings, the engine's entries,
    FIFOs, sockets and devices, what lies outside the transfer set, and everything below
    such a directory."""
    left_out: int = 0
    """Entries the agent changed outside the transfer set (not carried, no finding)."""
    left_out_paths: list[str] = field(default_factory=list)
    """The top-most of them (at most :data:`MAX_LISTED_LEFT_OUT`)."""
    footprint: list[str] = field(default_factory=list)
    """The top-most paths the agent changed (at most :data:`MAX_FOOTPRINT`)."""
    left_out_notes: dict[str, str] = field(default_factory=dict)
    """Why a listed left-out path was not carried (a stand-in), or a hint that it looks
    like the deliverable (its name is one the task's text uses)."""
    account_notes: list[str] = field(default_factory=list)
    """Changes to the account databases that were left out (the image's own entries, a
    new user with a login shell the image does not list)."""
    standins: list[str] = field(default_factory=list)
    """Created entries left out because they would stand in for what the tests trust even
    where a task asked for them (``path: why``, at most :data:`MAX_LISTED_FINDINGS`): a
    reference solution that makes one is tampering. A start-up file or a tool's
    configuration is a stand-in only where nothing asks for it, and is not listed here."""
    links: dict[str, str] = field(default_factory=dict)
    """Carried symlinks: container path -> host path (judged once the walk is done)."""
    watched_links: dict[str, str] = field(default_factory=dict)
    """Links the agent created at a path only the tests name, carried: link -> the file it
    resolves to in B, which must not change while the tests run (a write through the link
    would land in it: :mod:`termgrade.scoring.verifier.during`)."""
    transient: set[str] = field(default_factory=set)
    """Carried entries in transient directories (a symlink there is not dangling)."""

    def add(self, kind: ChangeKind | str, path: str, why: str) -> None:
        if len(self.findings) < MAX_LISTED_FINDINGS:
            label = kind.value if isinstance(kind, ChangeKind) else kind
            self.findings.append(f"{label} {path}: {why}")
            self.finding_paths.append(path)
        else:
            self.unlisted += 1

    def left_out_summary(self) -> str | None:
        """One line: how many changes were left out, and the top-most of them."""
        if not self.left_out:
            return "; ".join(self.account_notes) or None
        named = [f"{path} ({self.left_out_notes[path]})" if path in self.left_out_notes
                 else path for path in self.left_out_paths]
        more = named + (["..."] if self.left_out > len(self.left_out_paths)
                        and len(self.left_out_paths) >= MAX_LISTED_LEFT_OUT else [])
        return "; ".join([f"{self.left_out:,} changed entries outside the transfer set were "
                          f"not carried: {', '.join(more)}", *self.account_notes])

    def all_findings(self) -> list[str]:
        more = [f"... and {self.unlisted} more findings"] if self.unlisted else []
        return sorted(self.findings) + more
