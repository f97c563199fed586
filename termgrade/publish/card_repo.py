"""The repo id a staged card was built for, checked against the one it is published to.

A card's quick start loads its own repo (``load_dataset("ORG/NAME", ...)``, or
``PeftModel.from_pretrained(base, "ORG/NAME")`` for a checkpoint): published under another
id, its first code block loads a repo that does not exist.
"""

from __future__ import annotations

import re
from pathlib import Path

from termgrade.publish.errors import PublishError

_LOADS = re.compile(r'(?:load_dataset\(|PeftModel\.from_pretrained\(base,\s*)'
                    r'"([\w.-]+/[\w.-]+)"')


def card_repo_ids(root: Path) -> set[str]:
    """The repo ids the card at ``root/README.md`` loads in its code (none: no card)."""
    readme = root / "README.md"
    try:
        text = readme.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return set(_LOADS.findall(text))


def check_card_repo_id(root: Path, repo_id: str) -> None:
    """Refuse to publish a card built for another repo id, naming both and the fix."""
    built_for = card_repo_ids(root)
    if built_for and repo_id not in built_for:
        card = sorted(built_for)[0]
        raise PublishError(
            f"{root / 'README.md'}: the card was built for {card!r} (its quick start loads "
            f"it), not --repo-id {repo_id!r}: published here, it would load a repo that "
            "does not exist",
            fix=f"rebuild with `termgrade build ... --repo-id {repo_id}`, or publish with "
                f"--repo-id {card}")
