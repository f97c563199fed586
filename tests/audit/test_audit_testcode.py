"""Static test inventory: functions, parametrize cases and skips, read with ast."""

from __future__ import annotations

import textwrap

import pytest

from termgrade.audit.documents import SourceFile
from termgrade.audit.testcode import TestInventory, inventory, inventory_module, is_test_file


def read(source: str) -> TestInventory:
    return inventory_module(textwrap.dedent(source))


def test_counts_functions_methods_and_parametrize_cases() -> None:
    found = read("""
        import pytest

        CASES = [1, 2, 3]

        def helper(): pass

        def test_plain(): pass

        @pytest.mark.parametrize("x", [1, 2])
        @pytest.mark.parametrize("y", ("a", "b", "c"))
        def test_grid(x, y): pass

        @pytest.mark.parametrize("n", CASES)
        def test_named_list(n): pass

        class TestGroup:
            def test_one(self): pass
            def check_two(self): pass

        class Helper:
            def test_not_collected(self): pass
    """)
    assert [f.name for f in found.functions] == ["test_plain", "test_grid", "test_named_list",
                                                 "test_one"]
    assert (found.n_functions, found.n_cases, found.exact) == (4, 1 + 6 + 3 + 1, True)


def test_parametrize_from_a_call_counts_once_and_is_approximate() -> None:
    found = read("""
        import pytest
        @pytest.mark.parametrize("n", range(5))
        def test_n(n): pass
    """)
    assert (found.n_cases, found.exact) == (1, False)


@pytest.mark.parametrize("source", [
    "import pytest\npytestmark = pytest.mark.skip(reason='wip')\ndef test_a(): pass\n",
    "import pytest\npytestmark = [pytest.mark.skipif(True, reason='x')]\ndef test_a(): pass\n",
    "import pytest\npytest.skip('later', allow_module_level=True)\ndef test_a(): pass\n",
    "import unittest\nraise unittest.SkipTest('no')\ndef test_a(): pass\n",
    "import pytest\n@pytest.mark.skip\ndef test_a(): pass\n@pytest.mark.skip('x')\n"
    "def test_b(): pass\n",
    "from pytest import mark\n@mark.skipif(1, reason='x')\ndef test_a(): pass\n",
    "import pytest\ndef test_a():\n    '''doc'''\n    pytest.skip('no')\n",
    "import pytest\n@pytest.mark.skip\nclass TestAll:\n    def test_a(self): pass\n",
    "import unittest\n@unittest.skip('x')\ndef test_a(): pass\n",
])
def test_all_skipped_variants(source: str) -> None:
    assert read(source).all_skipped


@pytest.mark.parametrize("source", [
    "import pytest, sys\n@pytest.mark.skipif(sys.platform == 'win32', reason='x')\n"
    "def test_a(): pass\n",
    "import pytest\n@pytest.mark.skip\ndef test_a(): pass\ndef test_b(): pass\n",
    "import pytest\ndef test_a():\n    if False:\n        pytest.skip('never')\n",
    "import pytest\n@pytest.mark.xfail\ndef test_a(): pass\n",
    "import pytest\n@pytest.mark.skipif(False, reason='x')\ndef test_a(): pass\n",
    "def helper(): pass\n",
])
def test_not_all_skipped(source: str) -> None:
    assert not read(source).all_skipped


def test_syntax_error_is_reported_not_raised() -> None:
    found = inventory_module("def test_a(:\n", "tests/test_outputs.py")
    assert found.n_functions == 0
    assert found.errors and found.errors[0].startswith("tests/test_outputs.py:")


def test_only_pytest_files_are_read() -> None:
    sources = [SourceFile("tests/test_a.py", "def test_x(): pass\n"),
               SourceFile("tests/b_test.py", "def test_y(): pass\n"),
               SourceFile("tests/helpers.py", "def test_z(): pass\n")]
    assert inventory(sources).n_functions == 2
    assert is_test_file("tests/sub/test_deep.py") and not is_test_file("tests/conftest.py")
