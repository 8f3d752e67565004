"""Matrix points (FORMATS.md §3.4) and the DRAM budget (§3.5)."""

from __future__ import annotations

import pytest

from tests.launch.helpers import edit, make_ctx, old_layout, tree_files
from verifier.configs import conc_values, dram_budget_gb, points

KEY = "tm-fp4-b300-sglang-agentic-dspark"
MASTER = "inferencex-e2e/configs/nvidia-master.yaml"
CAP = 2_861_022


@pytest.mark.parametrize(
    ("available", "util", "gpus", "per_node", "expected"),
    [
        (CAP, 1.0, 2, 8, 749),  # "749 GB for TP2 at utilization 1.0"
        (3_977_095, 1.0, 4, 8, 1499),
        (3_977_095, 0.8, 8, 8, 2399),
        (3_977_095, 0.95, 8, 8, 2849),
        (2_063_920, 0.8, 8, 8, 1731),
        (2_063_920, 0.683, 4, 8, 739),
        (2_063_920, 1.0, 4, 8, 1082),
        (3_977_095, 0.8, 4, 8, 1199),
        (3_977_095, 1.0, 2, 8, 749),
    ],
)
def test_dram_budget_table(available: int, util: float, gpus: int, per_node: int, expected: int) -> None:
    assert dram_budget_gb(available, util, gpus, per_node) == expected


def test_dram_budget_uses_decimal_of_str() -> None:
    # 0.683 as a binary float is 0.68300000000000005...; str() keeps it exact.
    assert dram_budget_gb(2_063_920, 0.683, 4, 8) == 739
    assert dram_budget_gb(2_063_920, "0.80", 8, 8) == 1731


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"conc-start": 4, "conc-end": 128}, [4, 8, 16, 32, 64, 128]),
        ({"conc-start": 1, "conc-end": 32}, [1, 2, 4, 8, 16, 32]),
        ({"conc-start": 8, "conc-end": 100}, [8, 16, 32, 64, 100]),
        ({"conc-start": 5, "conc-end": 5}, [5]),
        ({"conc-list": [1, 4, 3]}, [1, 4, 3]),
    ],
)
def test_conc_values(row: dict, expected: list[int]) -> None:
    assert conc_values(row) == expected


@pytest.mark.parametrize(
    "row",
    [{}, {"conc-list": [1], "conc-start": 1, "conc-end": 2}, {"conc-list": []}, {"conc-start": 0, "conc-end": 4},
     {"conc-start": 8, "conc-end": 4}, {"conc-list": [1, True]}],
)
def test_conc_values_rejects_bad_rows(row: dict) -> None:
    with pytest.raises(ValueError):
        conc_values(row)


def test_agentic_single_node_points() -> None:
    ctx = make_ctx(tree_files())
    pts = points(ctx, "head", KEY)
    assert [p.exp_name for p in pts] == [
        "tm_tp4_conc1_kvnone_spec-draft_model",
        "tm_tp4_conc8_kvnone_spec-draft_model",
        "tm_tp4_conc1_kvnone",
        "tm_tp4_conc32_kvdram-hicache_spec-draft_model",
        "tm_tp2_conc16_kvdram-hicache_spec-draft_model",
    ]
    assert [p.total_cpu_dram_gb for p in pts] == [0, 0, 0, 1199, 749]
    last = pts[-1]
    assert (last.tp, last.ep, last.dp_attn, last.gpu_count, last.conc) == (2, 1, False, 2, 16)
    assert last.kv_offloading == "dram" and last.kv_offload_backend == {"name": "hicache"}
    assert last.spec_decoding == "draft_model" and last.spec_label == "mtp"
    assert last.srt_recipe is not None and last.srt_recipe.selector == "override_tp2_hicache_c16"
    assert last.srt_recipe.path.startswith("inferencex-e2e/benchmarks/single_node/")
    assert (last.file, last.line, last.duration, last.scenario) == (MASTER, 19, 3600, "agentic-coding")
    assert last.job_suffix == "tp2 conc16 kvdram-hicache spec-draft_model"
    assert not any(p.errors for p in pts)


