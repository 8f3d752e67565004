"""Print how fast the verifier is: cold and warm verdicts, the pre-commit hook, and parser loading.

Run: .venv/bin/python benchmarks/bench.py [BUNDLE ...]
Figures are printed, never asserted (timings vary with the machine).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"
DEFAULT_BUNDLES = [
    PROJECT / "fixtures" / "pr4524",
    SHARED / "cases" / "pr4524",
    SHARED / "perf" / "pr4524-fullsize",
]
PYTHON = sys.executable


def _run(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def cold(bundle: Path, repeats: int = 3) -> float:
    """A whole `verify-pr --bundle` process, interpreter start included."""
    return statistics.median(
        _run([PYTHON, "-m", "verifier.app.cli", "--bundle", str(bundle), "--format", "json"]) for _ in range(repeats)
    )


def warm(bundle: Path, repeats: int = 5) -> tuple[float, float]:
    """In-process: read + judge + render, after one warm-up run (imports and policies loaded)."""
    from checks import ALL_CHECKS, judge
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies
    from verifier.render.json import render_json

    def once() -> tuple[float, float]:
        t0 = time.perf_counter()
        b = read_bundle(bundle)
        t1 = time.perf_counter()
        render_json(judge(b, load_policies(), ALL_CHECKS))
        return t1 - t0, time.perf_counter() - t1

    once()
    samples = [once() for _ in range(repeats)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def hook_time(files: list[Path]) -> float:
    """The pre-commit hook on a typical commit (a recipe and the master config)."""
    return statistics.median(_run([PYTHON, "-m", "verifier.app.cli", "precommit", *map(str, files)]) for _ in range(3))


def parser_cost() -> None:
    """Cost of the real SGLang parser (import + add_cli_args) against the arg-spec rebuild."""
    code = (
        "import time;t=time.perf_counter();"
        "from verifier.engines.sglang import resolve_sglang;"
        "r=resolve_sglang(['--model-path','m'],version='0.5.23',mode='{mode}');"
        "print(time.perf_counter()-t)"
    )
    for mode in ("argspec", "real"):
        out = subprocess.run([PYTHON, "-c", code.format(mode=mode)], cwd=PROJECT, capture_output=True, text=True)
        value = out.stdout.strip() or f"unavailable ({out.stderr.strip().splitlines()[-1:] or '?'})"
        print(f"  sglang parser, {mode:8s}: {value}")


def main(argv: list[str]) -> int:
    """Print the figures for each bundle."""
    bundles = [Path(a) for a in argv] or [b for b in DEFAULT_BUNDLES if b.is_dir()]
    for bundle in bundles:
        read_s, judge_s = warm(bundle)
        print(f"{bundle}:")
        print(f"  cold process   : {cold(bundle):.3f} s")
        print(f"  warm read      : {read_s:.3f} s")
        print(f"  warm judge     : {judge_s:.3f} s")
    recipe = next((PROJECT / "fixtures" / "pr4524" / "tree" / "head").rglob("agentic.yaml"), None)
    if recipe is not None:
        print(f"pre-commit hook (1 recipe): {hook_time([recipe]):.3f} s")
    parser_cost()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
