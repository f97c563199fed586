"""What B's layer shows of the image's files changed while the tests ran
(:mod:`termgrade.scoring.during`) and of the loader's cache, on overlay-shaped layers (no
engine). The sixth cold attack changed a login shell in ``/etc/passwd``, planted bytecode
in an image ``__pycache__`` and poisoned ``/etc/ld.so.cache`` and put it back, each from
agent code a test ran."""

from __future__ import annotations

import os
from pathlib import Path

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.during import Trust, image_changes
from termgrade.scoring.loader import cache_digest
from termgrade.scoring.transfer import TransferRoot, TransferSet
from tests.support.overlay_layers import put

PASSWD = "root:x:0:0:root:/root:/bin/bash\napp:x:1000:1000::/home/app:/bin/bash\n"
SET = TransferSet((TransferRoot("/app", "workdir"),))


def _changes(lower: Path, upper: Path, transfer: TransferSet = SET,
             carried: frozenset[str] = frozenset()) -> dict[str, Trust]:
    return dict(image_changes(walk_upper(str(upper)), LowerView([str(lower)]),
                              carried=carried, transfer=transfer, skip=("/logs",)))


def test_an_image_accounts_entry_changed_counts_a_user_added_does_not(tmp_path: Path) -> None:
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    put(lower, "/etc/passwd", PASSWD)
    put(upper, "/etc/passwd", PASSWD + "tester:x:1001:1001::/home/tester:/bin/sh\n")
    assert _changes(lower, upper, carried=frozenset({"/etc/passwd"})) == {}
    put(upper, "/etc/passwd", PASSWD.replace("/home/app:/bin/bash", "/home/app:/app/sh"))
    assert _changes(lower, upper, carried=frozenset({"/etc/passwd"})) == {
        "/etc/passwd": Trust.TRUSTED}
    asked = TransferSet((*SET.roots, TransferRoot("/etc/passwd", "instruction")))
    assert _changes(lower, upper, asked) == {}


def test_image_bytecode_rewritten_is_software(tmp_path: Path) -> None:
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    put(lower, "/opt/validator/__pycache__/rules.cpython-311.pyc", "good")
    put(lower, "/opt/truth/expected.txt", "6765")
    put(upper, "/opt/validator/__pycache__/rules.cpython-311.pyc", "forged")
    put(upper, "/opt/truth/expected.txt", "42")
    assert _changes(lower, upper) == {
        "/opt/validator/__pycache__/rules.cpython-311.pyc": Trust.SOFTWARE,
        "/opt/truth/expected.txt": Trust.DATA}


def test_a_cache_put_back_is_not_the_same_cache(tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    cache = put(upper, "/etc/ld.so.cache", "the grader's rebuilt cache")
    before = cache_digest(str(upper))
    assert before is not None and cache_digest(str(upper)) == before
    poisoned = cache.with_name("ld.so.cache~")
    poisoned.write_text("poisoned")
    os.replace(poisoned, cache)  # ldconfig renames a new cache into place
    cache.write_text("the grader's rebuilt cache")  # and the attack puts the bytes back
    assert cache_digest(str(upper)) != before
