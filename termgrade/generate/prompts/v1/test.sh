#!/usr/bin/env bash
# TermGrade verifier: named pytest assertions, CTRF + JUnit reports, a binary reward.
mkdir -p /logs/verifier
cd /tests || exit 1
/opt/venv/bin/python -m pytest -c /dev/null --rootdir=/tests --confcutdir=/tests \
  -p no:cacheprovider --ctrf /logs/verifier/ctrf.json --junitxml /logs/verifier/junit.xml \
  -rA /tests/test_outputs.py
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
