"""Minimal old-layout InferenceX trees of the real multi-node shapes, for the multi-node launch kinds.

* an srt-slurm row: `CONFIG_FILE=recipes/...` whose runner (`runners/launch_b200-dgxc-slurm.sh`)
  clones NVIDIA/srt-slurm, checks out a branch (or a fork / a tag), overlays InferenceX recipe
  folders and runs `srtctl apply -f "$CONFIG_FILE"`;
* an AMD disaggregated row without srt-recipe: the runner runs
  `benchmarks/multi_node/<prefix>_<precision>_mi355x_<framework>.sh`, which calls `amd_utils/submit.sh`,
  which `sbatch`es `job.slurm`, whose `srun` starts a container running `server.sh`, which reads
  `models.yaml` through an inline python3 snippet and starts `vllm serve` per node rank.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from verifier.core.model import Bundle, ChangedFile, PullRequest, SignOff, Tree

SHA_BASE = "a" * 40
SHA_HEAD = "b" * 40

RUNNERS = b"""labels:
  b200-multinode:
    - b200-dgxc-slurm_7
  mi355x-disagg:
    - mi355x-amds_00
    - mi355x-amds_01
hardware:
  cluster:b200-dgxc:
    available-cpu-dram-mib: 3_774_874
    gpus-per-node: 8
"""

TRT_KEY = "dsr1-fp4-b200-dynamo-trt"
SGL_KEY = "dsr1-fp4-b200-dynamo-sglang"
FORK_KEY = "dsr1-fp4-b200-dynamo-vllm"
RECIPE = "recipes/trtllm/b200-fp4/1k1k/ctx1_gen2.yaml"


def disagg_row(key: str, *, image: str, model: str, runner: str, precision: str, framework: str,
               conc: str, prefill: tuple[int, int, int, bool], decode: tuple[int, int, int, bool],
               prefill_settings: tuple[str, ...] = (), decode_settings: tuple[str, ...] = (),
               spec: str | None = None, prefix: str = "dsr1") -> str:
    """One multi-node disaggregated master-config entry (1k/1k, one search-space point) as YAML text.

    `prefill` / `decode` are (num-worker, tp, ep, dp-attn); `*_settings` their additional-settings
    lines (`CONFIG_FILE=...`); `spec` the point's `spec-decoding`, `conc` its conc-list (`64`, `8, 16`)."""

    def role(name: str, shape: tuple[int, int, int, bool], settings: tuple[str, ...]) -> str:
        workers, tp, ep, dp_attn = shape
        text = (f"        {name}:\n          num-worker: {workers}\n          tp: {tp}\n          ep: {ep}\n"
                f"          dp-attn: {'true' if dp_attn else 'false'}\n")
        if settings:
            text += "          additional-settings:\n" + "".join(f'          - "{s}"\n' for s in settings)
        return text

    point = f'      - spec-decoding: "{spec}"\n        conc-list: [{conc}]\n' if spec else f"      - conc-list: [{conc}]\n"
    return (f"{key}:\n  image: {image}\n  model: {model}\n  model-prefix: {prefix}\n  runner: {runner}\n"
            f"  precision: {precision}\n  framework: {framework}\n  multinode: true\n  disagg: true\n"
            "  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n"
            + point + role("prefill", prefill, prefill_settings) + role("decode", decode, decode_settings))


NVIDIA_MASTER = (
    disagg_row(TRT_KEY, image="nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.8.1", model="deepseek-r1-fp4",
               runner="b200-multinode", precision="fp4", framework="dynamo-trt", spec="mtp", conc="64",
               prefill=(1, 4, 4, True), prefill_settings=(f"CONFIG_FILE={RECIPE}",), decode=(2, 8, 8, True))
    + disagg_row(SGL_KEY, image="lmsysorg/sglang:v0.5.9-cu130", model="deepseek-ai/DeepSeek-R1-0528",
                 runner="b200-multinode", precision="fp4", framework="dynamo-sglang", conc="32",
                 prefill=(1, 8, 1, False), prefill_settings=("CONFIG_FILE=recipes/sglang/dsr1/renamed.yaml",),
                 decode=(1, 8, 1, False))
    + disagg_row(FORK_KEY, image="vllm/vllm-openai:v0.20.0", model="deepseek-ai/DeepSeek-R1-0528",
                 runner="b200-multinode", precision="fp4", framework="dynamo-vllm", conc="16",
                 prefill=(1, 8, 1, False), prefill_settings=("CONFIG_FILE=recipes/vllm/dsr1/disagg.yaml",),
                 decode=(1, 8, 1, False))
)

