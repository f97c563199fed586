"""The prompt templates of one version, and the messages they make.

Templates live in ``termgrade/generate/prompts/<version>/`` as files (``system.md``,
``task.md``, ``repair.md``, and ``test.sh``, the verifier boilerplate the system prompt
quotes); they are :class:`string.Template` texts (``$name``). A changed prompt is a new
version folder, so every candidate's history names the version that wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from string import Template
from typing import Any

from termgrade.core.errors import OptionError
from termgrade.generate.spec import CandidateSpec

DEFAULT_VERSION = "v1"
FILES = ("system.md", "task.md", "repair.md", "test.sh")


def _root() -> Traversable:
    return resources.files("termgrade.generate").joinpath("prompts")


def versions() -> list[str]:
    root = _root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("_"))


@dataclass(frozen=True)
class Prompts:
    version: str
    texts: dict[str, str]

    @classmethod
    def load(cls, version: str = DEFAULT_VERSION) -> Prompts:
        folder = _root().joinpath(version)
        if not folder.is_dir():
            raise OptionError(f"no prompt version {version!r}",
                              fix=f"choose one of {', '.join(versions())} (--prompts)")
        return cls(version, {name: folder.joinpath(name).read_text(encoding="utf-8")
                             for name in FILES})

    def _render(self, name: str, **values: Any) -> str:
        return Template(self.texts[name]).substitute(**values)

    def first(self, spec: CandidateSpec, *, base_image: str,
              min_tests: int) -> list[dict[str, str]]:
        """The system and user messages that ask for ``spec``'s task."""
        values = {"domain": spec.domain, "difficulty": spec.difficulty,
                  "topic": spec.topic or "your choice within the domain",
                  "base_image": base_image, "min_tests": min_tests,
                  "test_sh": self.texts["test.sh"].rstrip("\n")}
        return [{"role": "system", "content": self._render("system.md", **values)},
                {"role": "user", "content": self._render("task.md", **values)}]

    def repair(self, *, round: int, max_rounds: int, stage: str, feedback: str) -> str:
        """The user message that feeds a failure back."""
        return self._render("repair.md", round=round, max_rounds=max_rounds, stage=stage,
                            feedback=feedback)
