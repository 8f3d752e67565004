"""Check 17 (Metrics publication): N/A on the SGLang cases; PASS / FAIL / unverifiable on a Dynamo TRT-LLM
config added to a copy of pr4524 (our own recipe, an invented model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.results import Status

E2E = "inferencex-e2e"
KEY = "quillx-fp4-b300-dynamo-trt-agentic"
RECIPE = "benchmarks/single_node/srt-slurm-recipes/quillx/trtllm/b300-fp4/agentic.yaml"
ARGS = """        tensor_parallel_size: 4
        moe_expert_parallel_size: 1
        enable_attention_dp: false
        publish_events_and_metrics: true
        enable_iter_perf_stats: true
        kv_cache_config:
          free_gpu_memory_fraction: 0.9
"""


def _recipe(args: str, env: str = "") -> str:
    return f"""base:
  schema: 2
  name: quillx-fp4-b300-dynamo-trt-agentic
  resources:
    gpu_type: b300
    gpus_per_node: 8
  frontend:
    type: dynamo
    enable_multiple_frontends: false
  engine:
    type: trtllm
  roles:
    agg:
      nodes: 1
      workers: 1
      gpus: 4
      args:
{args}{env}
override_tp4_c4:
  benchmark:
    env:
      CONC: '4'
      KV_OFFLOADING: none
"""


def add_dynamo_trt(case: Path, args: str = ARGS, env: str = "", version: str | None = "0.7.1") -> Path:
    """Add a single-node dynamo-trt config (one TP4 conc-4 point) to the PR and, optionally, its version."""
    head = case / "tree" / "head" / E2E
    (head / RECIPE).parent.mkdir(parents=True, exist_ok=True)
    (head / RECIPE).write_text(_recipe(args, env), encoding="utf-8")
    master = head / "configs" / "nvidia-master.yaml"
    master.write_text(master.read_text(encoding="utf-8") + f"""
{KEY}:
  image: nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:0.7.1
  model: acme/QuillX
  model-prefix: quillx
  runner: cluster:b300-dsxe
  precision: fp4
  framework: dynamo-trt
  router: {{ name: dynamo-router, version: "0.7.1" }}
  multinode: false
  scenarios:
    agentic-coding:
    - search-space:
      - {{ tp: 4, kv-offloading: none, spec-decoding: none, conc-list: [4], srt-recipe: {RECIPE} }}
""", encoding="utf-8")
    edit_yaml(case / "pr.yaml", lambda pr: pr["files"].append({"path": f"{E2E}/{RECIPE}", "status": "added"}))
    if version is not None:
        line = "- **Dynamo TRT-LLM metrics:** N/A. This is direct SGLang serving with no Dynamo TRT-LLM path.\n"
        new = f"- **Dynamo TRT-LLM metrics:** installed ai-dynamo {version} (pip show), metrics on.\n"

        def change(so: Any) -> None:
            assert line in so["body"]
            so["body"] = so["body"].replace(line, new)

        edit_yaml(case / "signoff.yaml", change)
    return case


def _row(path: Path) -> Any:
    return row(judge(path, only={17}), 17)


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


@pytest.mark.parametrize("name", ["pr4524", "pr4524-approved"])
def test_cases_not_applicable(name: str) -> None:
    r = _row(CASES / name)
    assert r.status is Status.NA
    assert "`sglang`" in row_summary(r) and "dynamo-trt" in row_summary(r)


def test_dynamo_trt_with_metrics_and_version_passes(case: Path) -> None:
    r = _row(add_dynamo_trt(case))
    assert r.status is Status.PASS, row_summary(r)
    text = row_summary(r)
    assert KEY in text and "enable_iter_perf_stats" in text and "Dynamo `0.7.1`" in text


def test_publish_false_fails_with_line(case: Path) -> None:
    r = _row(add_dynamo_trt(case, ARGS.replace("publish_events_and_metrics: true", "publish_events_and_metrics: false")))
    assert r.status is Status.FAIL
    first = r.result.findings[0]
    assert first.message_id == "metrics-publication-disabled"
    assert "publish_events_and_metrics" in row_summary(r) and "agentic.yaml:21" in row_summary(r)
    assert first.evidence[0].line == 21  # type: ignore[union-attr]


def test_publish_false_in_json_string_is_found(case: Path) -> None:
    args = ARGS.replace("        publish_events_and_metrics: true\n", "") + \
        "        extra_engine_config: '{\"publish_events_and_metrics\": false}'\n"
    r = _row(add_dynamo_trt(case, args))
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "metrics-publication-disabled"


def test_no_metrics_control_fails(case: Path) -> None:
    args = ARGS.replace("        publish_events_and_metrics: true\n", "").replace(
        "        enable_iter_perf_stats: true\n", "")
    r = _row(add_dynamo_trt(case, args))
    assert r.status is Status.FAIL
    ids = [f.message_id for f in r.result.findings]
    assert ids.count("metrics-group-unset") == 2
    assert "iteration" in row_summary(r) and "kv-cache" in row_summary(r)


def test_iteration_stats_switched_off_fails(case: Path) -> None:
    args = ARGS.replace("        publish_events_and_metrics: true\n", "").replace(
        "enable_iter_perf_stats: true", "enable_iter_perf_stats: false")
    r = _row(add_dynamo_trt(case, args))
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "metrics-group-off"


def test_missing_dynamo_version_fails(case: Path) -> None:
    r = _row(add_dynamo_trt(case, version=None))
    assert r.status is Status.FAIL
    assert r.result.findings[-1].message_id == "dynamo-version-unrecorded"


def test_unresolvable_recipe_is_reported_by_check18(case: Path) -> None:
    """One root cause, one FAIL row: Check 18 names the unresolved launch; Check 17 lists it, N/A."""
    add_dynamo_trt(case)
    replace_text(case / "tree" / "head" / E2E / RECIPE, "CONC: '4'", "CONC: '8'")
    report = judge(case, only={17, 18})
    r = row(report, 17)
    assert r.status is Status.NA
    assert r.result.findings[0].message_id == "launch-reported-by-check18"
    assert "quillx" in row_summary(r) and "Check 18" in row_summary(r)
    assert row(report, 18).status is Status.FAIL