# The runner's shape (runners/launch_b200-dgxc.sh, 2026-07): model settings per prefix, then the
# srt-slurm clone chosen by FRAMEWORK / MODEL_PREFIX, an overlay of InferenceX recipes, srtctl apply.
RUNNER = b"""#!/usr/bin/env bash
source "$(dirname "${BASH_SOURCE[0]}")/slurm_utils.sh"

if [[ $MODEL_PREFIX == "dsr1" && $PRECISION == "fp4" ]]; then
    export MODEL_PATH="/data/models/dsr1-fp4"
    export SRT_SLURM_MODEL_PREFIX="dsr1"
else
    echo "Unsupported model prefix" >&2
    exit 1
fi

if [[ "$IS_MULTINODE" == "true" ]]; then
    SRT_REPO_DIR="${GITHUB_WORKSPACE}/srt-slurm-${GITHUB_RUN_ID:-manual}"
    if [ -d "$SRT_REPO_DIR" ]; then
        rm -rf "$SRT_REPO_DIR"
    fi
    if [[ $FRAMEWORK == "dynamo-vllm" ]]; then
        git clone --branch cam/sa-submission-q2-2026 --single-branch https://github.com/cquil11/srt-slurm-nv.git "$SRT_REPO_DIR"
        cd "$SRT_REPO_DIR" || exit 1
    elif [[ $FRAMEWORK == "dynamo-sglang" && $MODEL_PREFIX == "dsr1" ]]; then
        git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
        cd "$SRT_REPO_DIR" || exit 1
        git checkout v1.0.5
        mkdir -p recipes/sglang/dsr1
        cp -rT "$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1-b200" recipes/sglang/dsr1
    else
        git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
        cd "$SRT_REPO_DIR" || exit 1
        git checkout sa-submission-q2-2026
    fi
    SRTCTL_OUTPUT=$(srtctl apply -f "$CONFIG_FILE" --tags "b200,${MODEL_PREFIX}" 2>&1)
    echo "$SRTCTL_OUTPUT"
else
    bash "benchmarks/single_node/${EXP_NAME%%_*}_${PRECISION}_b200.sh"
fi
"""

SLURM_UTILS = b"""#!/usr/bin/env bash
stream_slurm_job_log() {
    local job="$1"
    tail -F "$2"
}
"""

# A complete classic srtctl recipe as NVIDIA/srt-slurm serves it (sa-submission-q2-2026 shape).
TRT_RECIPE = b"""name: "ctx1_gen2"

model:
  path: "dsr1"
  container: "dynamo-trtllm"
  precision: "fp4"

setup_script: b200-fixes.sh

resources:
  gpu_type: "b200"
  prefill_nodes: 1
  prefill_workers: 1
  gpus_per_prefill: 4
  decode_workers: 2
  decode_nodes: 2
  gpus_per_node: 8

backend:
  type: trtllm
  prefill_environment:
    TLLM_LOG_LEVEL: "INFO"
  decode_environment:
    TLLM_LOG_LEVEL: "INFO"
    TRTLLM_ENABLE_PDL: "1"
  trtllm_config:
    prefill:
      tensor_parallel_size: 4
      moe_expert_parallel_size: 4
      enable_attention_dp: true
      kv_cache_config:
        dtype: fp8
      speculative_config:
        decoding_type: MTP
        num_nextn_predict_layers: 2
    decode:
      tensor_parallel_size: 8
      moe_expert_parallel_size: 8
      enable_attention_dp: true
      kv_cache_config:
        dtype: fp8
      speculative_config:
        decoding_type: MTP
        num_nextn_predict_layers: 2

benchmark:
  type: "sa-bench"
  isl: 1024
  osl: 1024
  concurrencies: "64"

frontend:
  type: "dynamo"

dynamo:
  install: false
"""

