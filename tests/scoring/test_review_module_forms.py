"""The carry rule against round 8's module stand-ins (no engine).

``r8-venvinit``: an extension ``__init__`` created inside an image package
(``_distutils_hack/`` of a checker's private venv, which ``distutils-precedence.pth``
imports at every start): Python prefers an extension ``__init__`` over ``__init__.py``.
The class: in any directory where the image has a Python module, a created file that is
another form of that module (an extension of any tag, a package over a module, a bytecode
cache of the image's source, a ``.pyc`` beside it, an ``__init__`` in an image package)
is left out unless asked. A bytecode cache is never a finding (the verifier's own run
writes them) and an honest reference that runs Python is not hurt.

``r8-perlenc``: a new ``Encode/ConfigLocal.pm`` on ``@INC``: Encode ``require``s it in an
``eval`` whenever it exists. The class: a module an image Perl module probes for in an
``eval`` and the image lacks, found by reading the image's modules once.

Each attack has honest twins and a control (the rule patched out carries the attack).
"""

from __future__ import annotations

import importlib.machinery
import os
from pathlib import Path

import pytest

from termgrade.sandbox.overlay_diff import LowerView, walk_upper
from termgrade.scoring.review import lookups, perlhooks, python_modules, standins
from termgrade.scoring.review.integrity import LayerReview, review_layer
from termgrade.scoring.review.transfer import TransferRoot, TransferSet
from tests.support.overlay_layers import POLICY, put

SET = TransferSet((TransferRoot("/app", "workdir"),))
SITE = "/opt/validator/venv/lib/python3.11/site-packages"
STDLIB = "/usr/local/lib/python3.11"
EXT = ".cpython-311-x86_64-linux-gnu.so"
ENCODE = "/usr/lib/x86_64-linux-gnu/perl/5.36.0/Encode.pm"
PERL_SITE = "/usr/local/share/perl/5.36.0"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    lookups.forget_images()
    perlhooks.forget_perl()


@pytest.fixture
def lower(tmp_path: Path) -> Path:
    lower = tmp_path / "lower"
    put(lower, f"{SITE}/_distutils_hack/__init__.py", "import os\n")
    put(lower, f"{SITE}/distutils-precedence.pth", "import _distutils_hack\n")
    put(lower, f"{SITE}/pip/__init__.py", "")
    put(lower, f"{SITE}/nsroot/part.py", "")  # a namespace package
    put(lower, f"{STDLIB}/json/__init__.py", "")
    put(lower, f"{STDLIB}/json/decoder.py", "")
    put(lower, f"{STDLIB}/shlex.py", "")
    put(lower, "/opt/lib/rules.py", "ANSWER = 6765\n")
    put(lower, "/opt/pkgs/tool/__init__.py", "")
    put(lower, "/opt/validator/bin/validate", "#!/opt/validator/venv/bin/python3\n", 0o755)
    put(lower, ENCODE, "package Encode;\nrequire Encode::Config;\neval {\n"
                       "    local $SIG{__DIE__};\n    require Encode::ConfigLocal;\n};\n"
                       "eval \"use Encode::HanExtra; 1\";\n1;\n")
    put(lower, "/usr/lib/x86_64-linux-gnu/perl/5.36.0/Encode/Config.pm", "1;\n")
    put(lower, "/usr/share/perl5/Text/Util.pm", "eval { require Text::Fast };\n1;\n")
    for directory in ("/app", "/tmp", "/usr/local/bin", "/etc/perl"):
        put(lower, directory, None)
    return lower


def _review(lower: Path, upper: Path, transfer: TransferSet = SET) -> LayerReview:
    return review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY,
                        transfer=transfer)


def _carried(review: LayerReview) -> list[str]:
    return [e.path for e in review.carried]


FORMS = [
    f"{SITE}/_distutils_hack/__init__{EXT}",  # a06 itself
    f"{SITE}/_distutils_hack/__init__.abi3.so",
    f"{SITE}/_distutils_hack/__init__.so",
    f"{SITE}/_distutils_hack/__init__.cpython-312-aarch64-linux-gnu.so",  # any tag
    f"{SITE}/_distutils_hack/__pycache__/__init__.cpython-311.pyc",
    f"{SITE}/nsroot/__init__.py",  # a namespace package made a regular one
    f"{STDLIB}/shlex{EXT}",
    f"{STDLIB}/shlex/__init__.py",  # a package over the stdlib's module
    f"{STDLIB}/__pycache__/shlex.cpython-311.opt-1.pyc",
    f"{STDLIB}/json/decoder.abi3.so",  # inside a stdlib package
    "/opt/lib/__pycache__/rules.cpython-311.pyc",
    "/opt/lib/rules/__init__.pyc",  # a package, even of bytecode, over the module
]


