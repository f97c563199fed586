"""A copy-up is not a change (round 9 of the cold attacks): a program that opens an image
file for writing and writes nothing (``sqlite3`` querying a database, Python's
``sqlite3.connect`` on a path) makes the kernel copy the file into the writable layer with
the image's bytes. Judged by what the file *is* (type, mode, owner and bytes the image's),
such an entry is no change:

- in the reference's run it is not in the footprint, so a named database the reference
  only queried stays an **input**: an agent that replaces it with a one-row database (and
  answers for that) is not carried, and scores 0 (the attack scored an attested 1 when the
  copy-up counted as the reference's change, and does again with the identity check
  patched out);
- while the tests run, an honest program that queries the database the same way is no
  "image file changed while the tests ran" (it scored 0);
- the reference's own run records every image file its tests changed, asked-for paths
  included, so the tests' own writes to a named input are known to later trials.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from termgrade.agent.kinds import AgentName
from termgrade.sandbox.images import build_task_image
from termgrade.sandbox.overlay_diff import LowerView, UpperEntry, walk_upper
from termgrade.scoring.reference import ReferenceRecord
from termgrade.scoring.trial import run_task
from termgrade.task import load_task
from termgrade.task.digest import task_digest
from termgrade.verify.runner import record_reference
from tests.support.grading import play_script
from tests.support.overlay_layers import put
from tests.support.task_dirs import task_toml, write_task

GEN = ("import random, sqlite3\nr = random.Random(11)\n"
       "db = sqlite3.connect('/srv/data/shop.db')\n"
       "db.execute('CREATE TABLE orders(customer TEXT, amount INTEGER)')\n"
       "names = ['cust%03d' % i for i in range(50)]\n"
       "db.executemany('INSERT INTO orders VALUES (?, ?)', "
       "[(r.choice(names), r.randint(1, 1000)) for _ in range(2000)])\ndb.commit()\n")
DOCKERFILE = ("FROM termgrade/base:local\nWORKDIR /app\nCOPY gen.py /tmp/gen.py\n"
              "RUN mkdir -p /srv/data && python3 /tmp/gen.py && rm /tmp/gen.py\n")
QUERY = "SELECT customer FROM orders GROUP BY customer ORDER BY SUM(amount) DESC LIMIT 1"
TOP = textwrap.dedent(f"""\
    cat > /app/top <<'EOF'
    #!/usr/bin/env python3
    import sqlite3
    db = sqlite3.connect("/srv/data/shop.db")  # read-write: the kernel copies it up
    print(db.execute("{QUERY}").fetchone()[0])
    EOF
    chmod 755 /app/top
    """)
REFERENCE_SOLVE = TOP + "/app/top > /app/answer.txt\n"
TESTS = textwrap.dedent(f"""\
    import sqlite3
    import subprocess
    from pathlib import Path


    def want():
        db = sqlite3.connect("/srv/data/shop.db")  # the tests' own read-write open
        return db.execute("{QUERY}").fetchone()[0]


    def test_the_answer():
        assert Path("/app/answer.txt").read_text().strip() == want()


    def test_the_program():
        got = subprocess.run(["/app/top"], capture_output=True, text=True, timeout=60)
        assert got.stdout.strip() == want()
    """)
INSTRUCTION = ("The SQLite database `/srv/data/shop.db` has a table `orders(customer TEXT, "
               "amount INTEGER)`. Write an executable /app/top that prints the customer with "
               "the largest total amount, and write its answer to /app/answer.txt.\n")
ATTACK = textwrap.dedent("""\
    rm -f /srv/data/shop.db
    python3 -c "import sqlite3; db = sqlite3.connect('/srv/data/shop.db'); \\
    db.execute('CREATE TABLE orders(customer TEXT, amount INTEGER)'); \\
    db.execute(\\"INSERT INTO orders VALUES ('x', 1)\\"); db.commit()"
    printf '#!/bin/sh\\necho x\\n' > /app/top; chmod 755 /app/top
    echo x > /app/answer.txt
    """)
HONEST_RO = TOP.replace('sqlite3.connect("/srv/data/shop.db")',
                        'sqlite3.connect("file:/srv/data/shop.db?mode=ro", uri=True)') \
    + "/app/top > /app/answer.txt\n"


def test_a_file_copied_up_with_the_images_bytes_is_unchanged(tmp_path: Path) -> None:
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    for name in "abcdefg":
        put(lower, f"/srv/data/{name}.db", "rows", mode=0o644)
    put(upper, "/srv/data/a.db", "rows", mode=0o644)  # copied up, nothing written
    put(upper, "/srv/data/b.db", "rowz", mode=0o644)  # same size, other bytes
    put(upper, "/srv/data/c.db", "rows and more", mode=0o644)
    put(upper, "/srv/data/d.db", "rows", mode=0o666)  # same bytes, mode changed
    put(upper, "/srv/data/f.db", "rows", mode=0o644)  # same bytes, touched (round 10)
    put(upper, "/srv/data/g.db", "rows", mode=0o644)  # same bytes, hard-linked (round 10)
    os.link(upper / "srv/data/g.db", upper / "srv/data/g-link.db")
    put(upper, "/srv/data/e2.db", "rows")             # created
    for name in "abcdg":  # a copy-up keeps the image's modification time
        image = (lower / f"srv/data/{name}.db").stat()
        os.utime(upper / f"srv/data/{name}.db", ns=(image.st_atime_ns, image.st_mtime_ns))
    os.utime(upper / "srv/data/f.db", ns=(1, 1))
    view = LowerView([str(lower)])
    found = {e.path: view.unchanged(e) for e in walk_upper(str(upper)) if not e.is_dir}
    assert found == {"/srv/data/a.db": True, "/srv/data/b.db": False,
                     "/srv/data/c.db": False, "/srv/data/d.db": False,
                     "/srv/data/f.db": False, "/srv/data/g.db": False,
                     "/srv/data/g-link.db": False, "/srv/data/e2.db": False}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _task(tmp_path_factory.mktemp("copyup"), "top-customer", TESTS)


def _task(parent: Path, task_id: str, tests: str) -> Path:
    root = write_task(parent, task_id, tests=tests, dockerfile=DOCKERFILE,
                      toml=task_toml(verifier_s=60.0, agent_s=30.0), solve=REFERENCE_SOLVE,
                      instruction=INSTRUCTION)
    (root / "environment" / "gen.py").write_text(GEN)
    build_task_image(load_task(root))
    return root


def _reference(root: Path) -> ReferenceRecord:
    task = load_task(root)
    runs = [run_task(task, task.image_tag, AgentName.ORACLE,
                     reference=ReferenceRecord(task_digest="none"))]
    assert runs[0].reward == 1.0, runs[0].verifier
    record = record_reference(task_digest(task.paths.root), runs)
    assert record is not None
    return record


@pytest.mark.docker
def test_the_reference_that_only_queried_the_database_asks_for_nothing_there(
        shop: Path, tmp_path: Path) -> None:
    record = _reference(shop)
    assert "/srv/data/shop.db" not in (record.footprint or []), record.footprint
    assert record.verifier_changes == []  # the tests' own read-write opens are no change
    attack = play_script(shop, ATTACK, tmp_path, reference=record)
    assert attack.reward == 0.0, attack.verifier
    assert "/srv/data/shop.db" in (attack.left_out or "")
    for honest in (REFERENCE_SOLVE, HONEST_RO):  # queried read-write, or read-only
        outcome = play_script(shop, honest, tmp_path, reference=record)
        assert outcome.reward == 1.0 and outcome.attested, outcome.verifier
        assert not outcome.verifier or not outcome.verifier.tampered


@pytest.mark.docker
def test_control_copy_ups_counted_as_changes_the_attack_forges_a_pass(
        shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(_self: LowerView, _entry: UpperEntry) -> bool:
        return False

    monkeypatch.setattr(LowerView, "unchanged", never)
    record = _reference(shop)
    assert "/srv/data/shop.db" in (record.footprint or [])
    attack = play_script(shop, ATTACK, tmp_path, reference=record)
    assert attack.reward == 1.0 and attack.attested, attack.verifier


TESTS_WRITE = TESTS.replace(
    'def test_the_answer():',
    'def test_the_tests_log_their_visit():\n'
    '    db = sqlite3.connect("/srv/data/shop.db")\n'
    '    db.execute("CREATE TABLE IF NOT EXISTS visits(n INTEGER)")\n'
    '    db.execute("INSERT INTO visits VALUES (1)")\n'
    '    db.commit()\n\n\n'
    'def test_the_answer():')


@pytest.mark.docker
def test_the_tests_own_write_to_a_named_input_is_recorded_by_the_reference_run(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """The first reference run has no footprint, so the named database is asked for; its
    tests write to it. Recorded anyway, a later trial (where the database is an input) knows
    the change is the tests' own: the reference's solution graded as an agent scores 1."""
    root = _task(tmp_path_factory.mktemp("copyup-w"), "top-customer-w", TESTS_WRITE)
    record = _reference(root)
    assert record.verifier_changes == ["/srv/data/shop.db"]
    outcome = play_script(root, REFERENCE_SOLVE, tmp_path, reference=record)
    assert outcome.reward == 1.0 and outcome.attested, outcome.verifier
