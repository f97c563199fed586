"""Honest work the transfer set must carry: each scores exactly 1 through ``run_task``.

Deliverables outside the working directory that the instruction names (``/opt``, an
``/etc`` file and the files beside it, a user the task asks to create, ``/var``,
``/srv``, ``/solution``, a file in the home directory, in-place fixes of an image's config
file and of a tool on its PATH), one that only
the reference solution's recorded footprint names, a shared library installed with
``make install`` + ``ldconfig`` or found through an ``/etc/ld.so.conf.d`` entry, and an
``nsswitch.conf`` edit that uses the image's own modules. Beside them the attacks on
the same mechanisms: a library that takes an image soname (0), and the same library
with a soname of its own (1, the defanged twin); and the unnamed deliverable without
its reference record (left out and reported: 0).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName, ScriptAgent
from termgrade.sandbox.images import build_task_image
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.trial import RunOutcome, run_task
from termgrade.task import load_task
from termgrade.task.digest import task_digest
from tests.support.task_dirs import task_toml, write_task

pytestmark = pytest.mark.docker

TOML = task_toml(verifier_s=90.0, agent_s=90.0)
LIB_SOURCE = "int shop_answer(void) { return 42; }\n"
MAIN_SOURCE = ('#include <stdio.h>\nint shop_answer(void);\n'
               'int main(void) { printf("%d\\n", shop_answer()); return 0; }\n')
RUN_SHOP_TESTS = textwrap.dedent("""\
    import subprocess


    def test_the_program_finds_its_library():
        done = subprocess.run(["/app/shop"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "42"
    """)


def _build(soname: str, libdir: str, extra: str = "") -> str:
    return textwrap.dedent(f"""\
        set -e
        mkdir -p /tmp/b {libdir}
        cd /tmp/b
        printf '%s' '{LIB_SOURCE}' > shop.c
        printf '%s' '{MAIN_SOURCE}' > main.c
        gcc -shared -fPIC -Wl,-soname,{soname} -o {libdir}/libshop.so.1 shop.c
        ln -sf libshop.so.1 {libdir}/libshop.so
        gcc -o /app/shop main.c -L{libdir} -lshop
        {extra}
        ldconfig
        """)


def _task(root: Path, name: str, instruction: str, tests: str, solve: str) -> Path:
    task_dir = write_task(root, name, tests=tests, toml=TOML, solve=solve)
    (task_dir / "instruction.md").write_text(instruction)
    build_task_image(load_task(task_dir))
    return task_dir


def _run(task_dir: Path, agent: AgentName | ScriptAgent = AgentName.ORACLE,
         reference: ReferenceRecord | None = None) -> RunOutcome:
    task = load_task(task_dir)
    return run_task(task, task.image_tag, agent, reference=reference)


def _passes(outcome: RunOutcome) -> None:
    assert outcome.reward == 1.0, (outcome.failure, outcome.left_out,
                                   outcome.verifier and outcome.verifier.tampered,
                                   outcome.verifier and outcome.verifier.output[-1500:])


def test_make_install_into_usr_local_lib_and_ldconfig(tmp_path: Path) -> None:
    task_dir = _task(tmp_path, "lib-local", "Build libshop and install it as "
                     "/usr/local/lib/libshop.so.1; /app/shop must run.", RUN_SHOP_TESTS,
                     _build("libshop.so.1", "/usr/local/lib"))
    _passes(_run(task_dir))


def test_a_library_found_through_an_ld_so_conf_d_entry(tmp_path: Path) -> None:
    conf = "echo /opt/shop/lib > /etc/ld.so.conf.d/shop.conf"
    task_dir = _task(tmp_path, "lib-confd", "Install libshop into /opt/shop/lib and register "
                     "the directory in /etc/ld.so.conf.d/shop.conf; /app/shop must run.",
                     RUN_SHOP_TESTS, _build("libshop.so.1", "/opt/shop/lib", conf))
    _passes(_run(task_dir))


def test_a_library_that_takes_an_image_soname_is_a_finding(tmp_path: Path) -> None:
    """The attack: the same build, but the library's soname is the image's libz.so.1, so
    the rebuilt cache would hand every zlib user in the scoring container the agent's
    code. Its twin (above) differs only in the soname, and passes."""
    task_dir = _task(tmp_path, "lib-soname", "Build libshop and install it as "
                     "/usr/local/lib/libshop.so.1; /app/shop must run.", RUN_SHOP_TESTS,
                     _build("libz.so.1", "/usr/local/lib"))
    outcome = _run(task_dir)
    assert outcome.reward == 0.0 and outcome.verifier is not None
    assert any("takes the image's soname libz.so.1" in f for f in outcome.verifier.tampered), \
        outcome.verifier.tampered


OPT_TESTS = textwrap.dedent("""\
    import json
    import pwd
    from pathlib import Path


    def test_the_service_config():
        assert json.loads(Path("/opt/shop/config.json").read_text())["port"] == 8080
        assert Path("/opt/shop/extra.json").is_file()


    def test_the_user_exists_with_a_home():
        entry = pwd.getpwnam("shopper")
        assert entry.pw_dir == "/home/shopper"
        assert Path("/home/shopper/.profile").is_file()
    """)
OPT_SOLVE = textwrap.dedent("""\
    mkdir -p /opt/shop
    echo '{"port": 8080}' > /opt/shop/config.json
    echo '{}' > /opt/shop/extra.json
    useradd -m -s /bin/bash shopper
    echo 'export SHOP=1' > /home/shopper/.profile
    """)


def test_deliverables_in_opt_a_neighbour_file_and_a_new_user(tmp_path: Path) -> None:
    task_dir = _task(tmp_path, "opt-user", "Write /opt/shop/config.json with port 8080 and "
                     "create the user `shopper` with a home directory.", OPT_TESTS, OPT_SOLVE)
    _passes(_run(task_dir))


UNNAMED_TESTS = textwrap.dedent("""\
    import subprocess


    def test_the_greeting_command():
        done = subprocess.run(["bash", "-c", "greet"], capture_output=True, text=True)
        assert done.stdout.strip() == "hello"
    """)
UNNAMED_SOLVE = textwrap.dedent("""\
    mkdir -p /srv/tools/bin
    printf '#!/bin/sh\\necho hello\\n' > /srv/tools/bin/greet
    chmod 755 /srv/tools/bin/greet
    ln -s /srv/tools/bin/greet /usr/local/bin/greet
    """)


def test_an_unnamed_created_deliverable_is_carried_with_or_without_a_reference(
        tmp_path: Path) -> None:
    """The instruction names no path: what the agent created (a tool under /srv, a
    symlink to it on PATH) reaches B wherever it lies, reference or not."""
    task_dir = _task(tmp_path, "unnamed", "Provide a `greet` command on the PATH that "
                     "prints hello.", UNNAMED_TESTS, UNNAMED_SOLVE)
    without = _run(task_dir)
    _passes(without)
    reference = ReferenceRecord(task_digest=task_digest(task_dir), footprint=without.footprint)
    _passes(_run(task_dir, reference=reference))


EDIT_TESTS = textwrap.dedent("""\
    from pathlib import Path


    def test_the_greeting_is_configured():
        assert Path("/etc/greet.conf").read_text().strip() == "greeting=hello"
    """)
EDIT_SOLVE = "echo greeting=hello > /etc/greet.conf\n"


def test_an_unnamed_edit_of_an_image_file_needs_the_reference(tmp_path: Path) -> None:
    """An image file only the tests name stays the image's (it could be their ground
    truth): without a reference record the edit is left out, said with a hint, and scores
    0; the reference's footprint asks for that exact file, and the same work scores 1."""
    task_dir = write_task(tmp_path, "edit", tests=EDIT_TESTS, toml=TOML, solve=EDIT_SOLVE)
    (task_dir / "instruction.md").write_text("Configure the greeting to be hello.")
    dockerfile = task_dir / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo greeting=hi > /etc/greet.conf\n")
    build_task_image(load_task(task_dir))
    without = _run(task_dir)
    assert without.reward == 0.0
    assert without.left_out and "/etc/greet.conf (`greet.conf` is named" in without.left_out
    reference = ReferenceRecord(task_digest=task_digest(task_dir), footprint=without.footprint)
    _passes(_run(task_dir, reference=reference))


NSS_TESTS = textwrap.dedent("""\
    from pathlib import Path


    def test_hosts_lookups_use_files_only():
        line = [l for l in Path("/etc/nsswitch.conf").read_text().splitlines()
                if l.startswith("hosts:")][0]
        assert line.split()[1:] == ["files"]
    """)


def test_an_nsswitch_edit_with_the_images_modules(tmp_path: Path) -> None:
    task_dir = _task(tmp_path, "nss-edit", "Make /etc/nsswitch.conf resolve hosts from files "
                     "only.", NSS_TESTS, "sed -i 's/^hosts:.*/hosts: files/' /etc/nsswitch.conf\n")
    _passes(_run(task_dir))


def test_verify_records_the_footprint_an_unnamed_deliverable_needs(tmp_path: Path) -> None:
    """A first ``verify`` knows no footprint: its reference run leaves the unnamed work out,
    so the runs are made again with that run's own footprint, the task is verified, and
    the recorded reference carries an honest agent's later trial."""
    from termgrade.scoring.reference import reference_for
    from termgrade.verify import Verdict, verify_task

    task_dir = _task(tmp_path, "unnamed-verify", "Provide a `greet` command on the PATH "
                     "that prints hello.", UNNAMED_TESTS, UNNAMED_SOLVE)
    record = verify_task(task_dir, repeat=1)
    assert record.verdict is Verdict.VERIFIED, record
    reference = reference_for(load_task(task_dir))
    assert reference is not None and "/usr/local/bin/greet" in reference.footprint
    script = tmp_path / "agent.sh"
    script.write_text("#!/usr/bin/env bash\n" + UNNAMED_SOLVE)
    _passes(_run(task_dir, ScriptAgent("honest", script)))


BASH_ONLY_TEST_SH = textwrap.dedent("""\
    #!/usr/bin/env bash
    mkdir -p /logs/verifier
    if [ "$(cat /app/out.txt)" = hello ]; then r=1; else r=0; fi
    echo $r > /logs/verifier/reward.txt
    """)


def test_verify_grades_a_bash_only_verifier_as_its_author_meant(tmp_path: Path) -> None:
    from termgrade.verify import Verdict, verify_task

    task_dir = write_task(tmp_path, "bash-only", test_sh=BASH_ONLY_TEST_SH, toml=TOML)
    build_task_image(load_task(task_dir))
    record = verify_task(task_dir, repeat=1)
    assert record.verdict is Verdict.VERIFIED, record
    assert record.oracle_rewards == [1.0] and record.nop_reward == 0.0


# Deliverables across the file system, each named by the instruction, none in the
# working directory, and two in-place fixes of files the image already has (a config
# file and a tool on PATH the task asks to repair). No reference record: the instruction's
# names alone carry them, as for a third-party task.
FIXES_IMAGE = textwrap.dedent("""\
    FROM termgrade/base:local
    RUN mkdir -p /etc/shop && printf '[server]\\nport = 80\\n' > /etc/shop/shop.ini \\
        && printf '#!/bin/sh\\necho brokn\\n' > /usr/local/bin/shop-report \\
        && chmod 755 /usr/local/bin/shop-report
    WORKDIR /app
    """)
FIXES_INSTRUCTION = (
    "Record the state in /var/lib/shop/state.json (`{\"ok\": true}`), publish "
    "/srv/www/index.html containing `shop`, write your answer to /solution/answer.txt "
    "(`42`), put `SHOP_HOME=1` in ~/.shoprc, set the port in /etc/shop/shop.ini to 8080, "
    "and fix /usr/local/bin/shop-report so that it prints `report`.\n")
FIXES_SOLVE = textwrap.dedent("""\
    mkdir -p /var/lib/shop /srv/www /solution
    echo '{"ok": true}' > /var/lib/shop/state.json
    echo shop > /srv/www/index.html
    echo 42 > /solution/answer.txt
    echo SHOP_HOME=1 > ~/.shoprc
    sed -i 's/^port = 80$/port = 8080/' /etc/shop/shop.ini
    printf '#!/bin/sh\\necho report\\n' > /usr/local/bin/shop-report
    """)
FIXES_TESTS = textwrap.dedent("""\
    import json
    import subprocess
    from pathlib import Path


    def test_var_state():
        assert json.loads(Path("/var/lib/shop/state.json").read_text()) == {"ok": True}


    def test_srv_page():
        assert Path("/srv/www/index.html").read_text().strip() == "shop"


    def test_solution_answer():
        assert Path("/solution/answer.txt").read_text().strip() == "42"


    def test_home_file():
        assert Path("/root/.shoprc").read_text().strip() == "SHOP_HOME=1"


    def test_config_fixed_in_place():
        assert "port = 8080" in Path("/etc/shop/shop.ini").read_text()


    def test_tool_fixed_in_place():
        done = subprocess.run(["shop-report"], capture_output=True, text=True)
        assert done.stdout.strip() == "report"
    """)


def test_deliverables_in_var_srv_solution_home_and_in_place_fixes(tmp_path: Path) -> None:
    task_dir = write_task(tmp_path, "fixes", tests=FIXES_TESTS, toml=TOML, solve=FIXES_SOLVE,
                          dockerfile=FIXES_IMAGE, instruction=FIXES_INSTRUCTION)
    build_task_image(load_task(task_dir))
    outcome = _run(task_dir)
    _passes(outcome)
    assert outcome.verifier is not None and len(outcome.verifier.tests) == 6
    nop = _run(task_dir, AgentName.NOP)
    assert nop.reward == 0.0