# srtctl's resources block of a one-prefill, one-decode recipe on one B200 node each.
B200_1P1D_RESOURCES = """resources:
  gpu_type: b200
  gpus_per_node: 8
  prefill_nodes: 1
  prefill_workers: 1
  decode_nodes: 1
  decode_workers: 1
"""

SGL_RECIPE = ("""name: renamed
model:
  path: dsr1
  container: dynamo-sglang
  precision: fp4
""" + B200_1P1D_RESOURCES + """backend:
  type: sglang
  sglang_config:
    prefill:
      tensor-parallel-size: 8
      kv-cache-dtype: fp8_e4m3
    decode:
      tensor-parallel-size: 8
      kv-cache-dtype: fp8_e4m3
benchmark:
  type: sa-bench
  isl: 1024
  osl: 1024
  concurrencies: "32"
""").encode()

SETUP_SCRIPT = b"#!/bin/bash\npip install --no-deps some-fix==1.0\n"


def srt_tree() -> dict[str, bytes]:
    """An old-layout tree whose multi-node rows name srt-slurm recipes the runner fetches or copies."""
    return {
        "configs/nvidia-master.yaml": NVIDIA_MASTER.encode(),
        "configs/runners.yaml": RUNNERS,
        "runners/launch_b200-dgxc-slurm.sh": RUNNER,
        "runners/slurm_utils.sh": SLURM_UTILS,
        "benchmarks/multi_node/srt-slurm-recipes/sglang/dsr1-b200/renamed.yaml": SGL_RECIPE,
    }


AMD_KEY = "kimik2.5-fp4-mi355x-vllm-disagg"
AMD_MASTER = disagg_row(
    AMD_KEY, image="vllm/vllm-openai-rocm:v0.24.0", model="amd/Kimi-K2.5-MXFP4", prefix="kimik2.5",
    runner="mi355x-disagg", precision="fp4", framework="vllm-disagg", spec="none", conc="8, 16",
    prefill=(1, 8, 1, False), prefill_settings=("PREFILL_NODES=1",),
    decode=(1, 8, 8, False), decode_settings=("DECODE_NODES=1",))

AMD_RUNNER = b"""#!/usr/bin/env bash
if [[ "$IS_MULTINODE" == "true" ]]; then
    export MODEL_NAME=${MODEL##*/}
    export MODEL_PATH="/it-share/data"
    export GPUS_PER_NODE=8
    SCRIPT_NAME="${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh"
    if [[ "$FRAMEWORK" == "vllm-disagg" ]]; then
        BENCHMARK_SUBDIR="multi_node"
    else
        BENCHMARK_SUBDIR="single_node/fixed_seq_len"
    fi
    JOB_ID=$(bash "benchmarks/${BENCHMARK_SUBDIR}/${SCRIPT_NAME}")
    echo "$JOB_ID"
fi
"""

AMD_CONFIG_SCRIPT = b"""#!/usr/bin/env bash
source "$(dirname "$0")/../benchmark_lib.sh"
check_env_vars CONC_LIST ISL OSL IMAGE PREFILL_NODES DECODE_NODES
cd "$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils" || exit 1
export MODEL_NAME=$MODEL_NAME
export CONTAINER_IMAGE=$IMAGE
if [[ "${DECODE_EP:-1}" -eq 1 ]]; then
    export DECODE_ENABLE_EP=false
else
    export DECODE_ENABLE_EP=true
fi
JOB_ID=$(bash ./submit.sh $PREFILL_NODES $PREFILL_NUM_WORKERS $DECODE_NODES $DECODE_NUM_WORKERS \\
    $ISL $OSL "${CONC_LIST// /x}" ${DECODE_ENABLE_EP} ${PREFILL_TP} ${DECODE_TP})
echo "$JOB_ID"
"""

