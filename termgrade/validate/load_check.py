"""Every config and split loads with ``datasets.load_dataset`` (in memory and streaming),
with the features of its fixed schema and the row count of its files.

Memory is bounded at any repo size: a split whose parquet files total more than
:data:`IN_MEMORY_BYTES` is loaded in memory by its key column only (``columns=``: the
non-streaming path still resolves, prepares and counts every file), and its full features
and first row come from the streaming load, which reads one row group at a time. A
smaller split is loaded in memory whole.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from termgrade.builders.layout import RepoPaths
from termgrade.builders.rows import schema_for
from termgrade.validate.cache import ValidationCache
from termgrade.validate.findings import ValidationFinding, ValidationReport
from termgrade.validate.rows_check import SplitInfo
from termgrade.validate.schemas import SCHEMAS

IN_MEMORY_BYTES = 256 * 1024**2
"""A split whose parquet files total more bytes than this is loaded in memory by its key
column only (the whole in-memory load of the 36,144-trial trajectories peaked at 1.3 GiB)."""


def _expected_features(row_schema: str) -> Any:
    from datasets import Features

    return Features.from_arrow_schema(schema_for(SCHEMAS[row_schema]))


def _split_bytes(info: SplitInfo) -> int:
    return sum(path.stat().st_size for path in info.files if path.is_file())


def _check_split(root: Path, info: SplitInfo, cache: str, report: ValidationReport) -> None:
    from datasets import Features, load_dataset

    where = f"README.md configs[{info.config}]/{info.split}"
    expected = _expected_features(info.row_schema) if info.row_schema else None
    key = next(iter(expected)) if expected is not None else None
    whole = key is None or _split_bytes(info) <= IN_MEMORY_BYTES
    columns = None if whole else [key]
    try:
        table = load_dataset(str(root), info.config, split=info.split, cache_dir=cache,
                             columns=columns)
    except Exception as exc:
        report.add(ValidationFinding(
            "load", where, f"load_dataset failed: {type(exc).__name__}: {exc}"))
        return
    if table.num_rows != info.rows:
        report.add(ValidationFinding("load", where, f"load_dataset gave {table.num_rows} rows, "
                                          f"the files hold {info.rows}"))
    loaded = expected if whole or expected is None else Features({key: expected[key]})
    if loaded is not None and table.features != loaded:
        report.add(ValidationFinding("load", where, "features differ from the fixed schema: "
                                          f"{table.features} != {loaded}"))
    del table
    if not whole and expected is not None and info.row_schema:
        # The key-column load saw one column: the others' features as datasets' parquet
        # reader infers them from each file (streaming may report the card's instead).
        import pyarrow.parquet as pq

        # Arrow types only: a schema's "huggingface" metadata would answer for them.
        want = Features.from_arrow_schema(schema_for(SCHEMAS[info.row_schema]).remove_metadata())
        for path in info.files:
            if Features.from_arrow_schema(pq.read_schema(path).remove_metadata()) != want:
                report.add(ValidationFinding(
                    "load", where, f"{path.name}: features differ from the "
                    "fixed schema"))
    try:
        stream = load_dataset(str(root), info.config, split=info.split, streaming=True)
        features = stream.features
        first = next(iter(stream), None)
        counted = load_dataset(str(root), info.config, split=info.split, streaming=True,
                               columns=[key] if key else None)
        n = sum(1 for _ in counted)
    except Exception as exc:
        report.add(ValidationFinding(
            "load", where, f"streaming load failed: {type(exc).__name__}: {exc}"))
        return
    if expected is not None and features is not None and features != expected:
        report.add(ValidationFinding(
            "load", where, "streaming features differ from the fixed schema"))
    if n != info.rows or (info.rows and first is None):
        report.add(ValidationFinding(
            "load", where, f"streaming gave {n} rows, the files hold {info.rows}"))


def check_load(paths: RepoPaths, infos: list[SplitInfo], report: ValidationReport,
               cache: ValidationCache | None = None, used: set[str] | None = None) -> None:
    """``cache``: a config split whose files all passed this check before, unchanged, is not
    loaded again; ``used`` collects the cache entries this run relied on or earned."""
    import datasets

    datasets.disable_progress_bars()
    cache = cache or ValidationCache(paths, enabled=False)
    used = used if used is not None else set()
    before = len(report.findings)
    with tempfile.TemporaryDirectory(prefix="termgrade-validate-") as hf_cache:
        for info in infos:
            key = cache.load_key(info.config, info.split, info.files)
            if cache.hit(key):
                used.add(key)
                continue
            found = len(report.findings)
            _check_split(paths.root, info, hf_cache, report)
            if len(report.findings) == found:
                cache.remember(key)
                used.add(key)
    report.record("load", f"{len(infos)} config/split(s) load with datasets (in memory, by key "
                          f"column over {IN_MEMORY_BYTES // 1024**2} MiB, and streaming) with "
                          "the expected features and counts", before)


def check_load_configs(paths: RepoPaths, configs: list[tuple[str, list[str]]],
                       report: ValidationReport) -> None:
    """Each ``(config, splits)`` that the row checks do not cover (not parquet rows)
    loads with ``datasets.load_dataset``, as a user would load it; a failure is a finding
    with ``datasets``' own error."""
    import datasets
    from datasets import load_dataset

    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory(prefix="termgrade-validate-") as hf_cache:
        for config, splits in configs:
            for split in splits:
                try:
                    load_dataset(str(paths.root), config, split=split, cache_dir=hf_cache)
                except Exception as exc:
                    report.add(ValidationFinding(
                        "load", f"README.md configs[{config}]/{split}",
                        f"load_dataset failed: {type(exc).__name__}: {exc}"))
