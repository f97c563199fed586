"""Issue 44, item 11: help showed Typer's annotation placeholders (`<bool>` beside every
flag, `<list[Path]>`, `{source}` in the usage line) and the command list cut five
descriptions mid-sentence ("... paired comparisons of every two")."""

from __future__ import annotations

import re
from typing import Any

import pytest
from typer.testing import CliRunner

from termgrade.cli.app import COMMANDS, app, load_group


def _leaves(name: str, command: Any) -> list[list[str]]:
    subs = getattr(command, "commands", None)
    if not subs:
        return [[name]]
    return [[name, *rest] for sub, cmd in sorted(subs.items()) for rest in _leaves(sub, cmd)]


COMMAND_LINES = [[]] + [path for name in sorted(COMMANDS)
                 for path in _leaves(name, load_group(COMMANDS[name][0]).commands[name])]
ANNOTATION = re.compile(r"<(bool|str|int|float|path|Path|list\[[^>]*\])>")


@pytest.mark.parametrize("words", COMMAND_LINES, ids=lambda w: " ".join(w) or "termgrade")
def test_help_shows_classic_placeholders(words: list[str]) -> None:
    result = CliRunner().invoke(app, [*words, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert not ANNOTATION.search(result.output), (words, ANNOTATION.findall(result.output))
    usage = next(line for line in result.output.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage


def test_the_command_list_says_whole_sentences() -> None:
    cut = {name: summary for name, (_, summary) in COMMANDS.items()
           if not summary.endswith((".", ")"))}
    assert cut == {}
    listing = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert "paired comparisons of every two " not in listing
