"""Optional modules the image's Perl libraries load by a fixed name whenever they exist.

A Perl module may probe for another one and use it if present: Encode does ``eval {
require Encode::ConfigLocal }`` on every ``use Encode``, so a new
``Encode/ConfigLocal.pm`` anywhere on ``@INC`` runs in every image tool that encodes text.
No list names every such hook: the image's own modules in its ``@INC`` directories are
read once per image (bounded, cached, and only when a created ``.pm`` asks for it) for an
``eval`` that ``require``s or ``use``s a literal module name the image lacks; a created
file at that module's path on ``@INC`` is a stand-in unless the task asked for it
(:mod:`termgrade.scoring.review.standins`).
"""

from __future__ import annotations

import glob
import os
import re
from functools import lru_cache

from termgrade.sandbox.overlay_diff import LowerView
from termgrade.scoring.review.image_globs import expanded, pattern_match
from termgrade.scoring.review.lookups import NO_ENV, SEARCH_PATHS
from termgrade.scoring.review.toolenv import ToolEnv

__all__ = ["forget_perl", "perl_hook", "perl_hooks"]

PERL_DIRS = (*SEARCH_PATHS["Perl module"], "/usr/local/lib/site_perl")
"""Perl's built-in ``@INC`` (Debian's order), site_perl last."""
MAX_PERL_FILES = 8_000
"""Perl modules read per image, at most."""
MAX_PERL_BYTES = 1 << 20
"""Bytes of one module read."""
MAX_PERL_TOTAL = 64 << 20
"""Bytes read per image, at most."""
MAX_EVAL_BLOCK = 4_000
"""Characters of an ``eval { ... }`` block searched for a ``require``."""
_NAME = r"([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)"
_EVAL_BLOCK = re.compile(r"\beval\s*\{")
_REQUIRE = re.compile(r"(?:^|[\s;{(])require\s+" + _NAME + r"\s*(?=[;})]|$)", re.MULTILINE)
_EVAL_STRING = re.compile(r"""\beval\s*(?:q{1,2}\s*[{(\[<|/!]|["'])\s*(?:require|use)\s+"""
                          + _NAME + r"""(?=[\s;'"})\]>|/!])""")


def _inc_dirs(env: ToolEnv) -> tuple[str, ...]:
    """``@INC`` as patterns (``*``: one directory name): the environment's first."""
    return (*(glob.escape(d) for d in env.search_dirs("Perl module")), *PERL_DIRS)


def _module_of(path: str, patterns: tuple[str, ...]) -> str | None:
    """The module name a ``.pm``/``.pmc`` file at ``path`` has below an ``@INC`` directory
    (``Encode::ConfigLocal``), or None when it lies below none."""
    stem = path[:-4] if path.endswith(".pmc") else path[:-3] if path.endswith(".pm") else None
    if stem is None:
        return None
    for pattern in patterns:
        depth = pattern.count("/")
        head = "/".join(path.split("/")[:depth + 1])
        if head != path and pattern_match(pattern, head):
            relative = stem[len(head) + 1:]
            return relative.replace("/", "::") if relative else None
    return None


def perl_hook(path: str, lower: LowerView, env: ToolEnv = NO_ENV) -> str | None:
    """Why a created Perl module at ``path`` is one an image module loads whenever it
    exists, or None."""
    if not path.endswith((".pm", ".pmc")) or lower.lstat(path) is not None:
        return None
    patterns = _inc_dirs(env)
    module = _module_of(path, patterns)
    if module is None:
        return None
    probe = perl_hooks(lower, patterns).get(module)
    if probe is None:
        return None
    return (f"the Perl module `{module}`, which the image's {probe} loads whenever it is on "
            "@INC (`eval { require ... }`) and the image lacks: every image tool that uses "
            "it would run this file")


def perl_hooks(lower: LowerView, patterns: tuple[str, ...] = PERL_DIRS) -> dict[str, str]:
    """Each module an image Perl module probes for in an ``eval`` and the image lacks on
    ``@INC``, and one image module that probes for it (read once per image)."""
    return _perl_hooks(tuple(lower.lower_dirs), patterns)


def forget_perl() -> None:
    """Drop what was read of the images (a test's fresh layers)."""
    _perl_hooks.cache_clear()


@lru_cache(maxsize=8)
def _perl_hooks(layers: tuple[str, ...], patterns: tuple[str, ...]) -> dict[str, str]:
    lower = LowerView(list(layers))
    dirs = list(dict.fromkeys(d for p in patterns for d in expanded(p, layers)))
    probes: dict[str, str] = {}
    budget = {"files": MAX_PERL_FILES, "bytes": MAX_PERL_TOTAL}
    for directory in dirs:
        for path, host in _modules_below(layers, directory, budget):
            for module in _probed(host, budget):
                probes.setdefault(module, path)
    return {module: probe for module, probe in probes.items()
            if not any(lower.lstat(f"{d}/{module.replace('::', '/')}.pm") is not None
                       for d in dirs)}


def _modules_below(layers: tuple[str, ...], top: str, budget: dict[str, int]
                   ) -> list[tuple[str, str]]:
    """(image path, host path) of the ``.pm`` files below ``top``, top layer first."""
    found: dict[str, str] = {}
    stack = [top]
    seen = {top}
    while stack and len(found) < budget["files"]:
        directory = stack.pop()
        for layer in layers:
            if os.path.islink(f"{layer}{directory}"):
                break  # a link (Debian's perl/5.36 -> 5.36.0): read where it leads
            try:
                entries = list(os.scandir(f"{layer}{directory}"))
            except OSError:
                continue
            for entry in entries:
                path = f"{directory}/{entry.name}"
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if path not in seen:
                            seen.add(path)
                            stack.append(path)
                        continue
                except OSError:
                    continue
                if entry.name.endswith(".pm") and path not in found:
                    found[path] = entry.path
    budget["files"] -= len(found)
    return sorted(found.items())


def _probed(host: str, budget: dict[str, int]) -> set[str]:
    """The literal module names a Perl file loads inside an ``eval``: ``eval { ...
    require X; ... }``, ``eval "use X"``, ``eval 'require X'``, ``eval q{use X}``."""
    if budget["bytes"] <= 0:
        return set()
    try:
        with open(host, "rb") as handle:
            data = handle.read(MAX_PERL_BYTES)
    except OSError:
        return set()
    budget["bytes"] -= len(data)
    if b"eval" not in data:
        return set()
    text = data.decode("latin-1")
    text = text.split("\n__END__", 1)[0].split("\n__DATA__", 1)[0]
    found = {m.group(1) for m in _EVAL_STRING.finditer(text)}
    for match in _EVAL_BLOCK.finditer(text):
        block = _block(text, match.end() - 1)
        found.update(m.group(1) for m in _REQUIRE.finditer(block))
    return found


def _block(text: str, start: int) -> str:
    """The text of the brace block opening at ``start`` (bounded, braces counted)."""
    depth = 0
    end = min(len(text), start + MAX_EVAL_BLOCK)
    for index in range(start, end):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start:index + 1]
    return text[start:end]
