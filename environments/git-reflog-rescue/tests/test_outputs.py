import subprocess

REPO = "/app/notes-service"
MAIN_BEFORE_RESET = "84e93c2f638f34813df94844a29bece267817468"
FEATURE_TIP = "eb498991a61aadd871b59d80376fd05bb0fd21fd"
STASH_TREE = "a8ce68269412622b655da0771e833c15a1a11ae7"
DELETE_COMMIT = "e00a25fac14094663e66e9cd8736449197db8085"
RELEASE = "3d4838ab058a596f0152bef1c113a6f3307fc8bd"
TAG_OBJECT = "6af6a1645f7016516fa90a9884759d7ba18cfd56"
MAIN_HISTORY = [
    ("84e93c2f638f34813df94844a29bece267817468", "Validate note length"),
    ("a5f748b402eff2221bbf1617729b15e1c545225b", "Add pagination"),
    ("e00a25fac14094663e66e9cd8736449197db8085", "Add delete endpoint"),
    ("3d4838ab058a596f0152bef1c113a6f3307fc8bd", "Add list endpoint"),
    ("54d0ea4cea7a0fc42d1668ccd668029d4546f09a", "Add note lookup"),
    ("03a12c11880697de1b02104922569b601178ade2", "Initial commit: notes service skeleton"),
]


def git(*args, check=True):
    out = subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, timeout=30)
    if check:
        assert out.returncode == 0, f"git {' '.join(args)}: {out.stderr}"
    return out.stdout.strip()


def rev(name):
    out = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "-q", name],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def test_main_points_to_commit_before_reset():
    assert rev("refs/heads/main") == MAIN_BEFORE_RESET


def test_main_history_is_the_original_one():
    lines = git("log", "--format=%H %s", "main").splitlines()
    assert [tuple(line.split(" ", 1)) for line in lines] == MAIN_HISTORY


def test_main_has_pagination_and_validation_but_not_wip():
    text = git("show", "main:service.py")
    assert "def page(offset, limit=20):" in text
    assert "note too long" in text
    assert "def allow(" not in text
    assert "Rate limiting" not in git("show", "main:README.md")


def test_feature_branch_restored_at_original_tip():
    assert rev("refs/heads/feature/search") == FEATURE_TIP


def test_feature_branch_history():
    subjects = git("log", "--format=%s", "feature/search").splitlines()
    assert subjects[:4] == ["Add search tests", "Add search endpoint", "Add search index",
                            "Add delete endpoint"]
    assert len(subjects) == 7


def test_feature_branch_forks_from_delete_commit():
    assert git("merge-base", "feature/search", "main") == DELETE_COMMIT
    assert "def search(word):" in git("show", "feature/search:search.py")


def test_wip_branch_exists():
    assert rev("refs/heads/wip/rate-limit") != ""


def test_wip_commit_has_single_parent_restored_main():
    parents = git("log", "-1", "--format=%P", "wip/rate-limit").split()
    assert parents == [MAIN_BEFORE_RESET]


def test_wip_tree_is_the_stashed_tree():
    assert git("rev-parse", "wip/rate-limit^{tree}") == STASH_TREE


def test_wip_commit_message():
    assert git("log", "-1", "--format=%B", "wip/rate-limit").strip() == "WIP rate limiting"


def test_wip_contains_the_rate_limiter():
    assert "def allow(client, limit=100):" in git("show", "wip/rate-limit:service.py")
    assert "Rate limiting: 100 requests per client (WIP)." in git("show", "wip/rate-limit:README.md")
    assert git("diff", "--name-only", "main", "wip/rate-limit").splitlines() == ["README.md",
                                                                                  "service.py"]


def test_main_checked_out_and_worktree_clean():
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    with open(f"{REPO}/service.py") as f:
        text = f.read()
    assert "def page(" in text and "def allow(" not in text


def test_no_extra_refs_and_release_untouched():
    branches = sorted(git("for-each-ref", "--format=%(refname)", "refs/heads").splitlines())
    assert branches == ["refs/heads/feature/search", "refs/heads/main", "refs/heads/release/0.1",
                        "refs/heads/wip/rate-limit"]
    assert rev("refs/heads/release/0.1") == RELEASE
    assert git("for-each-ref", "--format=%(refname) %(objectname)", "refs/tags") == (
        f"refs/tags/v0.1 {TAG_OBJECT}")


def test_restored_refs_are_connected():
    for ref in ("main", "feature/search", "wip/rate-limit"):
        sha = rev(ref)
        assert sha != "", ref
        out = subprocess.run(["git", "-C", REPO, "fsck", "--connectivity-only", "--no-dangling", sha],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
