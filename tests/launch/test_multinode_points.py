"""Multi-node points of each era: DRAM budgets, runner formats, the workflow environment."""

from __future__ import annotations

import datetime as dt

from tests.launch.multinode_kit import make_bundle
from verifier.configs import points
from verifier.configs.runners import parse_runners
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch.job import KeyJob
from verifier.launch.runner import launcher_env, runner_scripts

KEY = "dsv4-fp4-gb300-dynamo-sglang-agentic-agg"
MASTER = f"""{KEY}:
  image: lmsysorg/sglang:nightly-dev-cu13-20260711-7de33ce8
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  runner: cluster:gb300-nv
  precision: fp4
  framework: dynamo-sglang
  multinode: true
  disagg: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.80
      search-space:
      - spec-decoding: mtp
        conc-list: [1, 4]
        kv-offloading: dram
        kv-offload-backend: {{ name: hicache }}
        prefill:
          num-worker: 1
          tp: 4
          ep: 1
          dp-attn: false
          additional-settings:
          - "CONFIG_FILE=recipes/sglang/deepseek-v4/agentic/agg-gb300-tp4-mtp-kvoffload.yaml"
        decode:
          num-worker: 0
          tp: 4
          ep: 1
          dp-attn: false
"""
RUNNERS = b"""labels:
  cluster:gb300-nv:
    - gb300-nv_0
hardware:
  cluster:b200-dgxc:
    available-cpu-dram-mib: 3_774_874
    gpus-per-node: 8
"""


def _points(review: dt.date):  # type: ignore[no-untyped-def]
    files = {"configs/nvidia-master.yaml": MASTER.encode(), "configs/runners.yaml": RUNNERS}
    ctx = CheckContext(make_bundle(files, review=review), load_policies())
    return ctx, points(ctx, "head", KEY)


def test_before_the_generator_sized_multinode_dram_no_hardware_facts_are_needed() -> None:
    _, pts = _points(dt.date(2026, 7, 15))  # InferenceX #2157's era
    assert [p.errors for p in pts] == [(), ()]
    assert {p.total_cpu_dram_gb for p in pts} == {0}


def test_after_it_the_runner_needs_hardware_facts() -> None:
    _, pts = _points(dt.date(2026, 7, 25))
    assert all("runner cluster:gb300-nv has no cluster facts" in p.errors[0] for p in pts)


def test_agentic_points_get_the_workflows_zero_isl_osl() -> None:
    ctx, pts = _points(dt.date(2026, 7, 15))
    from verifier.configs import master_entries

    job = KeyJob(ctx, "head", master_entries(ctx, "head")[KEY])
    env = launcher_env(job, pts[0])
    assert (env["ISL"], env["OSL"], env["MAX_MODEL_LEN"], env["IS_AGENTIC"]) == ("0", "0", "0", "1")
    assert env["CONFIG_FILE"] == "recipes/sglang/deepseek-v4/agentic/agg-gb300-tp4-mtp-kvoffload.yaml"
    assert env["PREFILL_TP"] == "4" and env["DECODE_NUM_WORKERS"] == "0" and env["IS_MULTINODE"] == "true"
    assert runner_scripts(job, pts[0]) == (["runners/launch_gb300-nv.sh"], None)


def test_the_oldest_runners_format_lists_labels_at_the_top_level() -> None:
    table = parse_runners("h100:\n- h100-cw_00\nb200-multinode:\n- b200-dgxc-slurm_7\n", "configs/runners.yaml")
    assert table.labels == {"h100": ["h100-cw_00"], "b200-multinode": ["b200-dgxc-slurm_7"]}
