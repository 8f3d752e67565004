"""The launch layer against the shared acceptance cases: every point's argv and env equal the
`srtctl: agg_0 command:` / `environment:` lines of its server.log (cases read in place)."""

from __future__ import annotations

import re

import pytest

from tests.launch.helpers import case_ctx
from verifier.configs import points
from verifier.launch import launches
from verifier.launch.affected import affected_keys

KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"
RECIPES = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/"
PINNED_RUN = 40739166138
BASELINE_RUN = 40178345296
PREFIX = "python3 -m sglang.launch_server "


def preamble(log: str) -> tuple[str | None, list[tuple[str, str]], str | None]:
    """(recipe reference, env pairs, command) from the srtctl lines of a server.log."""
    ref, env, command, mode = None, [], None, None
    for line in log.splitlines():
        if re.match(r"^\[[^\]]+\] srtctl: ", line):
            found = re.search(r"srtctl: recipe (\S+)", line)
            ref = found.group(1) if found else ref
            mode = "env" if line.endswith("agg_0 environment:") else "cmd" if line.endswith("agg_0 command:") else None
            continue
        if mode == "env":
            name, _, value = line.partition("=")
            env.append((name, value))
        elif mode == "cmd":
            command, mode = line, None
    return ref, env, command


@pytest.mark.parametrize(
    ("case", "run", "side", "count"),
    [
        ("pr4524", PINNED_RUN, "head", 16),
        ("pr4524-approved", PINNED_RUN, "head", 16),
        ("pr4524", BASELINE_RUN, "base", 10),
        ("pr4524-approved", BASELINE_RUN, "base", 10),
    ],
)
def test_every_point_matches_its_server_log(case: str, run: int, side: str, count: int) -> None:
    ctx = case_ctx(case)
    result = launches(ctx, side)
    assert not result.errors
    assert len(result.launches) == count
    compared = 0
    for artifact in ctx.bundle.runs[run].artifacts:
        if not artifact.name.startswith("bmk_agentic_"):
            continue
        ref, env, command = preamble(artifact.files["server.log"].decode())
        [launch] = result.by_exp_name(artifact.name.removeprefix("bmk_agentic_"))
        assert command is not None and command.startswith(PREFIX)
        assert tuple(command.removeprefix(PREFIX).split(" ")) == launch.argv, artifact.name
        assert env == list(launch.env.items()), artifact.name
        assert ref == launch.recipe_ref.removeprefix("inferencex-e2e/"), artifact.name
        compared += 1
    assert compared == count


def test_points_and_dram_budgets() -> None:
    pts = points(case_ctx("pr4524"), "head", KEY)
    assert len(pts) == 16
    budgets = {p.exp_name: p.total_cpu_dram_gb for p in pts}
    assert budgets["minimaxm31flash_tp2_conc32_kvdram-hicache_spec-draft_model"] == 749
    assert budgets["minimaxm31flash_tp4_conc96_kvdram-hicache_spec-draft_model"] == 1199
    assert budgets["minimaxm31flash_tp4_conc1_kvnone"] == 0
    assert sum(1 for p in pts if p.tp == 2) == 6
    assert len(points(case_ctx("pr4524"), "base", KEY)) == 10


def test_origins_of_the_draft_kv_override() -> None:
    result = launches(case_ctx("pr4524"))
    by_name = {x.exp_name: x for x in result.launches}
    tp4 = by_name["minimaxm31flash_tp4_conc64_kvdram-hicache_spec-draft_model"]
    tp2 = by_name["minimaxm31flash_tp2_conc46_kvdram-hicache_spec-draft_model"]
    assert tp4.arg_origin("speculative-draft-kv-cache-dtype") == (RECIPES + "agentic.yaml", 39)
    assert tp2.arg_origin("--speculative-draft-kv-cache-dtype") == (RECIPES + "agentic-tp2.yaml", 37)
    assert tp4.arg_origin("hicache-size") == (RECIPES + "agentic.yaml", 135)  # the &tp4_hicache anchor
    assert tp2.arg_origin("max-running-requests") == (RECIPES + "agentic-tp2.yaml", 76)
    assert tp4.env_origin("SGLANG_SIMULATE_ACC_LEN") == (
        "inferencex-e2e/infx/golden_al_distribution/minimaxm31flash_dspark.yaml", 16)
    assert tp4.arg("speculative-draft-kv-cache-dtype") == "fp8_e4m3"
    nospec = by_name["minimaxm31flash_tp4_conc1_kvnone"]
    assert nospec.arg("speculative-draft-kv-cache-dtype") is None  # nulled by override_tp4_c1_nospec
    approved = {x.exp_name: x for x in launches(case_ctx("pr4524-approved")).launches}
    assert approved["minimaxm31flash_tp2_conc46_kvdram-hicache_spec-draft_model"].arg(
        "speculative-draft-kv-cache-dtype") is None


def test_affected_keys_of_the_case() -> None:
    affected = affected_keys(case_ctx("pr4524"))
    assert affected.keys == [KEY] and affected.changed == [KEY] and not affected.added
    kinds = [(r.kind, r.file.rsplit("/", 1)[-1], r.line) for r in affected.why(KEY)]
    assert kinds[0] == ("entry-changed", "nvidia-master.yaml", 190)  # the appended dram-utilization block
    assert ("recipe-changed", "agentic.yaml", 187) in kinds
    assert ("recipe-changed", "agentic-tp2.yaml", 192) in kinds
    assert affected.changelog_keys == [KEY]
    approved = affected_keys(case_ctx("pr4524-approved"))
    assert [r.kind for r in approved.why(KEY)] == ["entry-changed", "recipe-changed"]
