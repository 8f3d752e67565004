"""Static evaluation of old-layout launcher scripts (verifier/launch/recipes/legacy_script.py on verifier.shell)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.kit import CASES, clone_bundle, judge, row, row_summary
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.launch.recipes.legacy_script import ScriptUnresolved, evaluate_script

ENV = {"MODEL": "org/model", "TP": "4", "CONC": "40", "EP_SIZE": "1", "DP_ATTENTION": "false",
       "KV_OFFLOADING": "none", "PORT": "8888", "MODEL_PATH": "org/model", "EVAL_ONLY": "false",
       "RESULT_DIR": "/tmp/result"}

SCRIPT = """#!/usr/bin/env bash
set -euo pipefail
source "$(dirname "$0")/../../lib.sh"   # unknown: ignored
check_vars MODEL TP

WINDOW="${WINDOW:-512}"
export ALPHA=one
BETA="${ALPHA}-two"
LIMIT=$((2 * CONC))
PAR=(--tp "$TP")
if [ "$DP_ATTENTION" = "true" ]; then
    PAR+=(--dp "$TP" --enable-dp-attention)
elif [[ "$KV_OFFLOADING" != "none" ]]; then
    PAR+=(--offload)
else
    PAR+=(
        # a comment inside an array
        --kv-cache-dtype fp8_e4m3
    )
fi
GRAPH=$LIMIT
[ "$GRAPH" -gt 64 ] && GRAPH=64
if [ -z "${UNSET_THING:-}" ] && [ -n "$MODEL" ]; then
    export GAMMA="$BETA"
fi
CMD=(
    python3 -m sglang.launch_server
    --model-path "$MODEL_PATH" \\
    --window "$WINDOW"
    "${PAR[@]}"
    --max-running-requests "$LIMIT"
    --cuda-graph-max-bs "$GRAPH"
)
printf '%q ' "${CMD[@]}" | tee "$RESULT_DIR/cmd.txt"
"${CMD[@]}" > "$RESULT_DIR/server.log" 2>&1 &
"""


def test_constructs() -> None:
    out = evaluate_script(SCRIPT, ENV)
    assert out.module == "sglang.launch_server"
    assert out.argv == ("--model-path", "org/model", "--window", "512", "--tp", "4", "--kv-cache-dtype",
                        "fp8_e4m3", "--max-running-requests", "80", "--cuda-graph-max-bs", "64")
    lines = out.flag_lines()
    assert lines["model-path"] == 28 and lines["window"] == 29 and lines["tp"] == 10
    assert lines["kv-cache-dtype"] == 18 and lines["cuda-graph-max-bs"] == 32
    assert out.env == {"ALPHA": "one", "GAMMA": "one-two"}
    assert out.env_lines == {"ALPHA": 7, "GAMMA": 24}
    assert out.args()["tp"] == "4"
    assert out.line == 35


def test_dp_attention_branch_and_defaults() -> None:
    out = evaluate_script(SCRIPT, {**ENV, "DP_ATTENTION": "true", "WINDOW": "9"})
    assert "--enable-dp-attention" in out.argv and "--kv-cache-dtype" not in out.argv
    assert out.args()["dp"] == "4" and out.args()["window"] == "9"
    assert out.flag_lines()["enable-dp-attention"] == 12
    out = evaluate_script(SCRIPT, {**ENV, "KV_OFFLOADING": "dram"})
    assert "--offload" in out.argv


def test_serve_and_prefix_env() -> None:
    text = 'X=7\nSGLANG_FOO=1 sglang serve --model-path "$MODEL" --x "${X}"\n'
    out = evaluate_script(text, ENV)
    assert out.launcher == ("sglang", "serve") and out.argv == ("--model-path", "org/model", "--x", "7")
    assert out.env == {"SGLANG_FOO": "1"}
    out = evaluate_script('vllm serve "$MODEL" --tensor-parallel-size $TP\n', ENV)
    assert out.argv == ("org/model", "--tensor-parallel-size", "4")


def test_unknown_function_irrelevant_branch_is_ignored() -> None:
    text = ('if probe_gpu; then\n  echo ok\nfi\nif ! [[ "$TP" =~ ^[0-9]+$ ]]; then\n  exit 1\nfi\n'
            'python3 -m sglang.launch_server --tp "$TP"\n')
    assert evaluate_script(text, ENV).argv == ("--tp", "4")


def test_unresolvable_branch_names_its_line() -> None:
    text = "EXTRA=()\nif has_backend hicache; then\n  EXTRA=(--enable-hierarchical-cache)\nfi\n" \
           'python3 -m sglang.launch_server --tp "$TP" "${EXTRA[@]}"\n'
    with pytest.raises(ScriptUnresolved) as err:
        evaluate_script(text, ENV)
    assert err.value.line == 2


def test_no_server_command() -> None:
    with pytest.raises(ScriptUnresolved):
        evaluate_script("echo hi\n", ENV)


def test_command_substitution_value_is_opaque() -> None:
    text = 'DIR="$(hostname -s)"\npython3 -m sglang.launch_server --chat-template "$DIR/t.jinja"\n'
    out = evaluate_script(text, ENV)
    assert out.argv[0] == "--chat-template" and out.opaque and out.opaque[0][1] == 2
    # a substitution of commands the evaluator models is computed
    text = 'DIR="$(cd "$(dirname "$0")" && pwd)"\npython3 -m sglang.launch_server --chat-template "$DIR/t.jinja"\n'
    out = evaluate_script(text, {**ENV, "PWD": "/workspace"}, path="benchmarks/x/run.sh")
    assert out.argv == ("--chat-template", "/workspace/benchmarks/x/t.jinja") and not out.opaque


REALISTIC = r"""#!/usr/bin/env bash
set -euo pipefail
set -x
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../../lib.sh"
if [[ -n "${MODEL_PATH:-}" ]]; then
    if [[ ! -d "$MODEL_PATH" || -z "$(ls -A "$MODEL_PATH" 2>/dev/null)" ]]; then
        fetch "$MODEL" --to "$MODEL_PATH"
    fi
