"""A server argument word that is a starting variable's number and nothing else (`--max-num-seqs
$CONC`) is placed, not read: one evaluation serves every point that differs only there, with each
point's number put in (verifier.shell.builtins.placed_word / _templated, verifier.shell.memo); a
`[[ $CONC -ge 16 ]]` is kept as that comparison (Evaluator.double_test): points whose numbers
compare alike share an evaluation. Every reused evaluation here is compared with the one the
point's own environment gives."""

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


def _each_reads_conc(cases: dict[str, str]) -> None:
    """Each script reads CONC (it neither places nor compares it): the memo keeps every point apart."""
    for why, text in cases.items():
        ev = evaluate(text, "x.sh", _env(), _options())
        assert "CONC" in ev.reads and "CONC" not in ev.templated and not ev.compared, why
        memo = _memo_run(text, [_env(CONC=c) for c in ("4", "8", "16", "32")])
        assert memo.misses == 4, why


def test_a_number_only_placed_in_the_server_words_is_not_read() -> None:
    text = (f'echo "CONC: $CONC"\n{SERVER} --model-path "$MODEL" --tp $TP --max-running-requests "$CONC" '
            f'--dp-size=$TP --result "r_${{CONC}}.json"\n')
    ev = evaluate(text, "x.sh", _env(), _options())
    assert {"CONC", "TP"} <= ev.templated and not {"CONC", "TP"} & ev.reads
    assert "MODEL" in ev.reads  # not a number: read for its value
    argv = _argv(ev)
    # a word that is the variable alone takes the variable's place, as any one-variable word does;
    # one with text around it the word's own
    assert argv[5] == ("4", ("wf.yml", 12)) and argv[3] == ("8", ("wf.yml", 11))
    assert argv[6:] == [("--dp-size=8", ("x.sh", 2)), ("--result", ("x.sh", 2)), ("r_4.json", ("x.sh", 2))]
    memo = _memo_run(text, [_env(CONC=c) for c in ("4", "8", "16", "64")] + [_env(TP="4", CONC="2")])
    assert (memo.misses, memo.hits) == (1, 4)
    # a generated file no number makes the word name does not matter
    text = f'echo x > /tmp/a4.yaml\n{SERVER} --config /tmp/a4.yaml --log /tmp/b${{CONC}}.log --c=$CONC\n'
    assert "CONC" in evaluate(text, "x.sh", _env(), _options()).templated
    _memo_run(text, [_env(CONC=c) for c in ("4", "8")])


def test_a_number_compared_with_a_literal_is_kept_as_that_comparison() -> None:
    text = (f'if [[ $CONC -ge 16 ]]; then R=30; else R=10; fi\n'
            f'{SERVER} --recv "$R" --sched $( [[ 8 -lt "$CONC" ]] && echo 3 || echo 1 ) --max-running-requests $CONC\n')
    ev = evaluate(text, "x.sh", _env(), _options())
    assert "CONC" not in ev.reads and ev.compared == {("CONC", 0, "-ge", "16"), ("CONC", 2, "-lt", "8")}
    # one evaluation per way the two comparisons come out
    memo = _memo_run(text, [_env(CONC=c) for c in ("4", "8", "16", "32", "2", "12", "64")])
    assert (memo.misses, memo.hits) == (3, 4)
    # `[ ]`, `test` and string comparisons with a literal of digits
    text = (f'[ "$ISL" = "1024" ] && [ "$OSL" != 8192 ] && R=a || R=b\ntest $TP -ge 4 && T=x || T=y\n'
            f'{SERVER} --r "$R" --t "$T"\n')
    ev = evaluate(text, "x.sh", _env(ISL="1024", OSL="1024"), _options())
    assert not {"ISL", "OSL", "TP"} & ev.reads and len(ev.compared) == 3
    envs = [_env(ISL=i, OSL=o, TP=t) for i in ("1024", "8192") for o in ("1024", "8192") for t in ("2", "8")]
    memo = _memo_run(text, envs + [_env(ISL="1024", OSL="1024", TP="4"), _env(ISL="01024", OSL="1024")])
    # one evaluation per way the tests come out (OSL is not compared when ISL is not 1024): TP 4
    # goes as 8, and "01024" (another string than "1024") as 8192
    assert (memo.misses, memo.hits) == (6, 4)


def test_a_number_the_script_decides_with_otherwise_is_read() -> None:
    cases = {
        "arithmetic": f'if (( CONC > 8 )); then R=30; else R=10; fi\n{SERVER} --recv "$R" --c $CONC\n',
        "a case": f'case $CONC in 1*) R=30;; *) R=10;; esac\n{SERVER} --recv "$R"\n',
        "a test of more words": f'if [ $CONC -ge 16 -a $TP -ge 4 ]; then R=30; fi\n{SERVER} --recv "$R"\n',
        "a pattern": f'if [[ $CONC == 1* ]]; then R=30; fi\n{SERVER} --recv "$R"\n',
        "a test without its ]": f'if [ $CONC -ge 16; then R=30; fi\n{SERVER} --recv "$R"\n',
        "two comparisons at once": f'if [[ $CONC -ge 16 && $TP -ge 4 ]]; then R=30; fi\n{SERVER} --recv "$R"\n',
        "an octal literal": f'if [[ $CONC -ge 010 ]]; then R=30; fi\n{SERVER} --recv "$R"\n',
    }
    _each_reads_conc(cases)
    # a number written with a leading zero is octal in `[[ ]]`: compared as a read
    text = f'if [[ $CONC -ge 16 ]]; then R=30; else R=10; fi\n{SERVER} --recv "$R"\n'
    ev = evaluate(text, "x.sh", _env(CONC="016"), _options())
    assert "CONC" in ev.reads and not ev.compared
    memo = _memo_run(text, [_env(CONC="32"), _env(CONC="016"), _env(CONC="017")])
    assert memo.misses == 3


def test_a_word_that_is_not_only_a_starting_number_is_read() -> None:
    cases = {
        "not a server": f'tool --c $CONC\n{SERVER} --tp 8\n',
        "a function's argument": f'f() {{ {SERVER} --c "$1"; }}\nf "$CONC"\n',
        "two variables": f'{SERVER} --c=$CONC$TP\n',
        "a pattern around it": f'{SERVER} --c=$CONC*\n',
        "an arithmetic word": f'{SERVER} --c "$((CONC))"\n',
        "a word that names a generated file for one number":
            f'echo x > /tmp/a4.yaml\n{SERVER} --config /tmp/a${{CONC}}.yaml\n',
        "a word whose `=` tail names one": f'echo x > 4.yaml\n{SERVER} --config=$CONC.yaml\n',
        "assigned by the script": f'CONC=$((CONC))\n{SERVER} --c $CONC\n',
        "split by the script's IFS": f'IFS=4\n{SERVER} --c $CONC\n',
        "a launcher word": f'numactl -C $CONC {SERVER} --tp 8\n',
        "a file named by the number": f'echo x > 4\n{SERVER} --config $CONC\n',
        "a test of it": f'[ $CONC -gt $TP ]\n{SERVER} --c "$CONC"\n',
    }
    _each_reads_conc(cases)


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
