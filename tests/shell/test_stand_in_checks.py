"""Which stand-ins decide (verifier/shell/trace.py, Stand-ins): a `[ ]`/`test` or a `[[ ]]` number
comparison only picks a branch (a check), `$(( ))` of one stand-in and `echo "$X" | filters` captured
give derived stand-ins, and a python3 snippet that lists its environment depends on the characters
of only the values it reads.

A reading made with stand-ins holds for another value when every check comes out as recorded and
every derived stand-in has a value (`_replay`, as verifier.launch.follow `_Template.instance` does);
its commands, with the values put in, are then those of a reading made with that value itself
(`_fresh`). Where a value changes the course, the reading does not hold, and the other reading is
made with the value."""

from __future__ import annotations

import pytest

from verifier.launch.runner import _put
from verifier.shell import trace
from verifier.shell.text import Text, may_stand_in, plain, stand_in_values

PREFIX = 'export TP="8"\n'


def _no_file(_path: Text, _st: object) -> None:
    return None


def _reader() -> trace.Reader:
    return trace.Reader(load=_no_file, unknown=lambda name: False)


def _words(result: trace.ReadResult) -> list[list[str]]:
    return [event.words() for event in result.events]


def _stand_in_reading(script: str, env: dict[str, str]) -> tuple[trace.Reader, trace.ReadResult]:
    reader = _reader()
    standins = {name: reader.stand_in(name, value) for name, value in env.items()}
    return reader, reader.run("s.sh", PREFIX + script, standins)


def _fresh(script: str, env: dict[str, str]) -> list[list[str]]:
    return _words(_reader().run("s.sh", PREFIX + script, env))


def _replay(reader: trace.Reader, result: trace.ReadResult, env: dict[str, str]) -> list[list[str]] | None:
    """The commands of the stand-in reading for another environment (None: it does not hold there)."""
    if not all(may_stand_in(value) for value in env.values()):  # no stand-in's value (`_Template.fits`)
        return None
    values = stand_in_values(reader.marks, env.__getitem__)
    if values is None:
        return None
    try:
        if any(test(tuple(_put(v, values) for v in texts)) != outcome for texts, test, outcome in reader.checks):
            return None
    except StopIteration:
        return None
    return [[plain(_put(word, values)) for word in event.argv] for event in result.events]


def _holds(script: str, first: dict[str, str], others: list[dict[str, str]]) -> list[bool]:
    """Read `script` with stand-ins for `first` (nothing may decide), then for each other environment:
    whether that reading holds there, asserting that where it holds it gives the fresh reading's commands."""
    reader, result = _stand_in_reading(script, first)
    assert reader.decided == set() and not reader.decided_all
    assert _replay(reader, result, first) == _fresh(script, first)
    out = []
    for env in others:
        got = _replay(reader, result, env)
        if got is not None:
            assert got == _fresh(script, env), env
        out.append(got is not None)
    return out


BRACKET = """if [ "$NODE_RANK" -eq 0 ]; then
    server --role leader --rank "$NODE_RANK"
elif [ "$NODE_RANK" -lt 3 ] && test "$NODE_RANK" != 2; then
    server --role prefill --rank "$NODE_RANK"
else
    server --role decode --rank "$NODE_RANK"
fi
"""


def test_a_bracket_test_of_a_stand_in_is_a_check_re_evaluated_for_each_value() -> None:
    ranks = ["0", "1", "2", "3", "-n", "+1", "x"]
    assert _holds(BRACKET, {"NODE_RANK": "1"}, [{"NODE_RANK": r} for r in ranks]) == \
        [False, True, False, False, False, True, False]
    assert _fresh(BRACKET, {"NODE_RANK": "-n"})[0][:3] == ["server", "--role", "decode"]  # `[ -n -eq 0 ]` fails
    assert _holds(BRACKET, {"NODE_RANK": "5"}, [{"NODE_RANK": "3"}, {"NODE_RANK": "x"}, {"NODE_RANK": "1"}]) == \
        [True, True, False]


def test_a_bracket_test_that_asks_the_tree_decides() -> None:
    reader = _reader()
    with pytest.raises(trace.Decided) as info:
        reader.run("s.sh", 'if [ -f "$CONFIG" ]; then run; fi\n', {"CONFIG": reader.stand_in("CONFIG", "a.yaml")})
    assert info.value.names == {"CONFIG"}


DOUBLE = """if [[ $NODE_RANK -gt 0 ]]; then
    server --worker "$NODE_RANK"
else
    server --leader
fi
"""


def test_a_double_bracket_number_comparison_is_a_check_while_the_value_is_a_plain_number() -> None:
    # `010` and `1+1` are arithmetic in `[[ ]]` (octal 8, an expression): read with their values
    envs = [{"NODE_RANK": r} for r in ("2", "0", "010", "1+1", "03")]
    assert _holds(DOUBLE, {"NODE_RANK": "1"}, envs) == [True, False, False, False, False]
    reader = _reader()
    with pytest.raises(trace.Decided):
        reader.run("s.sh", DOUBLE, {"NODE_RANK": reader.stand_in("NODE_RANK", "07")})


ARITH = """RANK=$((NODE_RANK - TP / 4))
HALF=$(( RANK / 2 ))
server --node-rank $RANK --half "$HALF"
"""


def test_arithmetic_of_one_stand_in_gives_a_derived_stand_in() -> None:
    envs = [{"NODE_RANK": r} for r in ("7", "0", "012", "1+1", "x", "")]
    # 012 is octal, 1+1 an expression: the same expression of the value gives their numbers; `x`
    # reads a variable the reading never read, and empty is no stand-in's value
    assert _holds(ARITH, {"NODE_RANK": "5"}, envs) == [True, True, True, True, False, False]
    assert _fresh(ARITH, {"NODE_RANK": "012"})[0] == ["server", "--node-rank", "8", "--half", "4"]


