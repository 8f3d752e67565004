"""The evaluator's shortcuts give what the long way gives (issue 23: per-launch CPU).

Each shortcut (a printf format parsed once, a checkpoint found by index, a file-reference test
against precomputed words, a child-script match that looks past the first word only behind a
wrapper) is checked against the plain rule it replaces, on the cases where they could part.
"""

from __future__ import annotations

import posixpath

import pytest

from verifier.launch.commands import shell_commands
from verifier.shell import Options, evaluate
from verifier.shell.builtins import _referenced, format_printf
from verifier.shell.launchers import match_child
from verifier.shell.memo import Checkpoints
from verifier.shell.values import Opaque, Unknown, Val, shown
from verifier.shell.world import World

LOC = ("x.sh", 3)


def _options(**kw: object) -> Options:
    return Options(commands=shell_commands(), **kw)  # type: ignore[arg-type]


def test_printf_formats_reused_across_calls_print_the_same() -> None:
    for _ in range(2):  # the second round reads the parsed format back
        assert format_printf("%q ", ["a b", "c", ""], LOC) == "a\\ b c '' "  # bash quotes with backslashes
        assert format_printf("%s=%d\\n", ["x", "7", "y"], LOC) == "x=7\ny=0\n"
        assert format_printf("no conversions\\t", ["ignored", "too"], LOC) == "no conversions\t"
        assert format_printf("100%% %s", [], LOC) == "100% "
        assert format_printf("%5s|%-3s|%05d", ["ab", "c", "42"], LOC) == "   ab|c  |00042"
    # a run-time argument keeps the whole text opaque, naming where it was written
    got = format_printf("%s-%s", ["a", Opaque("$(hostname)", ("y.sh", 1))], LOC)
    assert isinstance(got, Opaque) and got.text == "a-$(hostname)" and got.loc == LOC
    lost = Unknown("assigned inside the loop on line 2", ("x.sh", 2))
    assert format_printf("%s", ["a", lost], LOC) == lost


def test_a_quoted_array_prints_each_element_quoted() -> None:
    text = ('CMD=(serve --model-path "$M" --x "a b")\nLINE=$(printf \'%q \' "${CMD[@]}")\n'
            'python3 -m sglang.launch_server --note "$LINE" "${CMD[@]}"\n')
    ev = evaluate(text, "x.sh", {"M": "/m"}, _options())
    (server,) = [r.server for r in ev.results if r.server is not None]
    words = ["serve", "--model-path", "/m", "--x", "a b"]
    assert [shown(v) for v in server.argv] == ["--note", "serve --model-path /m --x a\\ b ", *words]
    assert server.argv_locs[0] == ("x.sh", 3) and server.argv_locs[-1] == ("x.sh", 1)


def _referenced_plainly(path: str, values: list[Val]) -> bool:
    norm = posixpath.normpath(path)
    return any(isinstance(v, str) and (v in (path, norm) or v.endswith("=" + path) or posixpath.normpath(v) == norm)
               for v in values)


def test_file_references_match_the_plain_rule() -> None:
    words: list[Val] = ["trtllm-serve", "--config=./cfg.yml", "--extra", "/tmp/x/../y.yaml", "",
                        Opaque("$(mktemp)", LOC), "dir/", "a=b/c.yml"]
    for path in ("cfg.yml", "./cfg.yml", "/tmp/y.yaml", "/tmp/x/../y.yaml", ".", "", "dir", "b/c.yml", "c.yml",
                 "other.yml", "/tmp/x"):
        assert _referenced(path, words) == _referenced_plainly(path, words), path


def test_child_scripts_are_found_behind_wrappers_only() -> None:
    commands = shell_commands()
    wrapper = sorted(commands.child_wrappers)[0]
    assert match_child(["bash", "benchmarks/x.sh"], commands) is not None
    assert match_child(["echo", "bash", "benchmarks/x.sh"], commands) is None  # not a wrapper: an argument
    assert match_child([Opaque("$RUN", LOC), "bash", "x.sh"], commands) is None
    behind = match_child([wrapper, "bash", "benchmarks/x.sh"], commands)
    assert behind is not None and behind.script == 2
    assert match_child([], commands) is None


def _state(reads: set[str], read_all: bool = False) -> dict[str, object]:
    return {"reads": frozenset(reads), "weak": frozenset(), "read_all": read_all, "sinks": {}, "derived": {},
            "scripts": ()}


def _env(**values: str) -> dict[str, tuple[Val, tuple[str, int]]]:
    return {k: (v, ("wf.yml", 1)) for k, v in values.items()}


def _world(tag: str) -> World:
    w = World()
    w.vars["TAG"] = (tag, LOC)
    return w


