"""The simple commands a shell script runs, read by a real parser (tree-sitter-bash).

The script is parsed into a syntax tree and walked in execution order; every simple
command that may run is yielded as a :class:`ShellCommand`, wherever it stands:

* in ``if``/``while`` conditions and bodies, ``&&``/``||`` lists, pipelines, subshells,
  ``{ ...; }`` groups, ``case`` items, loops, ``! cmd``;
* inside ``$(...)``, backticks and ``<(...)`` (before the command that uses them);
* in a function's body, at each call of the function (a function the script never calls
  is yielded at the end with ``called=False``: a dynamic call may still reach it);
* inside the string of ``bash -c '...'`` / ``sh -c``, ``eval``, ``trap '...' SIG`` and a
  here-document or here-string fed to a shell (``bash <<EOF``), parsed recursively (the
  shell itself is not yielded); a here-document fed to anything else is data.

Words are what the shell passes: quotes removed, and simple variables assigned earlier in
the script (``ARGS="-rA -v"``, ``export PY=/opt/venv/bin/python``, ``A=(x y)``) expanded
where used: unquoted ``$ARGS`` splits into words, ``"$ARGS"`` stays one. A variable this
reading cannot know (set from ``$(...)``, from the environment) keeps its ``$NAME`` text.
Leading ``VAR=value`` words and wrappers (``sudo``, ``env``, ``timeout 60``, ``nohup``,
...) are dropped. ``cd DIR`` is followed, so each command carries the directory it runs in
(None where unknown: the image's WORKDIR, before any ``cd``).

Each command also carries what removed the grader's environment before it ran, if
anything did (``env_reset``): ``env -i`` / ``env -`` / ``env --ignore-environment``, ``env
-u`` of one of :data:`GRADER_VARIABLES`, an ``unset`` of one earlier in the script or an
assignment that takes its effect away (``PYTHONDONTWRITEBYTECODE=``), or a
command that starts it as another user or in a login shell (``sudo``, ``su``,
``runuser``; their ``-c`` string is parsed like ``bash -c``'s). It holds for every command
below such a wrapper (``env -i bash -c '...'``).
"""

from __future__ import annotations

import posixpath
import re
import shlex
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

import tree_sitter
import tree_sitter_bash

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "exec", "command", "builtin", "xargs",
                      "timeout", "nice", "stdbuf", "setsid"})
GRADER_VARIABLES = frozenset({"PYTHONPATH", "PYTEST_PLUGINS", "PYTHONDONTWRITEBYTECODE",
                              "PYTEST_DISABLE_PLUGIN_AUTOLOAD"})
"""Variables of the grader's environment for test.sh (``verifier_env``) that attestation
needs: the grader's ``sitecustomize`` and plugin are found through them, and pytest writes
no bytecode into ``/tests`` under them. Removing one is an environment reset."""
_ENV_PROGRAMS = frozenset({"env", "/usr/bin/env", "/bin/env"})
_SUDO_PROGRAMS = frozenset({"sudo", "/usr/bin/sudo", "/bin/sudo"})
_SWITCH_USER = frozenset({"su", "runuser"})
"""Programs that start a command as a user in a shell of their own (``-c STRING``)."""
_SUDO_VALUED = frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U",
                          "--user", "--group", "--close-from", "--chdir", "--host", "--prompt",
                          "--role", "--type", "--command-timeout", "--other-user"})
_SWITCH_VALUED = frozenset({"-g", "-G", "-s", "-u", "-w", "--group", "--supp-group", "--shell",
                            "--user", "--whitelist-environment"})
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")
_MAX_DEPTH = 8
"""Nesting of ``-c`` strings, ``eval`` and function calls followed before giving up."""
_NESTED = frozenset({"command_substitution", "process_substitution"})


@dataclass(frozen=True)
class ShellCommand:
    """One simple command: its words (wrappers dropped), the directory it runs in (None:
    unknown) and whether the script reaches it (False: a body of a function never called)."""

    words: list[str]
    cwd: str | None = None
    called: bool = True
    env_reset: str | None = None
    """What removed the grader's environment before this command ran (``env -i``,
    ``env -u PYTHONPATH``, ``sudo``, ``su -c``, ``unset PYTHONPATH``), or None."""


@cache
def _language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_bash.language())


_LOCAL = threading.local()


def _parser() -> tree_sitter.Parser:
    """This thread's parser: a tree-sitter ``Parser`` is not safe to share between threads
    (``verify`` and ``grade`` audit tasks from worker threads)."""
    parser: tree_sitter.Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = tree_sitter.Parser(_language())
    return parser


