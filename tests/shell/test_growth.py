"""The static shell reader's cost is linear in a script's size, and its limits fail closed.

Work is counted deterministically (`sys.setprofile` call events, as tests/hostile/test_hostile.py
does), never timed: reading a script of 4n statements of one construct class may cost at most a
generous 6x the work of n statements, for the single-node evaluator and the multi-node reader
alike. Memory (tracemalloc peak) stays under 300 MB on the hostile inputs that used to grow with the
square of their distinct assignments. Recursion stops at the depth limit with a named limit, never
a pass.
"""

from __future__ import annotations

import tracemalloc

import pytest

from tests.kit import call_events
from tests.shell.growth import CLASSES, evaluate_script, trace_script
from verifier.shell import ShellLimit

N = 60




@pytest.mark.parametrize("reader", ["single", "multi"])
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_work_is_linear(name: str, reader: str) -> None:
    read = evaluate_script if reader == "single" else trace_script
    make = CLASSES[name]
    small_script, large_script = make(N), make(4 * N)
    small = call_events(lambda: read(small_script))
    large = call_events(lambda: read(large_script))
    assert large <= 6 * max(small, 50), f"{name}/{reader}: work {small} at n={N}, {large} at n={4 * N}"


@pytest.mark.parametrize(("name", "n"), [("assignments", 8000), ("wide", 1500), ("branches", 3000),
                                         ("nameref", 3000), ("recursion", 3000), ("functions", 3000)])
def test_memory_stays_bounded(name: str, n: int) -> None:
    script = CLASSES[name](n)
    tracemalloc.start()
    try:
        evaluate_script(script)
        trace_script(script)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 300e6, f"{name} at n={n}: peak {peak / 1e6:.0f} MB"


def test_recursion_fails_closed_naming_the_limit() -> None:
    result = evaluate_script(CLASSES["recursion"](3))
    assert isinstance(result, ShellLimit) and "deep (limit" in result.message and result.loc is not None
    reading = trace_script(CLASSES["recursion"](3))
    assert any("nest more than" in message for _, _, message in reading.problems)
    assert not any(e.argv and "serve" in str(e.argv) for e in reading.events)
