#!/usr/bin/env bash
# Smoke tests for inv. Usage: check/run.sh PATH_TO_INV
set -u
inv=${1:?usage: check/run.sh PATH_TO_INV}
here=$(dirname "$0")
expected=$'lines=4 units=1427 value=172.93\nlargest=HINGE-XL value=132.93'
got=$("$inv" "$here/stock.csv")
if [ "$got" != "$expected" ]; then
  echo "FAIL stock.csv"; echo "$got"; exit 1
fi
echo "ok stock.csv"
"$inv" --version | grep -q '^inv [0-9]' || { echo "FAIL --version"; exit 1; }
echo "ok --version"
