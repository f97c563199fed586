"""A secret scan of the text a parquet file ships in its cells.

For a trajectories repo the parquet *is* the content: messages, tool outputs, keystrokes,
verifier output and exception messages, as the agent saw and wrote them (an agent that
``cat``s a key file or ``env`` ships the secret). Every string cell, at any depth of
nesting (``messages.content``, ``messages.tool_calls.function.arguments``,
``steps.observation``), is scanned as a text file named :data:`CELL_NAME` would be, by the
same engine as the repo's files (:mod:`.secrets_scan`: detect-secrets' own plugins,
transformers and filters on the lines they can flag).

At scale, in one read of the file: one RE2 pass over the cells (in Arrow, C++) drops
those in which no plugin can flag a line (:func:`.secrets_scan.re2_prefilter`, each plugin
pattern as an RE2 pattern that matches at least the same lines); the cells left, and those
a config transformer may read so that a plugin flags its ``key = "value"`` lines, are
scanned as detect-secrets scans a file, each distinct text once. Binary cells (task
archives) are not text: the ``tasks/`` tree they are packed from is scanned as files.
A finding names the file, the row, the column and the line within the cell, and stores
the secret's hash, never the secret.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from termgrade.validate.secret_rules import OWN_DIGEST_FIELDS, SHA256, is_known_false_positive
from termgrade.validate.secrets_json_form import json_form_findings, json_run_prefilter

CELL_NAME = "cell.txt"
"""The file name each cell is scanned under: plain text (detect-secrets' OTHER file
type, so its eager INI reading applies, as to a ``.txt`` file in the repo)."""


@dataclass(frozen=True)
class CellSecret:
    """One detect-secrets finding in one cell."""

    row: int
    """0-based row index within the parquet file."""
    column: str
    """Dotted path of the string leaf (``messages.content``)."""
    line: int
    """1-based line within the cell's text."""
    type: str
    hashed_secret: str
    known_false_positive: bool


def _universal(text: str) -> str:
    """The text as ``open`` reads a file holding it (``\\r\\n`` and ``\\r`` are ``\\n``)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def string_leaves(array: pa.Array, name: str) -> Iterator[tuple[str, pa.Array, Any]]:
    """Each string leaf of ``array`` (structs and lists walked): its dotted name, its
    values flattened, and a function giving each value's row in ``array``."""
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        yield name, array, lambda index: index
    elif pa.types.is_struct(kind):
        for i in range(kind.num_fields):
            field = kind.field(i)
            yield from string_leaves(array.field(i), f"{name}.{field.name}" if name
                                     else field.name)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        parents = pc.list_parent_indices(array).to_numpy()
        for leaf, values, up in string_leaves(array.flatten(), name):
            yield leaf, values, (lambda index, up=up: int(parents[up(index)]))


Leaves = Callable[[], Iterator[tuple[int, str, pa.Array, Any]]]
"""A source of string arrays, read again for each pass: ``(first row, column, values,
row of a value)``."""


def parquet_leaves(path: Path, row_groups: list[int] | None = None) -> Leaves:
    """The string leaves of every record batch of a parquet file (of ``row_groups``)."""
    def leaves() -> Iterator[tuple[int, str, pa.Array, Any]]:
        parquet = pq.ParquetFile(path)
        groups = list(range(parquet.num_row_groups)) if row_groups is None else row_groups
        for group in groups:
            offset = sum(parquet.metadata.row_group(g).num_rows for g in range(group))
            for batch in parquet.iter_batches(batch_size=4096, row_groups=[group]):
                for i, field in enumerate(batch.schema):
                    for column, values, row_of in string_leaves(batch.column(i), field.name):
                        yield offset, column, values, row_of
                offset += batch.num_rows
    return leaves


