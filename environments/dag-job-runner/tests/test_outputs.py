import os
import subprocess
import textwrap
import time

import pytest

TOOL = "/app/runjobs"


def jobfile(tmp_path, text, name="jobs.txt"):
    d = tmp_path / "proj"
    d.mkdir(exist_ok=True)
    path = d / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def run(*args, cwd=None, timeout=60):
    return subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_single_slot_order_prefers_file_order(tmp_path):
    jf = jobfile(tmp_path, """
        c a   : echo c >> order
        a     : echo a >> order
        b     : echo b >> order
        d c b : echo d >> order
        e     : echo e >> order
    """)
    out = run(jf)
    assert out.returncode == 0, out.stderr
    assert (jf.parent / "order").read_text().split() == ["a", "c", "b", "d", "e"]
    assert out.stdout.splitlines() == ["c ok", "a ok", "b ok", "d ok", "e ok"]


def test_logs_capture_stdout_and_stderr(tmp_path):
    jf = jobfile(tmp_path, """
        talk : echo to-out; echo to-err >&2
    """)
    logs = jf.parent / "logs"
    logs.mkdir()
    (logs / "talk.log").write_text("stale content that must disappear\n" * 5)
    out = run(jf)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "talk ok\n"
    assert sorted((logs / "talk.log").read_text().split()) == ["to-err", "to-out"]


def test_working_directory_and_job_name(tmp_path):
    jf = jobfile(tmp_path, """
        where-am.i : pwd > where.txt; echo "$JOB_NAME" > name.txt
    """)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = run(jf, cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    assert (jf.parent / "where.txt").read_text().strip() == str(jf.parent)
    assert (jf.parent / "name.txt").read_text().strip() == "where-am.i"
    assert os.listdir(elsewhere) == []


def test_log_dir_option_is_relative_to_caller(tmp_path):
    jf = jobfile(tmp_path, """
        one : echo hello
    """)
    caller = tmp_path / "caller"
    caller.mkdir()
    out = run("-l", "my logs", jf, cwd=caller)
    assert out.returncode == 0, out.stderr
    assert (caller / "my logs" / "one.log").read_text() == "hello\n"
    assert not (jf.parent / "logs").exists()


def test_command_keeps_colons_pipes_and_quotes(tmp_path):
    jf = jobfile(tmp_path, """
        # a comment line

           # an indented comment
        fmt : echo "a:b | c" | tr a-z A-Z > out.txt; echo 'x: y' >> out.txt
    """)
    out = run(jf)
    assert out.returncode == 0, out.stderr
    assert (jf.parent / "out.txt").read_text() == "A:B | C\nx: y\n"
    assert out.stdout == "fmt ok\n"


def test_failure_skips_dependents_but_not_others(tmp_path):
    jf = jobfile(tmp_path, """
        prep        : touch prep.ran
        build prep  : touch build.ran; exit 7
        test build  : touch test.ran
        ship test   : touch ship.ran
        docs prep   : touch docs.ran
        lint        : touch lint.ran
    """)
    out = run("-j", "2", jf)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "prep ok", "build failed (exit 7)", "test skipped", "ship skipped", "docs ok", "lint ok",
    ]
    ran = sorted(p.name for p in jf.parent.glob("*.ran"))
    assert ran == ["build.ran", "docs.ran", "lint.ran", "prep.ran"]
    assert not (jf.parent / "logs" / "test.log").exists()


def test_parallel_jobs_really_run_together(tmp_path):
    wait_for = 'touch {me}.up; for i in $(seq 100); do [ -e {other}.up ] && exit 0; sleep 0.05; done; exit 1'
    jf = jobfile(tmp_path, f"""
        a : {wait_for.format(me="a", other="b")}
        b : {wait_for.format(me="b", other="a")}
    """)
    out = run("-j", "2", jf)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["a ok", "b ok"]


def test_single_slot_means_one_at_a_time(tmp_path):
    wait_for = 'touch {me}.up; for i in $(seq 20); do [ -e {other}.up ] && exit 0; sleep 0.05; done; exit 1'
    jf = jobfile(tmp_path, f"""
        a : {wait_for.format(me="a", other="b")}
        b : {wait_for.format(me="b", other="a")}
    """)
    out = run(jf)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ["a failed (exit 1)", "b ok"]


def test_never_more_than_n_jobs_at_once(tmp_path):
    body = 'mkdir -p run; touch run/$JOB_NAME; ls run | wc -l >> counts; sleep 0.3; rm run/$JOB_NAME'
    jf = jobfile(tmp_path, "\n".join(f"j{i} : {body}" for i in range(8)) + "\n")
    out = run("-j", "3", jf)
    assert out.returncode == 0, out.stderr
    counts = [int(x) for x in (jf.parent / "counts").read_text().split()]
    assert len(counts) == 8
    assert max(counts) <= 3


