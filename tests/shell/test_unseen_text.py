"""Liveness and text the evaluator had not seen when it forgot a variable (verifier.shell.evaluator
`drop_dead` / `run_unseen`): a file sourced later, text `eval` runs and `${!PREFIX*}` may read a
variable no statement and no function of the script mentions; the server must still see its value."""

from __future__ import annotations

from tests.shell.helpers import argv, run, servers
from verifier.launch.commands import shell_commands
from verifier.shell import Options, evaluate
from verifier.shell.memo import Checkpoints
from verifier.shell.values import shown

SERVE = "python3 -m sglang.launch_server"
LIB = "benchmarks/lib.sh"
SPLIT = "if [ -f /opt/marker ]; then SEEN=1; fi\n"  # an undecidable condition: two worlds, then dead names go


def _argvs(ev: object) -> list[list[str]]:
    return sorted([shown(v) for v in s.argv] for s in servers(ev))  # type: ignore[arg-type]


def test_a_file_sourced_later_reads_what_the_script_set_before_it() -> None:
    text = f'TPX=8\n{SPLIT}source "$(dirname "$0")/../lib.sh"\n{SERVE} $FLAG\n'
    ev = run(text, files={LIB: 'FLAG="--tp=$TPX"\n'}, path="benchmarks/single_node/x.sh")
    assert _argvs(ev) == [["--tp=8"]]


def test_a_generated_file_sourced_later_reads_what_the_script_set_before_it() -> None:
    text = (f"TPX=8\ncat > /tmp/env.sh <<'EOF'\nFLAG=--tp=$TPX\nEOF\n{SPLIT}source /tmp/env.sh\n"
            f"{SERVE} $FLAG\n")
    assert _argvs(run(text)) == [["--tp=8"]]


def test_eval_of_text_from_the_environment_reads_what_the_script_set() -> None:
    text = f'TPX=8\n{SPLIT}eval "$CODE"\n{SERVE} $FLAG\n'
    assert _argvs(run(text, {"CODE": 'FLAG="--tp=$TPX"'})) == [["--tp=8"]]


def test_names_listed_by_prefix_include_what_was_set_before() -> None:
    text = f'OPT_TP=8\n{SPLIT}for n in ${{!OPT_@}}; do ARGS="$ARGS --$n"; done\n{SERVE} $ARGS\n'
    assert _argvs(run(text)) == [["--OPT_TP"]]


def test_dead_variables_are_still_forgotten_when_no_unseen_text_runs() -> None:
    """Worlds that differ only in a variable nothing later reads still merge into one."""
    text = f"TPX=8\n{SPLIT}{SERVE} --tp $TPX\n"
    ev = run(text)
    assert argv(ev) == ["--tp", "8"]
    assert len(ev.results) == 1 and not ev.results[0].assumptions


def test_unseen_text_that_reads_nothing_forgotten_keeps_the_merge() -> None:
    text = f'TPX=8\n{SPLIT}source "$(dirname "$0")/../lib.sh"\n{SERVE} --tp $TPX $FLAG\n'
    ev = run(text, files={LIB: "FLAG=--x\n"}, path="benchmarks/single_node/x.sh")
    assert argv(ev) == ["--tp", "8", "--x"]
    assert len(ev.results) == 1


def test_evaluations_resumed_from_checkpoints_equal_fresh_ones() -> None:
    """A checkpoint kept after a name was forgotten remembers it: an evaluation resumed from there that
    reaches the sourced file is made again as a fresh one would be, for every value."""
    text = f'TPX=$TP\n{SPLIT}(( C = CONC ))\nsource "$(dirname "$0")/../lib.sh"\n{SERVE} $FLAG --c $C\n'
    files = {LIB: 'FLAG="--tp=$TPX"\n'}
    store = Checkpoints()
    for conc in ("1", "2", "4", "1"):
        for tp in ("4", "8"):
            point = {"TP": tp, "CONC": conc, "PWD": "/workspace"}
            shared = Options(reader=files.get, commands=shell_commands(), checkpoints=store, checkpoint_key=("k",))
            fresh = Options(reader=files.get, commands=shell_commands())
            got = evaluate(text, "benchmarks/single_node/x.sh", point, shared)
            want = evaluate(text, "benchmarks/single_node/x.sh", point, fresh)
            assert [(r.assumptions, r.server) for r in got.results] == [(r.assumptions, r.server) for r in want.results]
            assert _argvs(got) == [[f"--tp={tp}", "--c", conc]]
    assert store.resumed  # the resumed evaluations started from a point after the name was forgotten
