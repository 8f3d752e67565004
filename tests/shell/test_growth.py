"""The static shell reader's cost is linear in a script's size, and its limits fail closed.

Work is counted deterministically (`sys.setprofile` call events, as tests/hostile/test_hostile.py
does), never timed: reading a script of 4n statements of one construct class may cost at most a
generous 6x the work of n statements, for the single-node evaluator and the multi-node reader
alike. Call events do not see what a dictionary operation does in C (copying, comparing or joining
the worlds of a script holding thousands of variables costs one event each), so the evaluator's
work also counts the entries its world-level operations visit (`world_work`): at most 4.5x for 4n
statements, for every class. Memory (tracemalloc peak) stays under 300 MB on the hostile inputs that used to grow with the
square of their distinct assignments. Recursion stops at the depth limit with a named limit, never
a pass.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from tests.kit import call_events
from tests.shell import growth
from tests.shell.growth import CLASSES, Script, evaluate_script, trace_script
from verifier.shell import ShellLimit, evaluator, world
from verifier.shell.trace import Reader, State
from verifier.shell.world import World

N = 60


@pytest.fixture(autouse=True)
def _shared_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worlds share their tables from 32 variables on (`world.TABLE_FROM`, a few hundred outside
    tests): the sizes compared here are then read the way a script of thousands of variables is."""
    monkeypatch.setattr(world, "TABLE_FROM", 32, raising=False)


def _smallest(name: str) -> int:
    """The smaller size compared: `wide` from 180 statements, where what a world holds of its own
    has reached the size `world.settle` keeps it under (its first statements, with fewer worlds
    holding less, cost less than the later ones: 4.45x the work of 90 statements for 360, 4.2x
    from 180)."""
    return 3 * N if name == "wide" else N


def _own(table: Any) -> int:
    """The entries of a world's table that an operation on the world visits: those it holds of its
    own (a `world.Table` shares the rest with the worlds split from the same one; a plain
    dictionary has nothing shared)."""
    return len(getattr(table, "own", table))


def _held(w: World) -> int:
    return _own(w.vars) + _own(w.arrays) + _own(w.assocs) + len(w.exported) + len(w.refs) + len(w.attrs)


def world_work(script: Script, monkeypatch: pytest.MonkeyPatch) -> int:
    """Deterministic work of one single-node evaluation: call events, plus the entries that copying,
    comparing, joining worlds and dropping their dead variables visit (`_held` for each world an
    operation takes), plus what verifier.shell.world counts itself (`world.Work`, where it exists)."""
    held = 0
    copy, same, join, drop = World.copy, World.same, evaluator.join, evaluator.Evaluator.drop_dead

    def counted_copy(w: World) -> World:
        nonlocal held
        held += _held(w)
        return copy(w)

    def counted_same(w: World, other: World) -> bool:
        nonlocal held
        held += _held(w) + _held(other)
        return same(w, other)

    def counted_join(worlds: list[World], reason: str, loc: Any) -> World:
        nonlocal held
        held += sum(_held(w) for w in worlds)
        return join(worlds, reason, loc)

    def counted_drop(ev: Any, worlds: list[World], *args: Any) -> None:
        nonlocal held
        held += sum(_held(w) for w in worlds)
        drop(ev, worlds, *args)

    with monkeypatch.context() as patch:
        patch.setattr(World, "copy", counted_copy)
        patch.setattr(World, "same", counted_same)
        patch.setattr(evaluator, "join", counted_join)
        patch.setattr(evaluator.Evaluator, "drop_dead", counted_drop)
        counter = getattr(world, "Work", None)
        before = counter.entries if counter is not None else 0
        calls = call_events(lambda: growth.evaluate_script(script))
        counted = counter.entries - before if counter is not None else 0
    return calls + held + counted


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_world_work_is_linear(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    n = _smallest(name)
    small = world_work(CLASSES[name](n), monkeypatch)
    large = world_work(CLASSES[name](4 * n), monkeypatch)
    assert large <= 4.5 * max(small, 50), f"{name}: world work {small} at n={n}, {large} at n={4 * n}"


def _state_held(st: State) -> int:
    return (_own(st.vars) + _own(st.funcs) + _own(st.unresolved) + len(st.arrays) + len(st.exported) + len(st.unset)
            + len(st.refs) + len(st.generated))


def trace_work(script: Script, monkeypatch: pytest.MonkeyPatch) -> int:
    """Deterministic work of one multi-node reading: call events, plus the entries that copying a
    state for a branch and merging the branches visit (`_state_held` of each copy made and of each
    branch merged: a copy holds of its own only what was written since, it shares the rest with the
    state it was copied from), plus `world.Work`."""
    held = 0
    copy, merge = State.copy, Reader.merge

    def counted_copy(st: State) -> State:
        nonlocal held
        sub = copy(st)
        held += _state_held(sub)
        return sub

    def counted_merge(reader: Reader, st: State, states: list[State], *args: Any) -> None:
        nonlocal held
        held += sum(_state_held(s) for s in states)
        merge(reader, st, states, *args)

    with monkeypatch.context() as patch:
        patch.setattr(State, "copy", counted_copy)
        patch.setattr(Reader, "merge", counted_merge)
        before = world.Work.entries
        calls = call_events(lambda: growth.trace_script(script))
        counted = world.Work.entries - before
    return calls + held + counted


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_state_work_is_linear(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The multi-node reader's states cost what each branch writes, not every variable live (`wide`
    at 4n statements cost 16x the work of n when every branch copied every variable)."""
    small = trace_work(CLASSES[name](N), monkeypatch)
    large = trace_work(CLASSES[name](4 * N), monkeypatch)
    assert large <= 4.5 * max(small, 50), f"{name}: state work {small} at n={N}, {large} at n={4 * N}"


@pytest.mark.parametrize("reader", ["single", "multi"])
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_work_is_linear(name: str, reader: str) -> None:
    read = evaluate_script if reader == "single" else trace_script
    make = CLASSES[name]
    n = _smallest(name)
    small_script, large_script = make(n), make(4 * n)
    small = call_events(lambda: read(small_script))
    large = call_events(lambda: read(large_script))
    assert large <= 6 * max(small, 50), f"{name}/{reader}: work {small} at n={n}, {large} at n={4 * n}"


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
