"""Print how long the pre-commit hook takes on two recipes, and which heavy modules it imports.

Run: .venv/bin/python benchmarks/hook.py [RECIPE ...]   (default: the two PR 4524 recipes)
Each sample is a whole `verify-pr precommit` process, interpreter start included, as pre-commit
runs it. The package is byte-compiled first (`compileall`), as `pip install` does for the hook's
environment; with PYTHONDONTWRITEBYTECODE set and no .pyc, every run would compile ~30 modules. Figures are printed, never asserted (tests/test_hook.py asserts the import set instead).
"""

from __future__ import annotations

import compileall
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
RECIPE_DIR = ("tree/head/inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/"
              "b300-fp4-mtp")
DEFAULT_RECIPES = [PROJECT / "fixtures" / "pr4524" / RECIPE_DIR / name for name in ("agentic.yaml", "agentic-tp2.yaml")]
HEAVY = ("pydantic", "torch", "sglang", "jinja2", "ruamel", "rich", "jsonschema", "github", "requests")
SAMPLES = 15


def main(argv: list[str]) -> int:
    """Print the median, min and max over SAMPLES runs, and the heavy modules imported."""
    recipes = [Path(a) for a in argv] or DEFAULT_RECIPES
    exe = shutil.which("verify-pr", path=str(Path(sys.executable).parent)) or "verify-pr"
    compileall.compile_dir(PROJECT / "verifier", quiet=1)
    samples = []
    for _ in range(SAMPLES):
        start = time.perf_counter()
        subprocess.run([exe, "precommit", *map(str, recipes)], stdout=subprocess.DEVNULL, check=False)
        samples.append(time.perf_counter() - start)
    code = ("import sys\nfrom verifier.app.cli import main\n"
            f"main(['precommit', *{[str(p) for p in recipes]!r}])\n"
            f"print(sorted(set({HEAVY!r}) & {{m.split('.')[0] for m in sys.modules}}), len(sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    heavy = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()
    print(f"verify-pr precommit ({len(recipes)} files), {SAMPLES} runs: median {statistics.median(samples):.3f} s, "
          f"min {min(samples):.3f} s, max {max(samples):.3f} s")
    print(f"heavy modules imported, module count: {heavy}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
