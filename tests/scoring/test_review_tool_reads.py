"""The carry rule against the twelfth cold round's created stand-ins (no engine): what the
image's own programs read that no list names (``review/tool_reads.py``):

* a PAM module made in the image's ``security/`` (``runuser -l`` loads the optional
  ``pam_systemd.so`` the image lacks), a binutils plugin in ``bfd-plugins/``;
* a fake ``sha256sum`` in an image user's ``~/bin`` or ``~/.local/bin``, which Debian's
  ``~/.profile`` puts first on a login shell's ``PATH``;
* ``/etc/default/su`` (``ALWAYS_SET_PATH``, ``ENV_PATH``), a ``dpkg.cfg.d`` entry setting
  ``admindir``, gpgv's ``~/.gnupg/trustedkeys.kbx``: files a program the tests run names in
  its own bytes.

Each attack has honest twins that are carried, and a control: the defence patched out, the
attack's entry reaches B.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.review import standins, tests_programs, tool_reads
from termgrade.scoring.review.integrity import LayerReview, review_layer
from termgrade.scoring.review.transfer import TransferRoot, TransferSet
from tests.support.overlay_layers import POLICY, put

SET = TransferSet((TransferRoot("/app", "workdir"),))
TOOLS = dataclasses.replace(POLICY, path_dirs=("/usr/local/bin", "/usr/bin", "/bin"),
                            tests_words=frozenset({"su", "dpkg", "gpgv", "sha256sum", "-c"}))


def _elf(*strings: str) -> str:
    """A program's bytes as the rule reads them: an ELF header, then its strings."""
    return "\x7fELF\x02\x01\x01" + "\0".join(("", *strings, "")) + "\0"


@pytest.fixture
def lower(tmp_path: Path) -> Path:
    lower = tmp_path / "lower"
    put(lower, "/usr/lib/x86_64-linux-gnu/security/pam_unix.so", "\x7fELF")
    put(lower, "/usr/lib/bfd-plugins/liblto_plugin.so", "\x7fELF")
    put(lower, "/usr/lib/x86_64-linux-gnu/libc.so.6", "\x7fELF")
    put(lower, "/usr/bin/sha256sum", "\x7fELF", 0o755)
    put(lower, "/usr/bin/su", _elf("/etc/default/su", "/etc/default/runuser"), 0o755)
    put(lower, "/usr/bin/dpkg", _elf("/etc/dpkg", "%s/%s.cfg.d", "%s.d"), 0o755)
    put(lower, "/usr/bin/gpgv", _elf("trustedkeys.kbx", "gnupg"), 0o755)
    put(lower, "/usr/bin/python3", _elf("/etc/default/myapp", "config.json"), 0o755)
    put(lower, "/etc/dpkg/dpkg.cfg.d", None)
    put(lower, "/home/analyst/.profile", 'PATH="$HOME/bin:$PATH"\n')
    for directory in ("/app", "/tmp", "/tests", "/usr/local/bin", "/usr/local/lib", "/root"):
        put(lower, directory, None)
    return lower


def _review(lower: Path, upper: Path) -> LayerReview:
    tests_programs.tests_tools.cache_clear()
    return review_layer(walk_upper(str(upper)), LowerView([str(lower)]), TOOLS, transfer=SET)


def _carried(review: LayerReview) -> list[str]:
    return [e.path for e in review.carried]


def _off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The round's defences patched out."""
    for name in ("plugin_module", "login_path_shadow", "read_by_tests_tool"):
        monkeypatch.setattr(standins, name, lambda *a, **k: None)


