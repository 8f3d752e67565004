"""Build hook: ship policies/ and templates/ as package data (verifier/_data), see verifier/core/resources.py."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_TREES = ("policies", "templates")
DATA_SUFFIXES = (".yaml", ".json", ".j2")


class BuildWithData(build_py):
    """build_py that also copies the top-level data trees into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the source tree (verifier/core/resources.py)
        root = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "verifier" / "_data"
        for tree in DATA_TREES:
            for src in sorted((root / tree).rglob("*")):
                if src.is_file() and src.suffix in DATA_SUFFIXES:
                    dest = target / src.relative_to(root)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dest)


setup(cmdclass={"build_py": BuildWithData})
