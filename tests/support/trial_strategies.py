"""Hypothesis strategies for trial records, shared by the trial-reading property tests."""

from __future__ import annotations

from hypothesis import strategies as st

optional = st.fixed_dictionaries({}, optional={
    "turns": st.integers(0, 500), "duration_s": st.floats(0, 1e5),
    "output_tokens": st.integers(0, 10**6), "input_tokens": st.integers(0, 10**7),
    "n_tests_passed": st.integers(0, 50), "n_tests_failed": st.integers(0, 50),
    "retry_of": st.text(max_size=8), "exception_type": st.none() | st.text(max_size=5),
    "started_at": st.sampled_from(["2026-10-08T12:00:00Z", "2026-10-08 01:02:03"]),
    "tests": st.lists(st.fixed_dictionaries({
        "name": st.text(min_size=1, max_size=10),
        "outcome": st.sampled_from(["passed", "failed", "error", "skipped"])}), max_size=6),
    "messages": st.lists(st.fixed_dictionaries({
        "role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=30)}),
        max_size=3),
    "per_turn": st.lists(st.fixed_dictionaries({"turn": st.integers(0, 9)}, optional={
        "output_tokens": st.integers(0, 99), "duration_s": st.floats(0, 9)}), max_size=3),
    "episode": st.lists(st.fixed_dictionaries({
        "index": st.integers(0, 9), "source": st.just("agent"),
        "keystrokes": st.lists(st.text(max_size=5), max_size=2)}, optional={
        "timestamp": st.just("2026-10-08T12:00:01.5Z"),
        "is_valid_tool_call": st.booleans()}), max_size=3),
})
"""Any subset of a TrialRecord's optional fields, each with a value of its type (nested
lists of tests, messages, per-turn metrics and episode steps included)."""
