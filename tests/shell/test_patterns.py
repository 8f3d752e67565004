"""`${X//p/r}` and `${X#p}`-style expansions: the fast readings equal the definition (the longest
anchored match tried at every position, over slices) on random patterns and values."""

from __future__ import annotations

import random

from verifier.shell.values import Pattern, glob_match, pattern_text, replace_pattern, strip_pattern


def _replace_by_definition(value: str, pattern: Pattern, repl: str, mode: str) -> str:
    if not pattern_text(pattern) and mode not in ("#", "%"):
        return value
    n = len(value)
    if mode == "#":
        return next((repl + value[end:] for end in range(n, -1, -1) if glob_match(value[:end], pattern)), value)
    if mode == "%":
        return next((value[:start] + repl for start in range(n + 1) if glob_match(value[start:], pattern)), value)
    out: list[str] = []
    i = 0
    replaced = False
    while i <= n:
        end = -1
        if not (replaced and mode != "/"):
            end = next((e for e in range(n, i, -1) if glob_match(value[i:e], pattern)), -1)
        if end > i:
            out.append(repl)
            i, replaced = end, True
            continue
        if i < n:
            out.append(value[i])
        i += 1
    return "".join(out)


def _strip_by_definition(value: str, pattern: Pattern, op: str) -> str:
    n = len(value)
    if op in ("#", "##"):
        ends = range(0, n + 1) if op == "#" else range(n, -1, -1)
        return next((value[end:] for end in ends if glob_match(value[:end], pattern)), value)
    starts = range(n, -1, -1) if op == "%" else range(0, n + 1)
    return next((value[:start] for start in starts if glob_match(value[start:], pattern)), value)


PIECES = ["a", "b", "*", "?", "[ab]", "[!a]", "-", "x", "[[:space:]]", " ", "[", "\\", "]", "[*]"]
CHARS = "ab- x\n[]*\\"


def test_random_patterns_match_the_definition() -> None:
    rng = random.Random(2643)
    for _ in range(20_000):
        pattern = tuple(("".join(rng.choice(PIECES) for _ in range(rng.randint(0, 3))), rng.random() < 0.2)
                        for _ in range(rng.randint(1, 2)))
        value = "".join(rng.choice(CHARS) for _ in range(rng.randint(0, 12)))
        mode, repl, op = rng.choice(["", "/", "#", "%"]), rng.choice(["", "R", "<>"]), rng.choice(["#", "##", "%", "%%"])
        assert replace_pattern(value, pattern, repl, mode) == _replace_by_definition(value, pattern, repl, mode), \
            (value, pattern, repl, mode)
        assert strip_pattern(value, pattern, op) == _strip_by_definition(value, pattern, op), (value, pattern, op)


def test_removing_a_flag_from_a_long_command_line() -> None:
    """What AMD server scripts do (`${ARGS//--disable-radix-cache/}`): every occurrence goes."""
    value = "x --disable-radix-cache " * 500
    assert replace_pattern(value, (("--disable-radix-cache", False),), "", "/") == "x  " * 500
    assert replace_pattern(value, (("--disable-radix-cache", False),), "", "") == "x  " + value[24:]
