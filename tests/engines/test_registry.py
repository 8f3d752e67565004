"""verifier.engines: the registry, and each engine's answers on launches it builds from args/env."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from verifier.engines import ENGINE_MODULES, engine_for, engine_or_generic, engines
from verifier.engines.base import Engine, walk_settings
from verifier.launch.recipes.argv import flag_name
from verifier.launch.recipes.spec import spec_parameters


@dataclass
class FakeLaunch:
    """The slice of verifier.launch.Launch the engines read."""

    engine: str
    args: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    argv: tuple[str, ...] = ()
    image: str | None = None
    role: str = "agg"
    recipe: dict[str, Any] = field(default_factory=dict)
    recipe_path: str = "recipes/r.yaml"
    lines: dict[str, int] = field(default_factory=dict)

    def arg_origin(self, name: str) -> tuple[str, int | None] | None:
        key = name.lstrip("-")
        for k in (key, key.replace("_", "-"), key.replace("-", "_")):
            if k in self.lines:
                return self.recipe_path, self.lines[k]
        return None

    def env_origin(self, name: str) -> tuple[str, int | None] | None:
        return (self.recipe_path, self.lines[name]) if name in self.lines else None


def test_registry_order_and_lookup() -> None:
    assert ENGINE_MODULES == ("sglang", "vllm", "trtllm", "atom", "tilert")
    assert [e.name for e in engines()] == list(ENGINE_MODULES)
    assert engine_for("vLLM") is engine_for("vllm")
    assert engine_for("") is None and engine_for("nope") is None and engine_for(None) is None
    generic = engine_or_generic("nope")
    assert isinstance(generic, Engine) and not generic.cli_dashes
    assert all(isinstance(e, Engine) for e in engines())


def test_flag_names_follow_the_engine() -> None:
    assert flag_name("tensor_parallel_size", "sglang") == "--tensor-parallel-size"
    assert flag_name("tensor_parallel_size", "vllm") == "--tensor-parallel-size"
    assert flag_name("tensor_parallel_size", "trtllm") == "--tensor_parallel_size"
    assert flag_name("tensor_parallel_size", "other") == "--tensor_parallel_size"


@pytest.mark.parametrize(("engine", "args", "want"), [
    ("sglang", {"speculative-algorithm": "DSPARK", "speculative-dspark-block-size": 5,
                "speculative-draft-model-path": "/model/dspark"}, ("dspark", 5, "/model/dspark", None)),
    ("sglang", {"speculative_algorithm": "EAGLE", "speculative_num_steps": "3"}, ("eagle", 3, None, None)),
    ("vllm", {"speculative-config": '{"method": "MTP", "num_speculative_tokens": 2, "model": "d"}'},
     ("mtp", 2, "d", None)),
    ("trtllm", {"speculative_config": {"decoding_type": "Eagle3", "max_draft_len": 3, "speculative_model": "m"}},
     ("eagle3", 3, "m", None)),
    ("atom", {"method": "DSPARK", "num-speculative-tokens": 4, "draft-model": "x"}, ("dspark", 4, "x", "probabilistic")),
    ("tilert", {"with-mtp": True, "num-mtp": 3}, ("mtp", 3, None, None)),
])
def test_spec_params_per_engine(engine: str, args: dict[str, Any], want: tuple[Any, ...]) -> None:
    spec = spec_parameters("agg", args, engine)
    assert (spec.method, spec.draft_length, spec.draft_model, spec.sample_method) == want
    assert spec.speculating


def test_spec_params_errors_and_off() -> None:
    assert spec_parameters("agg", {}, "sglang").method is None
    assert spec_parameters("agg", {"speculative-algorithm": "EAGLE", "speculative-algo": "NEXTN"}, "sglang").error
    assert spec_parameters("agg", {"speculative-config": "not json"}, "vllm").error
    assert spec_parameters("agg", {"with-mtp": False}, "tilert").method is None
    assert spec_parameters("agg", {}, "mystery").error == "unknown engine 'mystery'"


def test_kv_and_quantization_settings_name_flag_and_origin() -> None:
    sgl = FakeLaunch("sglang", args={"kv-cache-dtype": "fp8_e4m3", "speculative-draft-kv-cache-dtype": "bf16",
                                     "quantization": "fp8"}, lines={"kv-cache-dtype": 12, "quantization": 14})
    kv = engine_for("sglang").kv_cache(sgl)
    assert (kv.target.name, kv.target.value, kv.target.line) == ("kv-cache-dtype", "fp8_e4m3", 12)
    assert kv.draft.value == "bf16" and not kv.draft_shares_target
    assert engine_for("sglang").quantization(sgl).target.line == 14

    vll = FakeLaunch("vllm", args={"kv-cache-dtype": "fp8", "quantization": "fp8",
                                   "speculative-config": {"method": "mtp", "quantization": "fp8", "kv_cache_dtype": "fp8"}})
    kv = engine_for("vllm").kv_cache(vll)
    assert kv.target.value == "fp8" and kv.draft.name == "speculative-config.kv_cache_dtype"
    quant = engine_for("vllm").quantization(vll)
    assert quant.target.value == "fp8" and [s.name for s in quant.draft] == ["speculative-config.quantization"]

    trt = FakeLaunch("trtllm", args={"kv_cache_config": {"dtype": "fp8"}, "quant_config": {"quant_algo": "NVFP4"}})
    kv = engine_for("trtllm").kv_cache(trt)
    assert kv.target.name == "kv_cache_config.dtype" and kv.draft_shares_target
    assert engine_for("trtllm").quantization(trt).target.value == "NVFP4"

    atom = FakeLaunch("atom", args={"kv_cache_dtype": "fp8", "online_quant_config": '{"global_quant_config": "ptpc_fp8"}'})
    assert engine_for("atom").kv_cache(atom).target.value == "fp8"
    assert engine_for("atom").quantization(atom).draft


def test_synthetic_acceptance_settings() -> None:
    sgl = FakeLaunch("sglang", env={"SGLANG_SIMULATE_ACC_LEN": "3.1", "OTHER": "1"})
    assert [s.name for s in engine_for("sglang").synthetic(sgl)] == ["SGLANG_SIMULATE_ACC_LEN"]
    vll = FakeLaunch("vllm", args={"speculative-config": {"method": "mtp", "rejection_sample_method": "synthetic",
                                                          "synthetic_acceptance_length": 2.5}})
    assert {s.name for s in engine_for("vllm").synthetic(vll)} == {
        "speculative-config.rejection_sample_method", "speculative-config.synthetic_acceptance_length"}
    trt = FakeLaunch("trtllm", env={"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": "2"})
    assert engine_for("trtllm").synthetic(trt)[0].value == "2"
    atom = FakeLaunch("atom", args={"spec-decode-acceptance-length": 2.75})
    assert engine_for("atom").synthetic(atom)[0].value == 2.75
    tile = FakeLaunch("tilert", env={"TILERT_SIMULATE_ACC_LEN": "3"})
    assert engine_for("tilert").synthetic(tile)[0].name == "TILERT_SIMULATE_ACC_LEN"


def test_synthetic_injection_per_engine() -> None:
    assert engine_for("sglang").synthetic_injection("agg", {}, 3.2, "3.2")[0] == (
        ("roles", "agg", "env", "SGLANG_SIMULATE_ACC_LEN"), "3.2")
    (path, value), = engine_for("vllm").synthetic_injection("agg", {"speculative-config": '{"method": "mtp"}'}, 2.5, "2.5")
    assert path == ("roles", "agg", "args", "speculative-config")
    assert '"rejection_sample_method":"synthetic"' in value and '"synthetic_acceptance_length":2.5' in value
    assert engine_for("trtllm").synthetic_injection("decode", {}, 3.0, "3")[0][1] == "2"
    assert engine_for("atom").synthetic_injection("agg", {}, 2.5, "2.5")[0][1] == 2.5
    assert engine_for("tilert").synthetic_injection("prefill", {}, 2.5, "2.5") == []
    assert len(engine_for("tilert").synthetic_injection("decode", {}, 2.5, "2.5")) == 2


def test_logged_synthetic_reads_vllm_speculative_config_only() -> None:
    cmd = ["vllm", "serve", "m", "--speculative-config",
           '{"method": "mtp", "synthetic_acceptance_length": 2.25, "rejection_sample_method": "synthetic"}']
    assert engine_for("vllm").logged_synthetic(cmd) == {"speculative-config synthetic_acceptance_length": "2.25"}
    assert engine_for("sglang").logged_synthetic(cmd) == {}


def test_overrides_and_chat_template() -> None:
    vll = FakeLaunch("vllm", argv=("m", "--hf-overrides", '{"num_hidden_layers": 2}', "--hf-overrides.index_topk", "4",
                                   "--chat-template", "t.jinja"), args={"chat-template": "t.jinja"})
    found = engine_for("vllm").overrides(vll, {"json-model-override-args"})
    assert [(s.name, s.value) for s in found] == [("hf-overrides", '{"num_hidden_layers": 2}'),
                                                    ("hf-overrides.index_topk", "4")]
    assert engine_for("vllm").chat_template(vll)[0].value == "t.jinja"
    sgl = FakeLaunch("sglang", argv=("--json-model-override-args", '{"a": 1}'))
    assert engine_for("sglang").overrides(sgl, {"json-model-override-args"})[0].name == "json-model-override-args"


def test_metrics_settings_walk_recipe_argv_and_env() -> None:
    trt = FakeLaunch("trtllm", recipe={"backend": {"publish_events_and_metrics": False},
                                       "roles": {"decode": {"args": {"enable_iter_perf_stats": True}}}},
                     argv=("--no-return-perf-metrics",), env={"X": "1"})
    seen = {(name, value) for name, value, _ in engine_for("trtllm").metrics(trt, set()) if not isinstance(value, dict)}
    assert ("publish_events_and_metrics", False) in seen and ("enable_iter_perf_stats", True) in seen
    assert ("return_perf_metrics", False) in seen and ("x", "1") in seen
    assert list(walk_settings(trt, {"backend"}))[0][0] == "roles"


def test_trtllm_and_atom_option_data() -> None:
    from verifier.engines.atom.answers import serve_options
    from verifier.engines.trtllm.answers import serve_flags

    flags = serve_flags()
    assert flags["--tp_size"] == flags["--tensor_parallel_size"] == "tensor_parallel_size"
    assert flags["--config"] == flags["--extra_llm_api_options"] == "extra_llm_api_options"
    assert serve_options()["--kv_cache_dtype"] == "kv_cache_dtype"


def test_capabilities() -> None:
    assert engine_for("sglang").models_kv_dtypes and not engine_for("vllm").models_kv_dtypes
    assert engine_for("sglang").rocm_quick_reduce_required and not engine_for("atom").rocm_quick_reduce_required
    assert engine_for("vllm").synthetic_merges_into_args
    assert "kv_cache_dtype" in engine_for("sglang").draft_precision_dests
