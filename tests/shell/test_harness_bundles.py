"""Single-node launches of old-layout bundles that hold the real harness shapes: the benchmark
workflow, two runner clusters (one stages the checkpoint and rewrites MODEL, one does not) and the
benchmark script they start (verifier/launch/harness.py, verifier/launch/kinds/shell_script.py)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kit import judge, row, row_summary
from tests.launch.test_legacy_script import LEGACY_MINIMAX, _old_layout_bundle
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches

KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"
FOLDER = "benchmarks/single_node/agentic"

WORKFLOW = """name: Template - Benchmark
on:
  workflow_call:
    inputs:
      runner: {required: true, type: string}
      model: {required: true, type: string}
      exp-name: {required: true, type: string}
      precision: {required: true, type: string}
      framework: {required: true, type: string}
      tp: {required: true, type: string}
      ep: {required: true, type: string}
      dp-attn: {required: true, type: boolean}
      conc: {required: true, type: string}
      spec-decoding: {required: true, type: string}
      scenario-type: {required: false, type: string, default: fixed-seq-len}
      kv-offloading: {required: false, type: string}
      kv-offload-backend: {required: false, type: string}
      total-cpu-dram-gb: {required: false, type: string, default: '0'}
      eval-only: {required: false, type: boolean, default: false}
env:
  HF_TOKEN: ${{ secrets.HF_TOKEN }}
  MODEL: ${{ inputs.model }}
  EXP_NAME: ${{ inputs.exp-name }}
  PRECISION: ${{ inputs.precision }}
  FRAMEWORK: ${{ inputs.framework }}
  TP: ${{ inputs.tp }}
  EP_SIZE: ${{ inputs.ep }}
  DP_ATTENTION: ${{ inputs.dp-attn }}
  CONC: ${{ inputs.conc }}
  SPEC_DECODING: ${{ inputs.spec-decoding }}
  EVAL_ONLY: ${{ inputs.eval-only }}
  SCENARIO_SUBDIR: ${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || 'fixed_seq_len/' }}
  KV_OFFLOADING: ${{ inputs.kv-offloading }}
  KV_OFFLOAD_BACKEND: ${{ inputs.kv-offload-backend }}
  TOTAL_CPU_DRAM_GB: ${{ inputs.total-cpu-dram-gb }}
  RESULT_DIR: /workspace/results
jobs:
  benchmark:
    runs-on: ${{ inputs.runner }}
    steps:
      - name: Launch job script
        env:
          RUNNER_NAME: ${{ runner.name }}
        run: |
          echo "RESULT_FILENAME=${EXP_NAME}" >> $GITHUB_ENV
          bash ./runners/launch_${RUNNER_NAME%%_*}.sh
"""

# a cluster that stages checkpoints: MODEL becomes a local path
STAGED_RUNNER = """#!/usr/bin/bash
if [[ $MODEL_PREFIX == "unknown" ]]; then exit 1; fi
export MODEL_PATH="/staged/models/${MODEL##*/}"
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
BENCH_BASE="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b300"
BENCH_SCRIPT="${BENCH_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh"
if [[ ! -f "$BENCH_SCRIPT" ]]; then
    BENCH_SCRIPT="${BENCH_BASE}${SPEC_SUFFIX}.sh"
fi
JOB_ID=$(salloc --gres=gpu:$TP --no-shell | grep -oP 'allocation \\K[0-9]+')
export MODEL="$MODEL_PATH"
srun --jobid=$JOB_ID --container-workdir=/workspace --export=ALL,PORT=8888 bash "$BENCH_SCRIPT"
"""

# a cluster that pulls from the hub: MODEL stays the HF id
HUB_RUNNER = """#!/usr/bin/env bash
PORT=8888
docker run --rm -e MODEL -e TP -e CONC -e EP_SIZE -e DP_ATTENTION -e SPEC_DECODING -e KV_OFFLOADING \\
  -e KV_OFFLOAD_BACKEND -e TOTAL_CPU_DRAM_GB -e RESULT_DIR -e EVAL_ONLY -e PORT="$PORT" -w /workspace/ \\
  --entrypoint=/bin/bash "$IMAGE" \\
  benchmarks/single_node/${SCENARIO_SUBDIR}"${EXP_NAME%%_*}_${PRECISION}_b300.sh"
