"""Maintainer overrides of a card's free-text sections; the facts stay generated.

A card template marks each section of prose it lets a maintainer rewrite::

    <!-- prose:intro -->
    Text, which may use the card's {{ placeholders }} (counts are filled in after).
    <!-- /prose -->

An override (``--card-prose``) is either a markdown file of such blocks, or a folder of
``<name>.md`` files (``card_prose/intro.md``). Each block replaces the section of that
name; the markers never reach the card. Naming a section the card does not have is an
error that names the file and lists the sections there are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from termgrade.builders.errors import BuildError

_BLOCK = re.compile(r"<!-- prose:([A-Za-z0-9_-]+) -->\n(.*?)<!-- /prose -->\n?", re.S)
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class CardProse:
    """Section name -> replacement text, and where they came from (for errors)."""

    source: str
    sections: dict[str, str] = field(default_factory=dict)


def _check_name(name: str, source: str) -> None:
    if not _NAME.match(name):
        raise BuildError(f"{source}: card prose section name {name!r} is not lowercase "
                         "letters, digits and underscores",
                         fix="name it after a section of the card, e.g. intro")


def load_card_prose(path: Path) -> CardProse:
    """Read ``path``: a markdown file of ``<!-- prose:NAME -->`` blocks, or a folder of
    ``NAME.md`` files."""
    path = Path(path)
    if path.is_dir():
        sections = {}
        for file in sorted(path.glob("*.md")):
            _check_name(file.stem, str(file))
            sections[file.stem] = file.read_text(encoding="utf-8").rstrip("\n") + "\n"
        if not sections:
            raise BuildError(f"{path}: no <section>.md file in the card prose folder",
                             fix="add e.g. intro.md, or pass a markdown file of prose blocks")
        return CardProse(str(path), sections)
    if not path.is_file():
        raise BuildError(f"{path}: no such card prose file or folder",
                         fix="pass a markdown file of <!-- prose:NAME --> blocks or a folder "
                         "of NAME.md files")
    text = path.read_text(encoding="utf-8")
    sections = {}
    for match in _BLOCK.finditer(text):
        name = match.group(1)
        _check_name(name, str(path))
        if name in sections:
            raise BuildError(f"{path}: card prose section {name!r} is given twice",
                             fix="keep one block per section")
        sections[name] = match.group(2)
    outside = _BLOCK.sub("", text).strip()
    if outside:
        line = text[:text.find(outside[:40])].count("\n") + 1
        raise BuildError(f"{path}: line {line}: text outside a <!-- prose:NAME --> ... "
                         "<!-- /prose --> block", fix="put every section's text in its block")
    if not sections:
        raise BuildError(f"{path}: no <!-- prose:NAME --> block",
                         fix="wrap each section's text in <!-- prose:NAME --> ... "
                         "<!-- /prose -->")
    return CardProse(str(path), sections)


def prose_names(template: str) -> list[str]:
    """The sections a template lets a maintainer rewrite, in order."""
    return [m.group(1) for m in _BLOCK.finditer(template)]


def with_prose(template: str, prose: CardProse | None, *, card: str) -> str:
    """``template`` with each marked section replaced by its override, markers removed.
    An override of a section the template lacks raises, naming the override's file."""
    known = prose_names(template)
    sections = prose.sections if prose is not None else {}
    unknown = sorted(set(sections) - set(known))
    if unknown and prose is not None:
        raise BuildError(f"{prose.source}: the {card} card has no prose section "
                         f"{', '.join(repr(u) for u in unknown)}",
                         fix=f"use one of: {', '.join(known)}")
    return _BLOCK.sub(lambda m: sections[m.group(1)].rstrip("\n") + "\n"
                      if m.group(1) in sections else m.group(2), template)
