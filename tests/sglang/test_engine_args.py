"""The engines' spec-decode and draft-precision readers (vLLM, TRT-LLM, ATOM, SGLang), asked through the registry."""

from __future__ import annotations

import json

from tests.kit import REFERENCE_DATA
from verifier.core.yamlio import decode_text, load_yaml, plain
from verifier.engines import engine_for
from verifier.engines.atom.answers import (
    atom_online_quant,
    draft_layer_coverage,
    mtp_layer_prefixes,
    pattern_matches,
    read_online_quant_config,
)
from verifier.engines.common import flag_values, normalize_args, parse_structured
from verifier.engines.trtllm.answers import trt_forced_acceptance, trt_kv_cache_dtype, trt_speculative_config
from verifier.engines.vllm.answers import vllm_speculative_config


def spec_of(engine: str, args):  # type: ignore[no-untyped-def]
    """One role's spec-decode parameters as the engine registry reads them."""
    found = engine_for(engine)
    assert found is not None
    return found.spec_params("agg", normalize_args(args) if isinstance(args, list) else args)


def test_flag_values() -> None:
    flags = flag_values(["serve", "--a", "1", "--b_c=x=y", "--flag", "--neg", "-1", "--last", "1", "--last", "2"])
    assert flags == {"a": "1", "b-c": "x=y", "flag": True, "neg": "-1", "last": "2"}


def test_parse_structured() -> None:
    assert parse_structured('{"a": 1}') == ({"a": 1}, None)
    assert parse_structured("{'a': True, 'b': None}") == ({"a": True, "b": None}, None)  # srtctl str(dict)
    data, err = parse_structured("__import__('os')")
    assert data is None and err
    assert parse_structured("x" * (300 * 1024))[1]


def test_vllm_speculative_config() -> None:
    cfg = {"method": "mtp", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic",
           "synthetic_acceptance_length": 2.99, "quantization": "fp8"}
    spec = vllm_speculative_config(["vllm", "serve", "m", "--speculative-config", json.dumps(cfg)])
    assert spec is not None and spec.error is None
    assert (spec.method, spec.num_speculative_tokens, spec.rejection_sample_method) == ("mtp", 3, "synthetic")
    assert spec.synthetic_acceptance_length == 2.99
    assert spec.precision_overrides == {"quantization": "fp8"}
    assert vllm_speculative_config({"speculative-config": "{oops"}).error
    assert vllm_speculative_config({"speculative_config": "[1]"}).error
    assert vllm_speculative_config({"tensor-parallel-size": 8}) is None
    params = spec_of("vllm", {"speculative-config": {"method": "eagle3", "model": "d", "num_speculative_tokens": 2}})
    assert (params.method, params.draft_length, params.draft_model) == ("eagle3", 2, "d")


def test_trt_reference_recipe() -> None:
    path = REFERENCE_DATA / "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm3/trtllm/b300-fp4-mtp/agentic.yaml"
    doc = plain(load_yaml(decode_text(path.read_bytes(), str(path)), str(path)))
    args = doc["base"]["roles"]["agg"]["args"]
    spec = trt_speculative_config(args)
    assert spec and (spec.decoding_type, spec.max_draft_len, spec.speculative_model) == (
        "Eagle3", 3, "Inferact/MiniMax-M3-EAGLE3-GQA")
    assert trt_kv_cache_dtype(args) == "fp8"
    params = spec_of("trtllm", args)
    assert (params.method, params.draft_length) == ("eagle3", 3)
    assert trt_forced_acceptance({"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": "2"})[1] == 3.0


def test_trt_forced_acceptance() -> None:
    assert trt_forced_acceptance({}) == (None, None, None)
    assert trt_forced_acceptance({"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": "3"}) == (3, 4.0, None)
    assert trt_forced_acceptance({"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": "2.5"})[2]
    assert trt_speculative_config({"speculative_config": "nope"}).error


def test_atom_spec_params() -> None:
    argv = ["python", "-m", "atom.entrypoints.openai_server", "--method", "mtp", "--num-speculative-tokens", "3",
            "--draft-model", "/d", "--spec-decode-acceptance-length", "2.99"]
    params = spec_of("atom", argv)
    assert (params.method, params.draft_length, params.draft_model) == ("mtp", 3, "/d")
    assert spec_of("atom", {"method": "dspark", "draft_sample_method": "probabilistic"}).sample_method == "probabilistic"


ONLINE = {"global_quant_config": "ptpc_fp8", "layer_quant_config": {"*expert*": "mxfp4"},
          "exclude_layer": ["lm_head", "model.embed_tokens", "*.gate", "*shared_expert*", "model.layers.61*"]}


def test_online_quant_patterns() -> None:
    cfg = read_online_quant_config(json.dumps(ONLINE))
    assert cfg.global_quant == "ptpc_fp8" and cfg.excluded("lm_head")
    assert cfg.format_of("model.layers.3.mlp.experts") == "mxfp4"
    assert cfg.format_of("model.layers.3.mlp.shared_experts.down_proj") is None
    assert cfg.format_of("model.layers.3.self_attn.q_proj") == "ptpc_fp8"
    assert pattern_matches("vision_tower", "model.vision_tower.blocks.0")
    assert not pattern_matches("vision_tower", "model.vision_tower2")
    assert read_online_quant_config("{bad").error


def test_draft_layer_coverage() -> None:
    hf = {"num_hidden_layers": 61, "num_nextn_predict_layers": 1}
    prefixes = mtp_layer_prefixes(hf)
    assert prefixes == ["model.layers.61"]
    (covered,) = draft_layer_coverage(read_online_quant_config(ONLINE), prefixes)
    assert covered.untouched
    partial = dict(ONLINE, exclude_layer=["lm_head", "*attn*"])
    (cov,) = draft_layer_coverage(read_online_quant_config(partial), prefixes)
    assert not cov.untouched and cov.formats["self_attn.q_proj"] is None
    assert cov.quantized["mlp.experts"] == "mxfp4"
    assert mtp_layer_prefixes({"num_hidden_layers": 10}) == []
    assert mtp_layer_prefixes({"text_config": {"num_hidden_layers": 4, "mtp_num_hidden_layers": 2}}) == [
        "model.layers.4", "model.layers.5"]


def test_atom_online_quant_from_argv_and_plugin_wrapper() -> None:
    argv = ["--online_quant_config", json.dumps(ONLINE)]
    assert atom_online_quant(argv).global_quant == "ptpc_fp8"
    wrapped = {"additional-config": json.dumps({"online_quant_config": ONLINE})}
    assert atom_online_quant(wrapped).exclude == tuple(ONLINE["exclude_layer"])
    assert atom_online_quant({"additional-config": "{}"}) is None
    assert atom_online_quant({}) is None


def test_sglang_spec_params() -> None:
    p = spec_of("sglang", {"speculative-algorithm": "DSPARK", "speculative-dspark-block-size": 7,
                        "speculative-draft-model-path": "/model/dspark"})
    assert (p.method, p.draft_length, p.draft_model) == ("dspark", 7, "/model/dspark")
    p = spec_of("sglang", ["--speculative-algo", "EAGLE", "--speculative-num-steps", "3"])
    assert (p.method, p.draft_length) == ("eagle", 3)
    p = spec_of("sglang", {"speculative_algorithm": "NEXTN", "speculative_num_steps": 2})  # a resolved namespace
    assert (p.method, p.draft_length) == ("nextn", 2)
    assert spec_of("sglang", {"speculative-algorithm": "EAGLE", "speculative-algo": "DSPARK"}).error
    assert not spec_of("sglang", {}).speculating