def row_group_parts(path: Path, part_bytes: int) -> list[list[int]]:
    """The file's row groups in runs of about ``part_bytes`` (compressed) each: parts a
    process each can scan."""
    meta = pq.ParquetFile(path).metadata
    parts: list[list[int]] = [[]]
    size = 0
    for group in range(meta.num_row_groups):
        if parts[-1] and size >= part_bytes:
            parts.append([])
            size = 0
        parts[-1].append(group)
        chunk = meta.row_group(group)
        size += sum(chunk.column(i).total_compressed_size for i in range(chunk.num_columns))
    return parts


_PLAIN_LINE = r"(?m)^[^\s\x{0b}\x{1c}-\x{1f}\x{85}\p{Z}#;\[=:][^=:\n]*$"
"""RE2 for a text with a line :data:`.secrets_scan._NOT_INI` finds (Python's ``\\s``
spelled out): every config transformer fails on it, so detect-secrets reads its raw
lines."""
_OPTION = re.compile(r"^(?P<key>.*?)\s*[=:]\s*(?P<value>.*)$")
"""configparser's option line (its ``_OPT_TMPL`` with the default delimiters)."""


def _ini_like_lines(text: str) -> list[str]:
    """A superset of the lines detect-secrets' config transformers may read from ``text``:
    each line as it is, and as ``key = "value"`` (the form they write an option in, a
    continuation line under the last key)."""
    out: list[str] = []
    key = ""
    for raw in text.split("\n"):
        line = raw.strip()
        out.append(raw.rstrip())
        option = _OPTION.match(line) if raw[:1].strip() else None
        if option is not None:
            key, line = option["key"], option["value"]
        value = line[1:-1] if len(line) > 1 and line[0] in "'\"" and line[-1] == line[0] \
            else line
        out.append(f'{key} = "{value.replace(chr(34), chr(92) + chr(34))}"')
    return out


def _matching(values: pa.Array, pattern: str | None) -> pa.Array:
    """A mask of the non-null ``values`` that ``pattern`` (RE2) matches (None: all)."""
    valid = pc.is_valid(values)
    if pattern is None:
        return valid
    return pc.and_(valid, pc.fill_null(pc.match_substring_regex(values, pattern), False))


class _Judge:
    """Which cells to scan as detect-secrets scans a file, and their findings, each
    distinct text once."""

    def __init__(self) -> None:
        from termgrade.validate.secrets_scan import re2_prefilter

        self.prefilter = re2_prefilter()
        self.json_runs = json_run_prefilter()
        """Texts whose JSON form (as a trace file holds them) may hold a quoted run."""
        self.readable: dict[str, bool] = {}
        """Cells a config transformer may read: whether that reading may flag them."""
        self.found: dict[str, list[tuple[int, str, str, bool, bool]]] = {}

    def marked(self, values: pa.Array) -> list[int]:
        """Indexes of the cells that may hold a secret: a line of theirs matches the
        sieves' RE2 superset, or a config transformer may read them so that it does."""
        candidate = _matching(values, self.prefilter)
        # A cell with a line every transformer fails on is read as its raw lines.
        readable = pc.and_(pc.and_(pc.is_valid(values), pc.invert(candidate)),
                           pc.invert(pc.fill_null(
                               pc.match_substring_regex(values, _PLAIN_LINE), True)))
        indexes = pc.indices_nonzero(readable).to_pylist()
        if indexes:
            self._judge_readable(values.take(pa.array(indexes)).to_pylist())
        if self.json_runs is not None and self.prefilter is not None:
            candidate = pc.or_(candidate, _matching(values, self.json_runs))
        marked = pc.indices_nonzero(candidate).to_pylist()
        marked += [i for i in indexes if self.readable[values[i].as_py()]]
        return sorted(marked)

    def _judge_readable(self, texts: list[str]) -> None:
        """Sieve the lines config transformers may read from these cells, all at once."""
        from termgrade.validate.secrets_scan import flagging_plugins

        todo = sorted({t for t in texts if t not in self.readable})
        forms: list[str] = []
        starts: list[int] = []
        for text in todo:
            starts.append(len(forms))
            forms.extend(_ini_like_lines(_universal(text)))
        mask = _matching(pa.array(forms, pa.large_string()), self.prefilter)
        kept = pc.indices_nonzero(mask).to_pylist()
        flagged = flagging_plugins([forms[i] for i in kept], CELL_NAME)
        hit = {todo[bisect.bisect_right(starts, kept[i]) - 1] for i in flagged}
        self.readable.update((text, text in hit) for text in todo)

    def findings(self, text: str) -> list[tuple[int, str, str, bool, bool]]:
        """detect-secrets' findings in ``text`` read as a file, and in its JSON form as a
        trace file holds it (:mod:`.secrets_json_form`) where the file reading found
        nothing of that type on that line: ``(line, type, hashed secret, known false
        positive, whether the value is a sha256 in hex)``."""
        from termgrade.validate.secrets_scan import scan_text

        if text not in self.found:
            reading = _universal(text)
            lines = reading.split("\n")
            placed = [(s.line_number, s) for s in scan_text(reading, CELL_NAME,
                                                             file_filters=False)]
            seen = {(n, s.type) for n, s in placed}
            placed += [(n, s) for n, s in json_form_findings(reading, CELL_NAME)
                       if (n, s.type) not in seen]
            self.found[text] = [
                (n, s.type, s.secret_hash, is_known_false_positive(
                    s.secret_value, lines[n - 1] if 0 < n <= len(lines) else ""),
                 bool(SHA256.match(s.secret_value or "")))
                for n, s in placed]
        return self.found[text]


