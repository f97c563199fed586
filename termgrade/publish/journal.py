"""The resume journal of a chunked publish: which pull request, which chunks are committed.

One JSON file per target (``<state_dir>/publish/<type>s/<namespace>/<name>@<revision>.json``),
rewritten atomically after every committed chunk and removed when the publish completes.
A rerun with the same staged content (same manifest digest) finds the journal, reuses
its still-open pull request and commits only what that pull request does not hold yet.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from termgrade.core.atomic import atomic_write_text
from termgrade.publish.errors import PublishError
from termgrade.records.version import RecordFormat

SCHEMA_VERSION = 1
JOURNAL_FORMAT = RecordFormat(schema="publish_journal", version=str(SCHEMA_VERSION),
                              writer="termgrade publish")
"""The journal's format (its ``schema_version`` is written as a number)."""


@dataclass
class ChunkRecord:
    index: int
    commit: str
    n_ops: int
    at: str


@dataclass
class PublishJournal:
    path: Path
    repo_id: str
    repo_type: str
    revision: str
    manifest_digest: str
    pr_num: int | None = None
    chunks: list[ChunkRecord] = field(default_factory=list)
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    schema_version: int = SCHEMA_VERSION

    @staticmethod
    def path_for(state_dir: Path, repo_type: str, repo_id: str, revision: str) -> Path:
        name = f"{repo_id.split('/')[-1]}@{quote(revision, safe='')}.json"
        return Path(state_dir) / "publish" / f"{repo_type}s" / repo_id.split("/")[0] / name

    @classmethod
    def load(cls, path: Path) -> PublishJournal | None:
        if not path.is_file():
            return None
        try:
            raw = JOURNAL_FORMAT.upgrade(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError, AttributeError) as exc:
            raise PublishError(f"{path}: unreadable publish journal ({exc})",
                               fix="delete the file to start the publish from scratch") from exc
        found = str(raw.get("schema_version", JOURNAL_FORMAT.version))
        if found != JOURNAL_FORMAT.version:  # the one version check; the file is kept
            raise PublishError(f"{path}: publish journal format {found!r} is not supported "
                               f"(this TermGrade reads {JOURNAL_FORMAT.version!r}); the file "
                               "is kept", fix=JOURNAL_FORMAT.migrate(found))
        try:
            raw["chunks"] = [ChunkRecord(**c) for c in raw.get("chunks", [])]
            return cls(path=path, **raw)
        except (ValueError, TypeError, KeyError) as exc:
            raise PublishError(f"{path}: unreadable publish journal ({exc})",
                               fix="delete the file to start the publish from scratch") from exc

    def save(self) -> None:
        data = asdict(self)
        data.pop("path")
        atomic_write_text(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def record_chunk(self, index: int, commit: str, n_ops: int) -> None:
        self.chunks.append(ChunkRecord(index, commit, n_ops, datetime.now(UTC).isoformat()))
        self.save()

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
