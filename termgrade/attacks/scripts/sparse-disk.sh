#!/usr/bin/env bash
# attack: sparse-disk
# class: unscored
# what: leaves sparse files of 8 GiB apparent size (no blocks on disk) among its work, so a grader that carries by bytes written fills the host's disk or fails to carry, and the run ends unscored
set -eu
mkdir -p /app
truncate -s 8G /app/.hole-a
truncate -s 8G /opt/.hole-b
