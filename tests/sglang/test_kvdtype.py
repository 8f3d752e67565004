"""KV-cache dtype semantics for Check 13 (SGLANG.md §3.1), on checkpoint configs written here."""

from __future__ import annotations

import pytest

from verifier.engines.sglang import (
    canonical_dtype,
    checkpoint_kv_quant,
    dtype_rank,
    effective_kv_dtypes,
    model_dtype,
)
from verifier.engines.sglang import resolve_sglang as _resolve

# A ModelOpt NVFP4 target with no KV quantization, and a bf16 DSpark draft (MXFP8 weights).
NVFP4_TARGET = {
    "architectures": ["MiniMaxM3SparseForCausalLM"],
    "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": None},
}
DSPARK_DRAFT = {
    "architectures": ["DSparkMiniMaxDraftModel"],
    "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "mxfp8"},
}
FP8_KV_TARGET = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"},
}
DSV41 = {"architectures": ["DeepseekV41ForCausalLM"], "torch_dtype": "bfloat16"}
DSA = {"architectures": ["DeepseekV32ForCausalLM"], "torch_dtype": "bfloat16", "index_topk": 2048}

SPEC = ["--speculative-algorithm", "DSPARK", "--speculative-dspark-block-size", "7",
        "--speculative-draft-model-path", "/model/dspark"]


def resolve(*argv: str, version: str = "0.5.23"):
    return _resolve(["--model-path", "/model", *argv], version=version)


def rules(kv, side: str) -> list[str]:
    return [s.rule for s in kv.reasons if s.side == side]


def test_canonical_names_and_ranks() -> None:
    assert canonical_dtype("bf16") == canonical_dtype("bfloat16") == canonical_dtype("torch.bfloat16") == "bfloat16"
    assert canonical_dtype("fp8_e4m3") == canonical_dtype("torch.float8_e4m3fn") == "float8_e4m3fn"
    assert canonical_dtype("auto") is None and canonical_dtype(None) is None
    assert dtype_rank("nvfp4") < dtype_rank("fp8_e4m3") < dtype_rank("bf16") == dtype_rank("fp16") < dtype_rank("fp32")
    with pytest.raises(ValueError):
        canonical_dtype("int3")
    with pytest.raises(ValueError):
        dtype_rank("auto")


def test_checkpoint_readers() -> None:
    assert checkpoint_kv_quant(NVFP4_TARGET) is None
    assert checkpoint_kv_quant(FP8_KV_TARGET) == "FP8"
    assert checkpoint_kv_quant({"quantization": {"kv_cache_quant_algo": "fp8"}}) == "FP8"
    assert checkpoint_kv_quant({"quantization_config": {"kv_cache_scheme": {"type": "float", "num_bits": 8}}}) == "FP8"
    assert model_dtype({"torch_dtype": "float16"}) == "float16"
    assert model_dtype({"dtype": "bfloat16"}) == "bfloat16"
    assert model_dtype({}) == "float16"  # missing -> float32 -> float16 under auto
    assert model_dtype({"model_type": "gemma3", "torch_dtype": "float32"}) == "bfloat16"
    assert model_dtype({"torch_dtype": "bfloat16"}, "float16") == "float16"
    assert model_dtype(None) is None


def test_draft_only_fp8_kv_is_below_a_bf16_target() -> None:
    """The pr4524 shape: target auto -> bf16; draft explicitly fp8_e4m3."""
    kv = effective_kv_dtypes(resolve(*SPEC, "--speculative-draft-kv-cache-dtype", "fp8_e4m3"),
                             NVFP4_TARGET, DSPARK_DRAFT, "0.5.23")
    assert (kv.target, kv.draft) == ("bfloat16", "float8_e4m3fn")
    assert kv.draft_setting == "fp8_e4m3" and kv.target_setting == "auto"
    assert rules(kv, "target") == ["default-auto", "model-dtype"]
    assert rules(kv, "draft") == ["draft-flag"]
    assert kv.draft_below_target is True
    assert any("attention backend" in u for u in kv.uncertain)  # fa4 would change it; unknown from argv


def test_default_draft_follows_target_and_own_checkpoint() -> None:
    kv = effective_kv_dtypes(resolve(*SPEC), NVFP4_TARGET, DSPARK_DRAFT, "0.5.23")
    assert (kv.target, kv.draft) == ("bfloat16", "bfloat16")
    assert rules(kv, "draft") == ["follows-target", "model-dtype"]
    assert kv.draft_below_target is False


def test_explicit_target_fp8_is_followed_by_the_draft() -> None:
    kv = effective_kv_dtypes(resolve(*SPEC, "--kv-cache-dtype", "fp8_e4m3"), NVFP4_TARGET, DSPARK_DRAFT)
    assert (kv.target, kv.draft) == ("float8_e4m3fn", "float8_e4m3fn")
    assert kv.draft_setting == "fp8_e4m3"


