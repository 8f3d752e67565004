"""Reusing evaluations across points (verifier.shell.memo): read sets, pass-through, prefixes."""

from __future__ import annotations

from verifier.launch.commands import shell_commands
from verifier.shell import Options, evaluate
from verifier.shell.memo import Checkpoints, Memo
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
    text = 'source_like=1\nexport A=1\nX=$((TP * 2))\npython3 -m sglang.launch_server --x "$X" --c "$CONC"\n'
    results = []
    for conc in ("1", "2"):
        env = {"TP": ("4", ("", 0)), "CONC": (conc, ("", 0))}
        options = _options(checkpoints=store, checkpoint_key="k")
        ev = evaluate(text, "x.sh", env, options)
        results.append([shown(v) for r in ev.results if r.server for v in r.server.argv])
    assert results == [["--x", "8", "--c", "1"], ["--x", "8", "--c", "2"]]
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
    assert memo.misses == 2  # the options file the server reads depends on CONC
    memo = Memo()
    for conc in ("8", "16"):
        env = {**_env(CONC=conc), "GITHUB_ENV": ("/tmp/env", ("", 0))}
        plain = text.replace("--config cfg.yml", "--port 1")
        memo.evaluate("t", env, lambda env=env, plain=plain: evaluate(plain, "t.sh", env, _options()))  # type: ignore[misc]
    assert (memo.misses, memo.hits) == (1, 1)  # nothing the server uses reads CONC
