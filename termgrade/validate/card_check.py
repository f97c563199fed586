"""The card: its YAML parses (ours and huggingface_hub's reader), its ``configs`` match
the data files one to one, files are named ``<split>-NNNNN-of-MMMMM.parquet`` with a
complete sequence, and parquet is the only data format (under ``data/``; a ``traces``
config over ``traces/**/*.jsonl`` agent traces is checked by :mod:`.traces_check`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from termgrade.builders.card import split_front_matter
from termgrade.builders.layout import PARQUET_NAME, RepoPaths
from termgrade.builders.traces import TRACES_DIR
from termgrade.validate.findings import ValidationFinding, ValidationReport


@dataclass
class ConfigFiles:
    name: str
    default: bool
    splits: dict[str, list[Path]] = field(default_factory=dict)


MODEL_CARD_FIELDS = ("base_model", "library_name")
"""A card with these and no ``configs`` is a model repo's (``build checkpoint-card``)."""


def is_model_card(meta: dict[str, object], paths: RepoPaths) -> bool:
    """A model repo: its card names a base model and a library, and it holds no data."""
    return ("configs" not in meta and all(meta.get(f) for f in MODEL_CARD_FIELDS)
            and not paths.data_dir.exists())


def is_trace_config(paths: RepoPaths, config: ConfigFiles) -> bool:
    """A config whose files are all agent traces under ``traces/`` (JSONL, not parquet
    rows): :mod:`.traces_check` checks them, the row and load checks skip them."""
    files = [f for split in config.splits.values() for f in split]
    return bool(files) and all(
        f.suffix == ".jsonl" and paths.rel(f).startswith(f"{TRACES_DIR}/") for f in files)


def _hub_parses(readme: Path, *, model: bool = False) -> str | None:
    from huggingface_hub import DatasetCard, ModelCard

    try:
        (ModelCard if model else DatasetCard).load(readme)
    except Exception as exc:
        return f"huggingface_hub cannot read the card: {exc}"
    return None


def _configs(paths: RepoPaths, raw: object, report: ValidationReport) -> list[ConfigFiles]:
    readme = paths.rel(paths.readme)
    if not isinstance(raw, list) or not raw:
        report.add(ValidationFinding("card", readme, "YAML has no `configs` list", field="configs"))
        return []
    configs = []
    for i, entry in enumerate(raw):
        where = f"configs.{i}"
        if not isinstance(entry, dict) or not isinstance(entry.get("config_name"), str):
            report.add(ValidationFinding("card", readme, "config without config_name", field=where))
            continue
        config = ConfigFiles(entry["config_name"], bool(entry.get("default", False)))
        for j, spec in enumerate(entry.get("data_files") or []):
            if not isinstance(spec, dict) or not {"split", "path"} <= set(spec):
                report.add(ValidationFinding(
                    "card", readme, "data_files entry needs split and path",
                    field=f"{where}.data_files.{j}"))
                continue
            matched = sorted(paths.root.glob(str(spec["path"])))
            if not matched:
                report.add(ValidationFinding(
                    "card", readme, f"pattern {spec['path']} matches no file",
                    field=f"{where}.data_files.{j}.path"))
            config.splits[str(spec["split"])] = matched
        if not config.splits:
            report.add(ValidationFinding("card", readme, "config has no data_files", field=where))
        configs.append(config)
    return configs


def _file_names(paths: RepoPaths, configs: list[ConfigFiles], report: ValidationReport) -> None:
    claimed: dict[Path, str] = {}
    for config in configs:
        if is_trace_config(paths, config):
            continue
        for split, files in config.splits.items():
            totals: set[int] = set()
            indices = []
            for path in files:
                rel = paths.rel(path)
                if path in claimed:
                    report.add(ValidationFinding("files", rel, f"in both {claimed[path]} and "
                                                     f"{config.name}/{split}"))
                claimed[path] = f"{config.name}/{split}"
                match = PARQUET_NAME.match(path.name)
                if not match or match["split"] != split:
                    report.add(ValidationFinding(
                        "files", rel, f"name is not {split}-NNNNN-of-MMMMM.parquet"))
                    continue
                totals.add(int(match["total"]))
                indices.append(int(match["index"]))
            if indices and (len(totals) != 1 or sorted(indices) != list(range(totals.pop()))):
                report.add(ValidationFinding("files", paths.rel(files[0].parent),
                                   f"{config.name}/{split}: file sequence is incomplete"))
    for path in paths.parquet_files():
        if path not in claimed:
            report.add(ValidationFinding("files", paths.rel(path), "parquet file in no config"))
    if paths.data_dir.is_dir():
        for path in sorted(paths.data_dir.rglob("*")):
            if path.is_file() and path.suffix != ".parquet":
                report.add(ValidationFinding(
                    "files", paths.rel(path), "not parquet: one data format "
                    "per repo"))


def check_card(paths: RepoPaths, report: ValidationReport) -> list[ConfigFiles]:
    """Check the card and return its configs with the files each split matched."""
    before = len(report.findings)
    readme = paths.rel(paths.readme)
    if not paths.readme.is_file():
        report.add(ValidationFinding("card", readme, "missing"))
        return []
    try:
        meta, body = split_front_matter(paths.readme.read_text(encoding="utf-8"))
    except ValueError as exc:
        report.add(ValidationFinding("card", readme, str(exc)))
        return []
    model = is_model_card(meta, paths)
    problem = _hub_parses(paths.readme, model=model)
    if problem:
        report.add(ValidationFinding("card", readme, problem))
    if "{{" in body:
        report.add(ValidationFinding("card", readme, "unrendered template placeholder"))
    if model:
        report.record("card", "a model card: YAML parses with base_model and library_name; "
                              "no data configs", before)
        return []
    configs = _configs(paths, meta.get("configs"), report)
    defaults = [c.name for c in configs if c.default]
    if len(defaults) > 1:
        report.add(ValidationFinding("card", readme, f"several default configs: {defaults}"))
    names: dict[str, int] = defaultdict(int)
    for config in configs:
        names[config.name] += 1
    for name, count in names.items():
        if count > 1:
            report.add(ValidationFinding("card", readme, f"config {name!r} declared {count} times"))
    _file_names(paths, configs, report)
    n_files = sum(len(f) for c in configs for f in c.splits.values()
                  if not is_trace_config(paths, c))
    report.record("card", f"YAML parses; {len(configs)} config(s) match {n_files} parquet "
                          "file(s) one to one" + ("" if not any(is_trace_config(paths, c)
                                                               for c in configs)
                                                  else " (and the agent traces)"), before)
    return configs