def scan_leaves(leaves: Leaves) -> list[CellSecret]:
    """detect-secrets' findings in the cells of ``leaves``, in one read: one RE2 pass
    over the cells drops those no plugin can flag (:func:`.secrets_scan.re2_prefilter`);
    the others, and those a config transformer may read so that a plugin flags them,
    are scanned as detect-secrets scans a file, each distinct text once (call inside
    ``detect_secrets.settings.default_settings()``)."""
    judge = _Judge()
    hits: list[CellSecret] = []
    for offset, column, values, row_of in leaves():
        # A sha256 in a column named as TermGrade's digests are (task_digest, sha256...)
        # is its own, as the `"task_digest": "<hex>"` line of a JSON file is; only its
        # JSON form (a quoted hex run) flags such a bare value: no finding.
        own = column.rsplit(".", 1)[-1] in OWN_DIGEST_FIELDS
        for index in judge.marked(values):
            hits.extend(CellSecret(offset + row_of(index), column, number, kind, hashed, fp)
                        for number, kind, hashed, fp, sha in
                        judge.findings(values[index].as_py()) if not (own and sha))
    return hits


def scan_texts(texts: list[str]) -> dict[str, list[tuple[int, str, str]]]:
    """The texts (each as a file named :data:`CELL_NAME` holding it) in which detect-secrets
    finds something, with its findings ``(line, type, hashed secret)``."""
    array = pa.array(texts, pa.large_string())

    def leaves() -> Iterator[tuple[int, str, pa.Array, Any]]:
        yield 0, "text", array, lambda index: index

    found: dict[str, list[tuple[int, str, str]]] = {}
    for hit in scan_leaves(leaves):
        found.setdefault(texts[hit.row], []).append((hit.line, hit.type, hit.hashed_secret))
    return found


def scan_parquet(path: Path, row_groups: list[int] | None = None) -> list[CellSecret]:
    """Every detect-secrets finding in the cells of one parquet file (of ``row_groups``);
    call inside ``default_settings()``."""
    return scan_leaves(parquet_leaves(path, row_groups))


def scan_parquet_parts(parts: list[list[Any]]) -> list[list[list[Any]]]:
    """Per ``[parquet file, row groups]``, its cell findings as ``[row, column, line,
    type, hashed secret, known false positive]``; a worker's job
    (:mod:`termgrade.pools.processes`)."""
    from detect_secrets.settings import default_settings

    with default_settings():
        return [[[h.row, h.column, h.line, h.type, h.hashed_secret, h.known_false_positive]
                 for h in scan_parquet(Path(name), groups)] for name, groups in parts]
