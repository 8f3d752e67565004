"""What an evaluation resumed from a checkpoint skips, and that skipping never changes an outcome
(verifier.shell.memo.Checkpoints / rebind_world, verifier.shell.evaluator.Evaluator.run_top,
verifier.shell.builtins._sink_kind)."""

from __future__ import annotations

import random
from typing import Any

from verifier.launch.commands import shell_commands
from verifier.shell import Evaluation, Options, evaluate
from verifier.shell.memo import Checkpoints, Memo, _Rebinder, rebind_world
from verifier.shell.values import shown
from verifier.shell.world import Table, World

SERVER = "python3 -m sglang.launch_server"


def _env(**values: str) -> dict[str, tuple[str, tuple[str, int]]]:
    return {name: (value, ("wf", k)) for k, (name, value) in enumerate(values.items())}


def _facts(ev: Evaluation) -> list[tuple[Any, ...]]:
    return [(r.assumptions, r.exit_loc, None if r.server is None else (tuple(shown(v) for v in r.server.argv),
                                                                      r.server.env, r.server.argv_locs))
            for r in ev.results]


def _fresh_and_resumed(text: str, envs: list[dict[str, Any]]) -> Checkpoints:
    store = Checkpoints()
    for env in envs:
        fresh = evaluate(text, "x.sh", env, Options(commands=shell_commands()))
        resumed = evaluate(text, "x.sh", env, Options(commands=shell_commands(), checkpoints=store,
                                                      checkpoint_key="k"))
        assert _facts(resumed) == _facts(fresh), (text, env)
        assert (resumed.reads, resumed.weak_reads) == (fresh.reads, fresh.weak_reads), (text, env)
    return store


PRINTED_FIRST = (
    'export A=1\n'
    'echo "CONC: $CONC, ISL: $ISL"\n'
    'if [ -f /nonexistent/flag ]; then M=a; else M=b; fi\n'
    'printf "%s\\n" "$CONC" "$TP"\n'
    'export M\n'
    f'{SERVER} --tp "$TP" --max-running-requests "c$((CONC))" --m "$M"\n'  # read: text around the number
)


def test_what_only_went_to_standard_output_does_not_tell_points_apart() -> None:
    envs = [_env(TP="8", CONC=c, ISL="1024") for c in ("4", "8", "16", "32", "64", "128")]
    store = _fresh_and_resumed(PRINTED_FIRST, envs)
    # every point after the first resumes before the server start (statement 5, the first that reads
    # CONC for more than printing it), not from the top
    assert store.resumed == len(envs) - 1
    for c in ("256", "512"):
        found = store.find("k", _env(TP="8", CONC=c, ISL="1024"))
        assert found is not None and found[0] == 5
    # a value the server start reads does tell points apart
    assert store.find("k", _env(TP="4", CONC="4", ISL="1024")) is not None


def test_an_expansion_that_decides_more_than_the_output_is_a_read() -> None:
    # `${X:?}` ends the script when X is empty: two environments that differ there must not share
    # an evaluation, even though the value only goes to standard output
    text = f'echo "model: ${{MODEL_PATH:?MODEL_PATH must be set}}"\n{SERVER} --tp 8\n'
    memo = Memo()
    outcomes = []
    for value in ("", "/models/x", ""):
        env = _env(MODEL_PATH=value)

        def compute(env: dict[str, Any] = env) -> Evaluation:
            return evaluate(text, "x.sh", env, Options(commands=shell_commands()))

        ev = memo.evaluate("k", env, compute)
        outcomes.append([r.server is not None for r in ev.results])
    assert outcomes == [[False], [True], [False]]
    for effect, name in (('${N=4}', "N"), ('${A[i++]}', "A"), ('${X:i++}', "X"), ('${!REF}', "REF"),
                         ('${Y?unset}', "Y")):
        ev = evaluate(f'i=0\necho "v {effect}"\n{SERVER} --tp 8\n', "x.sh",
                      _env(N="1", X="abc", REF="N", Y="y"), Options(commands=shell_commands()))
        assert name in ev.reads, effect
    text = ('echo "${OUT:?}"\nprintf $FMT\nprintf "%s\\n" "$CONC"\n'
            f'{SERVER} --c "$CONC"\n')
    _fresh_and_resumed(text, [_env(OUT=o, FMT=f, CONC=c) for o in ("x", "") for f in ("", "%s") for c in ("1", "2")])


def test_resumed_evaluations_equal_fresh_ones_after_printing_and_branching() -> None:
    text = ('source_like=1\necho "start $CONC $TP"\n'
            'if [ "$TP" -ge 8 ]; then P=(--big); else P=(--small); fi\n'
            'if [ -d "$MODEL_PATH" ]; then echo "have $MODEL_PATH"; else hf download "$MODEL"; fi\n'
            'CAPS=""\nfor ((s = 1; s <= CONC; s++)); do CAPS+="$((s * 2)),"; done\n'
            'echo "caps $CAPS"\n'
            f'{SERVER} --tp "$TP" --caps "$CAPS" "${{P[@]}}" --model "$MODEL"\n')
    envs = [_env(TP=tp, CONC=c, MODEL="org/m", MODEL_PATH=mp)
            for mp in ("/m", "") for tp in ("8", "4") for c in ("1", "3", "2", "3")]
    store = _fresh_and_resumed(text, envs)
    assert store.resumed > 0


def _old_rebind(w: World, old: dict[str, Any], new: dict[str, Any]) -> World:
    """rebind_world as it was written before it looked only at the names that differ."""
    x = w.copy()
    for name, binding in old.items():
        if x.vars.get(name) == binding:
            if name in new:
                x.vars[name] = new[name]
            else:
                del x.vars[name]
                x.exported.discard(name)
    for name, binding in new.items():
        if name not in old and name not in x.vars:
            x.vars[name] = binding
            x.exported.add(name)
    return x


def test_rebinding_only_the_names_that_differ_gives_the_same_world() -> None:
    rng = random.Random(7)
    for trial in range(300):
        names = [f"V{k}" for k in range(rng.randint(1, 12))]
        old = {n: (rng.choice("ab"), ("wf", k)) for k, n in enumerate(names) if rng.random() < 0.8}
        new = {n: (rng.choice("ab") if rng.random() < 0.5 else old[n][0] if n in old else "c", ("wf", k))
               for k, n in enumerate(names) if rng.random() < 0.8}
        w = World()
        for n in names:
            r = rng.random()
            if r < 0.4 and n in old:
                w.vars[n] = old[n]  # still the first environment's binding (passed through)
            elif r < 0.7:
                w.vars[n] = (rng.choice("abx"), ("x.sh", trial))  # assigned by the script
            if n in w.vars and rng.random() < 0.7:
                w.exported.add(n)
        if trial % 3 == 0:  # a world whose variables are a shared table (a large script's)
            w.vars = Table(None, dict(w.vars), len(w.vars))  # type: ignore[arg-type]
        want = _old_rebind(w, old, new)
        for got in (rebind_world(w, old, new), rebind_world(w, old, new, _Rebinder(old, new))):
            assert dict(got.vars.items()) == dict(want.vars.items()), trial
            assert got.exported == want.exported, trial