def test_checkpoints_resume_from_the_deepest_then_the_earliest_remembered() -> None:
    store = Checkpoints()
    env = _env(TP="4", CONC="8")
    store.add("k", 2, _state({"TP"}), [_world("tp@2")], env)
    store.add("k", 5, _state({"TP", "CONC"}), [_world("conc@5")], env)
    store.add("k", 5, _state({"TP"}), [_world("tp@5-first")], env)
    store.add("k", 5, _state({"TP"}, read_all=True), [_world("unused")], _env(TP="2"))
    store.add("k", 5, _state({"TP"}), [_world("tp@5-again")], env)  # the same point again: kept once

    def resumed(**values: str) -> tuple[int, str] | None:
        found = store.find("k", _env(**values))
        return None if found is None else (found[0], str(shown(found[2][0].vars["TAG"][0])))

    assert resumed(TP="4", CONC="8") == (5, "conc@5")  # both deepest points fit: the earlier remembered
    assert resumed(TP="4", CONC="16") == (5, "tp@5-first")
    assert resumed(TP="2", CONC="8") is None  # only a point that read the whole environment fits
    assert store.find("other", env) is None
    # rebound: a variable of the first environment the script never touched is the new one's
    found = store.find("k", _env(TP="4", CONC="8", EXTRA="x"))
    assert found is not None and found[2][0].vars["EXTRA"][0] == "x"


def test_checkpoints_forget_the_deepest_and_keep_the_shared_prefix() -> None:
    """Four runner clusters stage the model at four paths; every evaluation then leaves points per
    CONC behind. The shallow point of each path stays (the deep ones are forgotten first), and a
    point resumed from is kept longest among equally deep ones."""
    from verifier.shell import memo

    store = Checkpoints()
    paths = [f"/m{k}" for k in range(4)]
    for conc in range(memo.MAX_ENTRIES):
        for path in paths:
            env = _env(MODEL=path, CONC=str(conc))
            found = store.find("k", env)
            assert found is None or found[0] == 3
            store.add("k", 3, _state({"MODEL"}), [_world(path)], env)
            for index in (7, 9, 11):
                store.add("k", index, _state({"MODEL", "CONC"}), [_world(f"{path}@{conc}")], env)
    for path in paths:
        found = store.find("k", _env(MODEL=path, CONC="999"))
        assert found is not None and found[0] == 3 and found[2][0].vars["TAG"][0] == path
    # the latest evaluation's own deep points are still there for an environment that agrees on CONC too
    last = memo.MAX_ENTRIES - 1
    found = store.find("k", _env(MODEL=paths[-1], CONC=str(last)))
    assert found is not None and found[0] == 11


def test_checkpoints_forget_the_oldest_first() -> None:
    from verifier.shell import memo

    store = Checkpoints()
    for n in range(memo.MAX_ENTRIES + 1):
        store.add("k", 3, _state({"CONC"}), [_world(str(n))], _env(CONC=str(n)))
    assert store.find("k", _env(CONC="0")) is None  # forgotten
    found = store.find("k", _env(CONC="1"))
    assert found is not None and found[2][0].vars["TAG"][0] == "1"


def _plain_rebind(env_items, old, new):  # type: ignore[no-untyped-def]
    """The rule `memo._Rebinder` shortcuts: every entry checked against the first environment."""
    out = []
    for name, value, loc in env_items:
        before = old.get(name)
        if before is not None and before[0] == value and before[1] == loc:
            now = new.get(name)
            if now is not None:
                out.append((name, now[0], now[1]))
            continue
        out.append((name, value, loc))
    have = {n for n, _, _ in env_items}
    out.extend((name, b[0], b[1]) for name, b in new.items() if name not in old and name not in have)
    return tuple(out)


def test_rebinding_a_started_environment_matches_the_plain_rule() -> None:
    import itertools

    from verifier.shell.memo import _Rebinder

    wf, sc = ("wf.yml", 1), ("x.sh", 4)
    opaque = Opaque("$(date)", sc)
    values: list[tuple[Val, tuple[str, int]] | None] = [None, ("8", wf), ("16", wf), ("8", sc), (opaque, sc)]
    names = ("TP", "CONC")
    for old_b, new_b, items_b in itertools.product(itertools.product(values, repeat=2), repeat=3):
        old = {n: b for n, b in zip(names, old_b, strict=True) if b is not None}
        new = {n: b for n, b in zip(names, new_b, strict=True) if b is not None}
        env = tuple((n, b[0], b[1]) for n, b in zip(names, items_b, strict=True) if b is not None)
        assert _Rebinder(old, new).env(env) == _plain_rebind(env, old, new)


