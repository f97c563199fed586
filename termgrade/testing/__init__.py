"""Test doubles that run real code paths, reusable by tests and maintainers.

Hub round trips: :mod:`~termgrade.testing.hub_server` serves the endpoints
``huggingface_hub`` and ``datasets`` really call, backed by
:mod:`~termgrade.testing.hub_store` (repositories as files plus commit history in a
directory); start it in-process with :class:`~termgrade.testing.hub_server.HubServer` or
from a shell with ``python -m termgrade.testing.hub_server --port N --root DIR``.
:mod:`~termgrade.testing.hf_env` points the clients at it and isolates their home and
token, :mod:`~termgrade.testing.fixtures` wraps both as pytest fixtures, and
:mod:`~termgrade.testing.staging` stages a small repo in the shared layout.
"""