"""

LIB = """export PORT="${PORT:-8888}"
check_env_vars() {
    local missing=()
    for name in "$@"; do
        [[ -z "${!name:-}" ]] && missing+=("$name")
    done
    if [[ ${#missing[@]} -gt 0 ]]; then echo "missing ${missing[*]}"; exit 1; fi
}
require_agentic_kv_offload_backend() {
    case "$KV_OFFLOADING" in
        none) return 1 ;;
        dram) [[ "$KV_OFFLOAD_BACKEND" == "$1" ]] || exit 1; return 0 ;;
        *) exit 1 ;;
    esac
}
"""

# the draft sits next to a staged checkpoint, else it is the hub id: both are real
DRAFT_BRANCH = """DRAFT_MODEL=acme/Flash-DSpark
if [[ "$MODEL" != /* ]]; then
    hf download "$DRAFT_MODEL"
    DRAFT_PATH="$DRAFT_MODEL"
else
    DRAFT_PATH="$(dirname "$MODEL")/${DRAFT_MODEL##*/}"
fi
"""


def _harness_bundle(tmp_path: Path, script: str, name: str = "minimaxm31flash_fp4_b300.sh") -> Path:
    bundle = _old_layout_bundle(tmp_path, LEGACY_MINIMAX)
    for side in ("base", "head"):
        root = bundle / "tree" / side
        (root / ".github/workflows").mkdir(parents=True, exist_ok=True)
        (root / ".github/workflows/benchmark-tmpl.yml").write_text(WORKFLOW, encoding="utf-8")
        (root / "runners").mkdir(exist_ok=True)
        (root / "runners/launch_b300-dsxe.sh").write_text(STAGED_RUNNER, encoding="utf-8")
        (root / "runners/launch_b300-dsxe-hub.sh").write_text(HUB_RUNNER, encoding="utf-8")
        (root / "benchmarks/benchmark_lib.sh").write_text(LIB, encoding="utf-8")
        runners = root / "configs/runners.yaml"  # the label also covers a machine of the hub cluster
        text = runners.read_text(encoding="utf-8")
        runners.write_text(text.replace("  cluster:b300-dsxe:\n", "  cluster:b300-dsxe:\n    - b300-dsxe-hub_00\n", 1),
                           encoding="utf-8")
    head = bundle / "tree/head"
    (head / FOLDER / "minimaxm31flash_fp4_b300_sglang_mtp.sh").unlink()
    (head / FOLDER / name).write_text(script, encoding="utf-8")
    return bundle


def _script(extra: str = "") -> str:
    lib = 'source "$(dirname "$0")/../../benchmark_lib.sh"\ncheck_env_vars MODEL TP CONC KV_OFFLOADING\n'
    body = LEGACY_MINIMAX.split("check_env_vars MODEL TP CONC KV_OFFLOADING SPEC_DECODING\n", 1)[1]
    body = body.replace("--model-path /model\n", '--model-path "$MODEL"\n')
    body = body.replace("--speculative-draft-model-path /model/dspark", '--speculative-draft-model-path "$DRAFT_PATH"')
    return "#!/usr/bin/env bash\n" + lib + DRAFT_BRANCH + extra + body


def _launches(bundle: Path):  # type: ignore[no-untyped-def]
    return launches(CheckContext(read_bundle(bundle), load_policies()), "head", [KEY])


def test_each_runner_cluster_is_followed_and_distinct_servers_are_labelled(tmp_path: Path) -> None:
    ls = _launches(_harness_bundle(tmp_path, _script()))
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    by_point: dict[tuple[object, ...], list] = {}
    for launch in ls.launches:
        by_point.setdefault(launch.point.identity, []).append(launch)
    assert len(by_point) == 16
    for group in by_point.values():
        worlds = {launch.world: launch for launch in group}
        assert set(worlds) == {"runner b300-dsxe", "runner b300-dsxe-hub"}, set(worlds)
        staged, hub = worlds["runner b300-dsxe"], worlds["runner b300-dsxe-hub"]
        assert staged.model_path == "/staged/models/MiniMax-M3.1-Flash"
        assert hub.model_path == "MiniMaxAI/MiniMax-M3.1-Flash"
        if staged.spec is not None and staged.spec.speculating:
            assert staged.spec.draft_model == "/staged/models/Flash-DSpark"
            assert hub.spec is not None and hub.spec.draft_model == "acme/Flash-DSpark"
        for launch in group:
            assert launch.kind == "shell-script" and launch.engine == "sglang"
            assert launch.recipe_path == f"{FOLDER}/minimaxm31flash_fp4_b300.sh"
            assert launch.files == (launch.recipe_path, "benchmarks/benchmark_lib.sh")
            line = _script().split("\n").index('    --model-path "$MODEL"') + 1
            assert launch.arg_origin("model-path") == (launch.recipe_path, line)
    staged_env = next(la.env for la in ls.launches if la.world == "runner b300-dsxe")
    assert staged_env["MODEL"] == "/staged/models/MiniMax-M3.1-Flash"
    assert staged_env["PORT"] == "8888"
    report = judge(_harness_bundle(tmp_path / "judge", _script()), only={13, 18})
    ids = {f.message_id for f in row(report, 18).result.findings}
    assert "generation-error" not in ids and "point-binds-several-variants" not in ids, row_summary(row(report, 18))


def test_a_branch_that_changes_nothing_keeps_one_launch(tmp_path: Path) -> None:
    """The two clusters differ only in the harness's own variables (MODEL, MODEL_PATH)."""
    script = _script().replace('    DRAFT_PATH="$(dirname "$MODEL")/${DRAFT_MODEL##*/}"',
                               '    DRAFT_PATH="$DRAFT_MODEL"')
    script = script.replace('--model-path "$MODEL"\n', "--model-path /model\n")
    script = script.replace('--served-model-name "$MODEL"\n', "--served-model-name acme/flash\n")
    ls = _launches(_harness_bundle(tmp_path, script))
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert len(ls.launches) == 16 and {la.world for la in ls.launches} == {""}


def test_a_server_argument_assigned_in_an_uncountable_loop_is_named_by_check18(tmp_path: Path) -> None:
    loop = 'SCHED=fcfs\nwhile read -r line; do SCHED=lpm; done < "$RESULT_DIR/hints"\n'
    script = _script(loop).replace("--chunked-prefill-size 16384\n", '--chunked-prefill-size 16384\n    --schedule-policy "$SCHED"\n')
    bundle = _harness_bundle(tmp_path, script)
    ls = _launches(bundle)
    assert ls.fatal_errors and not ls.launches
    err = ls.fatal_errors[0]
    line = script.split("\n").index('while read -r line; do SCHED=lpm; done < "$RESULT_DIR/hints"') + 1
    assert err.line == line and "assigned inside the loop on line" in err.message
    report = judge(bundle, only={13, 18})
    assert row(report, 18).status.value == "FAIL"
    r13 = row(report, 13)
    assert "could not be verified" not in row_summary(r13).lower()


def test_the_runner_chooses_the_script_and_a_missing_one_is_named_with_the_runner_line(tmp_path: Path) -> None:
    bundle = _harness_bundle(tmp_path, _script(), name="minimaxm31flash_fp4_b300_sglang.sh")
    ls = _launches(bundle)
    # the staging cluster runs the framework-tagged script; the hub cluster only knows the bare name
    assert {la.world for la in ls.launches} == {""} and ls.launches
    assert {la.recipe_path.rsplit("/", 1)[-1] for la in ls.launches} == {"minimaxm31flash_fp4_b300_sglang.sh"}
    (bundle / "tree/head" / FOLDER / "minimaxm31flash_fp4_b300_sglang.sh").unlink()
    ls = _launches(bundle)
    assert not ls.launches and ls.fatal_errors
    message = str(ls.fatal_errors[0])
    assert re.search(r"the runner starts benchmarks/single_node/agentic/minimaxm31flash_fp4_b300\.sh "
                     r"\(runners/launch_b300-dsxe(-hub)?\.sh:\d+\), which is not in the tree", message), message


TRT_SCRIPT = """#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC
EXTRA_CONFIG_FILE="minimax-trt.yml"
cat > "$EXTRA_CONFIG_FILE" << EOF
kv_cache_config:
    dtype: fp8
    free_gpu_memory_fraction: 0.8
speculative_config:
    decoding_type: Eagle
    max_draft_len: 3
    speculative_model: $MODEL-Eagle
EOF
SERVE_CMD=(
    trtllm-serve "$MODEL"
    --port "$PORT"
    --tp_size "$TP"
    --max_batch_size "$CONC"
    --extra_llm_api_options "$EXTRA_CONFIG_FILE"
)
mpirun -n 1 --oversubscribe --allow-run-as-root "${SERVE_CMD[@]}" > server.log 2>&1 &
"""


def test_trtllm_options_file_from_a_heredoc_becomes_nested_args_with_script_lines(tmp_path: Path) -> None:
    bundle = _harness_bundle(tmp_path, TRT_SCRIPT, name="minimaxm31flash_fp4_b300_trt.sh")
    for side in ("base", "head"):
        master = bundle / "tree" / side / "configs/nvidia-master.yaml"
        text = master.read_text(encoding="utf-8").replace("  framework: sglang\n", "  framework: trt\n")
        master.write_text(text, encoding="utf-8")
    ctx = CheckContext(read_bundle(bundle), load_policies())
    key = KEY.replace("-sglang-", "-sglang-")
    ls = launches(ctx, "head", [key])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    # only the staging cluster's runner knows the `_trt` name: one way to start the server
    assert {la.world for la in ls.launches} == {""}
    launch = ls.launches[0]
    assert launch.engine == "trtllm" and launch.module == "trtllm-serve"
    assert launch.args["kv_cache_config"] == {"dtype": "fp8", "free_gpu_memory_fraction": 0.8}
    assert launch.args["tp_size"] == "4" and launch.args["extra_llm_api_options"] == "minimax-trt.yml"
    spec = launch.args["speculative_config"]
    assert spec["speculative_model"] == "/staged/models/MiniMax-M3.1-Flash-Eagle"
    path = launch.recipe_path
    assert launch.origins[("roles", "agg", "args", "kv_cache_config", "dtype")] == (path, 7)
    assert launch.origins[("roles", "agg", "args", "speculative_config", "max_draft_len")] == (path, 11)
    assert launch.arg_origin("speculative_config") == (path, 9)
    assert launch.spec is not None and launch.spec.method == "eagle" and launch.spec.draft_length == 3
    assert launch.recipe["roles"]["agg"]["args"]["speculative_config"]["decoding_type"] == "Eagle"
    assert launch.files == (path, "benchmarks/benchmark_lib.sh")


def test_a_staged_draft_downloaded_from_its_repository_is_recorded(tmp_path: Path) -> None:
    downloaded = DRAFT_BRANCH.replace('    DRAFT_PATH="$(dirname "$MODEL")/${DRAFT_MODEL##*/}"\n',
                                      '    DRAFT_PATH="$(dirname "$MODEL")/${DRAFT_MODEL##*/}"\n'
                                      '    hf download "$DRAFT_MODEL" --local-dir "$DRAFT_PATH"\n')
    ls = _launches(_harness_bundle(tmp_path, _script().replace(DRAFT_BRANCH, downloaded)))
    staged = [la for la in ls.launches if la.world == "runner b300-dsxe"]
    assert staged and all(la.checkpoints == {"/staged/models/Flash-DSpark": "acme/Flash-DSpark"} for la in staged)
    report = judge(_harness_bundle(tmp_path / "judge", _script().replace(DRAFT_BRANCH, downloaded)), only={13})
    assert "draft-checkpoint-substituted" not in {f.message_id for f in row(report, 13).result.findings}
