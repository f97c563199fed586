"""Run every check on a staged repo and collect the findings.

The checks are the validate door's (:mod:`termgrade.validate.checks`): the built-in ones
are registered here, in the order they run; each is called as every check is,
``check(repo, report)``, and leaves what later checks need on ``repo.found``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from termgrade.builders.kinds import RepoKind, repo_kinds
from termgrade.builders.layout import RepoPaths
from termgrade.core.registry import resolve
from termgrade.records.arrow import schema_name
from termgrade.validate.archive_check import check_archives, check_registry
from termgrade.validate.cache import ValidationCache
from termgrade.validate.card_check import check_card, is_trace_config
from termgrade.validate.checks import (
    Found,
    RepoCheck,
    StagedRepo,
    ValidateOptions,
    checks,
    validate_check,
)
from termgrade.validate.findings import ValidationFinding, ValidationReport
from termgrade.validate.load_check import check_load, check_load_configs
from termgrade.validate.rows_check import SplitInfo, check_rows
from termgrade.validate.secrets_check import check_secrets
from termgrade.validate.traces_check import check_traces


def validate_repo(root: Path, *, load: bool = True, secrets: bool = True,
                  secrets_baseline: Path | None = None, cache: bool = True,
                  accept_baseline: bool = True) -> ValidationReport:
    """Check the card, files, rows, budgets, loading, agent traces, archives, registry and
    secrets, then every check registered after them (:mod:`termgrade.validate.checks`).

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
    options = ValidateOptions(load=load, secrets=secrets, secrets_baseline=secrets_baseline,
                              cache=cache, accept_baseline=accept_baseline)
    memo = ValidationCache(paths, enabled=cache)
    # The secret scan and the archive check are each a process per core: run together,
    # the one's serial parts (listing, hashing, judging) fill the other's idle cores.
    with ThreadPoolExecutor(max_workers=1) as beside:
        repo = StagedRepo(paths.root, options=options, found=Found(memo=memo, beside=beside))
        for check in checks().values():
            check(repo, report)
        for finish in repo.found.pending:
            finish()
    if memo.hits:
        report.notes.append(f"{memo.hits} check(s) skipped: their files are unchanged "
                            f"since they passed ({memo.path.name}; --no-cache to redo them)")
    memo.save(repo.found.used)
    return report


@validate_check("card")
def _card(repo: StagedRepo, report: ValidationReport) -> None:
    """The card's YAML and configs against the files (:mod:`.card_check`)."""
    configs = check_card(repo.paths, report)
    repo.found.traces = [c for c in configs if is_trace_config(repo.paths, c)]
    repo.found.configs = [c for c in configs if c not in repo.found.traces]


@validate_check("traces")
def _traces(repo: StagedRepo, report: ValidationReport) -> None:
    """The agent-trace configs (:mod:`.traces_check`)."""
    check_traces(repo.paths, repo.found.traces, report)


@validate_check("rows")
def _rows(repo: StagedRepo, report: ValidationReport) -> None:
    """Every parquet row against its schema, keys unique (:mod:`.rows_check`)."""
    found = repo.found
    found.infos = check_rows(repo.paths, found.configs, report, found.memo, found.used)


@validate_check("kinds")
def _kinds(repo: StagedRepo, report: ValidationReport) -> None:
    """Each repo kind's own checks, on a repo holding its rows (same shape as these)."""
    for kind in kinds_of(repo.found.infos):
        for name in kind.checks:
            check: RepoCheck = resolve(name)
            check(repo, report)


@validate_check("load")
def _load(repo: StagedRepo, report: ValidationReport) -> None:
    """``datasets.load_dataset`` of every config (skipped with ``load=False``)."""
    if not repo.options.load:
        return
    found = repo.found
    check_load(repo.paths, found.infos, report, found.memo, found.used)
    check_load_configs(repo.paths, [(c.name, list(c.splits)) for c in found.traces], report)


@validate_check("secrets")
def _secret_scan(repo: StagedRepo, report: ValidationReport) -> None:
    """The secret scan (skipped with ``secrets=False``), beside the archive check; its
    findings join the report when ``validate`` waits for it."""
    options, found = repo.options, repo.found
    if not options.secrets or found.memo is None:
        return
    args = (repo.paths, options.secrets_baseline, found.memo, options.accept_baseline)
    if found.beside is None:
        _merge(_secrets(*args), found, report)
        return
    scanned = found.beside.submit(_secrets, *args)
    found.pending.append(lambda: _merge(scanned.result(), found, report))


def _merge(scanned: tuple[ValidationReport, set[str]], found: Found,
           report: ValidationReport) -> None:
    findings, used = scanned
    report.merge(findings)
    found.used |= used


@validate_check("archives")
def _archives(repo: StagedRepo, report: ValidationReport) -> None:
    """Every task archive unpacked and checked like a task (:mod:`.archive_check`)."""
    found = repo.found
    found.task_ids = check_archives(repo.paths, found.infos, report, memo=found.memo,
                                    used=found.used)


@validate_check("registry")
def _registry(repo: StagedRepo, report: ValidationReport) -> None:
    """``registry.json`` against the task archives."""
    check_registry(repo.paths, repo.found.task_ids, report)


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
