"""The errors every floor raises: :class:`TermGradeError`, the base of every error TermGrade
raises on purpose, and the few that cross floors (an output that cannot be written, a
malformed record, an option that cannot work, suspicious data).

Each stage's own errors live in its ``errors.py`` (``sandbox/errors.py``,
``publish/errors.py``, ...), each a :class:`TermGradeError` that subclasses the builtin it
resembles, carries structured attributes and names what failed and the fix: the CLI maps
any of them to that message and exit status 1. A stage's signals, raised by one of its
parts for another to catch (an endpoint that gave up, a Hub parent that moved), are handled
inside the library, so they keep the builtin bases their handlers catch. Only the code that
runs inside containers, where TermGrade is not installed (``termgrade/scoring/incontainer/``,
``termgrade/attacks/scripts/``), defines exceptions anywhere else.
"""

from __future__ import annotations


class TermGradeError(Exception):
    """Base of every error TermGrade raises on purpose."""

    fix: str | None = None

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.fix = fix
        super().__init__(message if fix is None else f"{message}\n  fix: {fix}")


class OutputError(TermGradeError, OSError):
    """An output path cannot be written (not a regular file, not writable, no space)."""

    def __init__(self, path: object, reason: str, *, fix: str | None = None) -> None:
        self.path = path
        super().__init__(f"cannot write {path}: {reason}",
                         fix=fix or "choose a writable path for the output (-o / --output)")


def output_error(path: object, exc: OSError) -> OutputError:
    """The OSError of writing ``path`` as a message that names it."""
    return OutputError(exc.filename or path, exc.strerror or str(exc))


class RecordError(TermGradeError, ValueError):
    """A JSON/JSONL record is malformed or violates its schema."""

    def __init__(self, source: str, message: str, *, fix: str | None = None) -> None:
        self.source = source
        super().__init__(f"{source}: {message}", fix=fix)


class DataWarning(UserWarning):
    """Suspicious but usable input data (NaN rewards, mixed k, missing tasks), with counts.

    Library functions both return these as records and emit them through :mod:`warnings`;
    the CLI prints them. Data is never silently zeroed.
    """


class OptionError(TermGradeError, ValueError):
    """An option or configuration value that cannot work (bad cut points, k, range, spec)."""


class RegistryError(OptionError, KeyError):
    """A door's registry (scaffolds, repo kinds, validate checks) was asked for a name it
    does not hold, or to register a name it already holds, or to load a ``module:name``
    that does not resolve. An :class:`OptionError` (the name is usually an option's value)
    and a ``KeyError`` (it is a failed lookup)."""

    def __init__(self, door: str, name: str, message: str, *, fix: str | None = None) -> None:
        self.door = door
        self.name = name
        super().__init__(message, fix=fix)

    def __str__(self) -> str:  # KeyError's would quote the message
        return Exception.__str__(self)
