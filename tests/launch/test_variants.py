"""srt-slurm variant expansion: deep merge, overrides, zip groups, selectors, anchors, origins."""

from __future__ import annotations

import pytest

from tests.launch.helpers import NEW
from verifier.core.yaml11 import parse_yaml11
from verifier.launch.recipes import RecipeError, deep_merge, expand

AGENTIC = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/tm/sglang/b300-fp4-mtp/agentic.yaml"
FIXED = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/tm/sglang/b300-fp8/8k1k.yaml"


def doc(path: str):
    return parse_yaml11((NEW / path).read_text(), path)


def test_deep_merge_rules() -> None:
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 1, "c": {"keep": True}}
    over = {"a": {"y": [3], "z": 2}, "b": None, "c": 5}
    assert deep_merge(base, over) == {"a": {"x": 1, "y": [3], "z": 2}, "c": 5}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": 1, "c": {"keep": True}}  # inputs untouched


def test_overrides_anchor_merge_and_null_delete() -> None:
    variants = {v.key: v for v in expand(doc(AGENTIC))}
    assert list(variants) == ["override_tp2_hicache_c16", "override_tp4_c1", "override_tp4_c1_nospec",
                              "override_tp4_c8", "override_tp4_hicache_c32"]
    hicache = variants["override_tp4_hicache_c32"]
    args = hicache.data["roles"]["agg"]["args"]
    assert "moe-runner-backend" not in args  # null inside the << anchor deletes the base key
    assert args["hicache-size"] == "@dram.per-gpu-gb" and args["max-running-requests"] == 64
    assert list(args)[-3:] == ["enable-hierarchical-cache", "hicache-size", "max-running-requests"]
    assert hicache.name == "tm-fp4-b300-sglang-agentic_tp4_hicache_c32"
    nospec = variants["override_tp4_c1_nospec"].data["roles"]["agg"]["args"]
    assert "speculative-algorithm" not in nospec and "speculative-dspark-block-size" not in nospec
    # origins: the override's line, the anchor's definition line, and base lines
    assert hicache.origin("roles", "agg", "args", "max-running-requests").line == 79
    assert hicache.origin("roles", "agg", "args", "hicache-size").line == 77
    assert variants["override_tp2_hicache_c16"].origin("roles", "agg", "args", "hicache-size").line == 77
    assert hicache.origin("roles", "agg", "args", "tensor-parallel-size").line == 18
    assert hicache.origin("schema").line == 3
    assert variants["override_tp2_hicache_c16"].origin("roles", "agg", "gpus").line == 91


def test_zip_group_broadcast_and_literal_lists() -> None:
    variants = expand(doc(FIXED))
    assert [v.key for v in variants] == [f"zip_override_concurrency[{i}]" for i in range(3)]
    args = [v.data["roles"]["agg"]["args"] for v in variants]
    assert [a["cuda-graph-bs"] for a in args] == [[1, 2, 4], [1, 2, 4, 8], [8, 16]]
    assert [a["attention-backend"] for a in args] == ["fa3"] * 3  # length-1 list broadcasts
    assert [v.data["benchmark"]["env"]["CONC"] for v in variants] == ["4", "8", "16"]
    assert variants[1].name == "tm-fp8-b300-sglang-8k1k_concurrency_1"
    assert variants[1].origin("roles", "agg", "args", "max-running-requests").line == 23


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("zip_override_g:\n  a: [1, 2]\n  b: [1, 2, 3]\n", "Incompatible zip lengths"),
        ("zip_override_g:\n  a: []\n", "empty list"),
        ("zip_override_g:\n  a: 1\n", "no list values"),
    ],
)
def test_zip_errors(block: str, message: str) -> None:
    recipe = parse_yaml11("base:\n  name: r\n" + block, "r.yaml")
    with pytest.raises(RecipeError, match=message):
        expand(recipe)


def test_zip_name_list_and_null_element() -> None:
    recipe = parse_yaml11(
        "base:\n  name: r\n  x: 1\n  y: 2\nzip_override_g:\n  name: [first, second]\n  y: [3, null]\n", "r.yaml")
    first, second = expand(recipe)
    assert (first.name, first.data["y"]) == ("first", 3)
    assert second.name == "second" and "y" not in second.data


