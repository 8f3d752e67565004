"""Multi-node launches started by script chains (verifier/launch/kinds/multinode_script.py, follow.py)."""

from __future__ import annotations

from tests.launch.multinode_kit import AMD_KEY, AMD_SERVER, amd_tree, make_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches

SERVER = "benchmarks/multi_node/amd_utils/server.sh"
MODELS = "benchmarks/multi_node/amd_utils/models.yaml"


def _launches(files: dict[str, bytes]):  # type: ignore[no-untyped-def]
    return launches(CheckContext(make_bundle(files), load_policies()), "head", [AMD_KEY])


def test_amd_disaggregated_row_resolves_one_launch_per_role() -> None:
    ls = _launches(amd_tree())
    assert not ls.errors, [str(e) for e in ls.errors]
    assert [(x.exp_name, x.role) for x in ls.launches] == [("kimik2.5_1k1k", "prefill"), ("kimik2.5_1k1k", "decode")]
    prefill, decode = ls.launches
    for launch in (prefill, decode):
        assert launch.kind == "multinode-script"
        assert launch.engine == "vllm" and launch.module == "vllm.entrypoints.openai.api_server"
        assert launch.argv[0] == "/models/Kimi-K2.5-MXFP4"  # the model is vllm serve's positional argument
        assert launch.env["VLLM_ROCM_USE_AITER"] == "1"  # models.yaml env, exported by the server script
    # per-role flags: the row's decode ep 8 turns expert parallelism on; models.yaml gives the rest
    assert "--enable-expert-parallel" in decode.argv and "--enable-expert-parallel" not in prefill.argv
    assert decode.args["kv-cache-dtype"] == "fp8"
    assert prefill.args["tensor-parallel-size"] == "8" and "no-enable-prefix-caching" in prefill.args
    assert '"kv_role": "kv_producer"' in prefill.args["kv-transfer-config"]
    # origins: a flag from models.yaml points at its YAML line, one the script adds at its own line
    assert decode.arg_origin("kv-cache-dtype") == (MODELS, 3)
    line = AMD_SERVER.decode().split("\n").index('    DECODE_FLAGS+=" --enable-expert-parallel"') + 1
    assert decode.arg_origin("enable-expert-parallel") == (SERVER, line)
    # every file of the chain the launch read is listed (Check 10's scope)
    assert decode.files == ("runners/launch_mi355x-amds.sh", "benchmarks/multi_node/kimik2.5_fp4_mi355x_vllm-disagg.sh",
                            "benchmarks/benchmark_lib.sh", "benchmarks/multi_node/amd_utils/submit.sh",
                            "benchmarks/multi_node/amd_utils/job.slurm", SERVER, MODELS)


def test_a_missing_script_of_the_chain_is_named_and_needed() -> None:
    files = amd_tree()
    del files["benchmarks/multi_node/amd_utils/job.slurm"]
    ls = _launches(files)
    [error] = {e.message for e in ls.errors}
    assert "runs benchmarks/multi_node/amd_utils/job.slurm, which is not in the tree" in error
    assert any(n.path == "benchmarks/multi_node/amd_utils/job.slurm" for n in ls.needs)


def test_a_flag_set_under_an_undecidable_condition_is_the_named_construct() -> None:
    files = amd_tree()
    server = files[SERVER].decode().replace(
        'for env_pair in ${MODEL_ENVS}; do',
        'if [[ -n "$(hostname | grep big)" ]]; then\n    DECODE_FLAGS+=" --max-num-seqs 512"\nfi\n'
        'for env_pair in ${MODEL_ENVS}; do')
    files[SERVER] = server.encode()
    ls = _launches(files)
    [error] = ls.errors
    assert error.file == SERVER and "decode server cannot be resolved" in error.message
    assert "is set under a condition only the run decides" in error.message
    assert error.line == server.split("\n").index('if [[ -n "$(hostname | grep big)" ]]; then') + 1
    assert [x.role for x in ls.launches] == ["prefill"]


def test_an_unreadable_snippet_stops_the_launch_at_its_eval() -> None:
    files = amd_tree()
    files[SERVER] = files[SERVER].replace(b"import yaml\n", b"import yaml, subprocess\n")
    ls = _launches(files)
    assert ls.errors and not ls.launches
    error = ls.errors[0]
    assert error.file == SERVER and error.line == 4 and "evaluates the output of `$(python3" in error.message