# A health check as the agentic scripts write it: a counted loop whose passes end a world (ready: return)
# or two (the helper died: exit) and go on otherwise, 120 times.
WAIT_LOOP = """wait_ready() {
    local attempts="${READY_ATTEMPTS:-120}"
    for ((i = 1; i <= attempts; i++)); do
        if curl --silent --fail "http://127.0.0.1:8000/health"; then
            return 0
        fi
        if [[ -n "$HELPER_PID" ]] && ! kill -0 "$HELPER_PID" 2>/dev/null; then
            echo "helper died" >&2
            exit 1
        fi
        sleep 1
    done
    echo "timed out" >&2
    exit 1
}
HELPER_PID=$!
wait_ready
%s
python3 -m sglang.launch_server --model-path m --port 8000 %s
"""


SHADOWED = "sleep() { echo \"slept $i\"; }\n" + WAIT_LOOP  # `sleep` is the script's function, which reads the counter


def _run_counting(text: str, env: dict[str, str], blind: bool) -> tuple[list[tuple[object, ...]], int, bool]:
    """(the results, the commands counted, whether passes were skipped), with the shortcut or without."""
    from verifier.shell import _parsed, _result, evaluator

    real, find = evaluator.Evaluator._settled_rest, evaluator._blind_loop
    skipped: list[bool] = []

    def spy(self, *args):  # type: ignore[no-untyped-def]
        got = real(self, *args)
        skipped.append(got is not None)
        return got

    evaluator.Evaluator._settled_rest = spy  # type: ignore[method-assign]
    if not blind:
        evaluator._blind_loop = lambda node: None  # type: ignore[assignment]
    try:
        ev = evaluator.Evaluator(_options())
        worlds = ev.run(_parsed(text, "x.sh"), {k: (v, ("", 0)) for k, v in env.items()}, "x.sh")
    finally:
        evaluator.Evaluator._settled_rest = real  # type: ignore[method-assign]
        evaluator._blind_loop = find
    results = [_result(w, "server", ev) for w in worlds]
    return [(r.assumptions, r.exit_loc, r.server and (r.server.argv, r.server.argv_locs, r.server.env))
            for r in results], ev.steps, any(skipped)


def test_a_settled_counted_loop_ends_as_running_every_pass_does() -> None:
    """`for ((...))` passes that repeat but for the counter are not run again (`Evaluator._settled_rest`):
    the worlds each further pass would end are the settled pass's with that pass's counter, and the
    commands those passes would run are counted. Compared with the loop run pass by pass: the counter
    dead after the loop or live (every pass's world stays its own, up to the server's arguments), a
    loop that runs out of passes, a body that reads the counter or runs a command not known to be
    blind, a function of the script in a command's place. (Live, the counter of the worlds that returned
    is joined past `max_worlds` into one unknown value either way.)"""
    cases = [
        (WAIT_LOOP % ("", ""), {}, True),
        (WAIT_LOOP % ('echo "took $i"', '--tries "$i"'), {}, True),
        (WAIT_LOOP % ("", '--tries "$i"'), {"READY_ATTEMPTS": "5"}, True),
        (WAIT_LOOP % ("", '--tries "$i"'), {"READY_ATTEMPTS": "300"}, False),  # past MAX_ITERATIONS passes
        (WAIT_LOOP.replace("sleep 1", 'sleep "$i"') % ("", ""), {}, False),
        (WAIT_LOOP.replace("sleep 1", "nap 1") % ("", ""), {}, False),
        (SHADOWED % ("", '--tries "$i"'), {}, False),
    ]
    for text, env, shortcut in cases:
        fast, fast_steps, used = _run_counting(text, env, blind=True)
        slow, slow_steps, _ = _run_counting(text, env, blind=False)
        assert (fast, fast_steps) == (slow, slow_steps), text
        assert used is shortcut, text


def _normalized_by_scan(worlds: list[World]) -> list[World]:
    """`Evaluator.normalize`'s merge as the plain rule: each world into the first kept one it is the same as."""
    kept: list[World] = []
    for w in worlds:
        for have in kept:
            if have.bucket() == w.bucket() and have.same(w):
                shared = set(w.assume)
                have.assume = tuple(a for a in have.assume if a in shared)
                if have.status != w.status:
                    have.status = None
                break
        else:
            kept.append(w)
    return kept


def test_merging_many_worlds_by_their_differing_bindings_merges_as_the_scan_does() -> None:
    """`normalize` indexes a bucket of many worlds by the variables its first two bind differently
    (`_Bucket`): the worlds kept, their order, assumptions and statuses are the plain scan's."""
    from verifier.shell.evaluator import Evaluator
    from verifier.shell.world import Assumption

    def worlds() -> list[World]:
        base = World()
        base.vars = {f"V{k}": (str(k), ("x.sh", k)) for k in range(300)}  # a large table: shared bases
        out: list[World] = []
        for k in range(120):
            w = base.copy()
            w.vars["i"] = (str(k % 37), ("x.sh", 3))
            if k % 5 == 0:
                w.vars["V7"] = ("other", ("x.sh", 9))  # differs in a name the first two do not tell apart
            if k % 11 == 0:
                w.files = {"cfg": None}  # type: ignore[dict-item]  # another bucket
            w.assume = (Assumption(("x.sh", 4), "curl", "true" if k % 2 else "false"),)
            w.status = bool(k % 3)
            out.append(w)
        return out

    got = Evaluator(_options(max_worlds=10_000)).normalize(worlds(), LOC)
    want = _normalized_by_scan(worlds())
    assert len(got) == len(want) < 120
    for a, b in zip(got, want, strict=True):
        assert a.same(b) and a.assume == b.assume and a.status == b.status