@pytest.mark.parametrize("plant", FORMS)
def test_another_form_of_an_image_module_is_left_out(
        lower: Path, tmp_path: Path, plant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    upper = tmp_path / "upper"
    put(upper, plant, "forged")
    review = _review(lower, upper)
    assert plant not in _carried(review)
    assert "another form of the image's module" in (review.left_out_summary() or ""), \
        review.left_out_summary()
    assert review.all_findings() == [] and review.standins == []  # left out, said
    # the control: the rule patched out (and the older one for an image script's
    # directory, which any directory holding a .py is)
    monkeypatch.setattr(standins, "module_form_shadow", lambda *a, **k: None)
    monkeypatch.setattr(standins, "beside_image_script", lambda *a: None)
    assert plant in _carried(_review(lower, upper))


def test_a_form_where_the_task_asks_for_changes_or_the_path_is_carried(
        lower: Path, tmp_path: Path) -> None:
    plant = f"{SITE}/_distutils_hack/__init__{EXT}"
    upper = tmp_path / "upper"
    put(upper, plant, "built")
    asked = TransferSet((*SET.roots, TransferRoot(plant, "reference")))
    assert plant in _carried(_review(lower, upper, asked))
    put(lower, "/app/fast.py", "")  # the project: its extension built beside its source
    put(upper, f"/app/fast{EXT}", "built")
    assert f"/app/fast{EXT}" in _carried(_review(lower, upper))


@pytest.mark.parametrize("honest", [
    "/app/mypkg/__init__.py",  # the agent's own package
    f"{SITE}/mypkg/__init__.py",  # pip install of a new package
    f"{SITE}/mypkg/core{EXT}",
    f"{SITE}/mypkg/__pycache__/core.cpython-311.pyc",
    "/opt/tool/fast.py",  # its own module and its compiled extension
    f"/opt/tool/fast{EXT}",
    "/opt/tool/__pycache__/fast.cpython-311.pyc",
    f"{SITE}/_distutils_hack/helper.py",  # a new module inside an image package
    f"{STDLIB}/json/newcodec.py",
    f"{SITE}/nsroot/other.py",  # a new portion of a namespace package
    "/opt/lib/notes.pyc",  # a name the image has nowhere
    f"{STDLIB}/__pycache__/pip.cpython-311.pyc",  # no source here: Python never reads it
    # forms Python tries after the image's: never imported
    f"{SITE}/_distutils_hack/__init__.pyc",  # sourceless bytecode beside __init__.py
    "/opt/lib/rules.pyc",
    "/opt/pkgs/tool.py",  # the image's package tool/ comes first
    f"{STDLIB}/json/__pycache__/decoder.cpython-311.pyc.tmp",  # not a cache's name
])
def test_the_agents_own_modules_are_carried(lower: Path, tmp_path: Path, honest: str) -> None:
    upper = tmp_path / "upper"
    put(upper, honest, "x = 1\n")
    review = _review(lower, upper)
    assert honest in _carried(review), review.left_out_summary()
    assert review.all_findings() == []


def test_a_bytecode_cache_the_verifiers_run_writes_is_no_finding(
        lower: Path, tmp_path: Path) -> None:
    """B's review (stand-ins over what the verifier's processes wrote): Python's caches
    of the image's modules are no finding; another form of a module is."""
    upper = tmp_path / "upper"
    put(upper, "/opt/lib/__pycache__/rules.cpython-311.pyc", "cache")
    put(upper, f"{STDLIB}/__pycache__/shlex.cpython-311.pyc", "cache")
    after = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY,
                         standins=SET)
    assert after.all_findings() == []
    put(upper, f"{SITE}/_distutils_hack/__init__{EXT}", "forged")
    after = review_layer(walk_upper(str(upper)), LowerView([str(lower)]), POLICY,
                         standins=SET)
    assert [p for p in after.finding_paths] == [f"{SITE}/_distutils_hack/__init__{EXT}"]


