"""What the scoring container's environment makes the image's tools read unasked.

test.sh runs with the image's ``ENV`` under the grader's fixed variables
(:func:`termgrade.scoring.verifier.command.verifier_env`). Besides ``PATH``, an image may set
variables that add directories to a tool's search path (``PERL5LIB``, ``NODE_PATH``,
``CPATH``, ``PKG_CONFIG_PATH``, ``RUBYLIB``, ``LIBRARY_PATH``) or name a file or directory a
tool reads on every start (``GIT_CONFIG_GLOBAL``, ``XDG_CONFIG_HOME``, ``MAGIC``,
``NODE_OPTIONS=--require /opt/hook.js``). A file the agent makes there changes what an image
tool computes for every test that runs it: the stand-in review
(:mod:`termgrade.scoring.review.standins`) judges such a file by what the variable makes of it:
in a search directory, one with the relative name of an image file the tool would
otherwise find later (the same rule as the tool's built-in search path); at a named
configuration path, any file the task did not ask for.

Decided by the variable's meaning, never by whether its value looks like a path: an
``APP_DIR=/app`` names where the work goes, not something a tool reads.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["ENV_CONFIG", "ENV_OPTIONS", "ENV_SEARCH_PATHS", "ToolEnv"]

ENV_SEARCH_PATHS: dict[str, tuple[str, ...]] = {
    "Perl module": ("PERL5LIB", "PERLLIB"),
    "C header": ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH"),
    "pkg-config file": ("PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR"),
    "Node module": ("NODE_PATH",),
    "Ruby library": ("RUBYLIB",),
    "Python module": ("PYTHONPATH",),
    "linker input": ("LIBRARY_PATH",),
}
"""For each kind of file a tool looks up by relative name, the variables whose
directories (``:``-separated) it searches before its built-in path, in that order."""

ENV_CONFIG: dict[str, tuple[str, str]] = {
    # "file": the path itself; "dir": anything below it; "dir:a/,b/": below those of its
    # subdirectories only (XDG_CONFIG_HOME holds any program's settings, git reads git/)
    "GIT_CONFIG_GLOBAL": ("file", "git's global configuration"),
    "GIT_CONFIG_SYSTEM": ("file", "git's system configuration"),
    "GIT_CONFIG": ("file", "git's configuration"),
    "GIT_TEMPLATE_DIR": ("dir", "git's templates (hooks copied into every new repository)"),
    "GIT_EXEC_PATH": ("dir", "git's own commands"),
    "XDG_CONFIG_HOME": ("dir:git/,pip/,uv/", "git's, pip's and uv's per-user configuration"),
    "CURL_HOME": ("dir", "curl's .curlrc"),
    "WGETRC": ("file", "wget's configuration"),
    "INPUTRC": ("file", "readline's configuration"),
    "MAGIC": ("file", "file(1)'s magic database"),
    "LOCPATH": ("dir", "glibc's locale data"),
    "GCONV_PATH": ("dir", "glibc's iconv modules"),
    "PIP_CONFIG_FILE": ("file", "pip's configuration"),
    "UV_CONFIG_FILE": ("file", "uv's configuration"),
    "NPM_CONFIG_USERCONFIG": ("file", "npm's user configuration"),
    "NPM_CONFIG_GLOBALCONFIG": ("file", "npm's global configuration"),
    "PERL5DB": ("file", "perl's debugger start-up"),
    "SQLITE_HISTORY": ("file", "sqlite3's history"),
    "PSQLRC": ("file", "psql's start-up file"),
    "MYSQL_HOME": ("dir", "the MySQL client's my.cnf"),
    "OPENSSL_MODULES": ("dir", "OpenSSL's provider modules"),
    "OPENSSL_ENGINES": ("dir", "OpenSSL's engines"),
}
"""Variables naming a file (or a directory of files) a tool reads on start, unasked."""

ENV_OPTIONS = ("NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
               "JDK_JAVA_OPTIONS")
"""Variables holding a tool's command-line options: an absolute path in one (``--require
/opt/hook.js``, ``-javaagent:/opt/a.jar``, ``-I/opt/lib``) is read by every run of it."""
_OPTION_PATH = re.compile(r"(?:^|[\s=:,])(/[^\s:,=]+)")


def _dirs(value: str) -> tuple[str, ...]:
    return tuple(posixpath.normpath(d) for d in value.split(":") if d.startswith("/"))


@dataclass(frozen=True)
class ToolEnv:
    """The search directories and configuration paths the scoring container's
    environment adds to the image's tools (empty: the image sets none)."""

    search: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Per kind (:data:`ENV_SEARCH_PATHS`), the directories searched first, in order."""
    reads: tuple[tuple[str, bool, str], ...] = ()
    """(path, is a directory, why): what a tool reads on start, by the variable naming it."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ToolEnv:
        """From the environment test.sh runs with (the image's under the grader's)."""
        search = []
        for kind, names in ENV_SEARCH_PATHS.items():
            dirs = tuple(dict.fromkeys(d for n in names for d in _dirs(env.get(n, ""))))
            if dirs:
                search.append((kind, dirs))
        reads: list[tuple[str, bool, str]] = []
        for name, (shape, tool) in ENV_CONFIG.items():
            for path in _dirs(env.get(name, ""))[:1]:
                why = f"{tool} ({name}={env[name]})"
                subs = shape.partition(":")[2]
                for sub in subs.split(",") if subs else ("",):
                    reads.append((posixpath.join(path, sub).rstrip("/") or "/",
                                  shape != "file", why))
        for name in ENV_OPTIONS:
            for path in _OPTION_PATH.findall(env.get(name, "")):
                reads.append((posixpath.normpath(path), False,
                              f"every run of the tool whose options name it "
                              f"({name}={env[name]})"))
        return cls(tuple(search), tuple(reads))

    def search_dirs(self, kind: str) -> tuple[str, ...]:
        return next((dirs for k, dirs in self.search if k == kind), ())

    def under_search(self, path: str) -> bool:
        """Is ``path`` below one of the search directories?"""
        return any(path.startswith(f"{d.rstrip('/')}/") for _, dirs in self.search
                   for d in dirs)

    def read_unasked(self, path: str) -> str | None:
        """Why a tool reads ``path`` on start because the environment names it, or None."""
        for named, is_dir, why in self.reads:
            if path == named or (is_dir and path.startswith(f"{named.rstrip('/')}/")):
                return why
        return None

    def watched(self, path: str) -> bool:
        """Could an entry at ``path`` be read by a tool because of this environment?"""
        return self.under_search(path) or self.read_unasked(path) is not None