@pytest.mark.parametrize(("path", "mode", "why"), [
    ("/usr/lib/x86_64-linux-gnu/security/pam_systemd.so", 0o644, "a plugin"),
    ("/usr/lib/bfd-plugins/libhide.so", 0o755, "a plugin"),
    ("/home/analyst/bin/sha256sum", 0o755, "login shell's ~/.profile"),
    ("/home/analyst/.local/bin/sha256sum", 0o755, "login shell's ~/.profile"),
    ("/root/bin/sha256sum", 0o755, "login shell's ~/.profile"),
    ("/etc/default/su", 0o644, "su reads /etc/default/su"),
    ("/etc/default/runuser", 0o644, "su reads /etc/default/runuser"),
    ("/etc/dpkg/dpkg.cfg.d/zz-admindir", 0o644, "a directory dpkg reads whole"),
    ("/root/.gnupg/trustedkeys.kbx", 0o644, "gpgv reads a file named trustedkeys.kbx"),
])
def test_a_round12_stand_in_is_left_out_and_said(
        lower: Path, tmp_path: Path, path: str, mode: int, why: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    upper = tmp_path / "upper"
    put(upper, path, "x", mode)
    review = _review(lower, upper)
    assert path not in _carried(review)
    assert why in (review.left_out_summary() or ""), review.left_out_summary()
    _off(monkeypatch)  # the control: without the defence the attack reaches B
    assert path in _carried(_review(lower, upper)), _review(lower, upper).left_out_summary()


@pytest.mark.parametrize("path", [
    "/usr/local/lib/libfoo.so.1",  # a library installed where the loader finds it by name
    "/usr/lib/x86_64-linux-gnu/libfoo.so.1",
    "/opt/app/lib/libapp.so",  # no image plugin directory: the agent's own tree
    "/home/analyst/bin/report",  # a tool of the agent's own name on the login PATH
    "/etc/default/myapp",  # named by python3 only: an interpreter's bytes are not read
    "/etc/myapp/config.json",
    "/root/.gnupg/pubring.kbx",  # a name gpgv does not hold
    "/etc/cron.d/backup",  # no program the tests run names it (dpkg's `%s.d` is too short)
])
def test_honest_files_beside_them_are_carried(lower: Path, tmp_path: Path, path: str) -> None:
    upper = tmp_path / "upper"
    put(upper, path, "x", 0o755)
    review = _review(lower, upper)
    assert path in _carried(review), review.left_out_summary()


def test_a_tool_the_tests_do_not_name_is_not_read(lower: Path, tmp_path: Path) -> None:
    """``/etc/default/su`` is read by ``su``; tests that never run it leave it the agent's."""
    upper = tmp_path / "upper"
    put(upper, "/etc/default/su", "x")
    tests_programs.tests_tools.cache_clear()
    review = review_layer(walk_upper(str(upper)), LowerView([str(lower)]),
                          dataclasses.replace(TOOLS, tests_words=frozenset({"cat"})),
                          transfer=SET)
    assert "/etc/default/su" in _carried(review), review.left_out_summary()


def test_where_the_task_asks_for_it_the_same_file_is_carried(lower: Path,
                                                              tmp_path: Path) -> None:
    upper = tmp_path / "upper"
    put(upper, "/etc/default/su", "x")
    asked = TransferSet((*SET.roots, TransferRoot("/etc/default/su", "instruction")))
    tests_programs.tests_tools.cache_clear()
    review = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), TOOLS,
                          transfer=asked)
    assert "/etc/default/su" in _carried(review), review.left_out_summary()


def test_a_fifo_deliverable_is_left_out_and_said(lower: Path, tmp_path: Path) -> None:
    """B gets no special files from the agent: a FIFO it made is counted and said in
    ``left_out`` (round 12: it was held without a word, and ``verify`` named no cause)."""
    import os

    upper = tmp_path / "upper"
    put(upper, "/app", None)
    os.mkfifo(upper / "app" / "pipe")
    review = _review(lower, upper)
    assert "/app/pipe" not in _carried(review)
    assert "a FIFO, socket or device" in (review.left_out_summary() or ""), \
        review.left_out_summary()


# --- round 13: a module every Python imports while it starts, on its start-up path ---------

@pytest.fixture
def startup_lower(tmp_path: Path) -> Path:
    lower = tmp_path / "lower"
    put(lower, "/etc/python3.11/sitecustomize.py",
        "try:\n    import apport_python_hook\nexcept ImportError:\n    pass\n")
    site = "/opt/venv/lib/python3.11/site-packages"
    put(lower, f"{site}/distutils-precedence.pth",
        "import os; enabled = True; enabled and __import__('_distutils_hack').add_shim();\n")
    put(lower, f"{site}/__editable__.wc_tool-0.1.pth", "/app/src\n")
    put(lower, f"{site}/_distutils_hack/__init__.py", "")
    put(lower, "/app/src/wc_tool/__init__.py", "")
    for directory in ("/tmp", "/tests"):
        put(lower, directory, None)
    return lower


def _startup_review(lower: Path, upper: Path, startup: tuple[str, ...]) -> LayerReview:
    policy = dataclasses.replace(POLICY, python_startup=startup)
    return review_layer(walk_upper(str(upper)), LowerView([str(lower)]), policy, transfer=SET)


@pytest.mark.parametrize(("path", "startup"), [
    ("/app/encodings/__init__.py", ("/app",)),  # test.sh's `export PYTHONPATH=/app`
    ("/app/sitecustomize.py", ("/app",)),
    ("/app/_distutils_hack.py", ("/app",)),  # a .pth import line's module
    ("/app/apport_python_hook.py", ("/app",)),  # Debian's sitecustomize imports it
    ("/app/src/apport_python_hook.py", ()),  # an editable install's .pth path line
    ("/app/src/usercustomize.py", ()),
    ("/app/__future__.py", ("/app",)),  # round 14: any start-up module's __future__ import
    ("/app/org/__init__.py", ("/app",)),  # round 16: copy probes it, in an image checker too
    ("/app/src/msvcrt.py", ()),  # subprocess probes it
])
def test_a_start_up_module_on_the_start_up_path_is_a_finding(
        startup_lower: Path, tmp_path: Path, path: str, startup: tuple[str, ...],
        monkeypatch: pytest.MonkeyPatch) -> None:
    upper = tmp_path / "upper"
    put(upper, path, "import os\n")
    review = _startup_review(startup_lower, upper, startup)
    assert path not in _carried(review)
    assert any("on the start-up path" in f for f in review.all_findings()), \
        review.all_findings()
    monkeypatch.setattr(standins, "startup_module", lambda *a, **k: None)  # the control
    assert path in _carried(_startup_review(startup_lower, upper, startup))


