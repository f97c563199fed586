"""The generation funnel the paper reports: candidates -> ... -> kept, with the share kept.

A candidate is counted at every stage its last round reached:

``parsed``         its answer followed the format and named only safe files
``built``          its image built offline (and the task loaded)
``oracle_passed``  the reference solution passed at least one run
``nop_failed``     the untouched container failed (the tests measure something)
``not_flaky``      the reference solution passed every run: verdict ``verified``
``audit_clean``    no static-check failure, near-duplicate or contamination
``kept``           written to ``kept/``
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from termgrade.generate.records import CandidateRecord
from termgrade.records.version import RecordFormat
from termgrade.verify.verdict import Verdict

STAGES = ("candidates", "parsed", "built", "oracle_passed", "nop_failed", "not_flaky",
          "audit_clean", "kept")
FUNNEL_SCHEMA_VERSION = "1.0"
FUNNEL_FORMAT = RecordFormat(schema="generation_funnel", version=FUNNEL_SCHEMA_VERSION,
                             writer="termgrade generate")
PAPER_SHARE_KEPT = 1004 / 66165
"""The paper's share kept: 66,165 candidate task directories -> 1,004 tasks (1.5%)."""


def stages_reached(record: CandidateRecord) -> int:
    """How many of :data:`STAGES` ``record`` reached (1: only ``candidates``)."""
    last = record.last
    if last.verify is None:
        return 1
    verify = last.verify
    built = verify.verdict is not Verdict.BUILD_FAILED and "build" in verify.durations
    if not built:
        return 2
    if not any(r is not None and r >= 1.0 for r in verify.oracle_rewards) \
            or verify.verdict is Verdict.ERROR:
        return 3
    if verify.verdict is Verdict.VACUOUS or verify.verdict is Verdict.HACKABLE:
        return 4
    if verify.verdict is not Verdict.VERIFIED:
        return 5
    return 8 if record.kept else 6


def _drop_kind(record: CandidateRecord) -> str:
    """The outcome, or for a verified candidate the audit's first finding's kind
    (``audit:near-duplicate``, ``audit:contamination``, ``audit:<static check>``)."""
    if not record.verified:
        return record.outcome
    if not record.audit_findings:
        return "audit:not audited"
    first = record.audit_findings[0]
    return "audit:" + ("near-duplicate" if first.startswith("near-duplicate")
                       else first.split(":", 1)[0])


class FunnelStage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    stage: str
    count: int = Field(ge=0)
    share: float = Field(description="count / candidates (0 with no candidates).")


class Funnel(BaseModel):
    """``funnel.json``."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Annotated[str, FUNNEL_FORMAT] = Field(FUNNEL_SCHEMA_VERSION)
    stages: list[FunnelStage]
    share_kept: float = Field(description="kept / candidates.")
    paper_share_kept: float = Field(PAPER_SHARE_KEPT, description="1,004 / 66,165.")
    drops: dict[str, int] = Field(
        description="Candidates not kept, by outcome (verified ones by audit finding kind).")
    seconds: dict[str, float] = Field(
        description="Summed over candidates: model, build, verify, container_wait.")

    @property
    def counts(self) -> dict[str, int]:
        return {s.stage: s.count for s in self.stages}


def funnel(records: Sequence[CandidateRecord]) -> Funnel:
    reached = [stages_reached(r) for r in records]
    total = len(records)
    stages = [FunnelStage(stage=name, count=sum(1 for n in reached if n > i),
                          share=round(sum(1 for n in reached if n > i) / total, 6)
                          if total else 0.0)
              for i, name in enumerate(STAGES)]
    drops = Counter(_drop_kind(r) for r in records if not r.kept)
    seconds = {key: round(sum(r.seconds(f"{key}_s") for r in records), 3)
               for key in ("model", "build", "verify", "container_wait")}
    return Funnel(stages=stages, share_kept=stages[-1].share, drops=dict(sorted(drops.items())),
                  seconds=seconds)


def funnel_png(result: Funnel, title: str = "Generation funnel") -> bytes:
    """Horizontal bars, one per stage, labelled with the count and the share."""
    from matplotlib.figure import Figure

    fig: Any = Figure(figsize=(7.0, 3.6), dpi=110)
    fig.subplots_adjust(left=0.2, right=0.8, bottom=0.12, top=0.86)
    ax = fig.subplots()
    names = [s.stage.replace("_", " ") for s in result.stages][::-1]
    counts = [s.count for s in result.stages][::-1]
    ax.barh(names, counts, color="tab:blue")
    top = max([*counts, 1])
    for y, stage in enumerate(result.stages[::-1]):
        ax.text(stage.count + top * 0.01, y, f"{stage.count} ({stage.share:.1%})",
                va="center", fontsize=8)
    ax.set_xlim(0, top * 1.25)
    ax.set_xlabel("candidates", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.set_title(f"{title}: {result.share_kept:.1%} kept "
                 f"(paper: {result.paper_share_kept:.1%})", fontsize=10)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
