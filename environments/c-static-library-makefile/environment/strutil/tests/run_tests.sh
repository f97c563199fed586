#!/usr/bin/env bash
# Usage: tests/run_tests.sh PATH_TO_STRTOOL
set -u
tool=${1:?usage: run_tests.sh PATH_TO_STRTOOL}
fail=0
check() {  # check NAME EXPECTED ARGS... (input on stdin)
  local name=$1 expected=$2; shift 2
  local got
  got=$("$tool" "$@")
  if [ "$got" == "$expected" ]; then echo "ok   $name"; else echo "FAIL $name: got '$got'"; fail=1; fi
}
printf 'Hello World\n' | check upper "HELLO WORLD" upper
printf 'Hello World\n' | check lower "hello world" lower
printf '  padded \t\n' | check trim "padded" trim
printf 'abc\n' | check reverse "cba" reverse
printf 'banana\n' | check count "2" count an
printf 'a,b,,c\n' | check split "a|b||c" split ,
exit $fail
