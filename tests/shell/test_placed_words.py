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


def test_comparisons_joined_in_one_double_bracket_test_are_kept_each() -> None:
    # `&&` binds tighter than `||`; every comparison is kept, whichever bash would not need
    text = (f'if [[ $CONC == 32 || $CONC == 64 && $TP -ge 4 ]]; then R=30; else R=10; fi\n'
            f'{SERVER} --recv "$R" --max-running-requests $CONC\n')
    ev = evaluate(text, "x.sh", _env(CONC="64"), _options())
    assert not {"CONC", "TP"} & ev.reads
    assert ev.compared == {("CONC", 0, "==", "32"), ("CONC", 0, "==", "64"), ("TP", 0, "-ge", "4")}
    assert ("30", ("x.sh", 1)) in _argv(ev)
    envs = [_env(CONC=c, TP=t) for c in ("32", "64", "16") for t in ("8", "2")] + [_env(CONC="8", TP="1")]
    memo = _memo_run(text, envs)
    # one evaluation per way the three comparisons come out: 32 with either TP (TP -ge 4 differs),
    # 64 with either, 16 with either; 8 goes as 16 with TP 2
    assert (memo.misses, memo.hits) == (6, 1)


def test_a_number_the_script_decides_with_otherwise_is_read() -> None:
    cases = {
        "arithmetic": f'if (( CONC > 8 )); then R=30; else R=10; fi\n{SERVER} --recv "$R" --c $CONC\n',
        "a case": f'case $CONC in 1*) R=30;; *) R=10;; esac\n{SERVER} --recv "$R"\n',
        "a test of more words": f'if [ $CONC -ge 16 -a $TP -ge 4 ]; then R=30; fi\n{SERVER} --recv "$R"\n',
        "a pattern": f'if [[ $CONC == 1* ]]; then R=30; fi\n{SERVER} --recv "$R"\n',
        "a test without its ]": f'if [ $CONC -ge 16; then R=30; fi\n{SERVER} --recv "$R"\n',
        "a comparison joined with a string test": f'if [[ $CONC -ge 16 && $MODEL == m ]]; then R=30; fi\n{SERVER} --recv "$R"\n',
        "comparisons in parentheses": f'if [[ ( $CONC -ge 16 ) || $CONC -lt 2 ]]; then R=30; fi\n{SERVER} --recv "$R"\n',
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
        "an arithmetic word with text around it": f'{SERVER} --c "c$((CONC))"\n',
        "an arithmetic word that assigns": f'{SERVER} --c "$((CONC += 1))"\n',
        "an arithmetic word of a negative number": f'{SERVER} --c "$((4 - CONC * 2))"\n',
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


def test_a_number_derived_from_starting_numbers_is_placed_through_its_variable() -> None:
    """`X=$((2 * CONC))` and `Y=$CONC` hold derived numbers (verifier.shell.derived): a server word of
    the variable places the starting numbers, and each point gets its own number computed again."""
    text = (f'MAX=$((2 * CONC))\nBS=$CONC\nTOK=$(( ($CONC + ISL + 63) / 64 * 64 ))\nPER=$((CONC / TP))\n'
            f'{SERVER} --max-running-requests "$MAX" --cuda-graph-max-bs $BS --chunk=$TOK --per "r${{PER}}"\n')
    env = _env(ISL="1024")
    ev = evaluate(text, "x.sh", env, _options())
    assert {"CONC", "TP", "ISL"} <= ev.templated and not {"CONC", "TP", "ISL"} & ev.reads
    (start,) = [r.server for r in ev.results if r.server]
    assert [shown(v) for v in start.argv] == ["--max-running-requests", "8", "--cuda-graph-max-bs", "4",
                                              "--chunk=1088", "--per", "r0"]
    # where each number was put: the assignment's line, or the word's own
    locs = [loc for _, loc in _argv(ev)]
    assert [locs[k] for k in (1, 3, 4, 6)] == [("x.sh", 1), ("x.sh", 2), ("x.sh", 5), ("x.sh", 5)]
    envs = [_env(ISL="1024", CONC=c, TP=t) for c in ("4", "8", "64", "016") for t in ("8", "4")]
    memo = _memo_run(text, envs)
    assert (memo.misses, memo.hits) == (1, 7)
    # a copy of a derived number, and arithmetic on one, are derived numbers too
    text = (f'BATCH=$(( CONC < 4 ? CONC : CONC / 4 ))\nGRAPH="$BATCH"\nTOKENS=$(( ((MTP + 1) * BATCH + ISL + 127) / 64 * 64 ))\n'
            f'{SERVER} --cuda-graph-max-bs $GRAPH --max-num-tokens "$TOKENS"\n')
    ev = evaluate(text, "x.sh", _env(ISL="1024", MTP="3"), _options())
    assert {"CONC", "ISL", "MTP"} <= ev.templated and not ev.reads & {"CONC", "ISL", "MTP"}
    memo = _memo_run(text, [_env(ISL=i, MTP="3", CONC=c) for c in ("1", "4", "64", "256") for i in ("1024", "8192")])
    assert (memo.misses, memo.hits) == (1, 7)


def test_a_server_word_that_is_arithmetic_of_starting_numbers_is_placed() -> None:
    """`--max-running-requests "$(( CONC * 3 / 2 > 8 ? CONC * 3 / 2 : 8 ))"`: the word is a derived
    number of its own (Evaluator.word_derivation), placed as a variable holding it would be."""
    text = (f'{SERVER} --max-running-requests "$(( CONC * 3 / 2 > 8 ? CONC * 3 / 2 : 8 ))" '
            f'--chunk $(( (ISL + OSL) * 2 ))\n')
    env = _env(ISL="1024", OSL="1024")
    ev = evaluate(text, "x.sh", env, _options())
    assert {"CONC", "ISL", "OSL"} <= ev.templated and not {"CONC", "ISL", "OSL"} & ev.reads
    assert [shown(v) for v, _ in _argv(ev)] == ["--max-running-requests", "8", "--chunk", "4096"]
    envs = [_env(ISL=i, OSL="1024", CONC=c) for c in ("4", "8", "64", "016") for i in ("1024", "8192")]
    memo = _memo_run(text, envs)
    assert (memo.misses, memo.hits) == (1, 7)


def test_a_derived_number_compared_with_a_literal_is_kept_as_that_comparison() -> None:
    text = (f'BS=$((CONC * 2))\n[ "$BS" -gt 64 ] && BS=64\nif [[ $BS -lt 8 ]]; then R=1; else R=2; fi\n'
            f'{SERVER} --cuda-graph-max-bs "$BS" --r $R\n')
    ev = evaluate(text, "x.sh", _env(), _options())
    assert "CONC" not in ev.reads and len(ev.compared) == 2
    memo = _memo_run(text, [_env(CONC=c) for c in ("4", "16", "64", "2", "1", "128")])
    # BS 8, 32 and 128, 4, 2, 256: three ways the comparisons come out
    assert (memo.misses, memo.hits) == (3, 3)


def test_a_derived_number_used_otherwise_reads_what_it_came_from() -> None:
    cases = {
        "a pattern": f'X=$((CONC * 2))\n[[ $X == 1* ]] && R=1\n{SERVER} --r "$R" --x $X\n',
        "a file written with it": f'X=$CONC\necho "$X" > /tmp/conc\n{SERVER} --x $X\n',
        "exported to the server": f'X=$((CONC + 1))\nexport X\n{SERVER} --tp 8\n',
        "copied into another word": f'X=$((CONC + 1))\nY="c$X"\n{SERVER} --y "$Y"\n',
        "an array made of it": f'X=$CONC\nX+=(--more)\n{SERVER} "${{X[@]}}"\n',
        "an argument of another command": f'X=$((CONC / 2))\ntool --x $X\n{SERVER} --tp 8\n',
        "its length": f'X=$((CONC / 2))\nY=${{#X}}\n{SERVER} --y $Y\n',
    }
    _each_reads_conc(cases)


def test_a_derived_number_is_the_number_the_assignment_gives() -> None:
    """The derived value of each expression equals the value the evaluator gives the same assignment
    when it reads its variables (the assignment made of two parts, the second an unset variable):
    `$C` is put in as text (`016` is octal 14 there) and a bare `C` is looked up (16); a derivation
    that fails or is negative for a point is computed again for it, not reused."""
    expressions = ["C", "$C", "${C} + 1", "C / D", "$C / $D", "(C + D + 63) / 64 * 64", "C < 4 ? C : C / 4",
                   "C - D", "C % D", "C ** 2", "C << 1", "16#$C"]
    for expr in expressions:
        derived = f'X=$(( {expr} ))\n{SERVER} --x "$X"\n'
        read = f'X=$(( {expr} ))$NOT_SET\n{SERVER} --x "$X"\n'
        envs = [_env(C=c, D=d) for c in ("16", "016", "08", "0", "3") for d in ("4", "0", "10")]
        memo = Memo()
        for env in envs:
            got = memo.evaluate("k", env, lambda env=env, text=derived: evaluate(text, "x.sh", env, _options()))
            want = evaluate(read, "x.sh", env, _options())
            assert [shown(v) for v in _server_argv(got)] == [shown(v) for v in _server_argv(want)], (expr, env)
        assert memo.hits >= 7, expr  # most points share the evaluation (not a vacuous comparison)


def _server_argv(ev: Evaluation) -> tuple[Any, ...]:
    (start,) = [r.server for r in ev.results if r.server]
    return start.argv


def test_a_number_in_an_options_file_the_server_is_handed_is_placed() -> None:
    """`cat > FILE <<EOF` lines of literal text and one starting or derived number hold its token
    (Evaluator.place_in_file): the server handed the file gets each point's number there
    (`ServerStart.file_templated`), and printing the file where nothing reads it reads nothing."""
    text = ('BATCH=$(( CONC > 16 ? CONC : 16 ))\ncat > /tmp/extra.yml << EOF\ncuda_graph_config:\n'
            '    max_batch_size: $BATCH\nmax_num_seqs: ${CONC}\nmodel: $MODEL\nEOF\ncat /tmp/extra.yml\n'
            'trtllm-serve "$MODEL" --tp_size $TP --extra_llm_api_options /tmp/extra.yml\n')
    ev = evaluate(text, "x.sh", _env(CONC="64"), _options())
    assert "CONC" in ev.templated and "CONC" not in ev.reads
    (start,) = [r.server for r in ev.results if r.server]
    assert start.files["/tmp/extra.yml"].text == ("cuda_graph_config:\n    max_batch_size: 64\nmax_num_seqs: 64\n"
                                                  "model: m\n")
    memo = Memo()
    for conc in ("64", "4", "128", "016"):
        env = _env(CONC=conc)
        got = memo.evaluate("k", env, lambda env=env: evaluate(text, "x.sh", env, _options()))
        fresh = evaluate(text, "x.sh", env, _options())
        assert same_outcomes(got, fresh) and _files(got) == _files(fresh) == _files_of(conc)
    assert (memo.misses, memo.hits) == (1, 3)


def _files(ev: Evaluation) -> list[str | None]:
    return [f.text for r in ev.results if r.server for f in r.server.files.values()]


def _files_of(conc: str) -> list[str | None]:
    batch = str(max(int(conc), 16)) if conc != "016" else "16"
    return [f"cuda_graph_config:\n    max_batch_size: {batch}\nmax_num_seqs: {conc}\nmodel: m\n"]


def test_an_options_file_read_back_reads_the_numbers_it_holds() -> None:
    body = "cat > /tmp/extra.yml << EOF\nmax_batch_size: $CONC\nEOF\n"
    serve = f"{SERVER} --config /tmp/extra.yml\n"
    cases = {
        "captured": f"{body}X=$(cat /tmp/extra.yml)\n{serve}",
        "searched": f"{body}if grep -q 'size: 4' /tmp/extra.yml; then R=1; fi\n{SERVER} --r \"$R\"\n",
        "sourced": "cat > /tmp/env.sh << EOF\nexport BS=$CONC\nEOF\nsource /tmp/env.sh\n" + f'{SERVER} --bs "$BS"x\n',
        "a line of two values": f"cat > /tmp/extra.yml << EOF\nsize: $CONC $TP\nEOF\n{serve}",
    }
    _each_reads_conc(cases)
