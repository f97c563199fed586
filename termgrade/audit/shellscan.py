"""Find commands that reach the network in shell scripts and Dockerfiles, statically.

A script is cut into simple commands: line continuations joined, comments dropped,
split on ``&&``, ``||``, ``;``, ``|``, ``&``, parentheses and command substitution.
The body of a here-document is kept only when it feeds a shell (``bash <<EOF``,
``RUN <<EOF``); otherwise it is data (``cat > file <<EOF``) and is not scanned.
Leading ``VAR=value`` assignments and wrappers (``sudo``, ``env``, ``nohup``, ...) are
skipped. Then each command is matched against :data:`INSTALLERS` and the fetchers
(``curl``/``wget`` to a non-loopback URL, ``git clone``/``fetch``/``pull`` of a remote
URL, ``uvx``/``npx``/``pipx run``). ``pip install --no-index`` (offline wheels) passes.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_CRUDE = re.compile(r"&&|\|\||[;|&()`]|\$\(")
_OPERATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;", "|&", "`", "$"}
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_URL = re.compile(r"^(?:https?|ftps?|git|ssh)://([^/:@\s]*@)?([^/:\s]+)", re.IGNORECASE)
_SCP_URL = re.compile(r"^[\w.-]+@[\w.-]+:")
_LOOPBACK = re.compile(r"^(localhost|127(?:\.\d+){3}|\[?::1\]?|0\.0\.0\.0)$", re.IGNORECASE)
_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")
_GIT_REMOTE = {"clone", "fetch", "pull", "ls-remote", "submodule"}
_SHELLS = {"sh", "bash", "dash", "zsh"}
_WRAPPERS = {"sudo", "env", "nohup", "time", "exec", "command", "builtin", "xargs", "timeout"}

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


def _feeds_shell(prefix: str) -> bool:
    """Whether the command before ``<<WORD`` runs the here-document as a script."""
    words = [w.rsplit("/", 1)[-1] for w in prefix.split() if w not in {"-s", "-e", "-x"}]
    return not words or words[-1] in _SHELLS


def _heredocs(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each line with the body of the here-document it opens (empty when none)."""
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


def _drop_data_heredocs(text: str) -> str:
    kept: list[str] = []
    for line, body in _heredocs(text):
        kept.append(line)
        match = _HEREDOC.search(line)
        if match is not None and line[: match.start()].strip() and _feeds_shell(
                line[: match.start()]):
            kept.extend(body)
    return "\n".join(kept)


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: fall back to a crude split
        return _CRUDE.sub(" ; ", line.split("#", 1)[0]).split()


def simple_commands(script: str) -> list[list[str]]:
    """The simple commands of a shell script, each as a list of words."""
    text = _drop_data_heredocs(script).replace("\\\n", " ")
    commands: list[list[str]] = []
    for line in text.splitlines():
        current: list[str] = []
        for word in _words(line):
            if word in _OPERATORS:
                commands.append(_unwrap(current))
                current = []
            else:
                current.append(word)
        commands.append(_unwrap(current))
    return [words for words in commands if words]


def _unwrap(words: list[str]) -> list[str]:
    """Drop leading ``VAR=value`` words and wrappers with their options/durations."""
    wrapped = False
    while words:
        head = words[0]
        if _ASSIGN.match(head) or head in _WRAPPERS:
            wrapped = wrapped or head in _WRAPPERS
        elif not (wrapped and (head.startswith("-") or _DURATION.match(head))):
            break
        words = words[1:]
    return words


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
    if name in _SHELLS and "-c" in args[:-1]:
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
            if match is not None and _feeds_shell(rest[: match.start()]):
                script = "\n".join([rest[: match.start()] + rest[match.end():], *body])
            exec_form = _exec_form(rest)
            reasons = ([r] if exec_form and (r := network_reason(exec_form))
                       else [] if exec_form else network_findings(script))
            findings.extend(f"RUN {reason}" for reason in reasons)
        elif keyword == "ADD" and any(is_remote_url(w) for w in rest.split()):
            findings.append("ADD fetches a remote URL")
    return findings
