"""The in-container programs as staged: each one file, assembled from the small modules of
``termgrade/scoring/incontainer`` (``attestation._source``), with no import left of a
sibling by name, Python 3.8's syntax, and (for the plugin, run inside the tests' process)
nothing imported but the standard library and pytest's own (no Docker)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from termgrade.scoring.verifier import attestation

HERE = Path(attestation.__file__).parents[1] / "incontainer"
STAGED = {"termgrade_attest": attestation.plugin_source,
          "termgrade_broker": attestation.broker_source}
PYTEST_OWN = {"pytest", "_pytest", "pluggy"}
INLINE = "  # type: ignore[import-not-found]  # staged inline"


def _siblings() -> set[str]:
    return {path.stem for path in HERE.glob("*.py") if path.stem != "__init__"}


def _inline_imports(stem: str, seen: set[str] | None = None) -> dict[str, set[str]]:
    """sibling -> the names ``stem`` (and, recursively, what it inlines) imports from it."""
    seen = set() if seen is None else seen
    found: dict[str, set[str]] = {}
    text = (HERE / f"{stem}.py").read_text()
    lines = text.splitlines()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and "staged inline" in lines[node.lineno - 1]:
            assert node.module in _siblings(), (stem, node.module)
            found.setdefault(node.module, set()).update(a.name for a in node.names)
            if node.module not in seen:
                seen.add(node.module)
                for sibling, names in _inline_imports(node.module, seen).items():
                    found.setdefault(sibling, set()).update(names)
    return found


def _top_level_names(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names += [(a.asname or a.name).split(".")[0] for a in node.names]
    return names


@pytest.mark.parametrize("stem", sorted(STAGED))
def test_the_staged_program_is_one_file_of_python_3_8(stem: str) -> None:
    text = STAGED[stem]()
    tree = ast.parse(text, feature_version=(3, 8))
    assert attestation.STAGED_INLINE.search(text) is None
    assert b"staged inline  " not in text and b"# staged inline\n" not in text
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for a in node.names}
    # the broker imports termgrade_watch from beside it at run time (staged beside it)
    assert imported & _siblings() <= {"termgrade_watch"}, imported & _siblings()
    assert text.startswith((HERE / f"{stem}.py").read_bytes().split(b"\n", 1)[0])


@pytest.mark.parametrize("stem", sorted(STAGED))
def test_the_staged_program_defines_every_name_its_modules_import(stem: str) -> None:
    wanted = _inline_imports(stem)
    assert "signed_line" in wanted
    tree = ast.parse(STAGED[stem]())
    defined = _top_level_names(tree)
    missing = {f"{sibling}.{name}" for sibling, names in wanted.items() for name in names
               if name not in defined}
    assert not missing, missing
    # each sibling inlined once: no definition written twice
    defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    assert len(defs) == len(set(defs)), sorted({d for d in defs if defs.count(d) > 1})


def test_the_staged_plugin_imports_only_the_standard_library_and_pytest() -> None:
    tree = ast.parse(attestation.plugin_source())
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module is not None
            roots.add(node.module.split(".")[0])
    allowed = set(sys.stdlib_module_names) | PYTEST_OWN
    assert roots, "no imports found"
    assert roots <= allowed, sorted(roots - allowed)


def test_a_missing_sibling_is_named(tmp_path: Path) -> None:
    (tmp_path / "host.py").write_text(f"from nowhere_here import thing{INLINE}\n")
    with pytest.raises(FileNotFoundError, match="nowhere_here"):
        attestation._assemble(tmp_path, "host")


def test_siblings_are_inlined_recursively_and_once(tmp_path: Path) -> None:
    future = "from __future__ import annotations\n"
    (tmp_path / "host.py").write_text(
        f'"""Host."""\n\n{future}\nfrom first import one{INLINE}\n'
        f"from second import (  {INLINE.strip()}\n    two,\n)\n\nRESULT = one() + two()\n")
    (tmp_path / "first.py").write_text(
        f"{future}\nfrom second import two{INLINE}\n\n\ndef one() -> int:\n    return two()\n")
    (tmp_path / "second.py").write_text(f"{future}\n\ndef two() -> int:\n    return 2\n")
    staged = attestation._assemble(tmp_path, "host").decode()
    assert staged.count("def two") == 1 and staged.count(future) == 1
    assert staged.index("def two") < staged.index("def one") < staged.index("RESULT")
    namespace: dict[str, object] = {}
    exec(compile(staged, "host.py", "exec"), namespace)
    assert namespace["RESULT"] == 4


def test_a_sibling_needing_postponed_annotations_needs_them_in_the_staged_file(
        tmp_path: Path) -> None:
    (tmp_path / "host.py").write_text(f"from sib import x{INLINE}\n")
    (tmp_path / "sib.py").write_text(
        "from __future__ import annotations\n\nx: dict[str, int] = {}\n")
    with pytest.raises(ValueError, match=r"sib\.py"):
        attestation._assemble(tmp_path, "host")


def test_the_raw_files_import_with_their_directory_on_the_path() -> None:
    """As the unit tests run them: the siblings resolve as top-level modules."""
    code = ("import termgrade_attest, termgrade_broker, broker_pytest_check\n"
            "assert termgrade_attest._evidence and termgrade_attest._stat\n"
            "assert termgrade_broker.why_refused is broker_pytest_check.why_refused\n")
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
