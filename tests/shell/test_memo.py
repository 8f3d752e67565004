"""Reusing evaluations across points (verifier.shell.memo): read sets, pass-through, prefixes."""

from __future__ import annotations

import pytest

import verifier.shell.memo as memo_module
from verifier.launch.commands import shell_commands
from verifier.shell import Options, evaluate
from verifier.shell.memo import Checkpoints, Memo, same_outcomes
from verifier.shell.values import shown

SCRIPT = """check() { for v in "$@"; do [[ -z "${!v:-}" ]] && exit 1; done; }
check MODEL CONC RESULT_FILENAME
export SGLANG_X=1
ARGS=(--tp "$TP")
python3 -m sglang.launch_server "${ARGS[@]}"
echo "$CONC"
"""


def _options(**kw: object) -> Options:
    """Options with the launch layer's table of server commands (the shell reader names none)."""
    return Options(commands=shell_commands(), **kw)  # type: ignore[arg-type]


def _env(**values: str) -> dict[str, tuple[str, tuple[str, int]]]:
    base = {"MODEL": "m", "TP": "4", "CONC": "8", "RESULT_FILENAME": "r_conc8", "PASS": "through"}
    base.update(values)
    return {k: (v, ("wf.yml", 1)) for k, v in base.items()}


def _run(memo: Memo, env: dict[str, tuple[str, tuple[str, int]]], options: Options | None = None):  # type: ignore[no-untyped-def]
    return memo.evaluate("x.sh", env, lambda: evaluate(SCRIPT, "x.sh", env, options or _options()))


def test_environments_that_agree_on_what_was_read_share_one_evaluation() -> None:
    memo = Memo()
    first = _run(memo, _env())
    second = _run(memo, _env(CONC="16", RESULT_FILENAME="r_conc16", PASS="other"))
    assert (memo.hits, memo.misses) == (1, 1)
    assert "CONC" in first.weak_reads and "CONC" not in first.reads  # only tested for emptiness
    (start,) = [r.server for r in second.results if r.server]
    env = {n: shown(v) for n, v, _ in start.env}
    assert env["PASS"] == "other" and env["CONC"] == "16" and env["SGLANG_X"] == "1"  # passed through, rebound
    _run(memo, _env(TP="8"))  # TP is read for its value
    _run(memo, _env(CONC=""))  # emptiness differs: the script exits
    assert memo.misses == 3 and memo.hits == 1


def test_a_later_read_resumes_from_the_shared_prefix() -> None:
    store = Checkpoints()
    text = 'source_like=1\nexport A=1\nX="tp-$TP"\npython3 -m sglang.launch_server --x "$X" --c "$CONC"\n'
    results = []
    for conc in ("1", "2"):
        env = {"TP": ("4", ("", 0)), "CONC": (conc, ("", 0))}
        options = _options(checkpoints=store, checkpoint_key="k")
        ev = evaluate(text, "x.sh", env, options)
        results.append([shown(v) for r in ev.results if r.server for v in r.server.argv])
    assert results == [["--x", "tp-4", "--c", "1"], ["--x", "tp-4", "--c", "2"]]
    assert store.resumed == 1