def parses(script: str) -> bool:
    """Whether tree-sitter-bash reads ``script`` with no syntax error."""
    return not _parser().parse(script.encode()).root_node.has_error


@dataclass
class _Scope:
    variables: dict[str, list[str] | None] = field(default_factory=dict)
    functions: dict[str, tree_sitter.Node] = field(default_factory=dict)
    called: set[str] = field(default_factory=set)
    cwd: str | None = None
    stack: tuple[str, ...] = ()
    reached: bool = True
    reset: str | None = None
    """What removed the grader's environment for this scope's commands (``env_reset``)."""

    def child(self, reset: str | None = None) -> _Scope:
        """A subshell's scope: its own variables and directory, the same functions;
        ``reset``: what removed the grader's environment for it, if its parent had not."""
        return _Scope(dict(self.variables), self.functions, self.called, self.cwd, self.stack,
                      self.reached, self.reset or reset)


def unwrap(words: list[str]) -> list[str]:
    """Drop leading ``VAR=value`` words and wrappers with their options/durations."""
    return unwrap_env(words)[0]


def unwrap_env(words: list[str]) -> tuple[list[str], str | None]:
    """:func:`unwrap`, and what of the dropped wrappers removed the grader's environment
    (``env -i``, ``env -u PYTHONPATH``, ``sudo``; module doc), or None."""
    wrapped = False
    reset: str | None = None
    while words:
        head = words[0]
        if head in _ENV_PROGRAMS:
            words, why = _env_args(words[1:])
            reset = reset or why
            continue
        if head in _SUDO_PROGRAMS:
            words = _skip_options(words[1:], _SUDO_VALUED)
            reset = reset or "sudo"
            continue
        if _ASSIGN.match(head) and _overrides(head):
            reset = reset or head
        if _ASSIGN.match(head) or head in WRAPPERS:
            wrapped = wrapped or head in WRAPPERS
        elif not (wrapped and (head.startswith("-") or _DURATION.match(head))):
            break
        words = words[1:]
    return words, reset


def _overrides(assignment: str) -> bool:
    """Whether ``NAME=value`` takes away what the grader's variable does: an empty
    ``PYTHONDONTWRITEBYTECODE`` or ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` (Python and pytest
    read an empty one as unset), a ``PYTEST_PLUGINS`` that does not keep its own value."""
    name, _, value = assignment.partition("=")
    if name in ("PYTHONDONTWRITEBYTECODE", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return not value
    return name == "PYTEST_PLUGINS" and not re.search(r"\$\{?PYTEST_PLUGINS\b", value)


def _skip_options(args: list[str], valued: frozenset[str]) -> list[str]:
    """``args`` from the first word that is not an option (``valued`` options take the
    next word as their value; ``--`` ends the options)."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if args[index] == "--":
            return args[index + 1:]
        index += 2 if args[index] in valued else 1
    return args[index:]


def _env_args(args: list[str]) -> tuple[list[str], str | None]:
    """GNU ``env``'s options read off ``args``: the words after them (``-S STRING`` split
    into words in front) and whether they removed the grader's environment."""
    reset: str | None = None
    index = 0
    while index < len(args):
        word = args[index]
        value = args[index + 1] if index + 1 < len(args) else ""
        if word == "--":
            index += 1
            break
        if word in ("-", "-i", "--ignore-environment"):
            reset = reset or f"env {word}"
            index += 1
        elif word in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string"):
            if word in ("-u", "--unset") and value in GRADER_VARIABLES:
                reset = reset or f"env {word} {value}"
            if word in ("-S", "--split-string"):
                return _split(value) + args[index + 2:], reset
            index += 2
        elif word.startswith("--"):
            name, _, value = word.partition("=")
            if name == "--unset" and value in GRADER_VARIABLES:
                reset = reset or f"env {word}"
            if name == "--split-string":
                return _split(value) + args[index + 1:], reset
            index += 1
        elif word.startswith("-") and len(word) > 1:
            flags = word[1:]
            for at, flag in enumerate(flags):
                if flag == "i":
                    reset = reset or f"env {word}"
                elif flag in "uCS":
                    rest = flags[at + 1:]
                    taken = rest or value
                    if flag == "u" and taken in GRADER_VARIABLES:
                        reset = reset or f"env -u {taken}"
                    if flag == "S":
                        return _split(taken) + args[index + (1 if rest else 2):], reset
                    index += 0 if rest else 1
                    break
            index += 1
        else:
            break
    return args[index:], reset


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return [text]


