"""`[[ ]]`, `[ ]` and `test`: one three-valued evaluator (verifier/shell/conditions.py) for both walkers.

The worlds evaluator (single-node launches) and the multi-node trace hold values differently (`Val`,
`Text`) and hand the conditions their own `Operands`; the answers are the same: each case runs
`if COND; then <yes>; else <no>; fi` through both and reads which branch they took (both: the
condition cannot be decided statically).
"""

from __future__ import annotations

import pytest

from tests.shell.helpers import run, servers
from verifier.shell.text import plain
from verifier.shell.trace import Reader
from verifier.shell.values import shown

CASES: list[tuple[str, dict[str, str], bool | None]] = [
    ('[[ -n "$A" ]]', {"A": "x"}, True),
    ('[[ -z "$A" ]]', {"A": "x"}, False),
    ('[[ $A ]]', {"A": ""}, False),
    ("[[ $A == x* ]]", {"A": "xyz"}, True),
    ('[[ $A == "x*" ]]', {"A": "xyz"}, False),
    ("[[ $A != y ]]", {"A": "x"}, True),
    ("[[ $A =~ ^[[:digit:]]+$ ]]", {"A": "123"}, True),
    ('[[ $A =~ "." ]]', {"A": "abc"}, False),
    ("[[ $A < b ]]", {"A": "a"}, True),
    ("[[ $N -gt 2 && $N -lt 10 ]]", {"N": "4"}, True),
    ("[[ $N -eq 2*2 ]]", {"N": "4"}, True),
    ('[[ "$E" -eq 0 ]]', {"E": ""}, True),
    ("[[ ! ( $A == x || $A == y ) ]]", {"A": "z"}, True),
    ("[[ -v A ]]", {"A": "1"}, True),
    ("[[ -v B ]]", {"A": "1"}, False),
    ('[ "$A" = x ]', {"A": "x"}, True),
    ('[ "$A" == "$B" ]', {"A": "x", "B": "x"}, True),
    ('[ "$N" -lt 9472 ]', {"N": ""}, False),  # `integer expression expected`: the test fails
    ('[ "$N" -ge 8 ]', {"N": "8"}, True),
    ('[ -n "$A" -a "$B" = y ]', {"A": "x", "B": "y"}, True),
    ('[ -z "$A" -o "$B" = y ]', {"A": "x", "B": "n"}, False),
    ('[ ! -n "$A" ]', {"A": "x"}, False),
    ("[ $A ]", {"A": "x"}, True),
    ('test -z "$A"', {"A": ""}, True),
    ('[ "$A" = x', {"A": "x"}, False),  # no closing `]`: the command fails
    ('[[ "$HOSTNAME" == node* ]]', {}, None),  # a machine variable: only the run knows
    ('[ "$HOSTNAME" = node1 ] || [ "$A" = x ]', {"A": "x"}, True),
]


def _script(cond: str, yes: str, no: str) -> str:
    return f"if {cond}; then\n    {yes}\nelse\n    {no}\nfi\n"


def _evaluator(cond: str, env: dict[str, str]) -> bool | None:
    text = _script(cond, "python3 -m sglang.launch_server --yes", "python3 -m sglang.launch_server --no")
    taken = {tuple(shown(v) for v in s.argv) for s in servers(run(text, env))}
    return None if taken == {("--yes",), ("--no",)} else taken == {("--yes",)}


def _trace(cond: str, env: dict[str, str]) -> bool | None:
    reader = Reader(unknown=lambda name: name == "HOSTNAME")
    result = reader.run("t.sh", _script(cond, "branch yes", "branch no"), env)
    taken = {plain(e.argv[1]) for e in result.events if e.words()[:1] == ["branch"]}
    return None if taken == {"yes", "no"} else taken == {"yes"}


@pytest.mark.parametrize(("cond", "env", "expected"), CASES)
def test_both_walkers_decide_a_condition_alike(cond: str, env: dict[str, str], expected: bool | None) -> None:
    assert _evaluator(cond, env) is expected
    assert _trace(cond, env) is expected


def test_an_operand_only_the_run_knows_says_why_in_the_trace() -> None:
    reader = Reader(unknown=lambda name: name == "HOSTNAME")
    result = reader.run("t.sh", 'if [[ -n "$HOSTNAME" ]]; then X=a; else X=b; fi\nbranch "$X"\n', {})
    (event,) = result.events
    assert [seg.why for seg in event.argv[1]] == ["branch"]  # set on a run-time branch, not undecided
