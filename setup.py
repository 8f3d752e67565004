"""Build hook: ship policies/ and templates/ as package data (verifier/_data), see verifier/core/resources.py,
and the work a fresh machine would otherwise do on every first run, done once here (verifier/_data/prebuilt:
the policies validated, the templates compiled; see verifier/core/cache.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_TREES = ("policies", "templates")
DATA_SUFFIXES = (".yaml", ".json", ".j2")

# Run in a child interpreter on the built package (not on the source tree: cwd is the build folder), with
# this build environment's packages (PyYAML and Jinja2 are build requirements, pyproject.toml).
PREBUILD = ("import sys; from pathlib import Path; from verifier.core.cache import build_prebuilt; "
            "from verifier.core.policy import prebuild_policies; "
            "print(build_prebuilt(Path(sys.argv[1]), prebuild_policies()))")


class BuildWithData(build_py):
    """build_py that also copies the top-level data trees into the built package and prebuilds them."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the source tree and does this work at run time (its cache)
        root = Path(__file__).resolve().parent
        build_lib = Path(self.build_lib).resolve()
        target = build_lib / "verifier" / "_data"
        for tree in DATA_TREES:
            for src in sorted((root / tree).rglob("*")):
                if src.is_file() and src.suffix in DATA_SUFFIXES:
                    dest = target / src.relative_to(root)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dest)
        prebuilt = target / "prebuilt"
        shutil.rmtree(prebuilt, ignore_errors=True)  # never a stale layer from an earlier build
        env = {**os.environ, "INFX_VERIFIER_CACHE": "off", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join([str(build_lib), *filter(None, [os.environ.get("PYTHONPATH")])])}
        done = subprocess.run([sys.executable, "-c", PREBUILD, str(prebuilt)], cwd=build_lib, env=env,
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            # The wheel still works without it (every run then validates and compiles, and caches that).
            shutil.rmtree(prebuilt, ignore_errors=True)
            print(f"infx-verifier build: warning: no prebuilt policies and templates: {done.stderr.strip()[-2000:]}",
                  file=sys.stderr)
        else:
            print(f"infx-verifier build: prebuilt {done.stdout.strip()}", file=sys.stderr)


setup(cmdclass={"build_py": BuildWithData})