def test_dependencies_finish_before_dependents_start(tmp_path):
    edges = {"a": [], "b": [], "c": ["a"], "d": ["a", "b"], "e": ["c", "d"], "f": ["b"],
             "g": ["e", "f"], "h": []}
    body = 'echo "start $JOB_NAME" >> ev; sleep 0.2; echo "end $JOB_NAME" >> ev'
    lines = [f"{n} {' '.join(deps)} : {body}" for n, deps in reversed(list(edges.items()))]
    jf = jobfile(tmp_path, "\n".join(lines) + "\n")
    out = run("-j", "4", jf)
    assert out.returncode == 0, out.stderr
    events = (jf.parent / "ev").read_text().splitlines()
    assert sorted(events) == sorted([f"start {n}" for n in edges] + [f"end {n}" for n in edges])
    for job, deps in edges.items():
        for dep in deps:
            assert events.index(f"end {dep}") < events.index(f"start {job}"), (dep, job)


def test_timeout_kills_job_and_skips_dependents(tmp_path):
    jf = jobfile(tmp_path, """
        slow       : sleep 37; touch slow.done
        after slow : touch after.done
        quick      : sleep 0.2; touch quick.done
    """)
    out = run("-t", "1", "-j", "2", jf, timeout=25)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ["slow timeout", "after skipped", "quick ok"]
    assert (jf.parent / "quick.done").exists()
    assert not (jf.parent / "after.done").exists()
    for _ in range(30):  # give the kernel a moment to finish delivering the kill
        left = subprocess.run(["pgrep", "-f", "sleep 37"], capture_output=True, text=True)
        if left.stdout.strip() == "":
            break
        time.sleep(0.1)
    assert left.stdout.strip() == "", "the timed-out job's processes are still running"


def test_jobs_get_no_stdin(tmp_path):
    jf = jobfile(tmp_path, """
        reader : cat > got.txt; echo done
    """)
    proc = subprocess.Popen([TOOL, str(jf)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=20)
        stdout = proc.stdout.read()
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
    assert stdout == "reader ok\n"
    assert (jf.parent / "got.txt").read_text() == ""


def test_long_chain_declared_backwards(tmp_path):
    n = 60
    lines = [f"s{i} s{i + 1} : echo s{i} >> order" for i in range(n - 1)] + [f"s{n - 1} : echo s{n - 1} >> order"]
    jf = jobfile(tmp_path, "\n".join(lines) + "\n")
    out = run("-j", "4", jf)
    assert out.returncode == 0, out.stderr
    assert (jf.parent / "order").read_text().split() == [f"s{i}" for i in reversed(range(n))]
    assert out.stdout.splitlines() == [f"s{i} ok" for i in range(n)]


@pytest.mark.parametrize(
    "text, needle",
    [
        ("a b : touch a.ran\nb c : touch b.ran\nc a : touch c.ran\n", "cycle"),
        ("ok : touch ok.ran\nself self : touch self.ran\n", "cycle"),
        ("a : touch a.ran\n\nb a zz : touch b.ran\n", "line 3"),
        ("a : touch a.ran\nb : true\n# x\na : touch a2.ran\n", "line 4"),
        ("a : touch a.ran\nno colon here\n", "line 2"),
        ("a : touch a.ran\nb a :   \n", "line 2"),
        ("a : touch a.ran\nx/y : touch x.ran\n", "line 2"),
    ],
    ids=["cycle", "self-dependency", "unknown-dep", "duplicate", "no-colon", "empty-command",
         "bad-name"],
)
def test_invalid_job_files_run_nothing(tmp_path, text, needle):
    jf = jobfile(tmp_path, text)
    out = run("-j", "2", jf)
    assert out.returncode == 2
    assert out.stderr.startswith("runjobs:")
    assert needle in out.stderr
    assert out.stdout == ""
    assert list(jf.parent.glob("*.ran")) == []
    assert not (jf.parent / "logs").exists()


@pytest.mark.parametrize(
    "args",
    [[], ["/nonexistent/jobs.txt"], ["-j", "0", "JF"], ["-j", "two", "JF"], ["-t", "0", "JF"],
     ["-t", "-5", "JF"], ["-q", "JF"], ["JF", "JF"], ["JF", "-j"]],
    ids=["no-args", "missing-file", "zero-slots", "word-slots", "zero-timeout",
         "negative-timeout", "unknown-option", "extra-arg", "dangling-option"],
)
def test_usage_errors_exit_2(tmp_path, args):
    jf = jobfile(tmp_path, "a : touch a.ran\n")
    out = run(*[str(jf) if a == "JF" else a for a in args])
    assert out.returncode == 2
    assert out.stderr.strip() != ""
    assert not (jf.parent / "a.ran").exists()


def test_exit_codes_are_reported(tmp_path):
    jf = jobfile(tmp_path, """
        three : exit 3
        sig   : kill -TERM $$
        fine  : true
    """)
    out = run("-j", "3", jf)
    assert out.returncode == 1
    assert out.stdout.splitlines() == ["three failed (exit 3)", "sig failed (exit 143)", "fine ok"]