def test_reads_that_only_feed_unread_output_do_not_split_evaluations() -> None:
    memo = Memo()
    text = ('echo "conc=$CONC" >> "$GITHUB_ENV"\necho "starting with $CONC"\n'
            'cat > cfg.yml <<EOF\nmax_batch_size: $CONC\nEOF\n'
            'cat > log.yml <<EOF\nconc: $CONC\nEOF\n'
            'trtllm-serve "$MODEL" --config cfg.yml\n')
    for conc in ("8", "16"):
        env = {**_env(CONC=conc), "GITHUB_ENV": ("/tmp/env", ("", 0))}
        ev = memo.evaluate("t", env, lambda env=env: evaluate(text, "t.sh", env, _options()))  # type: ignore[misc]
        (start,) = [r.server for r in ev.results if r.server]
        assert start.files["cfg.yml"].text == f"max_batch_size: {conc}\n"
    # the options file the server reads holds CONC's number in its place (verifier.shell.derived):
    # each point gets its own number there from one evaluation
    assert (memo.misses, memo.hits) == (1, 1)
    # a file the script reads back (not only printed where nothing reads it) reads what wrote it
    read_back = text.replace("trtllm-serve", 'X=$(cat cfg.yml)\ntrtllm-serve')
    memo = Memo()
    for conc in ("8", "16"):
        env = {**_env(CONC=conc), "GITHUB_ENV": ("/tmp/env", ("", 0))}
        memo.evaluate("t", env, lambda env=env: evaluate(read_back, "t.sh", env, _options()))  # type: ignore[misc]
    assert memo.misses == 2
    memo = Memo()
    for conc in ("8", "16"):
        env = {**_env(CONC=conc), "GITHUB_ENV": ("/tmp/env", ("", 0))}
        plain = text.replace("--config cfg.yml", "--port 1")
        memo.evaluate("t", env, lambda env=env, plain=plain: evaluate(plain, "t.sh", env, _options()))  # type: ignore[misc]
    assert (memo.misses, memo.hits) == (1, 1)  # nothing the server uses reads CONC


def _rebound_by_the_rule(result, env0, env):  # type: ignore[no-untyped-def]
    """The documented rebinding, entry by entry with `dataclasses.replace` (the reference for `rebind_evaluation`)."""
    from dataclasses import replace

    def rebind(items):  # type: ignore[no-untyped-def]
        out = []
        for name, value, loc in items:
            if name in env0 and env0[name] == (value, loc):  # passed through unchanged
                if name in env:
                    out.append((name, *env[name]))
                continue
            out.append((name, value, loc))
        have = {item[0] for item in items}
        out.extend((name, *b) for name, b in env.items() if name not in env0 and name not in have)
        return tuple(out)

    return [replace(r, server=replace(r.server, env=rebind(r.server.env)) if r.server else None,
                    child=replace(r.child, env=rebind(r.child.env)) if r.child else None) for r in result.results]


def test_rebinding_copies_only_the_results_whose_environment_changes() -> None:
    from verifier.shell.memo import rebind_evaluation

    text = 'export A=1\nif [[ "$TP" == 8 ]]; then X=a; else X=b; fi\npython3 -m sglang.launch_server --x "$X"\n'
    env0 = _env()
    ev = evaluate(text, "x.sh", env0, _options())
    same = rebind_evaluation(ev, env0, dict(env0))  # equal, not the same map: nothing passed through changes
    assert all(a is b for a, b in zip(same.results, ev.results, strict=True))
    for env in (_env(PASS="other"), _env(CONC="16", RESULT_FILENAME="r16"), {**_env(), "NEW": ("n", ("wf.yml", 2))},
                {n: b for n, b in _env().items() if n != "PASS"}, {**_env(), "PASS": ("through", ("wf.yml", 9))}):
        got = rebind_evaluation(ev, env0, env)
        assert got.results == _rebound_by_the_rule(ev, env0, env)
        assert [r.server.env for r in got.results if r.server] == \
            [r.server.env for r in _rebound_by_the_rule(ev, env0, env) if r.server]
    # the copies are whole: every other field of the started server is the evaluation's own
    moved = rebind_evaluation(ev, env0, _env(PASS="other"))
    for a, b in zip(moved.results, ev.results, strict=True):
        assert a is not b and a.assumptions == b.assumptions and a.exit_loc == b.exit_loc
        assert a.server is not None and b.server is not None
        assert (a.server.argv, a.server.argv_locs, a.server.loc, a.server.files) == \
            (b.server.argv, b.server.argv_locs, b.server.loc, b.server.files)


