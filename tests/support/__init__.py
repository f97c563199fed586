"""Test stand-ins for the test suite; not part of the installed ``termgrade`` package.

Nothing under ``termgrade/`` imports these. Import them as ``tests.support.<module>`` with
the repository root on ``sys.path`` (pytest's ``pythonpath = ["."]`` does it; from a shell,
run ``python -m tests.support.<module>`` from the checkout's root).

- Hub round trips: :mod:`~tests.support.hub_server` is a stand-in Hub on loopback that
  serves the endpoints ``huggingface_hub`` and ``datasets`` really call, backed by
  :mod:`~tests.support.hub_store` (repositories as files plus commit history in a
  directory); start it in-process with :class:`~tests.support.hub_server.HubServer` or
  from a shell with ``python -m tests.support.hub_server --port N --root DIR``.
  :mod:`~tests.support.hf_env` points the clients at it and isolates their home and token,
  :mod:`~tests.support.hub_fixtures` wraps both as pytest fixtures, and
  :mod:`~tests.support.staging` stages a small repo in the shared layout by hand.
- :mod:`~tests.support.scripted_llm`: a scripted stand-in for an OpenAI-compatible model,
  so Harbor's real Terminus-2 agent runs with no model behind it.
- :mod:`~tests.support.scripted_tools`: scripted stand-in policies (replay the solution,
  give up, malformed calls, six cheats) behind an OpenAI-compatible tool-calling endpoint
  with planned faults (429, 5xx, dropped connections, slow replies, context overflow), so
  the bash tool-calling scaffold and ``termgrade grade`` run with no model behind them.
- :mod:`~tests.support.harbor`: Harbor itself (``.venv-harbor``, via
  ``scripts/ensure_harbor.sh``) for the tests that run it, telemetry off.
- :mod:`~tests.support.fake_trials`: a scripted stand-in for the trial runner and the
  image builder, so ``verify`` runs without Docker.
- Builders of test inputs, shared by many test files (no test file imports another):
  :mod:`~tests.support.task_dirs` (small Harbor task directories; the ``make_task``
  fixture), :mod:`~tests.support.records` (trial, label and verify records as JSONL),
  :mod:`~tests.support.labels` (plain trial rows and synthetic corpora),
  :mod:`~tests.support.bandcentral` (bandcentral repos for training),
  :mod:`~tests.support.overlay_layers` (overlay-shaped layers and the grader's review),
  :mod:`~tests.support.trial_strategies` (Hypothesis strategies for trial fields),
  :mod:`~tests.support.verl_loop` (the agent loop run as verl's worker runs it).
- :mod:`~tests.support.docker_engine`: whether a Docker engine answers here (the
  Docker tests are skipped, with the fix, when none does).
"""
