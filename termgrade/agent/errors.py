"""The errors agent/ raises: model endpoints: unusable before the run, given up on, refusing a
conversation, a context too long.

Each is a :class:`~termgrade.core.errors.TermGradeError` naming what failed and the
fix (the CLI prints it, exit status 1), or a signal another part of the stage
catches (see :mod:`termgrade.core.errors`).
"""

from __future__ import annotations

from termgrade.core.errors import TermGradeError


class EndpointUnusableError(TermGradeError, ConnectionError):
    """A model endpoint that no trial could use: a malformed URL, nothing listening, a
    refused key, a model it does not serve, no tool calling. Found before any container
    starts (names the URL and the fix)."""

    def __init__(self, url: str, message: str, *, fix: str | None = None) -> None:
        self.url = url
        super().__init__(f"{url}: {message}", fix=fix)


class EndpointError(RuntimeError):
    """The endpoint did not answer usefully after every retry: an infrastructure loss.

    ``fatal``: no trial can succeed against it (401, 403, 404: a wrong URL, model or key)."""

    def __init__(self, message: str, *, fatal: bool = False, retries: int = 0) -> None:
        super().__init__(message)
        self.fatal = fatal
        self.retries = retries
        """Tries of this request that failed before it was given up, less one."""


class RequestRejected(RuntimeError):
    """The endpoint refused this conversation (400, 422) for what the model wrote in it:
    the episode ends there and is scored."""


class ContextLengthError(RuntimeError):
    """The request is longer than the model's context window."""


class TerminalError(RuntimeError):
    """The tmux session of the Terminus-2-style scaffold failed in the agent's container.

    ``lost``: it failed before the model acted (no tmux in the task's image, a tmux that
    will not start): the image, not the model, is at fault, and the trial is lost to
    infrastructure, not scored. A failure later is the agent's doing and is scored."""

    def __init__(self, message: str, *, lost: bool = False) -> None:
        super().__init__(message)
        self.lost = lost