def test_a_full_store_forgets_the_deepest_of_the_points_used_longest_ago() -> None:
    import random

    from verifier.shell.memo import EVICT_GROUP, MAX_ENTRIES

    rng = random.Random(7)
    store = Checkpoints()
    kept: list[tuple[int, str]] = []  # (statement, value) in least recently used order: the rule by hand
    for n in range(3 * MAX_ENTRIES):
        index, value = rng.randrange(1, 12), f"v{n}"
        state = {"reads": {"A"}, "sinks": {}, "weak": set(), "read_all": False, "derived": {}, "scripts": ()}
        store.add("k", index, state, [], {"A": (value, ("", 0))})
        kept.append((index, value))
        if len(kept) > MAX_ENTRIES:
            group = kept[:min(EVICT_GROUP, len(kept) - 1)]
            deepest = max(range(len(group)), key=lambda j: group[j][0])  # the first of equally deep ones
            del kept[deepest]
        held = [(p.index, p.valuation[0][0][0]) for p in store._store["k"]]
        assert held == kept


RUNNER = """BENCH_BASE="benchmarks/single_node/${EXP_NAME%%_*}_${PRECISION}_b200"
export PASS
python3 -m sglang.launch_server --script "$BENCH_BASE.sh" --tag "${TAG#v}"
"""


def _server_words(ev) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [[shown(v) for v in r.server.argv] + [f"{n}={shown(v)}" for n, v, _ in r.server.env]
            for r in ev.results if r.server]


def test_a_variable_read_only_through_a_removal_is_keyed_by_what_it_leaves() -> None:
    """A runner names its benchmark script from `${EXP_NAME%%_*}`: every point's experiment name differs
    after the first `_`, and all of them share one evaluation; the result equals a fresh evaluation."""
    memo = Memo()

    def env(exp: str, tag: str = "v1", where: int = 1) -> dict[str, tuple[str, tuple[str, int]]]:
        return {"EXP_NAME": (exp, ("wf.yml", where)), "PRECISION": ("fp8", ("wf.yml", 1)), "TAG": (tag, ("wf.yml", 1)),
                "PASS": (exp, ("wf.yml", 1))}

    def run(e):  # type: ignore[no-untyped-def]
        return memo.evaluate("r", e, lambda: evaluate(RUNNER, "r.sh", e, _options()))

    first = run(env("dsr1_1k1k_tp8_conc4"))
    assert {name: sorted(op for op, _ in specs) for name, specs in first.derived_reads.items()} == \
        {"EXP_NAME": ["%%"], "TAG": ["#"]}
    assert "EXP_NAME" not in first.reads
    for e in (env("dsr1_1k1k_tp8_conc64"), env("dsr1_8k1k_tp4_conc8", tag="v1")):
        assert _server_words(run(e)) == _server_words(evaluate(RUNNER, "r.sh", e, _options()))
    assert (memo.hits, memo.misses) == (2, 1)
    for e in (env("gptoss_1k1k"), env("dsr1_x", tag="v2"), env("dsr1_x", where=2), env("dsr1")):
        assert _server_words(run(e)) == _server_words(evaluate(RUNNER, "r.sh", e, _options()))
    # another prefix, another tag, another origin: each its own; no `_` at all leaves the same prefix
    assert (memo.hits, memo.misses) == (3, 4)


def test_a_variable_also_read_whole_is_keyed_by_its_value() -> None:
    memo = Memo()
    text = 'python3 -m sglang.launch_server --a "${EXP_NAME%%_*}" --b "$EXP_NAME"\n'
    for exp in ("dsr1_a", "dsr1_b"):
        e = {"EXP_NAME": (exp, ("wf.yml", 1))}
        ev = memo.evaluate("w", e, lambda e=e: evaluate(text, "w.sh", e, _options()))  # type: ignore[misc]
        assert "EXP_NAME" in ev.reads and not ev.derived_reads
        assert _server_words(ev)[0][:4] == ["--a", "dsr1", "--b", exp]
    assert (memo.hits, memo.misses) == (0, 2)


