"""Launch readings shared between a bundle's two trees (verifier/launch/treeshare.py).

A reading made on one tree is reused on the other only when that tree answers every question the
reading asked of its tree the same way; the result must always be what the other tree computes on
its own (compared with a context that shares nothing).
"""

from __future__ import annotations

from tests.launch.multinode_kit import AMD_KEY, SGL_KEY, TRT_KEY, amd_tree, make_bundle, srt_tree
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.launch.treeshare import TreeShare

SERVER = "benchmarks/multi_node/amd_utils/server.sh"
JOB = "benchmarks/multi_node/amd_utils/job.slurm"


def _dump(ls) -> str:  # type: ignore[no-untyped-def]
    return repr((ls.launches, ls.errors, sorted(ls.needs, key=repr)))


def _both(head: dict[str, bytes], base: dict[str, bytes], keys: list[str]) -> tuple[str, str, str, TreeShare]:
    """(head, base after head in one context, base alone in a fresh context, the share)."""
    ctx = CheckContext(make_bundle(head, base), load_policies())
    got_head = _dump(launches(ctx, "head", keys))
    got_base = _dump(launches(ctx, "base", keys))
    alone = _dump(launches(CheckContext(make_bundle(head, base), load_policies()), "base", keys))
    return got_head, got_base, alone, ctx.memo("launch.treeshare", TreeShare)


def test_a_chain_read_on_head_is_reused_on_an_identical_base() -> None:
    head, base, alone, share = _both(amd_tree(), amd_tree(), [AMD_KEY])
    assert share.hits >= 1  # the follow of the chain (and its runner probe) came from the head reading
    assert base == alone
    assert base == head.replace("'head'", "'base'")


def test_a_chain_whose_server_script_differs_on_base_is_read_again() -> None:
    changed = amd_tree()
    changed[SERVER] = changed[SERVER].replace(b'DECODE_FLAGS+=" --enable-expert-parallel"',
                                              b'DECODE_FLAGS+=" --enable-expert-parallel --max-num-seqs 7"')
    head, base, alone, share = _both(amd_tree(), changed, [AMD_KEY])
    assert share.hits == 0  # the server script's content differs: nothing of the head reading holds
    assert base == alone and "max-num-seqs" in base and "max-num-seqs" not in head


def test_a_file_missing_on_base_is_not_reused_and_is_a_base_need() -> None:
    missing = amd_tree()
    del missing[JOB]
    head, base, alone, _share = _both(amd_tree(), missing, [AMD_KEY])
    assert base == alone
    assert "which is not in the tree" in base and JOB in base and "'base'" in base


def test_runner_probes_are_reused_across_trees_only_when_they_hold() -> None:
    head, base, alone, share = _both(srt_tree(), srt_tree(), [TRT_KEY, SGL_KEY])
    assert share.hits >= 1 and base == alone
    runner = "runners/launch_b200-dgxc-slurm.sh"
    changed = srt_tree()
    changed[runner] = changed[runner].replace(b"git checkout sa-submission-q2-2026", b"git checkout v9.9.9")
    head, base, alone, share = _both(srt_tree(), changed, [TRT_KEY, SGL_KEY])
    assert share.hits == 0 and base == alone


def _walker(files: dict[str, bytes], ctx: CheckContext | None = None):  # type: ignore[no-untyped-def]
    from verifier.configs import master_entries
    from verifier.launch.follow import _Walker
    from verifier.launch.job import KeyJob

    ctx = ctx or CheckContext(make_bundle(files), load_policies())
    return _Walker(KeyJob(ctx, "head", master_entries(ctx, "head")[AMD_KEY])), ctx


def test_a_chain_script_read_with_equal_inputs_is_reused_and_with_another_value_is_not() -> None:
    from verifier.shell.text import text_of

    script = 'source /workspace/benchmarks/missing.sh\nvllm serve /models/m --max-num-seqs "$CONC"\n'
    walker, ctx = _walker(amd_tree())
    env = {"CONC": text_of("8", "x.sh", 3), "UNREAD": text_of("a", "x.sh", 4)}
    first = walker.read("s.sh", script, env, [], "/ws", "s.sh", {})
    assert first.events[-1].words()[-1] == "8"
    assert walker.read("s.sh", script, dict(env), [], "/ws", "s.sh", {}) is first  # equal inputs: reused
    other = walker.read("s.sh", script, {**env, "CONC": text_of("16", "x.sh", 3)}, [], "/ws", "s.sh", {})
    assert other is not first and other.events[-1].words()[-1] == "16"  # a value it reads differs
    moved = walker.read("s.sh", script, {**env, "CONC": text_of("8", "y.sh", 3)}, [], "/ws", "s.sh", {})
    assert moved is not first  # the same characters written elsewhere: another origin, read again
    # a reuse by another key's job asks the tree again: the missing library is that job's need too
    again, _ctx = _walker(amd_tree(), ctx)
    assert again.read("s.sh", script, dict(env), [], "/ws", "s.sh", {}) is first
    assert any(n.path.endswith("missing.sh") for n in again.job.result.needs)