else
    fetch "$MODEL"
    export MODEL_PATH="$MODEL"
fi
POOL=()
if offload_backend_is pool; then
    SIZE="${SIZE:-100}"
    if ! [[ "$SIZE" =~ ^[0-9]+$ ]]; then
        echo "bad size" >&2
        exit 1
    fi
    POOL=(--pool-size "$SIZE")
fi
for i in 1 2; do LOOPED=$i; done
note() {
    { echo "x"; } >> "$RESULT_DIR/log"
}
PTX=$(find /usr \
    -name ptxas -print -quit 2>/dev/null || true)
if [ -n "$PTX" ]; then
    export PTX
fi
{
    echo "=== env ==="
    env | grep -E '^X_' | sort || true
} | tee "$RESULT_DIR/server.log"
export X_MODE=fast
SERVER=(
    python3 -m sglang.launch_server
    --model-path "$MODEL_PATH"
    --chat-template "$HERE/tpl.jinja"
    "${POOL[@]}"
)
"${SERVER[@]}" >> "$RESULT_DIR/server.log" 2>&1 &
SERVER_PID=$!
run_router \
    `# a backtick comment` \
    --port "$PORT" > /dev/null 2>&1 &
REPLAY+=" --metrics http://localhost:$PORT/metrics"
"""

FUNCS = {"offload_backend_is": ("KV_OFFLOADING", "!=", "none")}


def test_realistic_script_with_known_function() -> None:
    # PTX comes from `find` on the machine: whether it is exported depends on line 29, so the
    # server starts in two ways; without that branch the script starts one server
    with pytest.raises(ScriptUnresolved) as err:
        evaluate_script(REALISTIC, ENV, functions=FUNCS)
    assert err.value.line == 29
    fixed = REALISTIC.replace('if [ -n "$PTX" ]; then\n    export PTX\nfi\n', "")
    out = evaluate_script(fixed, ENV, functions=FUNCS)
    assert out.argv[:2] == ("--model-path", "org/model") and "--pool-size" not in out.argv
    assert out.env == {"X_MODE": "fast"}
    out = evaluate_script(fixed, {**ENV, "KV_OFFLOADING": "dram"}, functions=FUNCS)
    assert out.argv[-2:] == ("--pool-size", "100") and out.flag_lines()["pool-size"] == 21
    with pytest.raises(ScriptUnresolved) as err:
        evaluate_script(fixed, ENV)
    assert err.value.line == 15


LEGACY_MINIMAX = """#!/usr/bin/env bash
# Test launcher (old layout): MiniMax-M3.1-Flash NVFP4 on B300, SGLang drafting with dspark/.
set -eo pipefail
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC KV_OFFLOADING SPEC_DECODING

