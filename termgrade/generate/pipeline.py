"""``termgrade generate``: candidates in parallel, journaled, audited, funnel at the end.

Candidates run in threads, each through its repair loop (:mod:`.loop`); requests in
flight are bounded by the client (``max_requests``) and builds/verifies by a semaphore
(``max_containers``). Each finished candidate is journaled; with ``resume`` a candidate
whose journaled record asked for the same thing (domain, difficulty, topic, model,
prompt version) is not redone, except after an endpoint failure. The audit gate then
runs over every verified candidate, the kept tasks are copied to ``kept/``, and the
histories, records and funnel are written.
"""

from __future__ import annotations

import functools
import json
import shutil
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from termgrade.agent.client import DEFAULT_RETRY, ChatClient, Endpoint
from termgrade.audit import AuditSettings
from termgrade.core.atomic import atomic_write_bytes, atomic_write_jsonl, atomic_write_text
from termgrade.core.errors import OptionError, OutputError
from termgrade.core.progress import track
from termgrade.core.retry import RetryPolicy
from termgrade.core.settings import SETTINGS
from termgrade.generate.funnel import Funnel, funnel, funnel_png
from termgrade.generate.gate import audit_candidates
from termgrade.generate.loop import LoopSettings, Verifier, run_candidate
from termgrade.generate.paths import GenerationPaths, copy_task
from termgrade.generate.prompting import DEFAULT_VERSION, Prompts
from termgrade.generate.records import CandidateRecord, GenerationFailure
from termgrade.generate.spec import CandidateSpec
from termgrade.records.journal import JsonlJournal
from termgrade.task.model import image_tag_for
from termgrade.verify.record import VerifyRecord
from termgrade.verify.runner import safe_verify_task


@dataclass
class GenerationReport:
    records: list[CandidateRecord]
    funnel: Funnel
    paths: GenerationPaths
    wall_s: float
    resumed: int = 0
    unreadable: list[str] = field(default_factory=list)
    """Journal lines kept in the file but not read (a newer version, a bad field)."""

    @property
    def kept(self) -> list[CandidateRecord]:
        return [r for r in self.records if r.kept]

    @property
    def candidates_per_hour(self) -> float:
        done = len(self.records) - self.resumed
        return done * 3600.0 / self.wall_s if self.wall_s > 0 else 0.0


def _same_request(old: CandidateRecord, spec: CandidateSpec, model: str, version: str,
                  paths: GenerationPaths) -> bool:
    """A journaled candidate can be kept: it asked for the same thing, did not fail on the
    endpoint, and (verified) its task directory is still there for the audit."""
    return (old.domain, old.difficulty, old.topic, old.model, old.prompts_version) == (
        spec.domain, spec.difficulty, spec.topic, model, version) \
        and old.outcome != GenerationFailure.ENDPOINT_ERROR.value \
        and (not old.verified or paths.task_dir(old.candidate_id).is_dir())


def verify_and_clean(path: Path, *, repeat: int, keep_images: bool = False) -> VerifyRecord:
    """The execution filter on one candidate; its image is removed afterwards (a run of
    thousands of candidates would otherwise fill the disk) unless ``keep_images``."""
    record = safe_verify_task(path, repeat=repeat)
    if not keep_images:
        from termgrade.sandbox.engine import remove_image

        remove_image(image_tag_for(path.name))
    return record


def refuse_to_overwrite_journal(paths: GenerationPaths) -> None:
    """A run without ``resume`` on a directory whose journal holds finished candidates
    would throw away what was paid for: refuse, naming ``--resume`` and a fresh ``-o``."""
    journal = paths.journal
    try:
        finished = sum(1 for line in journal.open("rb") if line.strip())
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(journal, exc.strerror or str(exc)) from exc
    if finished:
        raise OptionError(
            f"{paths.root} holds the journal of an earlier run ({finished} finished "
            f"candidate(s), {journal}): starting over would pay the model for them again",
            fix=f"add --resume to keep them, or pass a fresh -o (or delete {journal} to "
                "start over)")