def test_a_reference_that_runs_python_leaves_no_stand_in(lower: Path, tmp_path: Path) -> None:
    """What verify calls tampering is a *hard* stand-in: the caches a reference's Python
    writes for the image's modules are left out softly (no footprint keeps them)."""
    upper = tmp_path / "upper"
    put(upper, f"{STDLIB}/json/__pycache__/decoder.cpython-311.pyc", "cache")
    put(upper, "/opt/lib/__pycache__/rules.cpython-311.pyc", "cache")
    put(upper, "/app/answer.txt", "6765\n")
    review = _review(lower, upper)
    assert review.standins == [] and review.all_findings() == []
    assert "/app/answer.txt" in _carried(review)


def test_every_suffix_of_this_python_is_a_form() -> None:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        assert python_modules.module_file(f"rules{suffix}") == ("rules", "extension")
    for suffix in importlib.machinery.SOURCE_SUFFIXES:
        assert python_modules.module_file(f"rules{suffix}") == ("rules", "source")
    assert python_modules.module_file("libz.so.1") is None
    assert python_modules.python_forms("/d/__pycache__/rules.cpython-311.pyc") == [
        ("/d", "rules", "cached")]
    assert python_modules.python_forms("/d/pkg/__init__.abi3.so") == [
        ("/d/pkg", "__init__", "extension"), ("/d", "pkg", "package")]


# ---- Perl: optional modules the image's modules load whenever they exist -----------------

@pytest.mark.parametrize("plant", [
    f"{PERL_SITE}/Encode/ConfigLocal.pm",  # a05 itself (a directory the image lacks)
    "/usr/share/perl5/Encode/ConfigLocal.pm",
    "/etc/perl/Encode/ConfigLocal.pmc",
    f"{PERL_SITE}/Encode/HanExtra.pm",  # eval "use ..."
    "/usr/local/lib/site_perl/Text/Fast.pm",
])
def test_a_perl_module_an_image_module_probes_for_is_left_out(
        lower: Path, tmp_path: Path, plant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    upper = tmp_path / "upper"
    put(upper, plant, 'print "OK\\n"; exit 0;\n1;\n')
    review = _review(lower, upper)
    assert plant not in _carried(review)
    assert "loads whenever it is on @INC" in (review.left_out_summary() or "")
    monkeypatch.setattr(standins, "perl_hook", lambda *a, **k: None)  # the control
    assert plant in _carried(_review(lower, upper))


@pytest.mark.parametrize("honest", [
    f"{PERL_SITE}/Encode/MyEncoding.pm",  # a name no image module probes for
    f"{PERL_SITE}/Shop/Util.pm",
    "/opt/perl/Encode/ConfigLocal.pm",  # not on @INC
    "/app/lib/Encode/ConfigLocal.pm",
])
def test_other_perl_modules_are_carried(lower: Path, tmp_path: Path, honest: str) -> None:
    upper = tmp_path / "upper"
    put(upper, honest, "package X; 1;\n")
    review = _review(lower, upper)
    assert honest in _carried(review), review.left_out_summary()


def test_a_perl_hook_the_task_asks_for_is_carried(lower: Path, tmp_path: Path) -> None:
    plant = f"{PERL_SITE}/Encode/ConfigLocal.pm"
    upper = tmp_path / "upper"
    put(upper, plant, "1;\n")
    asked = TransferSet((*SET.roots, TransferRoot(plant, "instruction")))
    assert plant in _carried(_review(lower, upper, asked))


def test_a_module_the_image_has_is_no_hook(lower: Path) -> None:
    put(lower, "/usr/share/perl5/Text/Fast.pm", "1;\n")
    assert "Text::Fast" not in perlhooks.perl_hooks(LowerView([str(lower)]))
    assert "Encode::Config" not in perlhooks.perl_hooks(LowerView([str(lower)]))


@pytest.mark.skipif(not os.path.isdir("/usr/share/perl"), reason="no Perl on this host")
def test_this_hosts_perl_probes_encode_configlocal() -> None:
    """The real scan over this host's @INC (the host as the image: one layer, /)."""
    hooks = perlhooks.perl_hooks(LowerView(["/"]))
    if not any(os.path.exists(f"{d}/Encode.pm") for d in
               ("/usr/lib/x86_64-linux-gnu/perl/5.36", "/usr/lib/x86_64-linux-gnu/perl5/5.36",
                "/usr/lib/aarch64-linux-gnu/perl/5.36")):
        pytest.skip("no Encode.pm where the scan looks")
    assert "Encode::ConfigLocal" in hooks, sorted(hooks)[:40]
    assert not any(os.path.exists(f"/usr/share/perl5/{m.replace('::', '/')}.pm")
                   for m in hooks)