def test_a_removal_whose_pattern_reads_a_variable_is_a_read() -> None:
    memo = Memo()
    text = 'python3 -m sglang.launch_server --a "${EXP_NAME%%$SEP*}"\n'
    for exp in ("dsr1_a", "dsr1_b"):
        e = {"EXP_NAME": (exp, ("wf.yml", 1)), "SEP": ("_", ("wf.yml", 1))}
        ev = memo.evaluate("p", e, lambda e=e: evaluate(text, "p.sh", e, _options()))  # type: ignore[misc]
        assert {"EXP_NAME", "SEP"} <= ev.reads
    assert memo.misses == 2


def test_a_checkpoint_after_a_removal_is_resumed_only_by_what_leaves_the_same() -> None:
    store = Checkpoints()
    text = ('P="${EXP_NAME%%_*}"\nexport A=1\n(( X = TP * 2 ))\n'
            'python3 -m sglang.launch_server --p "$P" --x "$X" --c "$CONC"\n')
    got = []
    for exp, conc in (("dsr1_a", "1"), ("dsr1_b", "2"), ("gptoss_c", "3")):
        env = {"TP": ("4", ("", 0)), "CONC": (conc, ("", 0)), "EXP_NAME": (exp, ("", 0))}
        ev = evaluate(text, "x.sh", env, _options(checkpoints=store, checkpoint_key="k"))
        assert _server_words(ev) == _server_words(evaluate(text, "x.sh", env, _options()))
        got.append(_server_words(ev)[0][:6])
    assert got == [["--p", "dsr1", "--x", "8", "--c", "1"], ["--p", "dsr1", "--x", "8", "--c", "2"],
                   ["--p", "gptoss", "--x", "8", "--c", "3"]]
    assert store.resumed == 1  # dsr1_b resumed after the removal; gptoss_c could not


def test_a_value_read_at_another_place_is_not_the_same_value() -> None:
    """Two runners set MODEL alike on the same line of each: a server word's origin is the point's own."""
    memo = Memo()
    text = 'python3 -m sglang.launch_server --model "$MODEL" --tp "$TP"\n'
    origins = []
    for runner in ("runners/launch_a.sh", "runners/launch_b.sh"):
        env = {**_env(), "MODEL": ("m", (runner, 399))}
        ev = memo.evaluate("t", env, lambda env=env: evaluate(text, "t.sh", env, _options()))  # type: ignore[misc]
        (start,) = [r.server for r in ev.results if r.server]
        origins.append(start.argv_locs[start.argv.index("m")])
    assert origins == [("runners/launch_a.sh", 399), ("runners/launch_b.sh", 399)]
    assert memo.misses == 2


def test_a_point_resumes_only_where_what_was_read_so_far_was_set_at_the_same_places() -> None:
    """A value read before a checkpoint is kept with its origin (an array element `"$MODEL"` is MODEL's):
    another runner's point that set MODEL alike on its own line 399 does not resume there."""
    store = Checkpoints()
    text = 'ARGS=(--model "$MODEL")\nY=$((TP * 2))\npython3 -m sglang.launch_server "${ARGS[@]}" --tp $Y\n'
    origins = []
    for runner, tp in (("runners/launch_a.sh", "4"), ("runners/launch_b.sh", "8")):
        env = {"MODEL": ("m", (runner, 399)), "TP": (tp, ("wf.yml", 1))}
        ev = evaluate(text, "x.sh", env, _options(checkpoints=store, checkpoint_key="k"))
        (start,) = [r.server for r in ev.results if r.server]
        origins.append(start.argv_locs[start.argv.index("m")])
    assert origins == [("runners/launch_a.sh", 399), ("runners/launch_b.sh", 399)]


