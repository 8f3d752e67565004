"""Binding points to variants and writing the server command / environment (fixtures)."""

from __future__ import annotations

import json

import pytest

from tests.launch.helpers import edit, make_ctx, old_layout, tree_files
from verifier.launch import EXACTLY_ONE, launches
from verifier.launch.recipes import golden_al

MASTER = "inferencex-e2e/configs/nvidia-master.yaml"
SGL = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/tm/sglang/b300-fp4-mtp/agentic.yaml"
VLLM = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/tm/vllm/b300-fp4-mtp/agentic.yaml"
TRT = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/tm/trtllm/b300-fp4-mtp/agentic.yaml"
GOLDEN = "inferencex-e2e/infx/golden_al_distribution/tm_dspark.yaml"
KEY = "tm-fp4-b300-sglang-agentic-dspark"


def one(ls, exp_name: str, role: str = "agg"):
    [launch] = [x for x in ls.by_exp_name(exp_name) if x.role == role]
    return launch


def test_sglang_argv_env_and_origins() -> None:
    ls = launches(make_ctx(tree_files()), "head", [KEY])
    assert not ls.errors
    launch = one(ls, "tm_tp4_conc1_kvnone_spec-draft_model")
    assert launch.variant == "override_tp4_c1" and launch.variant_name == "tm-fp4-b300-sglang-agentic_tp4_c1"
    assert launch.argv == (
        "--model-path", "/model", "--served-model-name", "example-org/TestModel-NVFP4",
        "--tensor-parallel-size", "4", "--trust-remote-code", "--moe-runner-backend", "flashinfer_mxfp4",
        "--speculative-algorithm", "DSPARK", "--speculative-dspark-block-size", "7",
        "--json-model-override-args", '{"rope_scaling":{"factor":2.0},"use_x":true}',
        "--cuda-graph-bs", "1", "2", "4", "--mem-fraction-static", "0.85", "--max-running-requests", "2",
        "--host", "0.0.0.0", "--port", "30000",
    )  # enable-metrics: false is omitted; a dict is compact JSON; a list repeats tokens
    assert list(launch.env.items()) == [
        ("CUDA_VISIBLE_DEVICES", "0,1,2,3"), ("HF_HUB_OFFLINE", "1"),
        ("SGLANG_TIMEOUT_KEEP_ALIVE", "1800"),  # recipe-wide environment wins over role env
        ("SGLANG_FLAG", "true"),
        ("SGLANG_SIMULATE_ACC_LEN", "4.04"),  # the hard-coded 9.99 is overwritten in place
        ("SGLANG_SIMULATE_ACC_METHOD", "match-expected"),  # environment's stale value is unset
        ("SGLANG_SIMULATE_ACC_TOKEN_MODE", "real-draft-token"),
        ("TORCH_CUDA_ARCH_LIST", "10.0"),
    ]
    assert launch.arg_origin("--max-running-requests") == (SGL, 43)
    assert launch.arg_origin("mem-fraction-static") == (SGL, 26)
    assert launch.arg_origin("model-path") == ("inferencex-e2e/configs/runners.yaml", 19)
    assert launch.env_origin("SGLANG_TIMEOUT_KEEP_ALIVE") == (SGL, 33)
    assert launch.env_origin("SGLANG_SIMULATE_ACC_LEN") == (GOLDEN, 6)
    assert launch.env_origin("CUDA_VISIBLE_DEVICES") == (SGL, 15)
    assert launch.benchmark_env["CONC"] == "1" and launch.benchmark_env["MODEL"] == "example-org/TestModel-NVFP4"
    assert launch.recipe["model"]["path"] == "hf:example-org/TestModel-NVFP4"
    assert launch.synthetic is not None and launch.synthetic.golden.value == 4.04
    assert launch.arg("mem_fraction_static") == 0.85 and launch.has_flag("trust_remote_code")
    assert launch.spec is not None and (launch.spec.method, launch.spec.draft_length) == ("dspark", 7)


def test_nospec_point_binds_the_nospec_variant_without_injection() -> None:
    ls = launches(make_ctx(tree_files()), "head", [KEY])
    launch = one(ls, "tm_tp4_conc1_kvnone")
    assert launch.variant == "override_tp4_c1_nospec"
    assert "--speculative-algorithm" not in launch.argv
    assert launch.env["SGLANG_SIMULATE_ACC_LEN"] == "9.99" and launch.synthetic is not None
    assert not launch.synthetic.active


