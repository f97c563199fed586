import re
import subprocess

import pytest

REPO = "/app/payments-api"
KEY_RE = re.compile(rb"sk_live_|AKIA[0-9A-Z]{16}")
ENV_SECRETS = [b"correct-horse-battery-staple", b"tr0ub4dor-and-3"]
OLD_COMMITS = [
    "56c5a0198326355f9d2719af1b1bd9b5169cf39f",  # Configure Stripe and AWS
    "6f7ebbff9c4c394a842e0f72bd0a77d4425fba96",  # Rotate prod credentials
    "b36b822842726d58e1cf992517647f04d1947831",  # Add webhook handler
    "4763e7a072b05fc9dc7961b0194f7c24041bea05",  # Add smoke test script
]
UNCHANGED = ["4c301b144c384e0729da126dd9919d6bbf18c0b1", "54e7015e8a2aec88f25363df8d30879e0dac7f70"]
MAIN_TIP = "c00794e18ff3945dd34b4fe28ddb810cea89bd25"
RELEASE_TIP = "93a98a2118bd636381721e494c7c56ae1cf8ec0c"
MAIN_TREE = "0a054bae46fe2184a5afbdcfb7e5a674d43f9fd7"

LEA = ("Lea Brandt", "lea@payments.example")
SAM = ("Sam Okafor", "sam@payments.example")


def meta(who, date, committer=None, cdate=None):
    c = committer or who
    return (*who, date, *c, cdate or date)


SHARED = [
    meta(LEA, "1704146400 -0500") + ("Add webhook handler",),
    meta(LEA, "1704132000 -0500") + ("Add refunds",),
    meta(SAM, "1704124800 +0100") + ("Configure Stripe and AWS",),
    meta(LEA, "1704117600 -0500") + ("Add payment client",),
    meta(SAM, "1704110400 +0100") + ("Initial project layout",),
]
MAIN_META = [
    meta(LEA, "1704175200 -0500") + ("Document configuration",),
    meta(LEA, "1704160800 -0500") + ("Add retry policy",),
    meta(SAM, "1704153600 +0100") + ("Read credentials from environment",),
] + SHARED
RELEASE_META = [
    meta(LEA, "1704196800 -0500") + ("Release 1.1",),
    meta(SAM, "1704189600 +0100") + ("Add smoke test script",),
    meta(LEA, "1704182400 -0500", SAM, "1704186000 -0500") + ("Backport refund cap",),
] + SHARED

SETTINGS_V1 = '''import os

ENV = os.environ.get("APP_ENV", "dev")

STRIPE_KEY = "REDACTED"
AWS_ACCESS_KEY_ID = "REDACTED"
AWS_REGION = "eu-central-1"
'''
SMOKE = '''#!/bin/sh
# Smoke test against the live API.
curl -fsS -u REDACTED: https://api.stripe.example/v1/charges?limit=1
curl -fsS -u REDACTED: https://api.stripe.example/v1/balance
'''


def git(*args, text=True):
    out = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=text, timeout=60)
    assert out.returncode == 0, f"git {' '.join(args)}: {out.stderr}"
    return out.stdout


def all_commits():
    return git("rev-list", "--all").split()


def log_meta(ref):
    fmt = "%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%s"
    return [tuple(line.split("\x00")) for line in git("log", f"--format={fmt}", "--date=raw", ref).splitlines()]


def test_refs_are_exactly_the_branches_and_tags():
    refs = sorted(git("for-each-ref", "--format=%(refname)").split())
    assert refs == ["refs/heads/main", "refs/heads/release/1.x", "refs/tags/v1.0",
                    "refs/tags/v1.1", "refs/tags/v2.0"]
    assert "Rotate prod credentials" not in git("log", "--all", "--format=%s")


def test_prod_env_absent_from_every_commit():
    commits = all_commits()
    assert len(commits) == 11
    for c in commits:
        assert "deploy/prod.env" not in git("ls-tree", "-r", "--name-only", c).split(), c


