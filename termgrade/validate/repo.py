"""Run every check on a staged repo and collect the findings."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from termgrade.builders.kinds import RepoKind, repo_kinds, resolve
from termgrade.builders.layout import RepoPaths
from termgrade.records.arrow import schema_name
from termgrade.validate.archive_check import check_archives, check_registry
from termgrade.validate.cache import ValidationCache
from termgrade.validate.card_check import check_card, is_trace_config
from termgrade.validate.findings import ValidationFinding, ValidationReport
from termgrade.validate.load_check import check_load, check_load_configs
from termgrade.validate.rows_check import SplitInfo, check_rows
from termgrade.validate.secrets_check import check_secrets
from termgrade.validate.traces_check import check_traces


def validate_repo(root: Path, *, load: bool = True, secrets: bool = True,
                  secrets_baseline: Path | None = None, cache: bool = True,
                  accept_baseline: bool = True) -> ValidationReport:
    """Check the card, files, rows, budgets, loading, agent traces, archives, registry and
    secrets.

    ``load=False`` skips the ``datasets.load_dataset`` round trips (they copy the data
    into a temporary cache); ``secrets=False`` skips the detect-secrets scan;
    ``secrets_baseline`` is a detect-secrets baseline of reviewed findings to accept
    (default: ``<repo>.secrets.baseline`` beside the repo, when it exists);
    ``accept_baseline=False`` accepts none of it (a baseline just written, not yet
    reviewed: every finding is reported).
    ``cache``: skip the row and load checks of parquet files, and the secret scan of text
    files, unchanged since they passed (by content hash, ``<repo>.validate-cache.json``
    beside the repo; see :mod:`termgrade.validate.cache`); ``cache=False`` checks
    everything and keeps no record.
    """
    paths = RepoPaths(Path(root).resolve())
    report = ValidationReport(root=str(paths.root))
    if not paths.root.is_dir():
        report.add(ValidationFinding("card", str(root), "no such directory"))
        return report
    if not paths.readme.is_file():
        # Nothing to check against: say so once instead of a row of vacuous "ok"s.
        report.add(ValidationFinding(
            "card", str(paths.readme), "missing: this is not a staged repo "
            "(stage one with `termgrade build ...`)"))
        return report
    configs = check_card(paths, report)
    traces = [c for c in configs if is_trace_config(paths, c)]
    configs = [c for c in configs if c not in traces]
    check_traces(paths, traces, report)
    memo = ValidationCache(paths, enabled=cache)
    used: set[str] = set()
    infos = check_rows(paths, configs, report, memo, used)
    for kind in kinds_of(infos):
        for check in kind.checks:
            resolve(check)(paths, report)
    if load:
        check_load(paths, infos, report, memo, used)
        check_load_configs(paths, [(c.name, list(c.splits)) for c in traces], report)
    # The secret scan and the archive check are each a process per core: run together,
    # the one's serial parts (listing, hashing, judging) fill the other's idle cores.
    with ThreadPoolExecutor(max_workers=1) as pool:
        scanned = pool.submit(_secrets, paths, secrets_baseline, memo,
                                                 accept_baseline) if secrets else None
        task_ids = check_archives(paths, infos, report, memo=memo, used=used)
        check_registry(paths, task_ids, report)
        if scanned is not None:
            found, secrets_used = scanned.result()
            report.merge(found)
            used |= secrets_used
    if memo.hits:
        report.notes.append(f"{memo.hits} check(s) skipped: their files are unchanged "
                            f"since they passed ({memo.path.name}; --no-cache to redo them)")
    memo.save(used)
    return report


def kinds_of(infos: list[SplitInfo]) -> list[RepoKind]:
    """The registered repo kinds whose row schemas the staged repo's parquet files name."""
    named = {info.row_schema for info in infos}
    return [kind for kind in repo_kinds()
            if any(schema_name(row.resolve_model()) in named for row in kind.rows)]


def _secrets(paths: RepoPaths, baseline: Path | None, memo: ValidationCache,
             accept_baseline: bool) -> tuple[ValidationReport, set[str]]:
    """The secret check on its own report (run beside the archive check)."""
    report = ValidationReport(root=str(paths.root))
    used: set[str] = set()
    if not accept_baseline:
        baseline = None
    elif baseline is None and paths.secrets_baseline.is_file():
        baseline = paths.secrets_baseline
    check_secrets(paths, report, baseline=baseline, memo=memo, used=used)
    return report, used