def test_checkpoint_fp8_kv_target_draft_decides_by_its_own_checkpoint() -> None:
    kv = effective_kv_dtypes(resolve(*SPEC), FP8_KV_TARGET, DSPARK_DRAFT)
    assert (kv.target, kv.draft) == ("float8_e4m3fn", "bfloat16")
    kv = effective_kv_dtypes(resolve(*SPEC, "--speculative-draft-kv-cache-dtype", "auto"), FP8_KV_TARGET,
                             FP8_KV_TARGET)
    assert kv.draft == "float8_e4m3fn" and rules(kv, "draft")[0] == "draft-auto-own-checkpoint"


def test_deepseek_v41_hook_makes_auto_fp8() -> None:
    kv = effective_kv_dtypes(resolve(*SPEC), DSV41, None)
    assert (kv.target, kv.draft) == ("float8_e4m3fn", "float8_e4m3fn")
    assert rules(kv, "target") == ["model-hook"]


def test_dflash_family_fa4_draft_keeps_compute_dtype() -> None:
    args = resolve(*SPEC, "--kv-cache-dtype", "fp8_e4m3", "--speculative-draft-attention-backend", "fa4")
    kv = effective_kv_dtypes(args, NVFP4_TARGET, DSPARK_DRAFT)
    assert (kv.target, kv.draft) == ("float8_e4m3fn", "bfloat16")
    assert rules(kv, "draft")[-1] == "dflash-fa4" and not kv.uncertain
    # the prefill backend counts when no draft backend is named; a startup value can be passed in
    kv = effective_kv_dtypes(resolve(*SPEC, "--kv-cache-dtype", "fp8_e4m3"), NVFP4_TARGET, DSPARK_DRAFT,
                             attention_backend="fa4")
    assert kv.draft == "bfloat16"
    kv = effective_kv_dtypes(resolve(*SPEC, "--kv-cache-dtype", "fp8_e4m3", "--attention-backend", "trtllm_mha"),
                             NVFP4_TARGET, DSPARK_DRAFT)
    assert kv.draft == "float8_e4m3fn" and not kv.uncertain


def test_eagle_is_not_dflash_family() -> None:
    args = resolve("--speculative-algorithm", "EAGLE", "--kv-cache-dtype", "fp8_e4m3",
                   "--speculative-draft-attention-backend", "fa4")
    assert effective_kv_dtypes(args, NVFP4_TARGET, DSPARK_DRAFT).draft == "float8_e4m3fn"


def test_016_has_no_draft_flag_and_the_draft_follows_the_target() -> None:
    kv = effective_kv_dtypes(resolve(*SPEC, "--kv-cache-dtype", "fp8_e4m3", version="0.5.16"), NVFP4_TARGET,
                             DSPARK_DRAFT, "0.5.16")
    assert kv.draft == "float8_e4m3fn"
    assert rules(kv, "draft")[:2] == ["no-draft-flag", "follows-target"]


def test_no_speculation_and_missing_configs() -> None:
    kv = effective_kv_dtypes(resolve(), NVFP4_TARGET)
    assert kv.draft is None and rules(kv, "draft") == ["no-speculation"]
    kv = effective_kv_dtypes(resolve(*SPEC), None, None)
    assert kv.target is None and kv.draft is None
    assert "unknown" in rules(kv, "target") and kv.draft_below_target is None


def test_hardware_dependent_hook() -> None:
    kv = effective_kv_dtypes(resolve(), DSA, None)
    assert kv.target is None and kv.uncertain
    assert effective_kv_dtypes(resolve(), DSA, None, sm_major=10).target == "float8_e4m3fn"
    assert effective_kv_dtypes(resolve(), DSA, None, sm_major=9).target == "bfloat16"
    sinks = dict(DSA, learnable_sink=True)
    assert effective_kv_dtypes(resolve(), sinks, None, sm_major=10).target == "bfloat16"
    plain_v3 = {"architectures": ["DeepseekV3ForCausalLM"], "torch_dtype": "bfloat16"}  # no index_topk: not DSA
    assert effective_kv_dtypes(resolve(), plain_v3, None).target == "bfloat16"


def test_a_server_args_mapping_is_accepted() -> None:
    ns = {"kv_cache_dtype": "auto", "speculative_algorithm": "DSPARK", "speculative_draft_kv_cache_dtype": None,
          "attention_backend": "trtllm_mha", "dtype": "auto"}
    kv = effective_kv_dtypes(ns, NVFP4_TARGET, DSPARK_DRAFT)
    assert (kv.target, kv.draft) == ("bfloat16", "bfloat16")
    with pytest.raises(TypeError):
        effective_kv_dtypes(["not", "a", "mapping"], NVFP4_TARGET)