@pytest.mark.parametrize(
    ("selector", "keys"),
    [
        (None, ["override_a", "override_b", "zip_override_g[0]", "zip_override_g[1]"]),
        ("base", ["base"]),
        ("override_b", ["override_b"]),
        ("zip_override_g", ["zip_override_g[0]", "zip_override_g[1]"]),
        ("zip_override_g[1]", ["zip_override_g[1]"]),
        ("override_*", ["override_a", "override_b"]),
        ("*_g", ["zip_override_g[0]", "zip_override_g[1]"]),
    ],
)
def test_selectors(selector: str | None, keys: list[str]) -> None:
    recipe = parse_yaml11(
        "schema: 2\nbase:\n  name: r\noverride_b:\n  v: 2\noverride_a:\n  v: 1\nzip_override_g:\n  v: [3, 4]\n", "r.yaml")
    variants = expand(recipe, selector)
    assert [v.key for v in variants] == keys
    assert all(v.data["schema"] == 2 for v in variants)  # top-level schema copied into every variant


def test_selector_errors() -> None:
    recipe = parse_yaml11("base:\n  name: r\noverride_a:\n  v: 1\nzip_override_g:\n  v: [3, 4]\n", "r.yaml")
    with pytest.raises(RecipeError, match=r"out of range"):
        expand(recipe, "zip_override_g[2]")
    with pytest.raises(RecipeError, match=r"available: base, override_a, zip_override_g"):
        expand(recipe, "override_missing")
    plain = parse_yaml11("name: plain\nroles: {}\n", "p.yaml")
    assert [v.key for v in expand(plain)] == [""]
    with pytest.raises(RecipeError, match="without base"):
        expand(plain, "override_a")


REF_RECIPES = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/"


def ref_doc(rel: str):
    from tests.kit import REFERENCE_DATA

    path = REF_RECIPES + rel
    return parse_yaml11((REFERENCE_DATA / path).read_text(), path)


def test_reference_dsv4_anchors_and_null_delete() -> None:
    variants = {v.key: v for v in expand(ref_doc("dsv4/sglang/b300-fp4-mtp/agentic.yaml"))}
    dep8 = variants["override_dep8_c64"].data
    args = dep8["roles"]["agg"]["args"]
    assert "moe-runner-backend" not in args and args["data-parallel-size"] == 8
    assert args["max-running-requests"] == 128 and args["tensor-parallel-size"] == 8
    assert dep8["frontend"]["type"] == "sglang-router"
    assert dep8["benchmark"]["env"] == {
        "AIPERF_HTTP_TCP_USER_TIMEOUT": "900000", "AIPERF_REQUIRED_SERVER_METRIC_PREFIX": "sglang:",
        "AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID": "true", "KV_OFFLOADING": "dram", "CONC": "64"}
    assert variants["override_tp8_c1"].data["roles"]["agg"]["args"]["moe-runner-backend"] == "flashinfer_mxfp4"
    assert variants["override_dep8_c64"].origin("roles", "agg", "args", "enable-dp-attention").line == 155


def test_reference_qwen_zip_and_legacy_fragment() -> None:
    from verifier.core.policy import load_policies
    from verifier.launch.recipes.bind import fragment_problems

    variants = expand(ref_doc("qwen3.5/sglang/b300-fp8-mtp/8k1k.yaml"))
    assert [v.data["benchmark"]["env"]["CONC"] for v in variants] == ["4", "8", "16", "32", "64", "128", "256"]
    assert [v.data["roles"]["agg"]["args"]["cuda-graph-max-bs"] for v in variants] == [4, 8, 16, 32, 64, 128, 256]
    problems = fragment_problems(ref_doc("glm5.2/sglang/b300-fp4-mtp/agentic.yaml"), "agentic-coding",
                                 load_policies()["launch"])
    [bound] = [p for p in problems if p.kind == "bound-key"]
    assert "model.path" in bound.message and "benchmark.env.TOTAL_CPU_DRAM_GB" in bound.message
    assert bound.line == 9
    trt = fragment_problems(ref_doc("minimaxm3/trtllm/b300-fp4-mtp/agentic.yaml"), "agentic-coding",
                            load_policies()["launch"])
    assert trt == []