def test_arithmetic_of_several_stand_ins_derives_from_each() -> None:
    script = 'RANK=$((NODE_RANK - xP * PER_WORKER))\nserver --node-rank "$RANK" --last $((RANK + NODE_RANK))\n'
    first = {"NODE_RANK": "5", "xP": "2", "PER_WORKER": "1"}
    envs = [{**first, "NODE_RANK": "9"}, {**first, "xP": "1"}, {"NODE_RANK": "3", "xP": "1", "PER_WORKER": "3"}]
    assert _holds(script, first, envs) == [True, True, True]
    assert _fresh(script, envs[2])[0] == ["server", "--node-rank", "0", "--last", "3"]


def test_arithmetic_that_assigns_or_expands_inside_decides() -> None:
    for script in ("server --n $((N++))\n", 'server --n $(("$N" + 1))\n', "server --n $((M = N + 1))\n"):
        reader = _reader()
        with pytest.raises(trace.Decided) as info:
            reader.run("s.sh", script, {"N": reader.stand_in("N", "1")})
        assert info.value.names == {"N"}


PIPELINE = """MAX=$(echo "$CONC" | tr 'x' '\\n' | sort -n | tail -1)
server --max-running-requests "$MAX"
"""


def test_a_captured_filter_pipeline_of_one_stand_in_gives_a_derived_stand_in() -> None:
    envs = [{"CONC": c} for c in ("4x2", "512", "-n", "8x64x16", "x")]
    # `-n` is an option of echo (nothing printed), `x` leaves no line: no stand-in's value
    assert _holds(PIPELINE, {"CONC": "8x64x16"}, envs) == [True, True, False, True, False]
    assert _fresh(PIPELINE, {"CONC": "8x64x16"})[0] == ["server", "--max-running-requests", "64"]


def test_a_filter_pipeline_whose_status_or_lines_depend_on_the_value_holds_only_for_alike_values() -> None:
    script = 'if LINE=$(echo "$CONC" | grep -E "^[0-9]+$"); then server --n "$LINE"; else server; fi\n'
    assert _holds(script, {"CONC": "16"}, [{"CONC": "32"}, {"CONC": "a32"}]) == [True, False]
    reader = _reader()
    with pytest.raises(trace.Decided):  # two lines: the filters read the characters
        reader.run("s.sh", 'M=$(echo "$C" | tr x "\\n")\nserver $M\n', {"C": reader.stand_in("C", "1x2")})


SNIPPET = """eval "$(python3 -c "
import os
ns = {}
for k, v in os.environ.items():
    try:
        ns[k] = int(v)
    except ValueError:
        pass
print(f'TOKENS={ns.get(\\"TP\\", 1) * 1024}')
")"
server --tokens "$TOKENS" --rank "$NODE_RANK"
"""


def test_a_snippet_listing_the_environment_depends_on_the_values_it_reads_and_on_which_are_integers() -> None:
    # TP is read (its number is printed); NODE_RANK only given to int(): whether it is an integer
    envs = [{"NODE_RANK": r} for r in ("3", "x1", "12")]
    assert _holds(SNIPPET, {"NODE_RANK": "1"}, envs) == [True, False, True]
    assert _fresh(SNIPPET, {"NODE_RANK": "1"})[0] == ["server", "--tokens", "8192", "--rank", "1"]
    reader = _reader()
    with pytest.raises(trace.Decided) as info:
        reader.run("s.sh", SNIPPET.replace('export TP="8"', ""),
                   {"TP": reader.stand_in("TP", "8"), "NODE_RANK": reader.stand_in("NODE_RANK", "1")})
    assert info.value.names == {"TP"}


def test_a_double_bracket_string_test_takes_the_branch_of_the_value() -> None:
    script = 'if [[ "$SLURM_PROCID" == 0 && $ROLE != decode* ]]; then server --head; else server --worker; fi\n'
    first = {"SLURM_PROCID": "0", "ROLE": "prefill"}
    envs = [{**first, "SLURM_PROCID": "1"}, {**first, "ROLE": "decode-2"}, {"SLURM_PROCID": "0", "ROLE": "x"}]
    assert _holds(script, first, envs) == [False, False, True]
    assert _fresh(script, first) == [["server", "--head"]]


EVAL = """CMD="server --max-num-seqs $CONC --model $MODEL_DIR/$MODEL --rank $NODE_RANK"
eval "$CMD"
"""


def test_eval_of_text_holding_plain_word_values_is_a_check_of_how_they_parse() -> None:
    first = {"CONC": "8", "MODEL_DIR": "/models", "MODEL": "m", "NODE_RANK": "0"}
    envs = [{**first, "CONC": "64"}, {**first, "NODE_RANK": "if"}, {**first, "MODEL": "a=b"},
            {**first, "MODEL_DIR": "~"}, {**first, "CONC": "1;x"}, {**first, "NODE_RANK": "$HOME"}]
    # `if` is no keyword where it stands, and `a=b` no assignment; `~` at a word's start is a home
    # directory, and `;` and `$` are syntax: those values parse otherwise
    assert _holds(EVAL, first, envs) == [True, True, True, False, False, False]


def test_eval_decides_only_the_values_that_hold_shell_syntax() -> None:
    reader = _reader()
    env = {"LOGS": reader.stand_in("LOGS", "/run_logs/job-${SLURM_JOB_ID}"), "CONC": reader.stand_in("CONC", "8")}
    with pytest.raises(trace.Decided) as info:
        reader.run("s.sh", 'eval "bench --logs $LOGS --conc $CONC"\n', env)
    assert info.value.names == {"LOGS"}
