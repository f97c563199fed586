"""Calls into the package under test, made in a child process and never inside pytest.

:func:`app_calls` starts ``python -c <this file's text>`` with /app as working directory,
so only that child imports the package (``-c`` puts the working directory first on
``sys.path``). The child runs each requested operation of :func:`operations` (test code,
defined at the end of this file) and replies with one result per call; whatever the
package does to its own interpreter (patching modules, ``os._exit``) cannot reach pytest.

Arguments and results travel as JSON. Values JSON lacks are tagged ``{"t": kind, "v": ...}``
(datetimes, decimals, sets, tuples, dicts, namespaces, classes). An exception raised by a
call comes back as a :class:`Raised` (``raised(result, ValueError)`` is the test's
``pytest.raises``), a class as an :class:`AppClass`, any other object as a
:class:`Foreign`, which equals no expected value. While the package runs, file
descriptor 1 points at stderr, so its prints cannot garble the reply.
"""

import json
import os
import sys
from datetime import datetime
from decimal import Decimal
from types import SimpleNamespace

APP = "/app"
TIMEOUT = 60


def _qualname(cls):
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', '?')}"


def _safe(show, value):
    try:
        return show(value)
    except Exception:  # any value can be shown somehow
        return f"<unprintable {_qualname(type(value))}>"


def _class_name(cls):
    return cls.name if isinstance(cls, AppClass) else _qualname(cls)


class _Record:
    """A small immutable value with equality (a dataclass, without importing dataclasses:
    the child starts once per test and should start fast)."""

    __slots__ = ()

    def __init__(self, *values):
        for name, value in zip(self.__slots__, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is read-only")

    def _values(self):
        return tuple(object.__getattribute__(self, name) for name in self.__slots__)

    def __eq__(self, other):
        return type(other) is type(self) and other._values() == self._values()

    def __hash__(self):
        return hash(self._values())

    def __repr__(self):
        return f"{type(self).__name__}{self._values()!r}"


class AppClass(_Record):
    """A class of the package: the qualified names of it and its bases, in MRO order."""

    __slots__ = ("classes",)

    @property
    def name(self):
        return self.classes[0]

    def is_subclass(self, cls):
        """``issubclass(this class, cls)``; cls is a builtin class or an AppClass."""
        return _class_name(cls) in self.classes


class Raised(_Record):
    """What a call raised instead of returning: the exception class's MRO and message.

    Using it as a value (truth, iteration, attributes) fails the test with the error."""

    __slots__ = ("classes", "message")

    def is_a(self, cls):
        """``isinstance(the exception, cls)``; cls is a builtin class or an AppClass."""
        return _class_name(cls) in self.classes

    def _fail(self, *_):
        raise AssertionError(f"the call raised {self.classes[0]}: {self.message}")

    __bool__ = __iter__ = __getitem__ = _fail

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        self._fail()


class Foreign(_Record):
    """A result with no JSON form (its type and repr); equal to no expected value."""

    __slots__ = ("type", "repr")


def raised(result, cls):
    """Whether the call raised ``cls`` (or a subclass): ``pytest.raises(cls)``."""
    return isinstance(result, Raised) and result.is_a(cls)


class _Caught:
    def __init__(self, exc):
        self.exc = exc


def attempt(function, *args):
    """``function(*args)``, or the exception it raised wrapped for :func:`encode`."""
    try:
        return function(*args)
    except Exception as exc:  # reported to the test, which judges it
        return _Caught(exc)


def probe(**reads):
    """A namespace holding each read's value, or what that read raised."""
    return SimpleNamespace(**{name: attempt(read) for name, read in reads.items()})


def encode(value):
    """``value`` as JSON data; see the module docstring."""
    if value is None or isinstance(value, bool):
        return value
    for kind in (int, float, str):
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, datetime):
        return {"t": "datetime", "v": value.isoformat()}
    if isinstance(value, Decimal):
        return {"t": "decimal", "v": str(value)}
    for kind, tag in ((tuple, "tuple"), (frozenset, "frozenset"), (set, "set")):
        if isinstance(value, kind):
            return {"t": tag, "v": [encode(item) for item in value]}
    if isinstance(value, dict):
        return {"t": "dict", "v": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, SimpleNamespace):
        return {"t": "ns", "v": [[k, encode(v)] for k, v in vars(value).items()]}
    if isinstance(value, _Caught):
        return {"t": "raised", "v": [_qualname(c) for c in type(value.exc).__mro__],
                "m": _safe(str, value.exc)}
    if isinstance(value, type):
        return {"t": "class", "v": [_qualname(c) for c in value.__mro__]}
    return {"t": "foreign", "v": [_qualname(type(value)), _safe(repr, value)]}


