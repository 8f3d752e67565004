"""How the static shell reader's cost grows with a script's size, one construct class at a time.

Run: .venv/bin/python benchmarks/shell_growth.py [--n 500] [--doublings 2] [--classes assignments,branches]
                                                   [--readers single,multi] [--no-memory]

For each class of tests/shell/growth.py (assignments, functions, loops, branches, sources,
recursion, name references, wide undecidable assignments, tail) it generates scripts of N, 2N, 4N
... statements (the size doubled `--doublings` times) and prints, for the single-node evaluator
(verifier.shell.evaluate) and the multi-node reader (verifier.shell.trace), the time and the peak
traced memory (tracemalloc) of one reading and what it ended in. Linear cost shows as time and
memory doubling with the size. `--no-memory` times without tracemalloc (which slows every
allocation). Figures are printed, never asserted (timings vary with the machine and its load;
tests/shell/test_growth.py asserts linearity by a deterministic operation count).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from tests.shell.growth import CLASSES, evaluate_script, outcome, trace_script  # noqa: E402


def measure(fn: Callable[[], Any], memory: bool = True) -> tuple[float, float, str]:
    """(seconds, peak MB, outcome) of one call (peak 0 when memory is not traced)."""
    if not memory:
        started = time.perf_counter()
        result = fn()
        return time.perf_counter() - started, 0.0, outcome(result)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = fn()
    finally:
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return elapsed, peak / 1e6, outcome(result)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="the smallest size (statements)")
    parser.add_argument("--doublings", type=int, default=2, help="how many times the size doubles")
    parser.add_argument("--classes", default=",".join(CLASSES), help="comma-separated classes")
    parser.add_argument("--readers", default="single,multi", help="comma-separated readers (single, multi)")
    parser.add_argument("--no-memory", action="store_true", help="time without tracing memory")
    args = parser.parse_args()
    readers = args.readers.split(",")
    print(f"{'class':<12} {'reader':<7} {'n':>6} {'seconds':>8} {'peak MB':>8}  outcome")
    for name in args.classes.split(","):
        make = CLASSES[name]
        for n in (args.n << k for k in range(args.doublings + 1)):
            script = make(n)
            for reader, fn in (("single", lambda s=script: evaluate_script(s)),
                               ("multi", lambda s=script: trace_script(s))):
                if reader not in readers:
                    continue
                seconds, peak, what = measure(fn, not args.no_memory)
                print(f"{name:<12} {reader:<7} {n:>6} {seconds:>8.3f} {peak:>8.1f}  {what}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
