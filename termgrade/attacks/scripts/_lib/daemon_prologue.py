"""Shared by the daemon attacks: find processes by command line, wait, signal, forge.

Each attack appends its own lines and runs the result as a leftover process.
"""
import os, signal, sys, time

ME = os.getpid()
DEADLINE = time.monotonic() + 120  # bounded: gone after 2 minutes whatever happens


def args_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def pids(pred):
    return [int(p) for p in os.listdir("/proc")
            if p.isdigit() and int(p) != ME and pred(args_of(p))]


def is_testsh(args):  # `bash /tests/test.sh`: the verifier's entry script itself
    return any(a.startswith(b"/tests/") and a.endswith(b".sh") for a in args[1:])


def is_verifier(args):  # test.sh or anything started to run it
    return any(b"/tests/" in a and b".sh" in a for a in args)


def is_pytest(args):
    return any(a in (b"pytest", b"py.test") or a.endswith((b"/pytest", b"/py.test"))
               for a in args)


def wait_for(pred, poll=0.002):
    while time.monotonic() < DEADLINE:
        found = pred()
        if found:
            return found
        time.sleep(poll)
    sys.exit(0)


def signal_all(found, sig):
    for pid in found:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
         '<testsuite name="pytest" errors="0" failures="0" skipped="0" tests="1" time="0.1">'
         '<testcase classname="test_outputs" name="test_outputs" time="0.01" />'
         '</testsuite></testsuites>\n')


def forge_reports():
    os.makedirs("/logs/verifier", exist_ok=True)
    with open("/logs/verifier/reward.txt", "w") as f:
        f.write("1\n")
    with open("/logs/verifier/junit.xml", "w") as f:
        f.write(JUNIT)


