"""A world's tables (verifier.shell.world: dictionaries, and `Table`s sharing a base once large)
behave as one dictionary per world whatever the worlds share.

Random writes, deletions, copies (splits), settles (the main script's step that moves what all
current worlds agree on into their shared base) and frozen copies (checkpoints) are applied to
worlds' tables and to plain dictionaries alike; every table must read, compare and differ exactly
as its dictionary does, and a frozen copy must not change when the worlds it was taken from go on.
"""

from __future__ import annotations

import random

import pytest

from verifier.shell import world
from verifier.shell.nodes import FuncDef
from verifier.shell.parser import parse
from verifier.shell.world import Names, World, differing, drop_candidates, join, settle

NAMES = [f"V{k}" for k in range(12)]


def _check(tables: list[Names[int]], dicts: list[dict[str, int]]) -> None:
    for t, d in zip(tables, dicts, strict=True):
        assert dict(t.items()) == d and len(t) == len(d) and bool(t) == bool(d)
        for name in NAMES:
            assert (name in t) == (name in d) and t.get(name, -1) == d.get(name, -1)
    for a, da in zip(tables, dicts, strict=True):
        for b, db in zip(tables, dicts, strict=True):
            assert (a == b) == (da == db)
            diff = {n for n in da.keys() | db.keys() if da.get(n) != db.get(n) or (n in da) != (n in db)}
            assert diff <= set(differing(a, b))
            assert set(differing(a, b, hashable=True)) == diff


@pytest.mark.parametrize("seed", range(40))
def test_tables_act_as_dictionaries(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    if seed % 4:  # tables shared from the first copy (the evaluator's threshold leaves small ones alone)
        monkeypatch.setattr(world, "TABLE_FROM", seed % 4 - 1)
    if seed % 2:  # settle at every chance
        monkeypatch.setattr(world, "SETTLE_PER_TABLE", 0)
        monkeypatch.setattr(world, "SETTLE_FREE", 0)
    rng = random.Random(seed)
    owner = object()
    worlds: list[World] = [World()]
    dicts: list[dict[str, int]] = [{}]
    frozen: list[tuple[World, dict[str, int]]] = []
    for _ in range(300):
        k = rng.randrange(len(worlds))
        w, d = worlds[k], dicts[k]
        op = rng.random()
        name = rng.choice(NAMES)
        if op < 0.4:
            value = rng.randrange(3)
            w.vars[name] = value  # type: ignore[assignment]
            d[name] = value
        elif op < 0.55:
            assert w.vars.pop(name, None) == d.pop(name, None)
        elif op < 0.7 and len(worlds) < 6:
            worlds.append(w.copy())
            dicts.append(dict(d))
        elif op < 0.8 and len(worlds) > 1:
            del worlds[k], dicts[k]
        elif op < 0.9:
            later = set(rng.sample(NAMES, 6))
            settle(worlds, owner, later, [n for n in NAMES if n not in later])
            for x in worlds:  # every name held that no later statement mentions is a candidate
                assert {n for n in x.vars if n not in later} <= set(drop_candidates(x.vars, owner, ()))
        else:
            bases: dict[int, object] = {}
            frozen.append((w.frozen(bases), dict(d)))  # type: ignore[arg-type]
        _check([x.vars for x in worlds], dicts)  # type: ignore[misc]
    for f, d in frozen:
        assert dict(f.vars.items()) == d


def _func(name: str, line: int) -> FuncDef:
    return parse(f"{name}() {{ :; }}\n", "f.sh").body[0].parts[0].cmds[0]  # type: ignore[return-value]


def test_worlds_share_functions_until_one_changes_them() -> None:
    """Functions are copied on write: a split shares them (and `same` is then one identity test), a
    definition or `unset -f` in one world never shows in another or in a kept checkpoint, and a join
    gathers both worlds' functions without changing either."""
    f, g, h = _func("f", 1), _func("g", 2), _func("h", 3)
    a = World()
    a.own_funcs()["f"] = f
    b = a.copy()
    kept = a.frozen({})
    assert b.funcs is a.funcs and a.same(b)
    b.own_funcs()["g"] = g
    assert set(a.funcs) == {"f"} and set(b.funcs) == {"f", "g"} and set(kept.funcs) == {"f"}
    assert not a.same(b)
    c = b.copy()
    del c.own_funcs()["f"]
    assert set(b.funcs) == {"f", "g"} and set(c.funcs) == {"g"}
    a.own_funcs()["h"] = h
    joined = join([a, c], "undecided", ("f.sh", 1))
    assert joined.funcs == {"f": f, "h": h, "g": g}
    assert set(a.funcs) == {"f", "h"} and set(c.funcs) == {"g"} and set(kept.funcs) == {"f"}
    d = a.copy()
    del d  # the only other holder is gone: the next definition changes the dictionary in place
    before = id(a.funcs)  # (a name bound to the dictionary would be a holder too)
    a.own_funcs()["g"] = g
    assert id(a.funcs) == before