def shell_commands(script: str) -> list[ShellCommand]:
    """Every simple command ``script`` may run, in execution order (module doc)."""
    scope = _Scope()
    found = list(_script(script, scope, 0))
    for name, body in scope.functions.items():
        if name not in scope.called:
            lost = scope.child()
            lost.reached = False
            found.extend(_walk(body, lost, 1))
    return found


def _script(text: str, scope: _Scope, depth: int) -> Iterator[ShellCommand]:
    if depth > _MAX_DEPTH:
        return
    root = _parser().parse(text.encode()).root_node
    _collect_functions(root, scope)
    yield from _walk(root, scope, depth)


def _collect_functions(node: tree_sitter.Node, scope: _Scope) -> None:
    for child in node.children:
        if child.type == "function_definition":
            name, body = child.child_by_field_name("name"), child.child_by_field_name("body")
            if name is not None and body is not None:
                scope.functions[_text(name)] = body
        _collect_functions(child, scope)


def _walk(node: tree_sitter.Node, scope: _Scope, depth: int) -> Iterator[ShellCommand]:
    kind = node.type
    if kind == "function_definition":
        return
    if kind in ("subshell", *_NESTED):
        inner = scope.child()
        for child in node.children:
            yield from _walk(child, inner, depth)
        return
    if kind == "unset_command":
        unset = [_text(c) for c in node.named_children if _text(c) in GRADER_VARIABLES]
        if unset:
            scope.reset = scope.reset or f"unset {unset[0]}"
    if kind == "variable_assignment":
        yield from _assign(node, scope, depth)
    elif kind == "command":
        yield from _command(node, scope, depth)
    elif kind == "redirected_statement":
        yield from _redirected(node, scope, depth)
    elif kind in ("heredoc_body", "herestring_redirect"):
        yield from _substitutions(node, scope, depth)
    else:
        for child in node.children:
            yield from _walk(child, scope, depth)


def _substitutions(node: tree_sitter.Node, scope: _Scope, depth: int) -> Iterator[ShellCommand]:
    """The commands of the ``$(...)`` inside ``node`` (they run before it)."""
    for child in node.children:
        if child.type in _NESTED:
            yield from _walk(child, scope, depth)
        else:
            yield from _substitutions(child, scope, depth)


def _assign(node: tree_sitter.Node, scope: _Scope, depth: int) -> Iterator[ShellCommand]:
    yield from _substitutions(node, scope, depth)
    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name is None or name.type != "variable_name":
        return
    if value is None:
        scope.variables[_text(name)] = [""]
    elif value.type == "array":
        words: list[str] = []
        for element in value.named_children:
            words.extend(_expand(element, scope, split=True) or [_text(element)])
        scope.variables[_text(name)] = words
    else:
        scope.variables[_text(name)] = _expand(value, scope, split=False)
    known = scope.variables[_text(name)]
    if known is not None and _overrides(f"{_text(name)}={' '.join(known)}"):
        scope.reset = scope.reset or f"{_text(name)}={' '.join(known)}"


def _command(node: tree_sitter.Node, scope: _Scope, depth: int) -> Iterator[ShellCommand]:
    yield from _substitutions(node, scope, depth)
    raw: list[str] = []
    for child in node.children:
        if child.type == "command_name":
            raw.extend(_expand(child.children[0], scope, split=True) or [_text(child)])
        elif node.field_name_for_child(node.children.index(child)) == "argument":
            raw.extend(_expand(child, scope, split=True) or [_text(child)])
    words, reset = unwrap_env(raw)
    reset = scope.reset or _prefix_reset(node, scope) or reset
    if not words:
        return
    head, args = words[0], words[1:]
    if head.rsplit("/", 1)[-1] in _SWITCH_USER:
        shown = head + (f" {args[0]}" if args and args[0].startswith("-") else "")
        script, words = _switched(words)
        if script is not None:
            yield from _script(script, scope.child(shown), depth + 1)
            return
        if not words:
            return
        reset = reset or shown
        head, args = words[0], words[1:]
    if head in ("cd", "pushd"):
        target = next((a for a in args if not a.startswith("-")), None)
        scope.cwd = _resolve(target, scope.cwd) if target and "$" not in target else None
    elif head in scope.functions:
        if head not in scope.stack and depth < _MAX_DEPTH:
            scope.called.add(head)
            inner = scope.child()
            inner.stack = (*scope.stack, head)
            inner.variables = scope.variables    # a function shares the caller's variables
            inner.reset = reset
            yield from _walk(scope.functions[head], inner, depth + 1)
            scope.cwd = inner.cwd
            scope.reset = scope.reset or inner.reset
        return
    script = _inline_script(head, args)
    if script is not None:
        yield from _script(script, scope.child(reset), depth + 1)
        return
    yield ShellCommand(words, scope.cwd, scope.reached, reset)


