"""How the static shell reader's cost grows with a script's size, one construct class at a time.

Run: .venv/bin/python benchmarks/shell_growth.py [--n 500] [--doublings 2] [--classes assignments,branches]
                                                   [--readers single,multi] [--no-memory] [--repeats 3]

For each class of tests/shell/growth.py (assignments, functions, loops, branches, sources,
recursion, name references, wide undecidable assignments, tail, brackets, stars, regex, placed
server words) it generates scripts of N, 2N, 4N
... statements (the size doubled `--doublings` times) and prints, for the single-node evaluator
(verifier.shell.evaluate) and the multi-node reader (verifier.shell.trace), the CPU time (the least
of `--repeats` readings), its ratio to the previous size, the peak traced memory (tracemalloc) of
one reading and what it ended in. Linear cost shows as time and memory doubling with the size.
`--no-memory` times without tracemalloc (which slows every allocation). The collector runs with the
console script's setting (verifier.app.cli.ONE_SHOT_GC_THRESHOLD), after a collection before each
reading. Figures are printed, never asserted (timings vary with the machine and its load;
tests/shell/test_growth.py asserts linearity by a deterministic operation count).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from tests.shell.growth import CLASSES, evaluate_script, outcome, trace_script  # noqa: E402
from verifier.app.cli import ONE_SHOT_GC_THRESHOLD  # noqa: E402


def measure(fn: Callable[[], Any], memory: bool = True) -> tuple[float, float, str]:
    """(seconds, peak MB, outcome) of one call (peak 0 when memory is not traced)."""
    gc.collect()  # garbage of the previous measurement is not this one's cost
    if not memory:
        started = time.process_time()
        result = fn()
        return time.process_time() - started, 0.0, outcome(result)
    tracemalloc.start()
    started = time.process_time()
    try:
        result = fn()
    finally:
        elapsed = time.process_time() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return elapsed, peak / 1e6, outcome(result)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="the smallest size (statements)")
    parser.add_argument("--doublings", type=int, default=2, help="how many times the size doubles")
    parser.add_argument("--classes", default=",".join(CLASSES), help="comma-separated classes")
    parser.add_argument("--readers", default="single,multi", help="comma-separated readers (single, multi)")
    parser.add_argument("--no-memory", action="store_true",
                        help="CPU time without tracing memory (tracing slows the reader several times)")
    parser.add_argument("--repeats", type=int, default=1, help="readings per size; the least time is printed")
    args = parser.parse_args()
    readers = args.readers.split(",")
    # the console script's collector setting (verifier.app.cli.console): with the default one, a
    # full collection's cost grows with the heap and shows as growth that is not the reader's
    gc.set_threshold(ONE_SHOT_GC_THRESHOLD, *gc.get_threshold()[1:])
    print(f"{'class':<12} {'reader':<7} {'n':>6} {'seconds':>8} {'x prev':>6} {'peak MB':>8}  outcome")
    for name in args.classes.split(","):
        make = CLASSES[name]
        previous: dict[str, float] = {}
        for n in (args.n << k for k in range(args.doublings + 1)):
            script = make(n)
            for reader, fn in (("single", lambda s=script: evaluate_script(s)),
                               ("multi", lambda s=script: trace_script(s))):
                if reader not in readers:
                    continue
                runs = [measure(fn, not args.no_memory) for _ in range(max(1, args.repeats))]
                seconds = min(r[0] for r in runs)
                peak, what = runs[0][1], runs[0][2]
                ratio = f"{seconds / previous[reader]:6.2f}" if previous.get(reader) else f"{'':>6}"
                previous[reader] = seconds
                print(f"{name:<12} {reader:<7} {n:>6} {seconds:>8.3f} {ratio} {peak:>8.1f}  {what}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
