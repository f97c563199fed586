"""Stand-ins the benchmarks run against, so a benchmark needs nothing under ``tests/``.

- :mod:`.chat`: an OpenAI-compatible chat endpoint on loopback whose answers come from a
  Python function (never a model), and :func:`~.chat.replay_solutions`, the policy that
  replays each task's reference solution through the bash tool.
- :mod:`.generators`: scripted task generators (a valid task, one repaired, one never
  fixed, prose, vacuous tests, a corpus copy, tests importing the solution, a download at
  build time) behind that endpoint, for ``generation.py``.

The test suite has its own, fuller stand-ins (faults, cheats, Harbor's Terminus-2 format)
in ``tests/support/``; these are the few a benchmark needs.
"""
