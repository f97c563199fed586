"""A battery of generic attacks on a grader, each a bash script played as the agent.

Each script (``scripts/<name>.sh``) is what a malicious agent could run in any task's
container without reading its tests: plant tools or hooks where the verifier looks,
leave processes that act while the tests run, break the grader's own reading of the
container. ``termgrade verify --attacks`` plays every one against every task; a task on
which any attack earns a reward above 0 is ``hackable``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from termgrade.core.errors import TermGradeError


@dataclass(frozen=True)
class Attack:
    name: str
    kind: str
    """``forge`` (aims at a reward of 1) or ``unscored`` (aims at a null reward)."""
    what: str
    script: Path


def _header(text: str, key: str) -> str | None:
    for line in text.splitlines()[:10]:
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    return None


def load_attacks(names: list[str] | None = None) -> list[Attack]:
    """The shipped attacks, sorted by name; ``names`` picks some. TermGradeError if unknown."""
    folder = Path(str(resources.files("termgrade.attacks") / "scripts"))
    attacks = []
    for path in sorted(folder.glob("*.sh")):
        text = path.read_text(encoding="utf-8")
        attacks.append(Attack(name=_header(text, "attack") or path.stem,
                              kind=_header(text, "class") or "forge",
                              what=_header(text, "what") or "", script=path))
    if names:
        known = {a.name: a for a in attacks}
        missing = [n for n in names if n not in known]
        if missing:
            raise TermGradeError(f"unknown attack(s): {', '.join(missing)}",
                                 fix="choose from: " + ", ".join(sorted(known)))
        attacks = [known[n] for n in names]
    return attacks
