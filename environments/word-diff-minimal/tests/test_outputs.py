import itertools
import os
import random
import subprocess
from pathlib import Path

TOOL = "/app/wdiff"
DRAFTS = Path("/app/drafts")


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, timeout=60)


def files(tmp_path, old, new):
    a, b = tmp_path / "old.txt", tmp_path / "new.txt"
    a.write_bytes(old.encode("utf-8") if isinstance(old, str) else old)
    b.write_bytes(new.encode("utf-8") if isinstance(new, str) else new)
    return str(a), str(b)


def wdiff(tmp_path, old, new, *opts):
    out = run(*opts, *files(tmp_path, old, new))
    return out.returncode, out.stdout.decode("utf-8")


def lcs_len(a, b):
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def parse(line):
    """Items: ('=', word) | ('-', [words]) | ('+', [words])."""
    items, group = [], None
    for tok in line.split(" "):
        if group is None and tok.startswith("[-"):
            group, tok = ("-", []), tok[2:]
        elif group is None and tok.startswith("{+"):
            group, tok = ("+", []), tok[2:]
        elif group is None:
            items.append(("=", tok))
            continue
        end = "-]" if group[0] == "-" else "+}"
        if tok.endswith(end):
            group[1].append(tok[: -len(end)])
            items.append(group)
            group = None
        else:
            group[1].append(tok)
    assert group is None, f"unterminated group in {line!r}"
    return items


def check_diff(out, old_words, new_words, lcs=None, fold=False):
    assert out.endswith("\n") and out.count("\n") == 1
    items = parse(out[:-1])
    rebuilt_old, rebuilt_new, same = [], [], 0
    for kind, val in items:
        if kind == "=":
            rebuilt_old.append(val)
            rebuilt_new.append(val)
            same += 1
        elif kind == "-":
            rebuilt_old.extend(val)
        else:
            rebuilt_new.extend(val)
    key = (lambda w: w.lower()) if fold else (lambda w: w)
    assert [key(w) for w in rebuilt_old] == [key(w) for w in old_words]
    assert rebuilt_new == new_words
    # canonical grouping: per gap at most one deletion item, then at most one insertion item
    kinds = [k for k, _ in items]
    for x, y in itertools.pairwise(kinds):
        assert not (x == y and x != "="), "adjacent groups of the same kind"
        assert not (x == "+" and y == "-"), "insertion item before deletion item"
    if lcs is None:
        lcs = lcs_len([key(w) for w in old_words], [key(w) for w in new_words])
    assert same == lcs, f"{same} unchanged words, but {lcs} is possible"


def test_tool_exists_and_is_executable():
    assert os.path.isfile(TOOL) and os.access(TOOL, os.X_OK)


def test_documented_example_exact(tmp_path):
    code, out = wdiff(tmp_path, "the quick brown fox", "the slow brown dog jumps")
    assert code == 1
    assert out == "the [-quick-] {+slow+} brown [-fox-] {+dog jumps+}\n"


def test_drafts_sample_is_valid_and_minimal():
    out = run(str(DRAFTS / "v1.txt"), str(DRAFTS / "v2.txt"))
    assert out.returncode == 1
    old = (DRAFTS / "v1.txt").read_text().split()
    new = (DRAFTS / "v2.txt").read_text().split()
    check_diff(out.stdout.decode(), old, new)


def test_drafts_sample_stat():
    out = run("--stat", str(DRAFTS / "v1.txt"), str(DRAFTS / "v2.txt"))
    assert out.returncode == 1
    assert out.stdout.decode() == "unchanged=18 deleted=6 inserted=10\n"


def test_identical_files_exit_0(tmp_path):
    code, out = wdiff(tmp_path, "one two\nthree\n", "one two\nthree\n")
    assert code == 0
    assert out == "one two three\n"


def test_whitespace_differences_are_not_changes(tmp_path):
    code, out = wdiff(tmp_path, "alpha  beta\r\ngamma\t\tdelta\n", "  alpha\nbeta gamma\x0bdelta\x0c")
    assert code == 0
    assert out == "alpha beta gamma delta\n"


def test_both_empty_prints_nothing(tmp_path):
    code, out = wdiff(tmp_path, "", " \n\t\n")
    assert code == 0
    assert out == ""


def test_all_inserted_or_all_deleted(tmp_path):
    assert wdiff(tmp_path, "", "new words here\n") == (1, "{+new words here+}\n")
    assert wdiff(tmp_path, "old words\n", "\n") == (1, "[-old words-]\n")


def test_deletion_item_precedes_insertion_item(tmp_path):
    assert wdiff(tmp_path, "a b c", "a x c") == (1, "a [-b-] {+x+} c\n")
    assert wdiff(tmp_path, "k p q r k", "k s t k") == (1, "k [-p q r-] {+s t+} k\n")


