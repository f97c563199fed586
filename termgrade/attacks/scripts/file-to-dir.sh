#!/usr/bin/env bash
# attack: file-to-dir
# class: unscored
# what: replaces /usr/bin/timeout (which the grader wraps every exec in) with a directory holding one file: the diff shows "C /usr/bin/timeout" with a child, which a naive tamper check skips as a mere parent directory, and the grader's next exec fails, leaving the trial unscored instead of 0
set -eu
t=$(command -v timeout)
[ "$t" = /usr/bin/timeout ] || t=/usr/bin/timeout
rm -f "$t"
mkdir "$t"
: > "$t/.keep"
