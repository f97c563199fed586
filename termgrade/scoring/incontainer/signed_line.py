"""The signed line: the one form in which an event of the scoring container reaches the host,
and its signer, defined once for the broker, the plugin and the host's reader
(:mod:`termgrade.scoring.verifier.attestation`).

A line is ``PREFIX SESSION.SEQ MAC PAYLOAD``: the payload one JSON object (sorted keys, no
spaces), ``MAC`` the hex HMAC-SHA256 of ``SESSION.SEQ PAYLOAD`` under the session's key
(:func:`derive` of the run's master key), written in one ``write`` below ``PIPE_BUF`` to B's
init's standard output, so that lines from different writers never interleave.

The in-container files do not import this module by name: staging writes its text in place
of their ``from signed_line import ...`` line (``attestation._source``), so the plugin, run
inside the tests' process, imports nothing by a name the agent could predict. Kept free of
TermGrade imports and of syntax newer than Python 3.8.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import Any

CHANNEL = "/proc/1/fd/1"
"""B's init's standard output, read by the host as it is written."""
PREFIX = "TERMGRADE-ATTEST"


def derive(master: bytes, label: str) -> bytes:
    """A key derived from the run's master key (``session N``, ``end``)."""
    return hmac.new(master, label.encode(), hashlib.sha256).digest()


def line_mac(key: bytes, tag: bytes, payload: bytes) -> bytes:
    """The hex MAC of one line's ``tag`` (``SESSION.SEQ``) and ``payload``."""
    return hmac.new(key, tag + b" " + payload, hashlib.sha256).hexdigest().encode()


class Signer:
    """Numbers, signs and writes one session's events."""

    def __init__(self, key: bytes, session: int) -> None:
        self.key = key
        self.session = session
        self.seq = 0
        self.fd = os.open(CHANNEL, os.O_WRONLY | os.O_CLOEXEC)

    def emit(self, event: dict[str, Any]) -> None:
        """Sign ``event`` as this session's next line and write it to the channel."""
        payload = json.dumps(event, sort_keys=True, separators=(",", ":")).encode()
        tag = f"{self.session}.{self.seq}".encode()
        self.seq += 1
        # One write below PIPE_BUF: lines from different writers never interleave.
        os.write(self.fd, b" ".join((PREFIX.encode(), tag, line_mac(self.key, tag, payload),
                                     payload)) + b"\n")