def test_what_all_checkpoints_hold_is_bounded_and_the_oldest_goes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_WEIGHT (bindings and names the points of every script hold), the point resumed or made
    longest ago is forgotten, whatever its script; the evaluation that would have resumed from it
    starts from the top, with the same outcome."""
    store = Checkpoints()
    text = 'export A=1\n(( X = TP * 2 ))\npython3 -m sglang.launch_server --x "$X" --c "$CONC"\n'

    def run(key: str, conc: str) -> list[str]:
        env = {"TP": ("4", ("", 0)), "CONC": (conc, ("", 0))}
        ev = evaluate(text, f"{key}.sh", env, _options(checkpoints=store, checkpoint_key=key))
        return [shown(v) for r in ev.results if r.server for v in r.server.argv]

    run("a", "1")
    one_script = store.weight  # what the points of one script hold
    assert one_script > 0
    monkeypatch.setattr(memo_module, "MAX_WEIGHT", 2 * one_script)
    run("b", "1")
    assert store.weight == 2 * one_script
    run("c", "1")  # over the bound: `a`'s points, made first, are forgotten
    assert store.weight <= 2 * one_script
    assert run("a", "2") == ["--x", "8", "--c", "2"] and store.resumed == 0  # from the top
    assert run("c", "2") == ["--x", "8", "--c", "2"] and store.resumed == 1  # kept: resumed


def test_a_variable_the_script_set_itself_is_not_a_read_of_the_environment() -> None:
    """What a script assigned before reading it tells starting environments nothing apart (what it was
    set from was read where it was set): it is neither a read nor an emptiness read, and environments
    that give it other values share one evaluation, each with the outcome of its own. Read before the
    script sets it, it is a read."""
    text = 'X="$((TP * 2))"\nif [ -n "$X" ]; then Y=1; fi\npython3 -m sglang.launch_server --x "$X" --y "$Y"\n'
    ev = evaluate(text, "s.sh", {"TP": ("4", ("", 0)), "X": ("env", ("", 0))}, _options())
    assert "TP" in ev.reads and not {"X", "Y"} & (ev.reads | ev.weak_reads)
    memo = Memo()
    outcomes = []
    for x in ("env", "", "other"):
        env = {"TP": ("4", ("", 0)), "X": (x, ("wf.yml", 3))}
        got = memo.evaluate("s.sh", env, lambda env=env: evaluate(text, "s.sh", env, _options()))  # type: ignore[misc]
        assert same_outcomes(got, evaluate(text, "s.sh", env, _options()))
        outcomes.append([shown(v) for r in got.results if r.server for v in r.server.argv])
    assert memo.misses == 1 and outcomes == [["--x", "8", "--y", "1"]] * 3
    before = evaluate('[ -n "$X" ] && Z=1\nX=1\n', "t.sh", {"X": ("env", ("", 0))}, _options())
    assert "X" in before.weak_reads


def test_checkpoints_count_each_tree_they_hold_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The trees the remembered points hold weigh their texts' length, once however many points of
    the script hold one; past MAX_TREE_CHARS the points made longest ago go, and with the last point
    that holds a tree its length."""
    text = 'export A=1\n(( X = TP * 2 ))\n(( Y = CONC + 1 ))\npython3 -m sglang.launch_server --x "$X" --y "$Y"\n'
    padded = text + "#" * 10_000 + "\n"

    def run(store: Checkpoints, key: str, script: str) -> None:
        for tp in ("4", "8"):
            env = {"TP": (tp, ("", 0)), "CONC": ("1", ("", 0))}
            evaluate(script, f"{key}.sh", env, _options(checkpoints=store, checkpoint_key=key))

    store = Checkpoints()
    run(store, "a", padded)
    assert len(store._recent) > 1 and store.tree_chars == len(padded)
    monkeypatch.setattr(memo_module, "MAX_TREE_CHARS", len(padded) + len(text) - 1)
    run(store, "b", text)  # over the bound: every point of `a` goes, and its tree with the last one
    assert store.tree_chars == len(text)
    assert store.find("a", {"TP": ("4", ("", 0)), "CONC": ("1", ("", 0))}) is None