BENCHMARK_LIB = b"""#!/usr/bin/env bash
check_env_vars() {
    local missing_vars=()
    for var_name in "$@"; do
        if [[ -z "${!var_name:-}" ]]; then
            missing_vars+=("$var_name")
        fi
    done
    if [[ ${#missing_vars[@]} -gt 0 ]]; then
        echo "missing: ${missing_vars[*]}"
        exit 1
    fi
}
"""

AMD_SUBMIT = b"""#!/bin/bash
PREFILL_NODES=$1
PREFILL_WORKERS=${2:-1}
DECODE_NODES=$3
DECODE_WORKERS=${4:-1}
NUM_NODES=$((PREFILL_NODES + DECODE_NODES))
export xP=$PREFILL_WORKERS
export yD=$DECODE_WORKERS
export DECODE_ENABLE_EP=$8
export PREFILL_TP_SIZE=$(( PREFILL_NODES * $9 / PREFILL_WORKERS ))
export DECODE_TP_SIZE=$(( DECODE_NODES * ${10} / DECODE_WORKERS ))
export NUM_NODES DOCKER_IMAGE_NAME=$CONTAINER_IMAGE
EXCLUDE_OPT=()
sbatch_cmd=(
    sbatch
    --parsable
    -N "$NUM_NODES"
    "${EXCLUDE_OPT[@]}"
    --job-name "$RUNNER_NAME"
    "$(dirname "$0")/job.slurm"
)
JOB_ID=$("${sbatch_cmd[@]}")
echo "$JOB_ID"
"""

AMD_JOB = b"""#!/bin/bash
#SBATCH --ntasks-per-node=1
DI_REPO_DIR=$(cd "$(pwd)/../../.." && pwd)
export DOCKER_CMD_DETECT='if docker ps &>/dev/null 2>&1; then DOCKER_CMD=docker; else DOCKER_CMD="sudo docker"; fi'
DOCKER_ENV=(
    -e NODE_RANK=\\$SLURM_PROCID
    -e xP=\\$xP
    -e MODEL_NAME=\\$MODEL_NAME
    -e PREFILL_TP_SIZE=\\$PREFILL_TP_SIZE
    -e DECODE_TP_SIZE=\\$DECODE_TP_SIZE
    -e DECODE_ENABLE_EP=\\$DECODE_ENABLE_EP
)
RUN_FILE_FULL="/workspace/benchmarks/multi_node/amd_utils/server.sh"
srun --nodelist="$SLURM_JOB_NODELIST" bash -lc "
eval \\"\\$DOCKER_CMD_DETECT\\"
exec \\$DOCKER_CMD run --rm \\
    -v ${DI_REPO_DIR}:/workspace \\
    ${DOCKER_ENV[*]} \\
    --name \\"container_\\$SLURM_PROCID\\" \\
    \\"$DOCKER_IMAGE_NAME\\" bash -lc '
        set -o pipefail
        '"$RUN_FILE_FULL"' 2>&1 | tee /tmp/server.log
    '
"
"""

