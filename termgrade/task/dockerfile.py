"""What a task's Dockerfile starts ``FROM``: the images a build needs before it can run.

Third-party corpora start from registry images (``FROM ghcr.io/...``); TermGrade's own
tasks start from the shared base image. :func:`base_images` reads the external images of
every stage: ``ARG`` defaults declared before the first ``FROM`` are substituted (as
Docker does), ``--platform`` flags and ``AS name`` are dropped, and a stage that starts
from an earlier stage (or ``scratch``) needs no image.
"""

from __future__ import annotations

import re
import shlex

_ARG_REF = re.compile(r"\$(?:\{(\w+)(?::?-([^}]*))?\}|(\w+))")


def _instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction: comments dropped, continuations joined."""
    found: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        if whole:
            keyword, _, rest = whole.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    if pending.strip():
        keyword, _, rest = pending.strip().partition(" ")
        found.append((keyword.upper(), rest.strip()))
    return found


def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction: comments dropped, continuations joined."""
    return _instructions(text)


def _substitute(value: str, args: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        default = match.group(2)
        got = args.get(name)
        if got:
            return got
        return default if default is not None else ""
    return _ARG_REF.sub(one, value)


def base_images(text: str) -> list[str]:
    """The images the Dockerfile's stages start from, in order, without repeats."""
    args: dict[str, str] = {}
    stages: set[str] = set()
    images: list[str] = []
    seen_from = False
    for keyword, rest in _instructions(text):
        if keyword == "ARG" and not seen_from:
            for item in shlex.split(rest, posix=True) if rest else []:
                name, _, default = item.partition("=")
                args[name] = _substitute(default, args)
        elif keyword == "FROM":
            seen_from = True
            words = [w for w in rest.split() if not w.startswith("--")]
            if not words:
                continue
            image = _substitute(words[0], args)
            if len(words) >= 3 and words[1].lower() == "as":
                stages.add(words[2].lower())
            if image.lower() in stages or image.lower() == "scratch" or not image:
                continue
            if image not in images:
                images.append(image)
    return images
