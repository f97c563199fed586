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
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache

import tree_sitter
import tree_sitter_bash

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "exec", "command", "builtin", "xargs",
                      "timeout", "nice", "stdbuf", "setsid"})
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

    def child(self) -> _Scope:
        """A subshell's scope: its own variables and directory, the same functions."""
        return _Scope(dict(self.variables), self.functions, self.called, self.cwd, self.stack,
                      self.reached)


def unwrap(words: list[str]) -> list[str]:
    """Drop leading ``VAR=value`` words and wrappers with their options/durations."""
    wrapped = False
    while words:
        head = words[0]
        if _ASSIGN.match(head) or head in WRAPPERS:
            wrapped = wrapped or head in WRAPPERS
        elif not (wrapped and (head.startswith("-") or _DURATION.match(head))):
            break
        words = words[1:]
    return words


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


def _command(node: tree_sitter.Node, scope: _Scope, depth: int) -> Iterator[ShellCommand]:
    yield from _substitutions(node, scope, depth)
    raw: list[str] = []
    for child in node.children:
        if child.type == "command_name":
            raw.extend(_expand(child.children[0], scope, split=True) or [_text(child)])
        elif node.field_name_for_child(node.children.index(child)) == "argument":
            raw.extend(_expand(child, scope, split=True) or [_text(child)])
    words = unwrap(raw)
    if not words:
        return
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
            yield from _walk(scope.functions[head], inner, depth + 1)
            scope.cwd = inner.cwd
        return
    script = _inline_script(head, args)
    if script is not None:
        yield from _script(script, scope.child(), depth + 1)
        return
    yield ShellCommand(words, scope.cwd, scope.reached)


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
        words = unwrap([_text(c) for c in body.children
                        if c.type in ("command_name", "word", "raw_string", "string")])
        if words and words[0].rsplit("/", 1)[-1] in SHELLS and all(
                w.startswith("-") for w in words[1:]):
            yield from _substitutions(body, scope, depth)
            yield from _script(fed, scope.child(), depth + 1)
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