def generate_tasks(
    specs: Sequence[CandidateSpec],
    *,
    endpoint: Endpoint,
    out_dir: Path,
    max_repairs: int = 2,
    repeat: int = 2,
    corpus: Sequence[Path] = (),
    against: Sequence[Path] = (),
    max_requests: int = 4,
    max_containers: int = 2,
    resume: bool = False,
    progress: bool | None = None,
    prompts_version: str = DEFAULT_VERSION,
    min_tests: int = 10,
    params: dict[str, Any] | None = None,
    verify: Verifier | None = None,
    audit_settings: AuditSettings | None = None,
    retry: RetryPolicy | None = None,
    keep_images: bool = False,
) -> GenerationReport:
    """Generate, verify, repair and audit every candidate of ``specs`` into ``out_dir``.

    ``verify``: replaces the Docker execution filter
    (:func:`~termgrade.verify.runner.safe_verify_task` with ``repeat`` oracle runs);
    ``keep_images``: keep each candidate's image after verify (default: removed).
    ``retry``: the client's retry policy for infrastructure failures (default: the
    client's)."""
    if max_repairs < 0 or max_requests < 1 or max_containers < 1:
        raise OptionError("max_repairs must be >= 0, max_requests and max_containers >= 1",
                          fix="pass --max-repairs 0 or more, --max-requests/--max-containers "
                              "1 or more")
    began = time.monotonic()
    paths = GenerationPaths(Path(out_dir))
    if not resume:
        refuse_to_overwrite_journal(paths)
    prompts = Prompts.load(prompts_version)
    client = ChatClient(replace(endpoint, max_in_flight=max_requests),
                        retry=retry or DEFAULT_RETRY)
    settings = LoopSettings(
        client=client, prompts=prompts, paths=paths,
        verify=verify or functools.partial(verify_and_clean, repeat=repeat,
                                           keep_images=keep_images),
        base_image=SETTINGS.base_image, max_repairs=max_repairs, min_tests=min_tests,
        containers=threading.BoundedSemaphore(max_containers), params=dict(params or {}))
    journal = JsonlJournal(paths.journal, CandidateRecord, key="candidate_id")
    done = journal.load() if resume else {}
    if not resume:
        journal.reset()
    results: dict[str, CandidateRecord] = {}
    todo = []
    for spec in specs:
        old = done.get(spec.candidate_id)
        if old is not None and _same_request(old, spec, endpoint.model, prompts.version, paths):
            results[spec.candidate_id] = old.model_copy(
                update={"audit_findings": [], "audited": False})
        else:
            todo.append(spec)
    resumed = len(results)
    try:
        with track("generate", total=len(specs), enabled=progress) as bar, \
                ThreadPoolExecutor(max_workers=max_requests + max_containers) as pool:
            for _ in range(resumed):
                bar.advance()
            running: dict[Future[CandidateRecord], CandidateSpec] = {}
            queue = list(reversed(todo))
            slots = max_requests + max_containers
            try:
                while queue or running:
                    while queue and len(running) < slots:
                        spec = queue.pop()
                        running[pool.submit(run_candidate, settings, spec)] = spec
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in finished:
                        running.pop(future)
                        record = future.result()
                        journal.append(record)
                        results[record.candidate_id] = record
                        bar.advance(f"generate [dim]{record.candidate_id}: {record.outcome}")
            except BaseException:
                for pending in running:
                    pending.cancel()
                raise
    finally:
        client.close()
    records = [results[s.candidate_id] for s in specs]
    records = _audit(records, paths, corpus=corpus, against=against,
                     settings=audit_settings or AuditSettings(min_tests=min_tests))
    result = funnel(records)
    _write(records, result, paths)
    return GenerationReport(records=records, funnel=result, paths=paths,
                            wall_s=time.monotonic() - began, resumed=resumed,
                            unreadable=[str(line) for line in journal.unreadable])


def _audit(records: list[CandidateRecord], paths: GenerationPaths, *, corpus: Sequence[Path],
           against: Sequence[Path], settings: AuditSettings) -> list[CandidateRecord]:
    verified = [paths.task_dir(r.candidate_id) for r in records if r.verified]
    findings = audit_candidates(verified, corpus=corpus, against=against, settings=settings)
    return [r.model_copy(update={"audited": True,
                                 "audit_findings": findings.get(r.candidate_id, [])})
            if r.verified else r for r in records]


def _write(records: list[CandidateRecord], result: Funnel, paths: GenerationPaths) -> None:
    for record in records:
        atomic_write_text(paths.history(record.candidate_id),
                          record.model_dump_json(indent=2) + "\n")
    kept = {r.candidate_id for r in records if r.kept}
    if paths.kept_dir.is_dir():
        for stale in paths.kept_dir.iterdir():
            if stale.name not in kept and stale.is_dir() and stale.name.startswith("gen-"):
                shutil.rmtree(stale)
    for candidate_id in sorted(kept):
        copy_task(paths.task_dir(candidate_id), paths.kept(candidate_id))
    atomic_write_jsonl(paths.candidates, (r.model_dump(mode="json") for r in records))
    atomic_write_text(paths.funnel_json,
                      json.dumps(result.model_dump(mode="json"), indent=2) + "\n")
    atomic_write_bytes(paths.funnel_png, funnel_png(result))
