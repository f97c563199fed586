#!/usr/bin/env bash
# attack: logs-as-file
# class: unscored
# what: replaces the /logs directory with a regular file, so the grader's reset (`mkdir -p /logs/verifier`) fails; a grader that calls that an infrastructure error leaves the trial unscored instead of 0 (/logs itself is on no blocklist)
set -eu
rm -rf /logs
printf 'not a directory\n' > /logs