SERVER_LOG="$RESULT_DIR/server.log"
MEM_FRACTION=0.85
HICACHE_GB=290
if [ "$TP" = "2" ]; then
    MEM_FRACTION=0.88
    HICACHE_GB=370
fi

CACHE=()
if require_agentic_kv_offload_backend hicache; then
    CACHE=(
        --enable-hierarchical-cache
        --hicache-size "$HICACHE_GB"
        --hicache-write-policy write_back
        --hicache-io-backend direct
        --hicache-mem-layout page_first_direct
    )
fi
if [[ "$TP" -eq 2 && "$CONC" -ge 44 ]]; then
    CACHE+=(--schedule-policy lpm)
fi

SPEC=()
if [ "$SPEC_DECODING" != "none" ]; then
    SPEC=(
        --speculative-algorithm DSPARK
        --speculative-dspark-block-size 7
        --speculative-draft-model-path /model/dspark
    )
fi

export SGLANG_TIMEOUT_KEEP_ALIVE=900
CMD=(
    python3 -m sglang.launch_server
    --model-path /model
    --served-model-name "$MODEL"
    --tensor-parallel-size "$TP"
    --trust-remote-code
    --moe-runner-backend flashinfer_trtllm_routed
    --mem-fraction-static "$MEM_FRACTION"
    --chunked-prefill-size 16384
    --reasoning-parser minimax-m3
    --tool-call-parser minimax-m3
    "${SPEC[@]}"
    --watchdog-timeout 1800
    --enable-metrics
    --enable-cache-report
    --max-running-requests $((2 * CONC))
    --cuda-graph-max-bs-decode $((2 * CONC))
    "${CACHE[@]}"
    --host 0.0.0.0
    --port "$PORT"
)
"${CMD[@]}" > "$SERVER_LOG" 2>&1 &
"""


def _old_layout_bundle(tmp_path: Path, script: str) -> Path:
    """pr4524-approved moved to the old layout, its minimaxm31flash rows launched by `script`."""
    bundle = clone_bundle(CASES / "pr4524-approved", tmp_path)
    for side in ("base", "head"):
        root = bundle / "tree" / side
        nested = root / "inferencex-e2e"
        for child in list(nested.iterdir()):
            shutil.move(str(child), str(root / child.name))
        nested.rmdir()
        shutil.rmtree(root / "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash")
        master = root / "configs/nvidia-master.yaml"
        text = master.read_text(encoding="utf-8")
        text = re.sub(r", srt-recipe: benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/[^ ]+ }", " }", text)
        master.write_text(text, encoding="utf-8")
    target = bundle / "tree/head/benchmarks/single_node/agentic/minimaxm31flash_fp4_b300_sglang_mtp.sh"
    target.parent.mkdir(parents=True)
    target.write_text(script, encoding="utf-8")
    return bundle


def test_old_layout_bundle_judged_from_legacy_script(tmp_path: Path) -> None:
    bundle = _old_layout_bundle(tmp_path / "ok", LEGACY_MINIMAX)
    ctx = CheckContext(read_bundle(bundle), load_policies())
    ls = launches(ctx, "head", ["minimaxm31flash-fp4-b300-sglang-agentic-dspark"])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert len(ls.launches) == 16
    first = ls.launches[0]
    assert first.recipe_path.endswith("agentic/minimaxm31flash_fp4_b300_sglang_mtp.sh")
    assert first.arg_origin("speculative-algorithm")[1] == 32
    report = judge(bundle, only={13})
    assert row(report, 13).status.value == "PASS", row_summary(row(report, 13))

    bad = LEGACY_MINIMAX.replace("--speculative-draft-model-path /model/dspark\n",
                                 "--speculative-draft-model-path /model/dspark\n"
                                 "        --speculative-draft-kv-cache-dtype fp8_e4m3\n")
    report = judge(_old_layout_bundle(tmp_path / "bad", bad), only={13})
    r = row(report, 13)
    assert r.status.value == "FAIL"
    assert "minimaxm31flash_fp4_b300_sglang_mtp.sh" in row_summary(r)


def test_script_without_framework_tag_is_the_runners_fallback(tmp_path: Path) -> None:
    """The runners fall back to `<prefix>_<precision>_<sku>[_trt|_atom][_mtp].sh` when the
    framework-tagged script is absent; for sglang the fallback name has no engine suffix."""
    bundle = _old_layout_bundle(tmp_path, LEGACY_MINIMAX)
    folder = bundle / "tree/head/benchmarks/single_node/agentic"
    (folder / "minimaxm31flash_fp4_b300_sglang_mtp.sh").rename(folder / "minimaxm31flash_fp4_b300.sh")
    (folder / "minimaxm31flash_fp4_b300_mtp.sh").write_text("#!/bin/bash\necho mtp only\n", encoding="utf-8")
    ctx = CheckContext(read_bundle(bundle), load_policies())
    ls = launches(ctx, "head", ["minimaxm31flash-fp4-b300-sglang-agentic-dspark"])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    used = {(la.recipe_path.rsplit("/", 1)[-1], la.point.spec_decoding) for la in ls.launches}
    # `_mtp` is appended only for spec-decoding mtp; draft_model points run the bare name too
    assert used == {("minimaxm31flash_fp4_b300.sh", "draft_model"), ("minimaxm31flash_fp4_b300.sh", "none")}


def test_framework_tagged_script_is_preferred_over_the_fallback(tmp_path: Path) -> None:
    bundle = _old_layout_bundle(tmp_path, LEGACY_MINIMAX)
    folder = bundle / "tree/head/benchmarks/single_node/agentic"
    (folder / "minimaxm31flash_fp4_b300_sglang.sh").write_text(LEGACY_MINIMAX, encoding="utf-8")
    (folder / "minimaxm31flash_fp4_b300.sh").write_text("#!/bin/bash\necho not this one\n", encoding="utf-8")
    ctx = CheckContext(read_bundle(bundle), load_policies())
    ls = launches(ctx, "head", ["minimaxm31flash-fp4-b300-sglang-agentic-dspark"])
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert {la.recipe_path.rsplit("/", 1)[-1] for la in ls.launches if la.point.spec_decoding == "none"} == \
        {"minimaxm31flash_fp4_b300_sglang.sh"}


def test_legacy_script_stems_follow_the_runner_suffixes() -> None:
    from verifier.launch.legacy_scripts import legacy_script_stems

    class _Entry:
        model_prefix, precision, sku = "dsr1", "fp4", "b200"

    conf = load_policies()["launch"]["legacy-script"]
    assert legacy_script_stems(_Entry(), "trt", "mtp", conf) == ["dsr1_fp4_b200_trt_mtp"]  # type: ignore[arg-type]
    assert legacy_script_stems(_Entry(), "sglang", "none", conf) == ["dsr1_fp4_b200_sglang", "dsr1_fp4_b200"]  # type: ignore[arg-type]
    assert legacy_script_stems(_Entry(), "atom", "none", conf)[-1] == "dsr1_fp4_b200_atom"  # type: ignore[arg-type]


def test_nested_parentheses_in_arithmetic_evaluate() -> None:
    """`$((a * (b + 1)))` is one arithmetic expansion (an earlier reader took the inner `)` for a
    stray token and looped on it)."""
    script = 'if [ "$X" -gt 0 ]; then\n  Y=$((Y * (X + 1)))\nfi\npython3 -m sglang.launch_server\n'
    assert evaluate_script(script, {**ENV, "X": "1", "Y": "2"}).env["Y"] == "4"


def test_a_stray_closing_parenthesis_is_refused_not_looped_on() -> None:
    """A `)` no command starts with is refused (it used to loop forever, growing without bound)."""
    with pytest.raises(ScriptUnresolved) as err:
        evaluate_script('Y=1\n)\npython3 -m sglang.launch_server\n', ENV)
    assert err.value.message == "unexpected ')'"
