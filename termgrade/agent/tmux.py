"""A tmux session in the agent's container: keystrokes in, terminal frames out.

The Terminus-2-style scaffold (:mod:`termgrade.agent.terminus_scaffold`) types into one
interactive ``bash --login`` inside tmux (the base image has tmux) and reads the pane
back. Every operation is one ``exec`` in the container through the :class:`Sandbox`, so
nothing on the host talks to the container any other way. Keystrokes go through ``tmux
send-keys`` as one argument: tmux sends a string that is exactly a key name (``C-c``,
``Enter``, ``Up``) as that key and any other string as literal characters, a newline
included (it runs the line). Keystrokes too long for one tmux command are loaded into a
paste buffer from the exec's standard input and pasted (newlines become Enter).

A frame is what appeared since the previous frame (the pane's history then grew by
appending to what it was), from the line the previous frame ended on, so the command typed
there shows; when that cannot be told (the screen was cleared, the history scrolled past
its limit, a full-screen program runs) it is the visible screen.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

from termgrade.agent.errors import TerminalError
from termgrade.agent.terminus_prompt import NEW_OUTPUT, SCREEN
from termgrade.sandbox.base import ExecResult, Sandbox
from termgrade.sandbox.errors import SandboxError

SESSION = "termgrade"
SOCKET = "/dev/shm/termgrade-tmux"
"""The server's socket: on the engine's in-memory /dev/shm, not in the container's
writable layer, so the grader's review of what the agent changed does not list it
(tmux's default, /tmp/tmux-0/, where /dev/shm is missing or read-only)."""
_PROBE = ('command -v tmux >/dev/null 2>&1 || exit 3; '
          '[ -d /dev/shm ] && [ -w /dev/shm ] || exit 4')
TMUX_TIMEOUT_S = 20.0
"""One tmux command (send, capture) is given this long."""
MAX_SEND_BYTES = 8_000
"""Keystrokes longer than this are pasted from a buffer (tmux refuses long commands)."""
HISTORY_LINES = 100_000
PANE_WIDTH, PANE_HEIGHT = 160, 40
"""The terminal's size in characters."""
READY_WAIT_S = 3.0
"""How long the new shell has to draw its prompt before the first frame is taken."""


@dataclass
class TmuxSession:
    """One session; :meth:`start` it, then send, wait (the caller sleeps) and capture."""

    sandbox: Sandbox
    workdir: str
    env: dict[str, str] = field(default_factory=dict)
    width: int = PANE_WIDTH
    height: int = PANE_HEIGHT
    _previous: str | None = None
    _socket: tuple[str, ...] = ("-S", SOCKET)

    def _tmux(self, *args: str, stdin: bytes | None = None) -> ExecResult:
        return self.sandbox.exec(["tmux", *self._socket, *args], timeout_s=TMUX_TIMEOUT_S,
                                 env={"TERM": "xterm-256color", "SHELL": "/bin/bash"},
                                 stdin=stdin)

    def _check(self, done: ExecResult, what: str) -> None:
        if done.exit_code != 0:
            raise TerminalError(f"tmux {what} exited {done.exit_code}: "
                                f"{done.output.strip()[:300]}")

    def start(self) -> None:
        """Start the session in ``workdir`` with ``env``. :class:`TerminalError` when the
        container has no tmux or it will not start."""
        probe = self.sandbox.exec(["sh", "-c", _PROBE], timeout_s=TMUX_TIMEOUT_S)
        if probe.exit_code == 4:
            self._socket = ()
        elif probe.exit_code != 0:
            raise TerminalError("the agent's container has no tmux, which the terminus-2 "
                                "scaffold types into (build the task FROM termgrade/base, "
                                "or install tmux in its image)")
        variables = [arg for key, value in sorted(self.env.items())
                     for arg in ("-e", f"{key}={value}")]
        # The history limit is a window's from its birth: set before the session exists.
        # HISTFILE=/dev/null: the shell's history lives in it, not in /root/.bash_history.
        self._check(self._tmux("start-server", ";",
                               "set-option", "-g", "history-limit", str(HISTORY_LINES), ";",
                               "new-session", "-d", "-s", SESSION, "-x", str(self.width),
                               "-y", str(self.height), "-c", self.workdir,
                               "-e", "HISTFILE=/dev/null", *variables, "bash --login"),
                    "new-session")
        self._wait_for_prompt()

    def _wait_for_prompt(self) -> None:
        deadline = time.monotonic() + READY_WAIT_S
        while time.monotonic() < deadline and not self.screen().strip():
            time.sleep(0.1)

    def alive(self) -> bool:
        return self._tmux("has-session", "-t", SESSION).exit_code == 0

    def send(self, keys: str) -> None:
        """Type ``keys`` (see the module docstring). :class:`TerminalError` if tmux fails."""
        if not keys:
            return
        if len(keys.encode("utf-8")) <= MAX_SEND_BYTES:
            self._check(self._tmux("send-keys", "-t", SESSION, "--", keys), "send-keys")
            return
        self._check(self._tmux("load-buffer", "-b", "termgrade-paste", "-",
                               stdin=keys.encode("utf-8")), "load-buffer")
        self._check(self._tmux("paste-buffer", "-d", "-b", "termgrade-paste", "-t", SESSION),
                    "paste-buffer")

    def _capture(self, *extra: str) -> str:
        done = self._tmux("capture-pane", "-p", *extra, "-t", SESSION)
        self._check(done, "capture-pane")
        return done.output

    def screen(self) -> str:
        """The visible pane."""
        return _trim(self._capture())

    def frame(self) -> str:
        """What appeared since the last frame, or the screen (see the module docstring),
        headed :data:`NEW_OUTPUT` or :data:`SCREEN`."""
        whole = _trim(self._capture("-S", "-"))
        previous, self._previous = self._previous, whole.rstrip("\n")
        if previous is not None and whole.startswith(previous):
            start = previous.rfind("\n") + 1
            new = whole[start:]
            if new.strip() and new.rstrip("\n") != previous[start:]:
                return NEW_OUTPUT + new
        return SCREEN + self.screen()

    def stop(self) -> None:
        """End the session and its server: the shell is hung up, and with it the jobs it
        started (a process the agent detached on purpose is the grader's to freeze).
        Never raises."""
        with contextlib.suppress(SandboxError):  # a container gone has nothing to stop
            self._tmux("kill-server")


def _trim(text: str) -> str:
    """A capture without the blank lines that pad the pane below its last line."""
    return text.rstrip() + "\n" if text.strip() else ""