def _prefix_reset(node: tree_sitter.Node, scope: _Scope) -> str | None:
    """A ``NAME=value`` before the command that takes a grader variable's effect away."""
    for child in node.children:
        name, value = child.child_by_field_name("name"), child.child_by_field_name("value")
        if child.type != "variable_assignment" or name is None:
            continue
        known = [""] if value is None else _expand(value, scope, split=False)
        if known is not None and _overrides(f"{_text(name)}={' '.join(known)}"):
            return f"{_text(name)}={' '.join(known)}"
    return None


def _switched(words: list[str]) -> tuple[str | None, list[str]]:
    """``su``/``runuser``: the ``-c`` string its user's shell runs (None without one), and
    the command ``runuser -u USER [--] COMMAND`` runs itself (empty when none)."""
    args = words[1:]
    user = False
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-c", "--command"):
            return (args[index + 1] if index + 1 < len(args) else ""), []
        if word.startswith("--command="):
            return word.partition("=")[2], []
        if word == "--":
            return None, args[index + 1:] if user else []
        if word in ("-u", "--user"):
            user = True
        if not word.startswith("-"):
            if user:
                return None, args[index:]
            index += 1
            continue
        index += 2 if word in _SWITCH_VALUED else 1
    return None, []


def _inline_script(head: str, args: list[str]) -> str | None:
    """The script text a command runs itself: ``bash -c S``, ``eval S``, ``trap S SIG``."""
    name = head.rsplit("/", 1)[-1]
    flag = next((i for i, a in enumerate(args[:-1]) if re.fullmatch(r"-[a-z]*c[a-z]*", a)),
                None)
    if name in SHELLS and flag is not None:
        return args[flag + 1]
    if name == "eval" and args:
        return " ".join(args)
    if name == "trap" and len(args) >= 2 and not args[0].startswith("-"):
        return args[0]
    return None


def _redirected(node: tree_sitter.Node, scope: _Scope, depth: int) -> Iterator[ShellCommand]:
    body = node.child_by_field_name("body")
    fed = _fed_text(node)
    if body is not None and body.type == "command" and fed is not None:
        words, reset = unwrap_env([_text(c) for c in body.children
                                   if c.type in ("command_name", "word", "raw_string",
                                                 "string")])
        if words and words[0].rsplit("/", 1)[-1] in SHELLS and all(
                w.startswith("-") for w in words[1:]):
            yield from _substitutions(body, scope, depth)
            yield from _script(fed, scope.child(reset), depth + 1)
            return
    for child in node.children:
        yield from _walk(child, scope, depth)


def _fed_text(node: tree_sitter.Node) -> str | None:
    """The text a here-document or here-string feeds the command's stdin, if any."""
    for child in node.children:
        if child.type == "heredoc_redirect":
            body = next((c for c in child.children if c.type == "heredoc_body"), None)
            return _text(body) if body is not None else ""
        if child.type == "herestring_redirect" and child.named_children:
            words = _expand(child.named_children[-1], _Scope(), split=False)
            return words[0] if words else _text(child.named_children[-1])
    return None


def _resolve(path: str, cwd: str | None) -> str | None:
    if path.startswith("/"):
        return posixpath.normpath(path)
    return posixpath.normpath(posixpath.join(cwd, path)) if cwd else None


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode(errors="replace")


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _expand(node: tree_sitter.Node, scope: _Scope, *, split: bool) -> list[str] | None:
    """The words ``node`` expands to; None where it cannot be known statically."""
    kind = node.type
    if kind in ("word", "number"):
        return [_unescape(_text(node))]
    if kind == "raw_string":
        return [_text(node)[1:-1]]
    if kind == "ansi_c_string":
        return [_text(node)[2:-1]]
    if kind in ("simple_expansion", "expansion"):
        names = [c for c in node.named_children]
        if len(names) == 1 and names[0].type == "variable_name":
            value = scope.variables.get(_text(names[0]))
            if value is None:
                return None
            return [w for v in value for w in v.split()] if split else [" ".join(value)]
        return None
    if kind in ("string", "concatenation"):
        parts: list[str] = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type == "string_content":
                parts.append(_unescape(_text(child)))
                continue
            value = _expand(child, scope, split=False)
            parts.append(value[0] if value else _text(child))
        return ["".join(parts)]
    return None

