"""policies/launch.yaml validates against its schema and holds the facts the layer relies on."""

from __future__ import annotations

from tests.kit import PROJECT
from tests.launch.helpers import make_ctx, tree_files
from verifier.configs import points
from verifier.core.policy import load_policy_file
from verifier.launch import launches


def test_launch_policy_validates() -> None:
    policy = load_policy_file(PROJECT / "policies" / "launch.yaml")
    assert policy["dram"]["max-available-cpu-dram-mib"] == 2_861_022
    assert policy["spec"]["default-thinking-mode"] == "thinking_on"
    assert "benchmark.env.TOTAL_CPU_DRAM_GB" in policy["bound-keys"]["agentic-coding"]


def test_points_and_launches_are_hashable() -> None:
    ctx = make_ctx(tree_files())
    pts = points(ctx, "head", "tm-fp4-b300-sglang-agentic-dspark")
    assert len(set(pts)) == len(pts)
    result = launches(ctx, "head", ["tm-fp4-b300-sglang-agentic-dspark"])
    assert len(set(result.launches)) == len(result.launches)
