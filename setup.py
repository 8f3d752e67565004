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
# A second fresh interpreter: it records the dataclass methods and regular expressions it compiles while it
# imports every module and judges the seed bundle (verifier/app/precompiled.py), so it compiles nothing
# before; the table goes beside the policies and templates.
PRECOMPILE = ("import sys; from pathlib import Path; from verifier.app import precompiled; "
              "print(precompiled.build(Path(sys.argv[1]) / precompiled.TABLE_NAME, map(Path, sys.argv[2:])))")
SEED_BUNDLE = Path("fixtures") / "pr4524"  # in a source checkout; an sdist has none (imports are recorded alone)


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
        if done.returncode == 0:
            # Without it the wheel works as well, compiling at run time what the table would have held.
            seed = [str(root / SEED_BUNDLE)] if (root / SEED_BUNDLE / "bundle.yaml").is_file() else []
            code = subprocess.run([sys.executable, "-c", PRECOMPILE, str(prebuilt), *seed], cwd=build_lib,
                                  env=env, capture_output=True, text=True, check=False)
            print(f"infx-verifier build: precompiled {code.stdout.strip()} {code.stderr.strip()[-2000:]}",
                  file=sys.stderr)
        if done.returncode != 0:
            # The wheel still works without it (every run then validates and compiles, and caches that).
            shutil.rmtree(prebuilt, ignore_errors=True)
            print(f"infx-verifier build: warning: no prebuilt policies and templates: {done.stderr.strip()[-2000:]}",
                  file=sys.stderr)
        else:
            print(f"infx-verifier build: prebuilt {done.stdout.strip()}", file=sys.stderr)


setup(cmdclass={"build_py": BuildWithData})