def test_no_key_in_any_reachable_file():
    commits = all_commits()
    out = subprocess.run(["git", "-C", REPO, "grep", "-I", "-l", "-E", r"sk_live_|AKIA[0-9A-Z]{16}",
                          *commits], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stdout
    assert len(commits) == 11


def test_no_key_in_messages():
    messages = git("log", "--all", "--format=%B", text=False)
    assert not KEY_RE.search(messages)
    body = git("log", "-1", "--format=%B", "main~3")
    assert body == ("Add webhook handler\n\nTested locally against REDACTED; "
                    "see REDACTED in the AWS console.\n\n")


def test_no_secret_in_any_stored_object():
    data = subprocess.run(["git", "-C", REPO, "cat-file", "--batch-all-objects", "--batch"],
                          capture_output=True, timeout=60).stdout
    assert data
    assert not KEY_RE.search(data)
    for secret in ENV_SECRETS:
        assert secret not in data


def test_old_commits_are_gone():
    existing = set(git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split())
    assert existing
    for c in OLD_COMMITS:
        assert c not in existing
    assert not git("for-each-ref", "refs/original")


def test_main_history_metadata_preserved():
    assert log_meta("main") == MAIN_META


def test_release_history_metadata_preserved():
    assert log_meta("release/1.x") == RELEASE_META


def test_unchanged_commits_keep_their_ids():
    for ref in ("main", "release/1.x"):
        assert git("rev-list", "--reverse", ref).split()[:2] == UNCHANGED
    assert git("rev-list", "main").split()[-3] != "56c5a0198326355f9d2719af1b1bd9b5169cf39f"


def test_branch_tips_are_the_exact_rewrites():
    assert git("rev-parse", "main").strip() == MAIN_TIP
    assert git("rev-parse", "release/1.x").strip() == RELEASE_TIP


def test_settings_redacted_exactly():
    assert git("show", "v1.0:config/settings.py") == SETTINGS_V1


def test_smoke_script_redacted_exactly_and_still_executable():
    assert git("show", "release/1.x:scripts/smoke.sh") == SMOKE
    assert git("ls-tree", "release/1.x", "scripts/smoke.sh").split()[0] == "100755"


@pytest.mark.parametrize(
    "tag, tagger, message, target",
    [("v1.1", "Lea Brandt <lea@payments.example> 1704196800 -0500", "Payments API 1.1 (maintenance)",
      "Release 1.1"),
     ("v2.0", "Sam Okafor <sam@payments.example> 1704168000 +0100", "Payments API 2.0",
      "Add retry policy")],
)
def test_annotated_tags_rewritten(tag, tagger, message, target):
    assert git("cat-file", "-t", tag).strip() == "tag"
    raw = git("cat-file", "tag", tag)
    assert f"\ntagger {tagger}\n" in raw
    assert raw.rstrip("\n").endswith("\n\n" + message)
    obj = raw.split("\n", 1)[0].split()[1]
    assert obj in all_commits()
    assert git("log", "-1", "--format=%s", obj).strip() == target
    assert git("merge-base", "--is-ancestor", obj, "main" if tag == "v2.0" else "release/1.x") == ""
    assert obj not in OLD_COMMITS and len(all_commits()) == 11


def test_lightweight_tag_rewritten():
    assert git("cat-file", "-t", "v1.0").strip() == "commit"
    assert git("log", "-1", "--format=%s", "v1.0").strip() == "Add refunds"
    assert git("rev-parse", "v1.0").strip() == git("rev-parse", "main~4").strip()
    assert "916cdae1138df34937ddf46a707141d30f494ef8" not in git("rev-parse", "v1.0")


def test_main_checked_out_clean_with_same_tree():
    assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git("rev-parse", "main^{tree}").strip() == MAIN_TREE
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    assert git("rev-parse", "main").strip() == MAIN_TIP


def test_repository_is_consistent():
    out = subprocess.run(["git", "-C", REPO, "fsck", "--full", "--no-dangling"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert len(all_commits()) == 11
