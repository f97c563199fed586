"""Semantic versions (semver 2.0.0) with precedence ordering."""

import re
from functools import total_ordering

_NUM = r"0|[1-9]\d*"
_PRE_ID = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
_VERSION = re.compile(
    rf"^({_NUM})\.({_NUM})\.({_NUM})"
    rf"(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


@total_ordering
class Version:
    __slots__ = ("major", "minor", "patch", "prerelease", "build")

    def __init__(self, major, minor, patch, prerelease=(), build=()):
        self.major, self.minor, self.patch = major, minor, patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(build)

    @classmethod
    def parse(cls, text):
        m = _VERSION.match(text)
        if not m:
            raise ValueError(f"invalid version: {text!r}")
        pre = tuple(int(p) if p.isdigit() else p for p in m[4].split(".")) if m[4] else ()
        build = tuple(m[5].split(".")) if m[5] else ()
        return cls(int(m[1]), int(m[2]), int(m[3]), pre, build)

    @property
    def release(self):
        return (self.major, self.minor, self.patch)

    def _key(self):
        if not self.prerelease:
            pre = (1, "")
        else:
            pre = (0, ".".join(str(p) for p in self.prerelease))
        return (self.major, self.minor, self.patch, pre, self.build)

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(str(p) for p in self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self):
        return f"Version.parse({str(self)!r})"
