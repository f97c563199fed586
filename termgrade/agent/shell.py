"""The ``bash`` tool: one command in the agent's container, and the reply the model sees.

The command runs in a fresh ``bash -c`` with its output sent to a file that is read back
once it exits, so a background process the command leaves (``server &``) cannot hold the
tool's reply open. A command past its timeout is killed; the model is told so.
"""

from __future__ import annotations

from dataclasses import dataclass

from termgrade.sandbox.base import Sandbox

TIMED_OUT = (124, 137)
KILL_GRACE_S = 5
_WRAPPER = ('f=$(mktemp /tmp/.termgrade-bash.XXXXXX) || exit 125; '
            'timeout -k 5 "$2" bash -c "$1" >"$f" 2>&1 </dev/null; rc=$?; '
            'cat "$f"; rm -f "$f"; exit $rc')


@dataclass(frozen=True)
class CommandResult:
    command: str
    exit_code: int
    output: str
    duration_s: float
    timed_out: bool

    def reply(self, timeout_s: float) -> str:
        """What the model reads: the status first, then the output (already truncated)."""
        if self.timed_out:
            head = f"[command timed out after {timeout_s:g} s and was killed]"
        else:
            head = f"[exit status {self.exit_code}]"
        return f"{head}\n{self.output}" if self.output else head


def run_command(sandbox: Sandbox, command: str, *, timeout_s: float, workdir: str | None,
                env: dict[str, str] | None) -> CommandResult:
    """Run ``command``. Raises SandboxError only when the container itself is unusable;
    whatever the agent broke inside (a full /tmp, a deleted ``timeout``) is its output."""
    seconds = max(1, round(timeout_s))
    done = sandbox.exec(["bash", "-c", _WRAPPER, "termgrade-bash", command, str(seconds)],
                        timeout_s=seconds + 2 * KILL_GRACE_S, env=env, workdir=workdir)
    timed_out = done.timed_out or (done.exit_code in TIMED_OUT
                                   and done.duration_s >= seconds - 0.5)
    return CommandResult(command, done.exit_code, done.output, done.duration_s, timed_out)