def test_insertions_at_edges(tmp_path):
    assert wdiff(tmp_path, "middle", "start middle end") == (1, "{+start+} middle {+end+}\n")


def test_punctuation_is_part_of_words(tmp_path):
    assert wdiff(tmp_path, "the end.", "the end") == (1, "the [-end.-] {+end+}\n")


def test_only_ascii_whitespace_separates_words(tmp_path):
    code, out = wdiff(tmp_path, "a\u00a0b", "a b", "--stat")
    assert code == 1
    assert out == "unchanged=0 deleted=1 inserted=2\n"


def test_non_ascii_words_preserved(tmp_path):
    code, out = wdiff(tmp_path, "Grüße aus Köln", "Grüße aus Zürich ☃")
    assert code == 1
    assert out == "Grüße aus [-Köln-] {+Zürich ☃+}\n"


def test_ignore_case_prints_new_spelling(tmp_path):
    assert wdiff(tmp_path, "Hello World", "hello WORLD", "--ignore-case") == (0, "hello WORLD\n")
    code, out = wdiff(tmp_path, "The Cat sat", "the dog SAT", "--ignore-case")
    assert (code, out) == (1, "the [-Cat-] {+dog+} SAT\n")
    assert wdiff(tmp_path, "Hello", "hello")[0] == 1


def test_stat_counts(tmp_path):
    code, out = wdiff(tmp_path, "a b c d e", "a c d x e y", "--stat")
    assert (code, out) == (1, "unchanged=4 deleted=1 inserted=2\n")
    assert wdiff(tmp_path, "same", "same", "--stat") == (0, "unchanged=1 deleted=0 inserted=0\n")


def test_options_in_any_order(tmp_path):
    a, b = files(tmp_path, "X y", "x Y z")
    for opts in (["--stat", "--ignore-case"], ["--ignore-case", "--stat"]):
        out = run(*opts, a, b)
        assert out.returncode == 1
        assert out.stdout.decode() == "unchanged=2 deleted=0 inserted=1\n"


def test_random_small_cases_are_minimal(tmp_path):
    rng = random.Random(20240611)
    for _ in range(25):
        old = [rng.choice(["a", "b", "c", "d"]) for _ in range(rng.randint(0, 40))]
        new = [rng.choice(["a", "b", "c", "e"]) for _ in range(rng.randint(0, 40))]
        code, out = wdiff(tmp_path, " ".join(old), "\n".join(new))
        assert code == (0 if old == new else 1)
        if old or new:
            check_diff(out, old, new)
        else:
            assert out == ""


def test_dissimilar_files_are_minimal(tmp_path):
    rng = random.Random(99)
    old = [rng.choice(["to", "be", "or", "not"]) for _ in range(500)]
    new = [rng.choice(["to", "be", "is", "not"]) for _ in range(450)]
    code, out = wdiff(tmp_path, " ".join(old), " ".join(new))
    assert code == 1
    check_diff(out, old, new)


def test_large_similar_files(tmp_path):
    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(400)]
    old = [rng.choice(vocab) for _ in range(20000)]
    new = list(old)
    deletions = 0
    for e in range(160):
        pos = rng.randrange(len(new))
        if e % 2 and not new[pos].startswith("NEW"):
            del new[pos]
            deletions += 1
        else:
            new.insert(pos, f"NEW{e}")
    code, out = wdiff(tmp_path, "\n".join(old), " ".join(new))
    assert code == 1
    check_diff(out, old, new, lcs=len(old) - deletions)
    code, stat = wdiff(tmp_path, "\n".join(old), " ".join(new), "--stat")
    inserted = len(new) - (len(old) - deletions)
    assert stat == f"unchanged={len(old) - deletions} deleted={deletions} inserted={inserted}\n"


def test_missing_file_exit_2(tmp_path):
    a, _ = files(tmp_path, "x", "y")
    out = run(a, str(tmp_path / "absent.txt"))
    assert out.returncode == 2
    assert out.stdout == b""
    assert out.stderr.strip() != b""


def test_wrong_argument_count_exit_2(tmp_path):
    a, b = files(tmp_path, "x", "y")
    for args in ([], [a], [a, b, a]):
        out = run(*args)
        assert out.returncode == 2, args
        assert out.stdout == b""


def test_unknown_option_exit_2(tmp_path):
    a, b = files(tmp_path, "x", "y")
    out = run("--color", a, b)
    assert out.returncode == 2
    assert out.stdout == b""
    assert out.stderr.strip() != b""


def test_inputs_not_modified(tmp_path):
    a, b = files(tmp_path, "keep this\n", "and this\n")
    run(a, b)
    assert Path(a).read_text() == "keep this\n" and Path(b).read_text() == "and this\n"
