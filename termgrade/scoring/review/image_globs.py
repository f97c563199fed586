"""Directory patterns over an image's files: ``/usr/lib/*/perl5/*``, where each ``*`` is
exactly one directory name, matched against a path (:func:`pattern_match`) or expanded
to the image's directories it names, in order (:func:`expand_pattern`, cached per image's
layers). The search paths of :mod:`termgrade.scoring.review.lookups` and the start-up
path of :mod:`termgrade.scoring.review.python_startup` are written so."""

from __future__ import annotations

import posixpath
from fnmatch import fnmatch
from functools import lru_cache

from termgrade.sandbox.overlay_diff import LowerView

__all__ = ["expand_pattern", "expanded", "forget_image_globs", "pattern_match"]


def pattern_match(pattern: str, path: str) -> bool:
    """Does ``path`` equal ``pattern``, where each ``*`` is exactly one directory name?"""
    parts, names = pattern.strip("/").split("/"), path.strip("/").split("/")
    return len(parts) == len(names) and all(
        fnmatch(n, p) for p, n in zip(parts, names, strict=True))


def expand_pattern(pattern: str, lower: LowerView) -> list[str]:
    """The image's directories that ``pattern`` names (each ``*`` one name), in order."""
    return list(expanded(pattern, tuple(lower.lower_dirs)))


@lru_cache(maxsize=256)
def expanded(pattern: str, layers: tuple[str, ...]) -> tuple[str, ...]:
    lower = LowerView(list(layers))
    found = ["/"]
    for part in pattern.strip("/").split("/"):
        found = [posixpath.join(d, name) for d in found
                 for name in (sorted(n for n in lower.listdir(d) if fnmatch(n, part))
                              if "*" in part else [part])]
    return tuple(found)


def forget_image_globs() -> None:
    """Drop what was read of the images (a test's fresh layers)."""
    expanded.cache_clear()
