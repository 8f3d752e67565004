"""A server argument word that is a starting variable's number and nothing else (`--max-num-seqs
$CONC`) is placed, not read: one evaluation serves every point that differs only there, with each
point's number put in (verifier.shell.builtins._placed_word / _templated, verifier.shell.memo).
Every reused evaluation here is compared with the one the point's own environment gives."""

from __future__ import annotations

from typing import Any

from verifier.launch.commands import shell_commands
from verifier.shell import Evaluation, Options, evaluate
from verifier.shell.memo import Memo, same_outcomes
from verifier.shell.values import shown

SERVER = "python3 -m sglang.launch_server"


def _options() -> Options:
    return Options(commands=shell_commands())


def _env(**values: str) -> dict[str, tuple[str, tuple[str, int]]]:
    base = {"MODEL": "m", "TP": "8", "CONC": "4"}
    base.update(values)
    return {name: (value, ("wf.yml", 10 + k)) for k, (name, value) in enumerate(base.items())}


def _argv(ev: Evaluation) -> list[tuple[str, Any]]:
    (start,) = [r.server for r in ev.results if r.server]
    return [(shown(v), loc) for v, loc in zip(start.argv, start.argv_locs, strict=True)]


def _memo_run(text: str, envs: list[dict[str, Any]]) -> Memo:
    """Each environment through one memo; each outcome equals that environment's own evaluation."""
    memo = Memo()
    for env in envs:
        got = memo.evaluate("k", env, lambda env=env: evaluate(text, "x.sh", env, _options()))
        fresh = evaluate(text, "x.sh", env, _options())
        assert same_outcomes(got, fresh), (text, env)
        assert _argv(got) == _argv(fresh)
    return memo


def test_a_number_only_placed_in_the_server_words_is_not_read() -> None:
    text = f'echo "CONC: $CONC"\n{SERVER} --model-path "$MODEL" --tp $TP --max-running-requests "$CONC"\n'
    ev = evaluate(text, "x.sh", _env(), _options())
    assert {"CONC", "TP"} <= ev.templated and not {"CONC", "TP"} & ev.reads
    assert "MODEL" in ev.reads  # not a number: read for its value
    argv = _argv(ev)
    # the word takes the variable's own place, as any one-variable word does
    assert argv[-1] == ("4", ("wf.yml", 12)) and argv[3] == ("8", ("wf.yml", 11))
    memo = _memo_run(text, [_env(CONC=c) for c in ("4", "8", "16", "64")] + [_env(TP="4", CONC="2")])
    assert (memo.misses, memo.hits) == (1, 4)


def test_a_number_the_script_decides_with_is_read() -> None:
    text = (f'if [[ $CONC -ge 16 ]]; then R=30; else R=10; fi\n'
            f'{SERVER} --recv "$R" --max-running-requests $CONC\n')
    ev = evaluate(text, "x.sh", _env(), _options())
    assert "CONC" in ev.reads and "CONC" not in ev.templated
    memo = _memo_run(text, [_env(CONC=c) for c in ("4", "8", "16", "32")])
    assert memo.misses == 4


def test_a_word_that_is_not_only_a_starting_number_is_read() -> None:
    cases = {
        "not a server": f'tool --c $CONC\n{SERVER} --tp 8\n',
        "a function's argument": f'f() {{ {SERVER} --c "$1"; }}\nf "$CONC"\n',
        "more than the variable": f'{SERVER} --c=$CONC\n',
        "assigned by the script": f'CONC=$((CONC))\n{SERVER} --c $CONC\n',
        "split by the script's IFS": f'IFS=4\n{SERVER} --c $CONC\n',
        "a launcher word": f'numactl -C $CONC {SERVER} --tp 8\n',
        "a file named by the number": f'echo x > 4\n{SERVER} --config $CONC\n',
        "a test of it": f'[ $CONC -gt 4 ]\n{SERVER} --c "$CONC"\n',
    }
    for why, text in cases.items():
        ev = evaluate(text, "x.sh", _env(), _options())
        assert "CONC" in ev.reads and "CONC" not in ev.templated, why
        _memo_run(text, [_env(CONC=c) for c in ("4", "8")])


def test_an_evaluation_that_placed_a_number_is_not_reused_for_other_text() -> None:
    text = f'{SERVER} --max-running-requests "$CONC"\n'
    assert "CONC" in evaluate(text, "x.sh", _env(CONC="4k"), _options()).reads  # not a number: read
    memo = _memo_run(text, [_env(CONC="4"), _env(CONC="4k"), _env(CONC=""), _env(CONC="8")])
    # "4k" and "" are evaluated on their own; 8 reuses the evaluation of 4
    assert (memo.misses, memo.hits) == (3, 1)
    env = _env(CONC="4")
    del env["CONC"]
    memo = _memo_run(text, [_env(CONC="4"), env])  # unset: not a number either
    assert memo.misses == 2