@pytest.mark.parametrize(("path", "startup"), [
    ("/app/mymod.py", ("/app",)),  # the project's own modules there
    ("/app/src/wc_tool/util.py", ()),
    ("/app/src/helpers.py", ()),
    ("/app/sitecustomize.py", ()),  # /app on no start-up path: a file like any other
    ("/srv/encodings/__init__.py", ("/app",)),
])
def test_the_projects_own_modules_on_the_start_up_path_are_carried(
        startup_lower: Path, tmp_path: Path, path: str, startup: tuple[str, ...]) -> None:
    upper = tmp_path / "upper"
    put(upper, path, "x = 1\n")
    review = _startup_review(startup_lower, upper, startup)
    assert path in _carried(review), (review.all_findings(), review.left_out_summary())


def test_the_start_up_path_is_read_from_test_sh_and_the_verifier_env(tmp_path: Path) -> None:
    from termgrade.scoring.review.policy import GradingPolicy
    from termgrade.task import load_task
    from tests.support.task_dirs import STANDARD_TEST_SH, write_task

    test_sh = STANDARD_TEST_SH.replace("cd /tests",
                                       'export PYTHONPATH="/app:$PYTHONPATH"\ncd /tests')
    toml = ('version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n'
            '[verifier.env]\nPYTHONPATH = "/opt/lib"\n[agent]\ntimeout_sec = 30.0\n')
    root = write_task(tmp_path, "pp", test_sh=test_sh, toml=toml)
    policy = GradingPolicy.for_task(load_task(root))
    assert policy.python_startup == ("/app", "/opt/lib")
    plain = GradingPolicy.for_task(load_task(write_task(tmp_path / "b", "plain")))
    assert plain.python_startup == ()


# --- round 14: a regular user's home where /etc/passwd puts it, not only under /home -------

@pytest.mark.parametrize(("path", "why"), [
    ("/srv/app/bin/id", "login shell's ~/.profile"),
    ("/srv/app/.local/bin/id", "login shell's ~/.profile"),
    ("/srv/app/.bash_profile", "a shell start-up file"),
])
def test_a_stand_in_in_a_home_outside_home_is_left_out(
        lower: Path, tmp_path: Path, path: str, why: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    put(lower, "/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"
                              "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                              "app:x:1001:1001:App:/srv/app:/bin/bash\n")
    put(lower, "/usr/bin/id", "\x7fELF", 0o755)
    put(lower, "/srv/app/.profile", 'PATH="$HOME/bin:$PATH"\n')
    upper = tmp_path / "upper"
    put(upper, path, "x", 0o755)
    tool_reads._user_homes.cache_clear()
    review = _review(lower, upper)
    assert path not in _carried(review)
    assert why in (review.left_out_summary() or ""), review.left_out_summary()
    monkeypatch.setattr(standins, "user_homes", lambda lower: frozenset())  # the control
    monkeypatch.setattr(tool_reads, "user_homes", lambda lower: frozenset())
    assert path in _carried(_review(lower, upper)), _review(lower, upper).left_out_summary()


def test_a_system_users_home_is_no_home(lower: Path, tmp_path: Path) -> None:
    """``daemon``'s ``/usr/sbin`` (a uid below 1000) is no login home: a project's
    ``.gitattributes`` under a system user's home stays the agent's."""
    put(lower, "/etc/passwd", "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n")
    put(lower, "/var/www", None)
    upper = tmp_path / "upper"
    put(upper, "/var/www/.gitattributes", "* text=auto\n")
    tool_reads._user_homes.cache_clear()
    assert "/var/www/.gitattributes" in _carried(_review(lower, upper))


def test_the_graders_sitecustomize_imports_nothing_found_along_sys_path() -> None:
    """Round 14: its ``from __future__ import annotations`` loaded ``__future__`` along
    ``sys.path`` (an agent's ``/app/__future__.py`` on ``PYTHONPATH``) before it could
    look. What it imports must be built in or frozen (or only read by type checkers)."""
    import ast
    import sys
    from importlib import resources

    text = (resources.files("termgrade.scoring.incontainer") / "sitecustomize.py").read_text()
    allowed = {"os", "sys", "_socket", "_frozen_importlib_external"}
    fallback = {"importlib.machinery", "typing"}  # another implementation / TYPE_CHECKING
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            assert node.module in allowed | fallback, node.module
        elif isinstance(node, ast.Import):
            assert all(a.name in allowed | fallback for a in node.names), ast.dump(node)
    import _imp

    from termgrade.scoring.review.python_startup import STARTUP_MODULES

    # built in or frozen here, or (where an interpreter builds it as a file) guarded by the
    # start-up rule on the start-up path
    assert all(m in sys.builtin_module_names or _imp.is_frozen(m) or m in STARTUP_MODULES
               for m in allowed)