def test_fixed_seq_and_multinode_points() -> None:
    ctx = make_ctx(tree_files())
    fixed = points(ctx, "head", "tm-fp8-b300-sglang")
    assert [(p.exp_name, p.conc, p.max_model_len) for p in fixed] == [
        ("tm_8k1k", 4, 9472), ("tm_8k1k", 8, 9472), ("tm_8k1k", 16, 9472)]
    assert fixed[0].kv_offloading is None and fixed[0].total_cpu_dram_gb is None
    multi = points(ctx, "head", "tm-fp4-gb300-dynamo-sglang-agentic-disagg")
    agentic = [p for p in multi if p.is_agentic]
    assert [p.exp_name for p in agentic] == [
        "tm_p1x4ep4dpa_d2x8ep8dpa_conc64_kvdram-hicache", "tm_p1x4ep4dpa_d2x8ep8dpa_conc128_kvdram-hicache"]
    assert agentic[0].total_cpu_dram_gb == 450 and agentic[0].gpu_count == 4  # 860160 MiB, 0.5, 4 of 4 GPUs
    fixed_mn = [p for p in multi if not p.is_agentic]
    assert len(fixed_mn) == 1 and fixed_mn[0].conc_list == (8, 16, 32, 64, 100) and fixed_mn[0].conc is None
    assert fixed_mn[0].decode["num-worker"] == 0 and fixed_mn[0].prefill["tp"] == 8


def test_dram_budget_errors_are_point_errors() -> None:
    files = edit(tree_files(), MASTER, "dram-utilization: 0.8\n", "dram-utilization: 1.5\n")
    pts = points(make_ctx(files), "head", KEY)
    assert any("outside (0, 1]" in e for p in pts for e in p.errors)
    files = edit(tree_files(), MASTER, "runner: cluster:b300-test\n  precision: fp4\n  framework: sglang",
                 "runner: cluster:nowhere\n  precision: fp4\n  framework: sglang")
    pts = points(make_ctx(files), "head", KEY)
    dram = [p for p in pts if p.kv_offloading == "dram"]
    assert all(p.total_cpu_dram_gb is None and "no cluster facts" in p.errors[0] for p in dram)
    assert all(not p.errors for p in pts if p.kv_offloading == "none")


def test_old_layout_points_use_hardware_facts() -> None:
    ctx = make_ctx(old_layout(tree_files()))
    pts = points(ctx, "head", KEY)
    assert [p.total_cpu_dram_gb for p in pts] == [0, 0, 0, 1199, 749]
    assert pts[0].srt_recipe is not None
    assert pts[0].srt_recipe.path == "benchmarks/single_node/srt-slurm-recipes/tm/sglang/b300-fp4-mtp/agentic.yaml"


def test_missing_key_has_no_points() -> None:
    assert points(make_ctx(tree_files()), "head", "no-such-key") == []


def test_point_identity_follows_the_matrix_generator() -> None:
    """Old-layout fixed-seq-len exp-names (`tm_8k1k`) carry no TP or concurrency; the generator's
    matrix entry does, so rows differing in TP are distinct points and only an identical row repeats one."""
    row = ("      - tp: 4\n        conc-start: 4\n        conc-end: 16\n"
           "        srt-recipe: benchmarks/single_node/srt-slurm-recipes/tm/sglang/b300-fp8/8k1k.yaml\n")
    distinct = edit(tree_files(), MASTER, row, row + row.replace("tp: 4", "tp: 8"))
    pts = points(make_ctx(distinct), "head", "tm-fp8-b300-sglang")
    assert len(pts) == 6 and len({p.exp_name for p in pts}) == 1 and len({p.identity for p in pts}) == 6
    repeated = edit(tree_files(), MASTER, row, row + row)
    pts = points(make_ctx(repeated), "head", "tm-fp8-b300-sglang")
    assert len(pts) == 6 and len({p.identity for p in pts}) == 3
