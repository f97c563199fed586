import hashlib
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

TOOL = "/app/dedupe"
CRM_DB = "/app/data/crm.db"
CRM_SQL = Path(__file__).with_name("crm.sql").read_text()
SCHEMA = """
CREATE TABLE contacts(id INTEGER PRIMARY KEY, full_name TEXT, email TEXT, phone TEXT, city TEXT,
                      updated_at TEXT NOT NULL);
CREATE TABLE tickets(id INTEGER PRIMARY KEY, contact_id INTEGER NOT NULL REFERENCES contacts(id),
                     subject TEXT NOT NULL);
"""


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def make_db(path, contacts, tickets=()):
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO contacts VALUES (?,?,?,?,?,?)", contacts)
    con.executemany("INSERT INTO tickets VALUES (?,?,?)", tickets)
    con.commit()
    con.close()
    return str(path)


def norm(email):
    if email is None:
        return None
    e = email.strip().lower()
    parts = e.split("@")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None
    local, domain = parts
    if domain in ("gmail.com", "googlemail.com"):
        return local.split("+")[0].replace(".", "") + "@gmail.com"
    return e


def is_blank(v):
    return v is None or not v.strip()


def reference(contacts, tickets):
    """Returns (contacts, tickets, log, groups, removed) after dedupe."""
    by_key = {}
    for c in contacts:
        k = norm(c[2])
        if k:
            by_key.setdefault(k, []).append(c)
    result = {c[0]: list(c) for c in contacts}
    owner, log, groups = {}, [], 0
    for key, members in by_key.items():
        if len(members) < 2:
            continue
        groups += 1
        ranked = sorted(members, key=lambda c: (tuple(-ord(ch) for ch in c[5]), c[0]))
        surv, losers = ranked[0], ranked[1:]
        for col in (1, 3, 4):
            if is_blank(result[surv[0]][col]):
                donor = next((l[col] for l in losers if not is_blank(l[col])), None)
                if donor is not None:
                    result[surv[0]][col] = donor
        for l in losers:
            owner[l[0]] = surv[0]
            del result[l[0]]
            log.append((l[0], surv[0], key))
    for row in result.values():
        if row[2] is not None and not row[2].strip():
            row[2] = None
        elif norm(row[2]):
            row[2] = norm(row[2])
    out_tickets = [(t[0], owner.get(t[1], t[1]), t[2]) for t in tickets]
    return ([tuple(r) for _, r in sorted(result.items())], out_tickets, sorted(log), groups, len(log))


def state(path):
    con = sqlite3.connect(path)
    contacts = con.execute("SELECT * FROM contacts ORDER BY id").fetchall()
    tickets = con.execute("SELECT * FROM tickets ORDER BY id").fetchall()
    has_log = con.execute("SELECT count(*) FROM sqlite_master WHERE name='merge_log'").fetchone()[0]
    log = con.execute("SELECT * FROM merge_log ORDER BY loser_id").fetchall() if has_log else None
    con.close()
    return contacts, tickets, log


def original_crm():
    con = sqlite3.connect(":memory:")
    con.executescript(CRM_SQL)
    contacts = con.execute("SELECT * FROM contacts ORDER BY id").fetchall()
    tickets = con.execute("SELECT * FROM tickets ORDER BY id").fetchall()
    con.close()
    return contacts, tickets


def sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


HIDDEN = [
    (1, "Maya Ortiz", " Maya.Ortiz+news@GoogleMail.com", None, "  ", "2024-01-01 10:00:00"),
    (2, None, "mayaortiz@gmail.com", "555-1", None, "2024-03-01 10:00:00"),
    (3, "M. Ortiz", "MAYA.ORTIZ@gmail.com ", "555-2", "Lisbon", "2024-02-01 10:00:00"),
    (4, "Kim", "kim.lee+work@example.org", None, None, "2024-01-01 10:00:00"),
    (5, "Kim Lee", "KIM.LEE+WORK@EXAMPLE.ORG", None, "Busan", "2024-01-01 10:00:00"),
    (6, "Kim L", "kimlee@example.org", "777", None, "2024-05-01 10:00:00"),
    (7, "No Mail", None, None, None, "2024-01-01 10:00:00"),
    (8, "Blank", "   ", None, None, "2024-01-01 10:00:00"),
    (9, "Bad", "not-an-address", None, None, "2024-01-01 10:00:00"),
    (10, "Bad2", "not-an-address", None, None, "2024-02-01 10:00:00"),
    (11, "Two At", "a@b@c.com", None, None, "2024-01-01 10:00:00"),
    (12, "Solo", "  Solo@Example.COM ", "1", "X", "2024-01-01 10:00:00"),
    (13, "", "kim.lee+work@example.org", " ", "Seoul", "2024-01-01 10:00:00"),
]
HIDDEN_TICKETS = [(1, 1, "a"), (2, 3, "b"), (3, 5, "c"), (4, 13, "d"), (5, 9, "e"), (6, 2, "f"),
                  (7, 6, "g")]


@pytest.fixture
def hidden(tmp_path):
    return make_db(tmp_path / "h.db", HIDDEN, HIDDEN_TICKETS)


def test_dedupe_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_crm_db_was_deduplicated():
    contacts, tickets = original_crm()
    exp_contacts, exp_tickets, exp_log, _, _ = reference(contacts, tickets)
    got_contacts, got_tickets, got_log = state(CRM_DB)
    assert got_contacts == exp_contacts
    assert got_tickets == exp_tickets
    assert got_log == exp_log


