"""TensorRT-LLM: `trtllm-serve` and its LLM-API options (the `--config` / `--extra_llm_api_options` YAML).

InferenceX recipes give TRT-LLM workers their LLM-API options as role args (srtctl writes them
into the options YAML); `trtllm-serve`'s own click options are data in policies/trtllm.yaml
(`serve_flags()`), derived from TensorRT-LLM's source.

* Spec decode: `speculative_config.decoding_type` / `max_draft_len` / `speculative_model`.
* KV cache: `kv_cache_config.dtype`, one setting for the target's and the draft's pools.
* Quantization: `quant_config.quant_algo` (the draft has no setting of its own).
* Architecture overrides: none in the LLM API; the policy's flag names are still scanned.
* Synthetic acceptance: `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS` (AL = value + 1).
* Chat template: `--chat_template` / `chat_template`.
* Metrics (Dynamo): `publish_events_and_metrics`, `enable_iter_perf_stats`, `return_perf_metrics`, ...
  anywhere in the effective config (Check 17 names the controls in policies/metrics.yaml).
* Single-node parallelism: `tensor_parallel_size` = TP, `moe_expert_parallel_size` = EP,
  `enable_attention_dp` = DP attention.
* Options file: `trtllm-serve --config` / `--extra_llm_api_options` name a YAML of LLM-API options
  merged over the command line (`options_file_flags`).
* Master-config framework `trt` runs TRT-LLM; its old-layout scripts may be tagged `_trtllm`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verifier.engines.base import (
    Engine,
    KvCacheSettings,
    LaunchLike,
    PointShape,
    QuantSettings,
    Setting,
    SpecParams,
    arg_setting,
    config_key,
    env_setting,
    present,
)
from verifier.engines.common import (
    StructuredConfig,
    arg_value,
    engine_policy,
    json_object,
    loose_int,
    option_dests,
    read_config,
    recipe_int,
    text_key,
    to_int,
)

TLLM_FORCE_ACCEPTED = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"


def trtllm_policy() -> Mapping[str, Any]:
    """policies/trtllm.yaml (validated)."""
    return engine_policy("trtllm")


def serve_flags() -> dict[str, str]:
    """Every `trtllm-serve` option spelling -> its parameter name (`--tp_size` -> tensor_parallel_size)."""
    return option_dests(trtllm_policy())


@dataclass(frozen=True, eq=False, repr=False)
class TrtSpecConfig(StructuredConfig):
    """TRT-LLM `speculative_config`."""

    decoding_type = text_key("decoding_type", doc="`decoding_type` (Eagle3, MTP, ...).")
    speculative_model = text_key("speculative_model", "speculative_model_dir",
                                 doc="`speculative_model` (or `speculative_model_dir`).")

    @property
    def max_draft_len(self) -> int | None:
        """`max_draft_len` (the draft length; `num_nextn_predict_layers` for MTP)."""
        return loose_int(self.get("max_draft_len", "num_nextn_predict_layers"))


def trt_speculative_config(args: Mapping[str, Any]) -> TrtSpecConfig | None:
    """The `speculative_config` block of TRT-LLM args (mapping or JSON text), None when absent."""
    value = args.get("speculative_config", args.get("speculative-config"))
    if value is None:
        return None
    return read_config(value, "speculative_config", TrtSpecConfig)


def trt_forced_acceptance(env: Mapping[str, Any]) -> tuple[int | None, float | None, str | None]:
    """(forced accepted draft tokens, implied AL = tokens + 1, error) from TLLM env."""
    if TLLM_FORCE_ACCEPTED not in env:
        return None, None, None
    tokens = loose_int(env[TLLM_FORCE_ACCEPTED])
    if tokens is None:
        return None, None, f"{TLLM_FORCE_ACCEPTED}={env[TLLM_FORCE_ACCEPTED]!r} is not an integer"
    return tokens, float(tokens + 1), None


def trt_kv_cache_dtype(args: Mapping[str, Any]) -> str | None:
    """`kv_cache_config.dtype` of TRT-LLM args (the draft shares the target's pool settings)."""
    cfg = json_object(args.get("kv_cache_config"))
    if cfg is not None and cfg.get("dtype") is not None:
        return str(cfg["dtype"])
    return None


class TrtLlm(Engine):
    """TensorRT-LLM's answers."""

    name = "trtllm"
    label = "TRT-LLM"
    cli_dashes = False  # LLM-API keys keep their underscores
    options_file_flags = ("config", "extra_llm_api_options", "extra-llm-api-options")
    framework_aliases = ("trt",)

    def spec_params(self, role: str, args: Mapping[str, Any] | None) -> SpecParams:
        """From `speculative_config` (`decoding_type` names the method)."""
        name, raw = arg_value(args, "speculative_config")
        cfg = json_object(raw)
        if not cfg or not cfg.get("decoding_type"):
            return SpecParams(role, None, None, None, None, name)
        return SpecParams(role, str(cfg["decoding_type"]).lower(), to_int(cfg.get("max_draft_len")),
                          None if cfg.get("speculative_model") is None else str(cfg["speculative_model"]),
                          None, name)

    def kv_cache(self, launch: LaunchLike) -> KvCacheSettings:
        """`kv_cache_config.dtype`: one setting for target and draft."""
        return KvCacheSettings(config_key(launch, ("kv_cache_config",), "dtype"), None, draft_shares_target=True)

    def quantization(self, launch: LaunchLike) -> QuantSettings:
        """`quant_config.quant_algo` (the draft has no setting of its own)."""
        return QuantSettings(config_key(launch, ("quant_config",), "quant_algo"))

    def synthetic(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS."""
        return present(env_setting(launch, TLLM_FORCE_ACCEPTED))

    def synthetic_injection(self, role: str, args: Mapping[str, Any], al: float,
                            al_text: str) -> list[tuple[tuple[Any, ...], Any]]:
        """The connector forces AL - 1 accepted draft tokens."""
        from verifier.engines.common import format_al

        return [(("roles", role, "env", TLLM_FORCE_ACCEPTED), format_al(al - 1))]

    def chat_template(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """`chat_template` (flag or LLM-API key)."""
        return present(arg_setting(launch, "chat_template"))

    def parallelism_issues(self, args: Mapping[str, Any], point: PointShape, gpus: int | None) -> list[str]:
        """`tensor_parallel_size` = TP, `moe_expert_parallel_size` = EP (both default 1) and
        `enable_attention_dp` = DP attention."""
        out: list[str] = []
        tp, ep, dpa = point.tp, point.ep, point.dp_attn
        rtp = recipe_int(args.get("tensor_parallel_size"), 1)
        if rtp != tp:
            out.append(f"tensor_parallel_size: recipe {rtp} != point {tp}")
        rep = recipe_int(args.get("moe_expert_parallel_size"), 1)
        if rep != ep:
            out.append(f"moe_expert_parallel_size: recipe {rep} != point {ep}")
        if (args.get("enable_attention_dp") is True) != dpa:
            out.append(f"enable_attention_dp: recipe {args.get('enable_attention_dp', False)} != point {dpa}")
        return out


ENGINE = TrtLlm()
