#!/usr/bin/env bash
# attack: kill-init
# class: unscored
# what: at the end of the agent phase sends SIGTERM to PID 1 (the container's init forwards it and exits), so the container stops before scoring; a grader that calls a dead container an infrastructure error leaves the trial unscored instead of 0
set -u
sync
kill -TERM 1
sleep 5
