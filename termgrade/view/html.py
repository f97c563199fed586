"""HTML building blocks: escaping, the page shell, numbers, and the reward sparkline.

Everything a run holds is data, agent output included: every value goes into a page
through :func:`esc` (text and attribute values alike), so a ``<script>`` an agent wrote
shows as text. Pages carry no script at all: paging and filters are plain links and a
GET form.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

VIEW_CHARS = 20_000
"""Characters of one text block a page shows; the rest is cut with a notice (the full
record is at the trial's JSON link)."""

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fafafa}
header{background:#24292f;color:#fff;padding:8px 16px}
header a{color:#fff;text-decoration:none;margin-right:16px}
main{padding:12px 16px}
table{border-collapse:collapse;background:#fff;margin:8px 0}
th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f0f3f6;position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.cell a{text-decoration:none;color:inherit;display:block}
.cell .rate{font-weight:600}.cell .meta{color:#57606a;font-size:12px}
.dim{opacity:.35}
.band-zero{background:#ffebe9}.band-low{background:#fff1e5}.band-central{background:#dafbe1}
.band-high{background:#ddf4ff}.band-one{background:#eef}
.reason-passed{color:#1a7f37}.reason-infrastructure{color:#8250df}
.reason-integrity,.reason-timeout,.reason-limit,.reason-grading_failure{color:#cf222e;font-weight:600}
.reason-tests_failed{color:#bc4c00}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid #d0d7de;
padding:6px;margin:4px 0;max-height:40em;overflow:auto}
.msg{border-left:4px solid #d0d7de;margin:10px 0;padding-left:8px}
.msg.role-assistant{border-color:#0969da}.msg.role-tool{border-color:#1a7f37}
.msg.role-user{border-color:#bf8700}.msg.role-system{border-color:#8c959f}
.truncated{background:#fff8c5;border:1px solid #d4a72c;padding:2px 4px;display:block}
.finding{color:#cf222e}
.pager a,.filters a{margin-right:8px}
.trial{display:grid;grid-template-columns:minmax(280px,30%) 1fr;gap:16px;align-items:start}
.trial section{min-width:0}
.side table{width:100%;table-layout:fixed}.side td{overflow-wrap:anywhere}
.side td:last-child,.side th:last-child{width:5em}
details.prompt summary{cursor:pointer;color:#57606a}
table.facts th{white-space:nowrap}
form.filters{margin:8px 0}
.spark rect.pass{fill:#1a7f37}.spark rect.fail{fill:#cf222e}.spark rect.lost{fill:#8c959f}
"""


CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'"
"""No script, ever: sent as a header by the server and as a meta tag in every page."""


def esc(value: object) -> str:
    """Text (or an attribute value) safe to put in HTML."""
    return html.escape("" if value is None else str(value), quote=True)


def missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def num(value: object, digits: int = 0) -> str:
    """A number for a table: thousands separators, ``-`` when missing."""
    if missing(value):
        return "-"
    number = float(value)  # type: ignore[arg-type]
    return f"{number:,.{digits}f}"


def rate(value: object) -> str:
    return "-" if missing(value) else f"{float(value):.2f}"  # type: ignore[arg-type]


def compact(value: object) -> str:
    """12345 -> ``12.3k``; for tokens in a small cell."""
    if missing(value):
        return "-"
    number = float(value)  # type: ignore[arg-type]
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if number >= size:
            return f"{number / size:.1f}{unit}"
    return f"{number:.0f}"


def clipped(text: str | None, limit: int = VIEW_CHARS) -> str:
    """``text`` escaped in a ``<pre>``; past ``limit`` characters, its head and tail with a
    marked notice of what the page leaves out."""
    if text is None:
        return ""
    if len(text) <= limit:
        return f"<pre>{mark_truncation(text)}</pre>"
    half = limit // 2
    cut = len(text) - 2 * half
    notice = (f'<span class="truncated viewer-cut">[viewer: {cut:,} of {len(text):,} '
              "characters not shown here; the trial's JSON has them all]</span>")
    return f"<pre>{mark_truncation(text[:half])}{notice}{mark_truncation(text[-half:])}</pre>"


TRUNCATION_MARKERS = ("[output truncated:",)
"""How the scaffold marks output it cut before the model saw it (core.text.head_and_tail)."""


def mark_truncation(text: str) -> str:
    """Escaped ``text`` with each scaffold truncation notice highlighted."""
    out = esc(text)
    for marker in TRUNCATION_MARKERS:
        escaped = esc(marker)
        if escaped in out:
            parts = out.split(escaped)
            rebuilt = [parts[0]]
            for part in parts[1:]:
                end = part.find("]")
                notice, rest = (part, "") if end < 0 else (part[:end + 1], part[end + 1:])
                rebuilt.append(f'<span class="truncated">{escaped}{notice}</span>{rest}')
            out = "".join(rebuilt)
    return out


def sparkline(rewards: Sequence[tuple[float | None, bool]], width: int = 6,
              height: int = 16) -> str:
    """One bar per trial in attempt order: height = reward, green passed, red failed,
    grey not counted (a full-height grey bar)."""
    bars = []
    for i, (reward, counted) in enumerate(rewards):
        if not counted or reward is None or math.isnan(reward):
            kind, h = "lost", height
        else:
            kind = "pass" if reward >= 1 else "fail"
            h = max(2, round(height * min(max(reward, 0.0), 1.0))) if reward > 0 else 2
        bars.append(f'<rect class="{kind}" x="{i * width}" y="{height - h}" '
                    f'width="{width - 1}" height="{h}"/>')
    title = " ".join("x" if not c or r is None else f"{r:g}" for r, c in rewards)
    return (f'<svg class="spark" width="{max(1, len(rewards)) * width}" height="{height}" '
            f'role="img" aria-label="rewards {esc(title)}"><title>{esc(title)}</title>'
            f'{"".join(bars)}</svg>')


def table(header: Iterable[str], rows: Iterable[str], css: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    cls = f' class="{esc(css)}"' if css else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def page(title: str, body: str, *, home: str = "/") -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f'<header><a href="{esc(home)}">termgrade view</a><span>{esc(title)}</span>'
            f"</header><main>{body}</main></body></html>")