def test_the_new_layout_still_requires_a_recipe() -> None:
    from tests.launch.helpers import make_ctx, tree_files
    from tests.launch.test_launch import MASTER

    ls = launches(make_ctx(tree_files()), "head", ["tm-fp4-gb300-dynamo-sglang-agentic-disagg"])
    [error] = ls.errors
    assert error.kind == "no-recipe" and error.file == MASTER


BENCH = b"""#!/bin/bash
source "$(dirname "$0")/../../benchmark_lib.sh"
extra_flags=""
if [ "$IS_MTP" = "true" ]; then
    extra_flags="--use-chat-template"
fi
run_benchmark_serving \\
    --model "$MODEL_NAME" \\
    --backend openai \\
    $extra_flags
"""


def _spec_decode_amd_tree(bench: bytes) -> dict[str, bytes]:
    files = amd_tree()
    files["configs/amd-master.yaml"] = files["configs/amd-master.yaml"].replace(b'spec-decoding: "none"',
                                                                                b'spec-decoding: "mtp"')
    server = AMD_SERVER.replace(b"        ${DECODE_FLAGS}", b"""        --speculative-config '{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": 1}' ${DECODE_FLAGS}""")
    files["benchmarks/multi_node/amd_utils/server.sh"] = server.replace(
        b"wait\n", b'BENCH_CMD="bash $(dirname "${BASH_SOURCE[0]}")/bench.sh"\neval "$BENCH_CMD"\nwait\n')
    files["benchmarks/multi_node/amd_utils/bench.sh"] = bench
    return files


def test_check_9_judges_the_client_the_server_script_runs() -> None:
    """AMD chains: server.sh starts the servers and runs bench.sh, which drives the client."""
    from checks import c09_chat_template
    from verifier.core.results import Status

    ctx = CheckContext(make_bundle(_spec_decode_amd_tree(BENCH)), load_policies())
    assert any(f.endswith("amd_utils/bench.sh") for x in launches(ctx, "head").launches for f in x.files)
    result = c09_chat_template.check(ctx)
    assert result.status is Status.PASS, result
    assert {f.params["client"] for f in result.findings if f.message_id == "chat-client"} == {
        "benchmarks/multi_node/amd_utils/bench.sh"}
    raw = BENCH.replace(b"--backend openai", b"--backend vllm")
    failed = c09_chat_template.check(CheckContext(make_bundle(_spec_decode_amd_tree(raw)), load_policies()))
    assert failed.status is Status.FAIL
    assert failed.findings[0].message_id == "raw-completions-client"


def test_an_option_array_set_only_at_run_time_does_not_hide_the_job_script() -> None:
    """`sbatch ... "${EXCLUDE_OPT[@]}" --job-name X job.slurm` with the array set under a condition the
    reader cannot decide: the job script is still the first word after the options."""
    files = amd_tree()
    files["benchmarks/multi_node/amd_utils/submit.sh"] = files["benchmarks/multi_node/amd_utils/submit.sh"].replace(
        b"EXCLUDE_OPT=()\n", b'EXCLUDE_OPT=()\nif [[ -n "$(cat /etc/excludes)" ]]; then\n'
                           b'    EXCLUDE_OPT=(--exclude "$(cat /etc/excludes)")\nfi\n')
    ls = _launches(files)
    assert not ls.fatal_errors, [str(e) for e in ls.errors]
    assert {x.role for x in ls.launches} == {"prefill", "decode"}


def test_a_chain_that_exits_before_any_server_names_the_exit() -> None:
    files = amd_tree()
    script = "benchmarks/multi_node/kimik2.5_fp4_mi355x_vllm-disagg.sh"
    files[script] = files[script].replace(b'cd "$GITHUB_WORKSPACE', b'if [ "$ISL" = "1024" ]; then\n    exit 1\nfi\n'
                                                                  b'cd "$GITHUB_WORKSPACE')
    [error, *_] = _launches(files).fatal_errors
    assert (error.file, error.line) == (script, 5)
    assert "exits at kimik2.5_fp4_mi355x_vllm-disagg.sh:5 before it starts a server" in error.message
