"""The secret gate's known false positives: TermGrade's own reference records are not
secrets, and a real keyword secret on a similar line still is."""

from __future__ import annotations

from termgrade.validate.secret_rules import is_known_false_positive


def test_a_reference_records_test_outcome_is_not_a_secret() -> None:
    line = '  "test_outputs.py::test_secret_key_removed_from_history": "passed",'
    assert is_known_false_positive("passed", line)


def test_a_real_secret_beside_a_test_name_is_still_one() -> None:
    assert not is_known_false_positive("s3cr3t-value", 'secret_key = "s3cr3t-value"')
    assert not is_known_false_positive("hunter2", '"db::test_x": "ok", "password": "hunter2"')
