"""One task -> one ``tasks`` row (text, config, verification, manifest, exact archive),
and the browsable ``tasks/`` tree with its Harbor ``registry.json``."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from termgrade.builders.errors import BuildError
from termgrade.builders.layout import RepoPaths
from termgrade.builders.rows import FileRow, TaskRow
from termgrade.core.atomic import atomic_write_text
from termgrade.scoring.reference import write_reference_file
from termgrade.task import Task
from termgrade.task.archive import pack_tree
from termgrade.task.digest import iter_task_files, manifest_digest, read_tree, write_modes
from termgrade.task.dockerfile import base_images
from termgrade.verify.record import VerifyRecord
from termgrade.verify.verdict import Verdict

SPLIT_ORDER = ("unseen", "train151", "heldout120")
LEGACY_ROLES = {"train151": "train", "heldout120": "validation"}
"""The role of the default split names, for split files written before rows had ``role``."""
DEFAULT_SPLIT = "unseen"


def ordered_splits(splits: set[str]) -> list[str]:
    return [s for s in SPLIT_ORDER if s in splits] + sorted(splits - set(SPLIT_ORDER))


def task_row(task: Task, split: str, verify: VerifyRecord | None) -> TaskRow:
    """The row of one task; a verify record for other contents of the task raises."""
    root = task.paths.root
    tree = read_tree(root)
    manifest = tree.manifest()
    digest = manifest_digest(manifest)
    if verify is not None and verify.task_digest != digest:
        raise BuildError(f"verify record of {task.task_id}: task_digest {verify.task_digest[:12]}"
                         f" does not match the task's files ({digest[:12]})",
                         fix=f"rerun `termgrade verify {root}` and pass its -o output")
    archive = pack_tree(tree)
    metadata = task.config.metadata
    tags = metadata.get("tags")
    return TaskRow(
        task_id=task.task_id,
        instruction=task.instruction,
        domain=task.config.domain,
        difficulty=task.config.difficulty,
        tags=[str(t) for t in tags] if isinstance(tags, list) else [],
        metadata_json=json.dumps(metadata, sort_keys=True, default=str),
        task_toml=task.paths.config.read_text(encoding="utf-8"),
        oracle_verified=verify is not None and verify.verdict == Verdict.VERIFIED,
        verdict=verify.verdict.value if verify is not None else None,
        n_assertions=verify.n_assertions if verify is not None else None,
        split=split,
        has_solution=task.has_solution,
        allow_internet=task.wants_internet,
        base_images=base_images(task.paths.dockerfile.read_text(encoding="utf-8",
                                                                errors="replace")),
        task_digest=digest,
        files=[FileRow(path=e.path, size=e.size, sha256=e.sha256, mode=e.mode)
               for e in manifest],
        archive=archive,
        archive_sha256=hashlib.sha256(archive).hexdigest(),
        reference_json=(verify.reference.model_dump_json()
                        if verify is not None and verify.reference is not None else None),
    )


def write_task_tree(paths: RepoPaths, tasks: list[Task],
                    verify: Mapping[str, VerifyRecord] | None = None) -> None:
    """Write each task dir to ``tasks/<task_id>/`` (modes kept, empty dirs too, caches
    skipped), so the tree re-packs to exactly the row's archive, with the modes recorded
    in :data:`~termgrade.task.digest.MODES_FILE`: the Hub drops them, the record keeps
    the digest of a downloaded copy equal to the row's. A task ``verify`` recorded a
    reference run for ships it (:data:`~termgrade.task.digest.REFERENCE_FILE`)."""
    for task in tasks:
        tree = read_tree(task.paths.root)
        dest = paths.task_dir(task.task_id)
        dest.mkdir(parents=True, exist_ok=True)
        for name, _ in tree.dirs:
            (dest / name).mkdir(parents=True, exist_ok=True)
        for item in tree.files:
            out = dest / item.path
            out.write_bytes(item.data)
            os.chmod(out, item.mode)
        for name, mode in sorted(tree.dirs, reverse=True):
            os.chmod(dest / name, mode)
        write_modes(dest, tree)
        record = (verify or {}).get(task.task_id)
        if record is not None and record.reference is not None:
            write_reference_file(dest, record.reference)


def registry_entries(paths: RepoPaths, name: str, version: str, description: str,
                     task_ids: list[str]) -> dict[str, object]:
    """One dataset of Harbor's registry.json (``DatasetSpec``). ``git_url`` / commit are
    null and ``path`` is relative: Harbor 0.26 resolves it against the working directory,
    so Harbor runs from the repo's folder (the cards say so)."""
    return {
        "name": name,
        "version": version,
        "description": description,
        "tasks": [{"name": t, "git_url": None, "git_commit_id": None, "path": paths.task_rel(t)}
                  for t in task_ids],
        "metrics": [{"type": "mean", "kwargs": {}}],
    }


def write_registry(paths: RepoPaths, datasets: list[dict[str, object]]) -> None:
    atomic_write_text(paths.registry, json.dumps(datasets, indent=2) + "\n")


def base_image_files(source: Path) -> list[Path]:
    """The base image recipe, minus any CA bundle a build host dropped into certs/."""
    return [p for p in iter_task_files(source)
            if not (p.parent.name == "certs" and p.suffix in {".crt", ".pem", ".key"})]
