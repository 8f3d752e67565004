"""The live collector records what multi-node launches read: runner scripts of the repository and
recipes the runner fetches from another repository, through the GitHub API (stand-in, never mocks)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from tests.github.conftest import collect
from tests.github.standin import FakeRepo, StandIn
from tests.kit import CASES
from tests.launch.multinode_kit import RECIPE, RUNNERS, SETUP_SCRIPT, TRT_KEY, TRT_RECIPE, srt_tree
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.model import ChangedFile, Tree
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.record.github.record import write_bundle

BEFORE, AFTER, ROOT, TAG = "1" * 40, "2" * 40, "3" * 40, "4" * 40
NEW = TRT_RECIPE.replace(b"tensor_parallel_size: 8", b"tensor_parallel_size: 16")


def _srt_slurm() -> FakeRepo:
    files = {RECIPE: TRT_RECIPE, "configs/b200-fixes.sh": SETUP_SCRIPT}
    return FakeRepo(
        default_branch="main",
        branches={"main": ROOT, "sa-submission-q2-2026": AFTER},
        tags={"v1.0.5": TAG},
        commits={
            ROOT: ("2026-06-01T10:00:00Z", [], {}),
            TAG: ("2026-06-02T10:00:00Z", [ROOT], {}),
            BEFORE: ("2026-10-01T10:00:00Z", [ROOT], files),
            AFTER: ("2026-12-01T10:00:00Z", [BEFORE], {**files, RECIPE: NEW}),  # after the sign-off
        },
    )


def _bundle(tmp_path: Path) -> Path:
    """The pr4524 case with the old-layout multi-node tree of tests/launch/multinode_kit.py."""
    case = read_bundle(CASES / "pr4524")
    head = {**srt_tree(), **{p: d for p, d in case.head.files.items() if not p.startswith("inferencex-e2e/")}}
    base = {"configs/runners.yaml": RUNNERS, "runners/launch_b200-dgxc-slurm.sh": head["runners/launch_b200-dgxc-slurm.sh"],
            "runners/slurm_utils.sh": head["runners/slurm_utils.sh"]}
    files = tuple(ChangedFile(path=p, status="added" if p not in base else "modified")
                  for p in sorted(head) if base.get(p) != head[p])
    bundle = case.model_copy(update={
        "base": Tree(sha=case.base.sha, files=base), "head": Tree(sha=case.head.sha, files=head),
        "pr": case.pr.model_copy(update={"files": files}),
    })
    return write_bundle(bundle, tmp_path / "served")


def test_live_collection_records_runner_scripts_and_fetched_recipes(tmp_path: Path,
                                                                    standin: Callable[..., StandIn]) -> None:
    server = standin(_bundle(tmp_path), upstream_repos={"NVIDIA/srt-slurm": _srt_slurm()})
    live, stats = collect(server)
    # the runner and its library are not among the selection rounds' files: the launch read them
    assert live.head.has("runners/launch_b200-dgxc-slurm.sh") and live.head.has("runners/slurm_utils.sh")
    [source] = [u for u in live.github.upstream_files if u.ref == "sa-submission-q2-2026"]
    assert source.commit == BEFORE  # the branch as of the sign-off, not its later tip
    recipe = next(f for f in source.files if f.path == RECIPE)
    assert recipe.sha256 == hashlib.sha256(TRT_RECIPE).hexdigest()
    assert live.upstream[f"NVIDIA/srt-slurm/{BEFORE}/{RECIPE}"] == TRT_RECIPE
    # requests went to the other repository's own endpoints
    paths = [r.path for r in server.api_requests()]
    assert any(p.endswith("/repos/NVIDIA/srt-slurm/branches/sa-submission-q2-2026") for p in paths)
    assert any("/repos/NVIDIA/srt-slurm/contents/" in p for p in paths)
    # recorded, written, read back: the launches resolve offline exactly as live
    offline = read_bundle(write_bundle(live, tmp_path / "recorded"))
    policies = load_policies()
    a = launches(CheckContext(live, policies), "head", [TRT_KEY])
    b = launches(CheckContext(offline, policies), "head", [TRT_KEY])
    assert not a.fatal_errors and [(x.role, x.argv, x.env) for x in a.launches] == \
        [(x.role, x.argv, x.env) for x in b.launches]
    assert a.launches[1].args["tensor_parallel_size"] == 8
    assert stats.absent == [] or all("srt-slurm" not in x for x in stats.absent)


def test_a_repository_the_api_cannot_read_stays_unrecorded(tmp_path: Path, standin: Callable[..., StandIn]) -> None:
    live, _ = collect(standin(_bundle(tmp_path)))
    assert not live.github.upstream_files
    [error] = launches(CheckContext(live, load_policies()), "head", [TRT_KEY]).fatal_errors
    assert "is fetched from NVIDIA/srt-slurm@sa-submission-q2-2026, not recorded in the bundle" in error.message


def test_the_live_verdict_starts_from_the_launches_the_recording_resolved(tmp_path: Path,
                                                                         standin: Callable[..., StandIn]) -> None:
    """Each launch resolved once on the live path too: the recording pass's launches hold for the
    collected bundle (verifier.core.watch), and the verdict that starts from them is a fresh one."""
    from checks import judge
    from verifier.launch.resolve import KEY_MEMO

    server = standin(_bundle(tmp_path), upstream_repos={"NVIDIA/srt-slurm": _srt_slurm()})
    live, stats = collect(server)
    assert f"{KEY_MEMO}head.{TRT_KEY}" in stats.resolved
    policies = load_policies()
    reused, fresh = judge(live, policies, resolved=stats.resolved), judge(live, policies)
    assert [(r.id, r.result) for r in reused.rows] == [(r.id, r.result) for r in fresh.rows]
