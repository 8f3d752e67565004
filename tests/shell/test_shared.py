"""Evaluations shared between the trees of a bundle and checkpoints kept only where they are used
(verifier.shell.memo.Shared / Checkpoints, verifier.launch.harness.shared_evaluate): reuse never
changes a launch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.shell.test_harness_bundles import FOLDER, KEY, _harness_bundle, _script
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.launch.commands import shell_commands
from verifier.launch.harness import shell_memo, shell_shared
from verifier.launch.job import KeyJob
from verifier.shell import Options, evaluate
from verifier.shell.memo import Checkpoints, Memo
from verifier.shell.values import shown

NAME = "minimaxm31flash_fp4_b300.sh"


def _facts(ls: Any) -> list[tuple[Any, ...]]:
    return sorted((la.point.exp_name, la.world, la.argv, tuple(sorted(la.env.items())), la.files,
                   tuple(sorted((k, tuple(v)) for k, v in la.arg_origins.items())),
                   tuple(sorted((k, tuple(v)) for k, v in la.env_origins.items())), la.model_path)
                  for la in ls.launches) + sorted(str(e) for e in ls.errors)


def _both_sides(bundle: Path) -> tuple[Any, Any, int]:
    ctx = CheckContext(read_bundle(bundle), load_policies())
    head = launches(ctx, "head", [KEY])
    base = launches(ctx, "base", [KEY])
    job = KeyJob.__new__(KeyJob)
    job.ctx = ctx  # type: ignore[misc]
    return head, base, shell_shared(job).hits


def _alone(bundle: Path, side: str) -> Any:
    return launches(CheckContext(read_bundle(bundle), load_policies()), side, [KEY])


def _with_base_script(tmp_path: Path, base_lib_extra: str = "") -> Path:
    bundle = _harness_bundle(tmp_path, _script())
    base = bundle / "tree/base"
    (base / FOLDER).mkdir(parents=True, exist_ok=True)
    (base / FOLDER / NAME).write_text(_script(), encoding="utf-8")
    if base_lib_extra:
        lib = base / "benchmarks/benchmark_lib.sh"
        lib.write_text(lib.read_text(encoding="utf-8") + base_lib_extra, encoding="utf-8")
    return bundle


def test_the_other_tree_reuses_an_evaluation_and_gets_the_same_launches(tmp_path: Path) -> None:
    bundle = _with_base_script(tmp_path)
    head, base, hits = _both_sides(bundle)
    assert hits > 0
    assert head.launches and _facts(base) == _facts(_alone(bundle, "base"))
    assert _facts(head) == _facts(_alone(bundle, "head"))


def test_a_library_that_differs_between_the_trees_is_not_reused(tmp_path: Path) -> None:
    bundle = _with_base_script(tmp_path, 'export SGLANG_FROM_BASE_LIB=1\n')
    head, base, _hits = _both_sides(bundle)
    assert _facts(base) == _facts(_alone(bundle, "base"))
    assert base.launches and all(la.env.get("SGLANG_FROM_BASE_LIB") == "1" for la in base.launches)
    assert all("SGLANG_FROM_BASE_LIB" not in la.env for la in head.launches)


def test_a_file_test_answered_differently_is_not_reused(tmp_path: Path) -> None:
    probe = ('if [ -f benchmarks/only_in_base.txt ]; then export SGLANG_PROBE=base; '
             'else export SGLANG_PROBE=head; fi\n')
    bundle = _harness_bundle(tmp_path, _script(probe))
    base = bundle / "tree/base"
    (base / FOLDER).mkdir(parents=True, exist_ok=True)
    (base / FOLDER / NAME).write_text(_script(probe), encoding="utf-8")
    (base / "benchmarks/only_in_base.txt").write_text("x\n", encoding="utf-8")
    head, base_ls, _hits = _both_sides(bundle)
    assert _facts(base_ls) == _facts(_alone(bundle, "base"))
    assert {la.env.get("SGLANG_PROBE") for la in base_ls.launches} == {"base"}  # the file is there
    assert {la.env.get("SGLANG_PROBE") for la in head.launches} == {"base", "head"}  # not known: both ways


SCRIPTS = [
    # CONC decides a branch, feeds arithmetic and is copied into the argv
    ('source_like=1\nexport A=1\nif [ "$CONC" -ge 64 ]; then B=(--big); else B=(--small); fi\n'
     'M=$((2 * CONC))\ncase "$TP" in 8) T=eight;; *) T=other;; esac\n'
     'python3 -m sglang.launch_server --tp "$TP" --m "$M" --c "$CONC" --t "$T" "${B[@]}"\n'),
    # the first read of CONC comes late, after an undecidable branch
    ('X=1\nif [ -f /nonexistent/flag ]; then Y=a; else Y=b; fi\nexport Z="$Y"\n'
     'for i in 1 2 3; do X=$((X + i)); done\n'
     'python3 -m sglang.launch_server --x "$X" --y "$Y" --max-running-requests "$CONC" --tp "$TP"\n'),
    # CONC read only for emptiness, then by value in a later statement
    ('[[ -z "$CONC" ]] && exit 1\nW=w\nexport W\nV="${CONC}x"\n'
     'python3 -m sglang.launch_server --v "$V" --w "$W"\n'),
]


def _argvs(ev: Any) -> list[tuple[str, ...]]:
    return sorted(tuple(shown(v) for v in r.server.argv) for r in ev.results if r.server)


def test_evaluations_resumed_from_kept_checkpoints_equal_fresh_ones() -> None:
    for text in SCRIPTS:
        store = Checkpoints()
        for conc in ("1", "64", "8", "128", "", "64", "2"):
            for tp in ("8", "4"):
                env = {"TP": (tp, ("wf", 1)), "CONC": (conc, ("wf", 2))}
                fresh = evaluate(text, "x.sh", env, Options(commands=shell_commands()))
                resumed = evaluate(text, "x.sh", env,
                                   Options(commands=shell_commands(), checkpoints=store, checkpoint_key="k"))
                assert _argvs(resumed) == _argvs(fresh), (text, conc, tp)
                assert [r.assumptions for r in resumed.results] == [r.assumptions for r in fresh.results]
                assert (resumed.reads, resumed.weak_reads) == (fresh.reads, fresh.weak_reads)
        assert store.resumed > 0


def _verified(bundle: Path) -> tuple[Any, Any, list[Any]]:
    ctx = CheckContext(read_bundle(bundle), load_policies())
    head, base = launches(ctx, "head", [KEY]), launches(ctx, "base", [KEY])
    mismatches = []
    for side in ("head", "base"):
        job = KeyJob.__new__(KeyJob)
        job.ctx, job.side = ctx, side  # type: ignore[misc]
        mismatches += shell_memo(job).mismatches
    return head, base, mismatches


def test_with_verify_every_evaluation_handed_out_equals_one_made_from_the_start(tmp_path: Path,
                                                                                monkeypatch: Any) -> None:
    """`Memo.verify`: memo hits, the other tree's evaluations and resumed ones are each compared with
    the point's own evaluation; a reuse that would differ is caught and the point gets its own."""
    bundle = _with_base_script(tmp_path)
    plain = _both_sides(bundle)[:2]
    monkeypatch.setattr(Memo, "verify", True)
    head, base, mismatches = _verified(bundle)
    assert mismatches == [] and (_facts(head), _facts(base)) == (_facts(plain[0]), _facts(plain[1]))
    # a memo that tells no two environments apart hands out wrong evaluations: each is caught
    monkeypatch.setattr(Memo, "_valuation", staticmethod(lambda shape, env: ()))
    head, base, mismatches = _verified(bundle)
    assert mismatches and (_facts(head), _facts(base)) == (_facts(plain[0]), _facts(plain[1]))