# ---------------------------------------------------------------- liveness of what functions mention

_LIB = '''install_deps() {
    if [ -x /opt/uv ]; then DEPS_READY=1; UV=/opt/uv; else DEPS_READY=0; UV=$(command -v uv); fi
}
show_flag() { echo "$FLAG"; }
'''


def _evaluate_both(text: str) -> tuple[object, object]:
    """The evaluation, and the one that forgets no variable (the plain rule)."""
    from verifier.shell import Evaluator
    from verifier.shell.parser import parse

    got = evaluate(text, "x.sh", {"M": "/m"}, _options())
    ev = Evaluator(_options())
    ev.drops = False
    worlds = ev.run(parse(text, "x.sh"), {"M": ("/m", ("", 0))}, "x.sh")
    return got, worlds


def _found_words(worlds: object) -> set[tuple[str, ...]]:
    """The words of every server start the worlds found."""
    return {tuple(shown(v) for v, _ in f.words) for w in worlds for f in w.found}  # type: ignore[attr-defined]


def _servers(results: object) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    return sorted({(tuple(shown(v) for v in r.server.argv), tuple(sorted(n for n, _, _ in r.server.env)))
                   for r in results if r.server is not None})  # type: ignore[attr-defined]


def test_what_only_a_function_that_cannot_run_again_mentions_does_not_keep_worlds_apart() -> None:
    # the function that sets DEPS_READY and UV runs once; no later statement names it, so the
    # worlds its undecidable test made are one again before the server starts
    text = _LIB + ('install_deps\nX=1\nY=2\n'
                   'python3 -m sglang.launch_server --model-path "$M" --port 8000\n')
    got, plain = _evaluate_both(text)
    assert len([r for r in got.results if r.server is not None]) == 1  # type: ignore[attr-defined]
    assert len([w for w in plain if w.found]) == 2  # type: ignore[attr-defined]
    assert _servers(got.results) == [(("--model-path", "/m", "--port", "8000"), ("M",))]  # type: ignore[attr-defined]
    assert _found_words(plain) == {("python3", "-m", "sglang.launch_server", "--model-path", "/m", "--port", "8000")}


def _made_again(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions whose call made the evaluation start again (`Evaluator.calling`)."""
    from verifier.shell import Evaluator, KeepEverything

    seen: list[str] = []
    calling = Evaluator.calling

    def counted(self: Evaluator, func: object) -> None:
        try:
            calling(self, func)  # type: ignore[arg-type]
        except KeepEverything:
            seen.append(func.name)  # type: ignore[attr-defined]
            raise

    monkeypatch.setattr(Evaluator, "calling", counted)
    return seen


def test_a_function_still_named_later_keeps_what_it_mentions(monkeypatch: pytest.MonkeyPatch) -> None:
    again = _made_again(monkeypatch)
    text = _LIB + ('if [ -f /maybe ]; then FLAG=--a; else FLAG=--b; fi\nX=1\n'
                   'python3 -m sglang.launch_server --model-path "$M" "$(show_flag)"\n')
    got, plain = _evaluate_both(text)
    flags = sorted(shown(r.server.argv[-1]) for r in got.results if r.server is not None)  # type: ignore[attr-defined]
    assert flags == ["--a", "--b"] == sorted(words[-1] for words in _found_words(plain))
    assert again == []  # FLAG was kept: the function is named later


def test_a_function_run_by_a_name_only_the_run_spells_sees_what_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    again = _made_again(monkeypatch)
    # `show_flag` is named by no later statement, so FLAG is forgotten after the `if`; the run calls
    # it through $cmd: the evaluation is made again keeping everything (`Evaluator.calling`)
    text = _LIB + ('if [ -f /maybe ]; then FLAG=--a; else FLAG=--b; fi\ncmd=show_flag\nX=1\n'
                   'python3 -m sglang.launch_server --model-path "$M" "$($cmd)"\n')
    got, plain = _evaluate_both(text)
    flags = sorted(shown(r.server.argv[-1]) for r in got.results if r.server is not None)  # type: ignore[attr-defined]
    assert flags == ["--a", "--b"]
    assert flags == sorted(words[-1] for words in _found_words(plain))
    assert again == ["show_flag"]
