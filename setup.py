"""The one build step pyproject.toml cannot declare: ship the repository's data files.

``schemas/``, ``DATASET_CARD.md`` and ``base_image/`` live once, at the repository root;
``build_py`` copies them into the built package as ``termgrade/_data/`` (see
:mod:`termgrade.core.package_data`). An editable install reads them where they are.
Everything else about the build is in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def _package_data_module():  # type: ignore[no-untyped-def]
    """termgrade.core.package_data, loaded from its file (TermGrade is not installed yet)."""
    spec = importlib.util.spec_from_file_location(
        "_termgrade_package_data", ROOT / "termgrade" / "core" / "package_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithData(build_py):
    """``build_py``, then the repository's data files into ``termgrade/_data``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own files
        data = _package_data_module()
        target = Path(self.build_lib) / "termgrade" / data.PACKAGE_DATA_DIR
        for name in data.copy_sources(ROOT, target):
            self.announce(f"copying {name} -> {target}", level=2)


setup(cmdclass={"build_py": BuildPyWithData})