def decode(data):
    """The value :func:`encode` turned into ``data``."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict):
        return data
    tag, value = data["t"], data["v"]
    if tag == "datetime":
        return datetime.fromisoformat(value)
    if tag == "decimal":
        return Decimal(value)
    if tag in ("tuple", "frozenset", "set"):
        return {"tuple": tuple, "frozenset": frozenset, "set": set}[tag](decode(value))
    if tag == "dict":
        return {decode(k): decode(v) for k, v in value}
    if tag == "ns":
        return SimpleNamespace(**{k: decode(v) for k, v in value})
    if tag == "raised":
        return Raised(tuple(value), data["m"])
    if tag == "class":
        return AppClass(tuple(value))
    return Foreign(*value)


def _encode_result(value):
    try:
        return encode(value)
    except Exception:  # an odd object must not pass for an exception
        return encode(Foreign(_qualname(type(value)), "<unencodable>"))


def app_calls(*calls):
    """Run ``(operation, *args)`` calls in order in one child process; their results."""
    import subprocess
    from pathlib import Path

    request = json.dumps([[name, [encode(a) for a in args]] for name, *args in calls])
    proc = subprocess.run([sys.executable, "-c", Path(__file__).read_text(encoding="utf-8")],
                          input=request, capture_output=True, text=True, cwd=APP,
                          timeout=TIMEOUT)
    try:
        reply = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"the child process gave no reply (exit {proc.returncode}):\n"
                             f"{proc.stderr[-4000:]}") from None
    if "import_error" in reply:
        raise AssertionError(f"importing the package from {APP} failed: "
                             f"{decode(reply['import_error'])}\n{proc.stderr[-4000:]}")
    results = decode(reply["results"])
    if len(results) != len(calls):
        raise AssertionError(f"{len(calls)} calls but {len(results)} results")
    return results


def app_call(name, *args):
    """One call's result (see :func:`app_calls`)."""
    return app_calls((name, *args))[0]


_shared = {}


def app_calls_shared(cases, case, calls_of):
    """``app_calls(*calls_of(case))`` for one case of a parametrized test, the calls of all
    its ``cases`` being made together in one child process, once (cases differ by repr)."""
    per_case = [list(calls_of(c)) for c in cases]
    request = [call for calls in per_case for call in calls]
    key = json.dumps([[name, [encode(a) for a in args]] for name, *args in request])
    if key not in _shared:
        _shared[key] = app_calls(*request)
    index = [repr(c) for c in cases].index(repr(case))
    start = sum(len(calls) for calls in per_case[:index])
    return _shared[key][start:start + len(per_case[index])]


def _serve():
    """The child: read the calls from stdin, write the results to the original stdout."""
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    calls = [(name, decode(args)) for name, args in json.loads(sys.stdin.read())]
    try:
        ops = operations()
    except Exception as exc:  # reported to the test
        reply = {"import_error": encode(_Caught(exc))}
    else:
        reply = {"results": [_encode_result(attempt(ops[name], *args)) for name, args in calls]}
    with os.fdopen(reply_fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(reply))


# ---- the operations tests call: they run in the child only ----
def operations():
    import cronlib

    def spec(expression):
        s = cronlib.parse(expression)
        return probe(minutes=lambda: s.minutes, hours=lambda: s.hours, days=lambda: s.days,
                     months=lambda: s.months, weekdays=lambda: s.weekdays,
                     days_restricted=lambda: bool(s.days_restricted),
                     weekdays_restricted=lambda: bool(s.weekdays_restricted))

    return {
        "package_file": lambda: cronlib.__file__,
        "CronError": lambda: cronlib.CronError,
        "parse": spec,
        "parse_equal": lambda a, b: bool(cronlib.parse(a) == cronlib.parse(b)),
        "next_run": lambda expression, after: cronlib.next_run(expression, after),
        "iter_runs": lambda expression, after, count: cronlib.iter_runs(expression, after, count),
        "iter_runs_of_spec": lambda expression, after, count: cronlib.iter_runs(
            cronlib.parse(expression), after, count),
    }


if __name__ == "__main__":
    _serve()