def test_dram_values_and_extra_args() -> None:
    ls = launches(make_ctx(tree_files()), "head", [KEY])
    tp4 = one(ls, "tm_tp4_conc32_kvdram-hicache_spec-draft_model")
    assert tp4.point.total_cpu_dram_gb == 1199
    assert tp4.args["hicache-size"] == 299  # per-gpu-gb as an int in args
    assert tp4.env["SGLANG_HOST_POOL_BYTES"] == "1199000000000"  # a decimal string in env
    assert tp4.benchmark_env["TOTAL_CPU_DRAM_GB"] == "1199"
    assert "--moe-runner-backend" not in tp4.argv  # deleted by the null in the << anchor
    assert tp4.argv[-2:] == ("--enable-foo", "bar")  # extra_args appended as given
    tp2 = one(ls, "tm_tp2_conc16_kvdram-hicache_spec-draft_model")
    assert tp2.variant == "override_tp2_hicache_c16" and tp2.args["hicache-size"] == 374
    assert tp2.point.total_cpu_dram_gb == 749 and tp2.env["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_zip_bound_fixed_seq_point() -> None:
    ls = launches(make_ctx(tree_files()), "head", ["tm-fp8-b300-sglang"])
    assert not ls.errors
    assert [x.variant for x in ls.launches] == [f"zip_override_concurrency[{i}]" for i in range(3)]
    launch = ls.launches[1]
    assert launch.argv[:4] == ("--model-path", "example-org/TestModel-FP8", "--served-model-name", "TestModel-FP8")
    assert "--cuda-graph-bs" in launch.argv and launch.args["cuda-graph-bs"] == [1, 2, 4, 8]
    assert launch.env == {"CUDA_VISIBLE_DEVICES": "0,1,2,3", "NCCL_IB_TC": "104"}
    assert launch.benchmark_env["USE_CHAT_TEMPLATE"] == "false" and launch.benchmark_env["ISL"] == "8192"
    assert launch.synthetic is not None and not launch.synthetic.active


def test_vllm_and_trt_synthetic_acceptance_forms() -> None:
    ctx = make_ctx(tree_files())
    vllm = launches(ctx, "head", ["tm-fp4-b300-vllm-agentic-mtp"]).launches[0]
    spec = json.loads(vllm.args["speculative-config"])
    assert spec == {"method": "mtp", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic",
                    "synthetic_acceptance_length": 3.0}
    transfer = json.loads(vllm.args["kv-transfer-config"])
    assert transfer["kv_connector_extra_config"]["max_local_cpu_size"] == 374  # @dram inside a JSON string
    assert vllm.env["LMCACHE_MAX_LOCAL_CPU_SIZE"] == "374"
    # the synthetic keys are merged into the recipe's own speculative-config, which keeps its line
    assert vllm.arg_origin("speculative-config")[0].endswith("tm/vllm/b300-fp4-mtp/agentic.yaml")
    trt = launches(ctx, "head", ["tm-fp4-b300-trtllm-agentic-mtp"]).launches[0]
    assert trt.env["TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"] == "2"  # golden AL 3.0 minus one
    assert trt.args["kv_cache_config"]["host_cache_size"] == 599 * 10**9 // 2
    assert trt.served_model_name == "example-org/TestModel-NVFP4"  # engine.served_model_name
    assert trt.argv[-2:] == ("--chat_template", "/model/chat_template.jinja")


def test_multinode_disagg_roles() -> None:
    ls = launches(make_ctx(tree_files()), "head", ["tm-fp4-gb300-dynamo-sglang-agentic-disagg"])
    roles = [(x.exp_name, x.role) for x in ls.launches]
    assert roles[:2] == [("tm_p1x4ep4dpa_d2x8ep8dpa_conc64_kvdram-hicache", "prefill"),
                         ("tm_p1x4ep4dpa_d2x8ep8dpa_conc64_kvdram-hicache", "decode")]
    decode = ls.launches[1]
    assert decode.argv[4:6] == ("--disaggregation-mode", "decode")
    assert decode.env["SGLANG_SIMULATE_ACC_LEN"] == "3"  # golden 3.0 formatted with :g
    [error] = ls.errors  # the fixed-seq multinode row names no recipe
    assert error.kind == "no-recipe" and error.file == MASTER and error.line == 99


def test_zero_matching_variants_names_the_file() -> None:
    files = edit(tree_files(), SGL, "CONC: '8'", "CONC: '9'")
    ls = launches(make_ctx(files), "head", [KEY])
    [error] = [e for e in ls.errors if e.exp_name == "tm_tp4_conc8_kvnone_spec-draft_model"]
    assert EXACTLY_ONE in error.message and error.file == SGL
    assert "CONC: recipe" in error.message
    assert len(ls.launches) == 4


def test_two_matching_variants_is_an_error() -> None:
    files = edit(tree_files(), SGL, "override_tp4_c8:", "override_tp4_c1_copy:\n  benchmark:\n    env:\n"
                 "      CONC: '1'\n      KV_OFFLOADING: none\n\noverride_tp4_c8:")
    ls = launches(make_ctx(files), "head", [KEY])
    [error] = [e for e in ls.errors if e.exp_name == "tm_tp4_conc1_kvnone_spec-draft_model"]
    assert "2 variants match (override_tp4_c1, override_tp4_c1_copy)" in error.message
    assert error.file == SGL and error.line is not None


def test_spec_mismatch_and_tp_mismatch_reasons() -> None:
    files = edit(tree_files(), MASTER, "conc-list: [1, 8]", "conc-list: [1, 8, 64]")
    ls = launches(make_ctx(files), "head", [KEY])
    [error] = ls.errors
    assert EXACTLY_ONE in error.message and "conc64" in error.message


def test_dram_reference_on_non_dram_point_fails() -> None:
    files = edit(tree_files(), SGL, "        max-running-requests: 16\n",
                 "        max-running-requests: 16\n        hicache-size: '@dram.per-gpu-gb'\n")
    ls = launches(make_ctx(files), "head", [KEY])
    [error] = [e for e in ls.errors if e.exp_name == "tm_tp4_conc8_kvnone_spec-draft_model"]
    assert "without DRAM offload" in error.message and error.file == SGL and error.line == 66


def test_fragment_rules() -> None:
    files = edit(tree_files(), SGL, "  engine: sglang\n",
                 "  engine: sglang\n  model:\n    path: hf:example-org/TestModel-NVFP4\n")
    files = edit(files, SGL, "      CONC: '1'\n      KV_OFFLOADING: none\n\noverride_tp4_c1_nospec",
                 "      CONC: '1'\n      KV_OFFLOADING: none\n      MODEL: x\n\noverride_tp4_c1_nospec")
    files = edit(files, SGL, "        SGLANG_FLAG: true\n", "        SGLANG_FLAG: true\n"
                 "        LMCACHE_MAX_LOCAL_CPU_SIZE: '100'\n")
    ls = launches(make_ctx(files), "head", [KEY])
    kinds = {(e.kind, e.line) for e in ls.errors}
    assert ("bound-key", 12) in kinds  # base sets model.path
    assert any(k == "bound-key" for k, _ in kinds) and any("override_tp4_c1: remove benchmark.env.MODEL" in e.message
                                                          for e in ls.errors)
    assert ("literal-dram", 32) in kinds
    assert len(ls.launches) == 5  # the binder's values still produce launches


def test_literal_dram_size_inside_a_json_string_or_after_a_size_flag() -> None:
    # check_fragment reads JSON-object strings (kv-transfer-config) and argument lists too
    files = edit(tree_files(), VLLM, '{"max_local_cpu_size": "@dram.per-gpu-gb"}', '{"max_local_cpu_size": 374}')
    files = edit(files, VLLM, "        tensor-parallel-size: 4\n",
                 "        tensor-parallel-size: 4\n        lmcache-args: ['--l1-size-gb', '1296']\n")
    ls = launches(make_ctx(files), "head", ["tm-fp4-b300-vllm-agentic-mtp"])
    found = {(e.line, e.message) for e in ls.errors if e.kind == "literal-dram"}
    assert found == {
        (20, "base.roles.agg.args.kv-transfer-config.kv_connector_extra_config.max_local_cpu_size must be an "
             "'@dram.<name>' value, not 374"),
        (18, "base.roles.agg.args.lmcache-args.1 must be an '@dram.<name>' value, not '1296'"),
    }
    # the shipped fixture's '@dram.per-gpu-gb' inside the same JSON string is accepted
    assert not [e for e in launches(make_ctx(tree_files()), "head", ["tm-fp4-b300-vllm-agentic-mtp"]).errors
                if e.kind == "literal-dram"]


def test_missing_golden_cell_fails_the_point() -> None:
    files = edit(tree_files(), SGL, "speculative-dspark-block-size: 7", "speculative-dspark-block-size: 5")
    ls = launches(make_ctx(files), "head", [KEY])
    spec_errors = [e for e in ls.errors if "missing golden AL" in e.message]
    assert len(spec_errors) == 4 and spec_errors[0].file == GOLDEN
    assert "draft length 5 not measured under thinking_on" in spec_errors[0].message


def test_missing_recipe_file() -> None:
    files = dict(tree_files())
    del files[VLLM]
    ls = launches(make_ctx(files), "head", ["tm-fp4-b300-vllm-agentic-mtp"])
    [error] = ls.errors
    assert error.file == VLLM and "not in the tree" in error.message


def test_golden_al_lookup() -> None:
    ctx = make_ctx(tree_files())
    hit = golden_al(ctx, "head", "tm", "dspark", 7, "thinking_on")
    assert (hit.ok, hit.value, hit.file, hit.line, hit.text) == (True, 4.04, GOLDEN, 6, "4.04")
    assert golden_al(ctx, "head", "tm", "DSPARK", 7, "thinking_off").value == 3.9
    assert golden_al(ctx, "head", "tm", "eagle", 3).text == "3"  # mtp family -> tm_mtp, thinking_on default
    missing = golden_al(ctx, "head", "tm", "dspark", 5, "thinking_on")
    assert not missing.ok and "draft length 5" in missing.missing and missing.line == 4
    assert "no curve file" in golden_al(ctx, "head", "zz", "mtp", 3).missing
    assert "no golden curve rule" in golden_al(ctx, "head", "tm", "medusa", 3).missing


@pytest.mark.parametrize(
    ("prefix", "method", "draft", "sample", "stem"),
    [
        ("minimaxm3", "eagle", "Inferact/MiniMax-M3-EAGLE3-GQA", None, "minimaxm3_eagle3_gqa"),
        ("minimaxm3", "nextn", None, None, "minimaxm3_eagle3"),
        ("dsv4", "dspark", None, None, "dsv4-pro-0813-dspark"),
        ("kimik3", "dspark", None, "probabilistic",
         "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method"),
        ("kimik3", "dspark", None, None, "kimik3_dspark"),
        ("qwen3.5", "eagle", None, None, "qwen3.5_mtp"),
        ("dsv41flash", "dspark", None, None, "dsv41flash_dspark"),
    ],
)
def test_curve_names(prefix: str, method: str, draft: str | None, sample: str | None, stem: str) -> None:
    from verifier.core.policy import load_policies
    from verifier.launch.recipes import curve_name

    assert curve_name(load_policies()["launch"]["golden-curves"], prefix, method, draft, sample) == stem


def test_old_layout_launches() -> None:
    ctx = make_ctx(old_layout(tree_files()))
    ls = launches(ctx, "head", [KEY])
    assert not ls.errors
    launch = one(ls, "tm_tp4_conc1_kvnone_spec-draft_model")
    assert launch.recipe_path == SGL.removeprefix("inferencex-e2e/")
    assert launch.argv[1] == "example-org/TestModel-NVFP4"  # no staged models in the old runners format
    assert "HF_HUB_OFFLINE" not in launch.env
    assert launch.env_origin("SGLANG_SIMULATE_ACC_LEN") == ("golden_al_distribution/tm_dspark.yaml", 6)


def test_sorted_arg_order_policy() -> None:
    from types import MappingProxyType

    from verifier.core.policy import load_policies

    policies = dict(load_policies())
    launch_policy = dict(policies["launch"])
    launch_policy["launcher"] = MappingProxyType({**launch_policy["launcher"], "arg-order": "sorted",
                                                  "server-args-position": "start"})
    policies["launch"] = MappingProxyType(launch_policy)
    ctx = make_ctx(tree_files())
    ctx.policies = policies
    launch = one(launches(ctx, "head", [KEY]), "tm_tp4_conc1_kvnone_spec-draft_model")
    flags = [t for t in launch.argv if t.startswith("--")]
    assert flags[:4] == ["--model-path", "--served-model-name", "--host", "--port"]
    assert flags[4:] == sorted(flags[4:])


def test_default_keys_are_the_affected_ones() -> None:
    base = tree_files()
    head = edit(base, SGL, "max-running-requests: 16", "max-running-requests: 24")
    ls = launches(make_ctx(head, base))
    assert ls.keys == (KEY,) and len(ls.launches) == 5
