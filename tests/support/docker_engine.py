"""Whether the Docker tests can run here: an engine that answers, and the base image.

``tests/conftest.py`` asks :func:`engine_problem` once per session, and only when a
``docker``-marked test was collected; when it names a problem, every such test is
skipped with that sentence as the reason instead of failing one by one on a timeout.
"""

from __future__ import annotations

import os
from pathlib import Path

BASE_IMAGE = "termgrade/base:local"
SETUP = "run `bash scripts/setup.sh`"
PROBE_TIMEOUT_S = 3


def engine_address() -> str:
    """Where the Docker client looks for the engine (``DOCKER_HOST`` or the default socket)."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def engine_problem() -> str | None:
    """``None`` when an engine answers within a few seconds and holds the base image;
    otherwise why not, and what to run."""
    try:
        import docker
        import docker.errors

        client = docker.from_env(timeout=PROBE_TIMEOUT_S)
    except Exception as exc:  # the client refuses to start: no socket, a bad DOCKER_HOST
        return f"no Docker engine answers at {engine_address()} ({type(exc).__name__}): {SETUP}"
    try:
        client.ping()
    except Exception as exc:  # refused, timed out, not an engine
        return f"no Docker engine answers at {engine_address()} ({type(exc).__name__}): {SETUP}"
    try:
        client.images.get(BASE_IMAGE)
    except docker.errors.ImageNotFound:
        return f"the Docker engine at {engine_address()} has no {BASE_IMAGE} image: {SETUP}"
    except Exception as exc:
        return f"the Docker engine at {engine_address()} did not list its images ({exc}): {SETUP}"
    finally:
        client.close()
    return None


def image_from_pypi(tag: str, context: Path, install: str, what: str) -> str:
    """``tag``: the base image plus what ``install`` (a shell line run with ``PIP_CERT``,
    ``SSL_CERT_FILE`` and ``UV_NATIVE_TLS`` naming this machine's CA bundle) fetches from
    PyPI; the test skips, naming why, when PyPI cannot be reached."""
    import shutil

    import pytest

    from termgrade.core.errors import TermGradeError
    from termgrade.core.settings import SETTINGS
    from termgrade.sandbox.engine import build_image, image_exists

    if image_exists(tag):
        return tag
    (context / "ca.crt").write_text("")
    if SETTINGS.ca_bundle is not None:
        shutil.copyfile(SETTINGS.ca_bundle, context / "ca.crt")
    (context / "Dockerfile").write_text(
        "FROM termgrade/base:local\nCOPY ca.crt /tmp/ca.crt\n"
        "RUN if [ -s /tmp/ca.crt ]; then export PIP_CERT=/tmp/ca.crt "
        f"SSL_CERT_FILE=/tmp/ca.crt UV_NATIVE_TLS=1; fi; {install} && rm /tmp/ca.crt\n")
    try:
        build_image(context, tag, network=True, timeout_s=600, fix=f"{what} needs PyPI")
    except TermGradeError as exc:
        pytest.skip(f"{what} could not be installed from PyPI ({exc}); give this machine "
                    "PyPI (PIP_CERT naming its CA bundle) and rerun")
    return tag
