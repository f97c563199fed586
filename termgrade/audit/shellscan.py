"""Find commands that reach the network in shell scripts and Dockerfiles, statically.

A script is read by a real shell parser (:mod:`termgrade.audit.shellparse`,
tree-sitter-bash): every simple command it may run, in conditions, lists, pipelines,
subshells, functions (at their calls), ``$(...)``, ``bash -c '...'`` strings and
here-documents fed to a shell, with simple variables expanded and wrappers (``sudo``,
``env``, ``timeout``, ...) dropped; a here-document fed to anything else
(``cat > file <<EOF``) is data. A Dockerfile's ``RUN`` lines are cut out line by line
(continuations joined, ``RUN <<EOF`` bodies kept) and each is read the same way. Then each
command is matched against :data:`INSTALLERS` and the fetchers (``curl``/``wget`` to a
non-loopback URL, ``git clone``/``fetch``/``pull`` of a remote URL, ``uvx``/``npx``/``pipx
run``). ``pip install --no-index`` (offline wheels) passes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from termgrade.audit.shellparse import SHELLS, shell_commands

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_URL = re.compile(r"^(?:https?|ftps?|git|ssh)://([^/:@\s]*@)?([^/:\s]+)", re.IGNORECASE)
_SCP_URL = re.compile(r"^[\w.-]+@[\w.-]+:")
_LOOPBACK = re.compile(r"^(localhost|127(?:\.\d+){3}|\[?::1\]?|0\.0\.0\.0)$", re.IGNORECASE)
_GIT_REMOTE = {"clone", "fetch", "pull", "ls-remote", "submodule"}

INSTALLERS: dict[str, set[str]] = {
    "apt-get": {"install", "update", "upgrade", "dist-upgrade", "build-dep", "source",
                "download"},
    "apt": {"install", "update", "upgrade", "full-upgrade"},
    "aptitude": {"install", "update"},
    "pip": {"install", "download", "wheel"},
    "conda": {"install", "create", "update"}, "mamba": {"install", "create"},
    "micromamba": {"install", "create"},
    "npm": {"install", "i", "ci", "add", "update"}, "yarn": {"add", "install"},
    "pnpm": {"add", "install", "i"}, "gem": {"install"}, "cargo": {"install", "fetch"},
    "go": {"get", "install"}, "apk": {"add", "update"}, "yum": {"install"},
    "dnf": {"install"}, "bundle": {"install"}, "composer": {"install", "require"},
    "poetry": {"install", "add"}, "pipx": {"install", "run"}, "uv": {"add", "sync", "tool"},
}
"""Package managers and the subcommands of theirs that download."""


def _heredocs(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each Dockerfile line with the body of the here-document it opens (empty when none)."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        body: list[str] = []
        match = _HEREDOC.search(line)
        if match is not None:
            while index < len(lines) and lines[index].strip() != match.group(2):
                body.append(lines[index])
                index += 1
            index += 1
        yield line, body


def simple_commands(script: str) -> list[list[str]]:
    """The simple commands a shell script may run, each as a list of words
    (:func:`termgrade.audit.shellparse.shell_commands`)."""
    return [command.words for command in shell_commands(script)]


def is_remote_url(word: str) -> bool:
    match = _URL.match(word)
    if match:
        return not _LOOPBACK.match(match.group(2))
    return bool(_SCP_URL.match(word))


def _program(words: list[str]) -> tuple[str, list[str]]:
    name = words[0].rsplit("/", 1)[-1]
    if re.fullmatch(r"python[\d.]*", name) and words[1:3] == ["-m", "pip"]:
        return "pip", words[3:]
    if re.fullmatch(r"pip[\d.]*", name):
        return "pip", words[1:]
    if name == "uv" and words[1:2] == ["pip"]:
        return "pip", words[2:]
    return name, words[1:]


def network_reason(words: list[str]) -> str | None:
    """Why this simple command reaches the network, or None."""
    name, args = _program(words)
    if name in SHELLS and "-c" in args[:-1]:
        inner = network_findings(args[args.index("-c") + 1])
        return inner[0] if inner else None
    subcommand = next((a for a in args if not a.startswith("-")), "")
    if name in INSTALLERS and subcommand in INSTALLERS[name]:
        if name == "pip" and "--no-index" in args:
            return None
        return f"`{' '.join(words[:3])}` fetches packages from the network"
    if name in {"curl", "wget", "aria2c"} and any(is_remote_url(a) for a in args):
        return f"`{name}` downloads from a remote URL"
    if name == "git" and subcommand in _GIT_REMOTE and any(is_remote_url(a) for a in args):
        return f"`git {subcommand}` of a remote repository"
    if name in {"uvx", "npx"} or (name == "uv" and args[:2] == ["tool", "run"]):
        return f"`{name}` downloads the tool it runs"
    return None


def network_findings(script: str) -> list[str]:
    """One reason per command of ``script`` that reaches the network."""
    return [r for words in simple_commands(script) if (r := network_reason(words))]


def _exec_form(rest: str) -> list[str] | None:
    """``RUN ["prog", "arg"]`` as its word list; None for the shell form."""
    if not rest.startswith("["):
        return None
    try:
        words = json.loads(rest)
    except ValueError:
        return None
    return [str(w) for w in words] if isinstance(words, list) and words else None


def dockerfile_findings(dockerfile: str) -> list[str]:
    """Network access of a Dockerfile's RUN commands and ``ADD <url>`` sources."""
    findings: list[str] = []
    for raw, body in _heredocs(dockerfile.replace("\\\n", " ")):
        keyword, _, rest = raw.strip().partition(" ")
        keyword = keyword.upper()
        if keyword == "RUN":
            rest = re.sub(r"^(--\S+\s+)+", "", rest.strip())
            match = _HEREDOC.search(rest)
            script = rest
            if match is not None and not rest[: match.start()].strip():
                script = "\n".join(body)          # RUN <<EOF: the body is the script
            elif match is not None:               # the parser decides whether it is data
                script = "\n".join([rest, *body, match.group(2)])
            exec_form = _exec_form(rest)
            reasons = ([r] if exec_form and (r := network_reason(exec_form))
                       else [] if exec_form else network_findings(script))
            findings.extend(f"RUN {reason}" for reason in reasons)
        elif keyword == "ADD" and any(is_remote_url(w) for w in rest.split()):
            findings.append("ADD fetches a remote URL")
    return findings