def test_summary_line(hidden):
    res = run(hidden)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "groups=2 removed=4\n"


def test_survivor_is_latest_then_lowest_id(hidden):
    run(hidden)
    ids = [c[0] for c in state(hidden)[0]]
    assert 2 in ids and 1 not in ids and 3 not in ids
    assert 4 in ids and 5 not in ids and 13 not in ids


def test_gmail_normalization(hidden):
    run(hidden)
    contacts = {c[0]: c for c in state(hidden)[0]}
    assert contacts[2][2] == "mayaortiz@gmail.com"


def test_other_domains_keep_plus_and_dots(hidden):
    run(hidden)
    contacts = {c[0]: c for c in state(hidden)[0]}
    assert contacts[4][2] == "kim.lee+work@example.org"
    assert contacts[6][2] == "kimlee@example.org"


def test_field_filling_order(hidden):
    run(hidden)
    contacts = {c[0]: c for c in state(hidden)[0]}
    assert contacts[2][1] == "M. Ortiz"
    assert contacts[2][3] == "555-1"
    assert contacts[2][4] == "Lisbon"
    assert contacts[2][5] == "2024-03-01 10:00:00"
    assert contacts[4][1] == "Kim"
    assert contacts[4][4] == "Busan"
    assert contacts[4][3] is None


def test_tickets_repointed(hidden):
    run(hidden)
    tickets = dict((t[0], t[1]) for t in state(hidden)[1])
    assert tickets == {1: 2, 2: 2, 3: 4, 4: 4, 5: 9, 6: 2, 7: 6}


def test_invalid_and_blank_emails_untouched_and_not_merged(hidden):
    run(hidden)
    contacts = {c[0]: c for c in state(hidden)[0]}
    assert {7, 8, 9, 10, 11} <= set(contacts)
    assert contacts[8][2] is None
    assert contacts[9][2] == "not-an-address"
    assert contacts[11][2] == "a@b@c.com"
    assert contacts[12][2] == "solo@example.com"


def test_merge_log_rows(hidden):
    run(hidden)
    assert state(hidden)[2] == [(1, 2, "mayaortiz@gmail.com"), (3, 2, "mayaortiz@gmail.com"),
                                (5, 4, "kim.lee+work@example.org"),
                                (13, 4, "kim.lee+work@example.org")]


def test_full_reference_on_hidden(hidden):
    run(hidden)
    exp_c, exp_t, exp_log, _, _ = reference(HIDDEN, HIDDEN_TICKETS)
    assert state(hidden) == (exp_c, exp_t, exp_log)


def test_dry_run_changes_nothing(hidden):
    digest = sha(hidden)
    res = run(hidden, "--dry-run")
    assert res.returncode == 0
    assert res.stdout == "groups=2 removed=4\n"
    assert sha(hidden) == digest


def test_second_run_is_noop_and_log_kept(hidden):
    run(hidden)
    first = state(hidden)
    res = run(hidden)
    assert res.returncode == 0
    assert res.stdout == "groups=0 removed=0\n"
    assert state(hidden) == first


def test_existing_merge_log_rows_kept(tmp_path):
    path = make_db(tmp_path / "l.db", [(1, "a", "x@y.z", None, None, "2024-01-01 00:00:00"),
                                       (2, "b", "X@Y.Z", None, None, "2024-01-02 00:00:00")])
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE merge_log(loser_id INTEGER PRIMARY KEY, survivor_id INTEGER NOT NULL, "
                "email TEXT NOT NULL)")
    con.execute("INSERT INTO merge_log VALUES (100, 200, 'old@example.com')")
    con.commit()
    con.close()
    assert run(path).stdout == "groups=1 removed=1\n"
    assert state(path)[2] == [(1, 2, "x@y.z"), (100, 200, "old@example.com")]


def test_missing_db_exit_2(tmp_path):
    target = tmp_path / "none.db"
    res = run(str(target))
    assert res.returncode == 2
    assert res.stderr.strip()
    assert not target.exists()


def test_bad_arguments_exit_2(hidden):
    assert run().returncode == 2
    assert run(hidden, "--bogus").returncode == 2
    assert run(hidden, hidden).returncode == 2


def test_empty_database(tmp_path):
    path = make_db(tmp_path / "e.db", [])
    res = run(path)
    assert res.returncode == 0
    assert res.stdout == "groups=0 removed=0\n"


def test_large_random_database(tmp_path):
    import random
    rnd = random.Random(3)
    locals_ = ["a.b", "ab", "a.b+x", "A.B", "c.d", "cd", "e", "e+1"]
    domains = ["gmail.com", "GoogleMail.com", "example.com", "Example.com"]
    contacts = []
    for i in range(1, 1201):
        email = rnd.choice([f" {rnd.choice(locals_)}@{rnd.choice(domains)}", None, "", "broken"])
        contacts.append((i, rnd.choice(["N", None, " "]), email, rnd.choice(["p", None, ""]),
                         rnd.choice(["c", None]), f"2024-0{rnd.randint(1, 3)}-01 00:00:00"))
    tickets = [(t, rnd.randint(1, 1200), "s") for t in range(1, 801)]
    path = make_db(tmp_path / "big.db", contacts, tickets)
    res = run(path)
    assert res.returncode == 0, res.stderr
    exp_c, exp_t, exp_log, groups, removed = reference(contacts, tickets)
    assert res.stdout == f"groups={groups} removed={removed}\n"
    assert state(path) == (exp_c, exp_t, exp_log)