AMD_SERVER = b"""#!/bin/bash
NODE_RANK="${NODE_RANK:-0}"
MODELS_YAML="$(dirname "${BASH_SOURCE[0]}")/models.yaml"
eval "$(python3 -c "
import yaml
with open('${MODELS_YAML}') as f:
    models = yaml.safe_load(f)
m = models['${MODEL_NAME}']
print(f'PREFILL_FLAGS=\\"{m.get(\\"prefill_flags\\", \\"\\")}\\"')
print(f'DECODE_FLAGS=\\"{m.get(\\"decode_flags\\", \\"\\")}\\"')
print(f'MODEL_ENVS=\\"{m.get(\\"env\\", \\"\\")}\\"')
")"
if echo "$PREFILL_FLAGS" | grep -q -- '--tensor-parallel-size'; then
    PREFILL_FLAGS=$(echo "$PREFILL_FLAGS" | sed -E "s/--tensor-parallel-size[[:space:]]+[0-9]+/--tensor-parallel-size ${PREFILL_TP_SIZE}/g")
fi
if [[ "${DECODE_ENABLE_EP:-false}" == "true" ]]; then
    DECODE_FLAGS+=" --enable-expert-parallel"
fi
for env_pair in ${MODEL_ENVS}; do
    export "$env_pair"
done
host_ip=$(ip route get 1.1.1.1 | awk '/src/ {print $7}')
if [ "$NODE_RANK" -lt "$xP" ]; then
    CMD="vllm serve /models/${MODEL_NAME} --port 2584 \\
        --kv-transfer-config '{\\"kv_role\\": \\"kv_producer\\", \\"proxy_ip\\": \\"${host_ip}\\"}' \\
        ${PREFILL_FLAGS}"
else
    CMD="vllm serve /models/${MODEL_NAME} --port 2584 \\
        --kv-transfer-config '{\\"kv_role\\": \\"kv_consumer\\", \\"proxy_ip\\": \\"${host_ip}\\"}' \\
        ${DECODE_FLAGS}"
fi
eval "$CMD" > /tmp/vllm.log 2>&1 &
wait
"""

AMD_MODELS = b"""Kimi-K2.5-MXFP4:
  prefill_flags: "--tensor-parallel-size 8 --no-enable-prefix-caching --block-size 1"
  decode_flags: "--tensor-parallel-size 8 --kv-cache-dtype fp8 --block-size 1"
  env: "VLLM_USE_V1=1 VLLM_ROCM_USE_AITER=1"
"""


def amd_tree() -> dict[str, bytes]:
    """An old-layout tree with an AMD disaggregated row launched by the amd_utils scripts."""
    return {
        "configs/amd-master.yaml": AMD_MASTER.encode(),
        "configs/runners.yaml": RUNNERS,
        "runners/launch_mi355x-amds.sh": AMD_RUNNER,
        "benchmarks/benchmark_lib.sh": BENCHMARK_LIB,
        "benchmarks/multi_node/kimik2.5_fp4_mi355x_vllm-disagg.sh": AMD_CONFIG_SCRIPT,
        "benchmarks/multi_node/amd_utils/submit.sh": AMD_SUBMIT,
        "benchmarks/multi_node/amd_utils/job.slurm": AMD_JOB,
        "benchmarks/multi_node/amd_utils/server.sh": AMD_SERVER,
        "benchmarks/multi_node/amd_utils/models.yaml": AMD_MODELS,
    }


def make_bundle(head: Mapping[str, bytes], base: Mapping[str, bytes] | None = None, *,
                upstream: Mapping[str, bytes] | None = None, upstream_files: tuple = (),
                review: dt.date = dt.date(2026, 7, 10)) -> Bundle:
    """An in-memory old-layout bundle; every key is affected (the base lacks the master configs)."""
    from verifier.core.model import GitHubFacts

    base = dict(base or {"configs/runners.yaml": RUNNERS})
    now = dt.datetime.combine(review, dt.time(12, 0), tzinfo=dt.UTC)
    files = tuple(ChangedFile(path=p, status="added" if p not in base else "modified")
                  for p in sorted(head) if base.get(p) != head[p])
    pr = PullRequest(repo="SemiAnalysisAI/InferenceX", number=2000, base_sha=SHA_BASE, head_sha=SHA_HEAD,
                     head_ref_oid=SHA_HEAD, commits=(SHA_HEAD,), files=files)
    signoff = SignOff(kind="conversation comment", id=1, url=f"{pr.url}#issuecomment-1", author="reviewer",
                      created_at=now, body="")
    return Bundle(source="memory", review_date=review, pr=pr, signoff=signoff,
                  github=GitHubFacts(upstream_files=upstream_files), upstream=dict(upstream or {}),
                  base=Tree(sha=SHA_BASE, files=base), head=Tree(sha=SHA_HEAD, files=dict(head)))
