"""Per-engine readers of speculative-decoding and draft-precision settings (compatibility module).

The readers live in the engine registry (verifier/engines/: `vllm`, `trtllm`, `atom`; shared
helpers in `verifier.engines.common`) and are re-exported here for existing callers. What remains
here is the unified `SpecParams` view that also carries a pinned acceptance length
(`sglang_spec_params`, `vllm_spec_params`, `trt_spec_params`, `atom_spec_params`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verifier.engines.atom import (
    DRAFT_MODULE_SAMPLES,
    DraftLayerCoverage,
    OnlineQuantConfig,
    atom_online_quant,
    draft_layer_coverage,
    mtp_layer_prefixes,
    pattern_matches,
    read_online_quant_config,
)
from verifier.engines.common import MAX_VALUE_CHARS, flag_values, normalize_args, parse_structured
from verifier.engines.common import loose_int as _int
from verifier.engines.common import to_float as _float
from verifier.engines.trtllm import (
    TLLM_FORCE_ACCEPTED,
    TrtSpecConfig,
    trt_forced_acceptance,
    trt_kv_cache_dtype,
    trt_speculative_config,
)
from verifier.engines.vllm import (
    VLLM_DRAFT_PRECISION_KEYS,
    VllmSpecConfig,
    read_vllm_speculative_config,
    vllm_speculative_config,
)

__all__ = [
    "DRAFT_MODULE_SAMPLES", "MAX_VALUE_CHARS", "TLLM_FORCE_ACCEPTED", "VLLM_DRAFT_PRECISION_KEYS",
    "DraftLayerCoverage", "OnlineQuantConfig", "SpecParams", "TrtSpecConfig", "VllmSpecConfig",
    "atom_online_quant", "atom_spec_params", "draft_layer_coverage", "flag_values", "mtp_layer_prefixes",
    "normalize_args", "parse_structured", "pattern_matches", "read_online_quant_config",
    "read_vllm_speculative_config", "sglang_spec_params", "trt_forced_acceptance", "trt_kv_cache_dtype",
    "trt_spec_params", "trt_speculative_config", "vllm_spec_params", "vllm_speculative_config",
]


# --------------------------------------------------------------------------- unified spec params


@dataclass(frozen=True)
class SpecParams:
    """Spec-decode parameters as the InferenceX connector reads them (FORMATS §4.6)."""

    engine: str
    method: str | None
    draft_length: int | None
    draft_model: str | None
    sample_method: str | None = None
    acceptance_length: float | None = None  # a pinned/simulated AL, when the launch carries one
    errors: tuple[str, ...] = ()
    origin: dict[str, str] = field(default_factory=dict)  # field -> flag/key it came from

    @property
    def speculates(self) -> bool:
        """True when a method is set."""
        return bool(self.method)


def sglang_spec_params(args: Mapping[str, Any] | Sequence[str], env: Mapping[str, Any] | None = None) -> SpecParams:
    """SGLang: `speculative-algorithm` (or `speculative-algo`), DSpark block size or num-steps, draft path.

    `args` may be a resolved namespace (dests with `_`), a recipe args mapping or an argv. AL from
    `SGLANG_SIMULATE_ACC_LEN` in `env` when given.
    """
    flags = normalize_args(args)
    errors: list[str] = []
    algo = flags.get("speculative-algorithm")
    short = flags.get("speculative-algo")
    if algo and short and str(algo) != str(short):
        errors.append(f"speculative-algorithm {algo!r} conflicts with speculative-algo {short!r}")
    raw = algo or short
    method = None if raw in (None, False) else ("dspark" if str(raw).upper() == "DSPARK" else str(raw).lower())
    if method == "dspark":
        length, origin = _int(flags.get("speculative-dspark-block-size")), "speculative-dspark-block-size"
    else:
        length, origin = _int(flags.get("speculative-num-steps")), "speculative-num-steps"
    draft = flags.get("speculative-draft-model-path", flags.get("speculative-draft-model"))
    al = None
    if env is not None and "SGLANG_SIMULATE_ACC_LEN" in env:
        al = _float(env["SGLANG_SIMULATE_ACC_LEN"])
        if al is None:
            errors.append(f"SGLANG_SIMULATE_ACC_LEN={env['SGLANG_SIMULATE_ACC_LEN']!r} is not a number")
    return SpecParams("sglang", method, length, str(draft) if draft else None, None, al, tuple(errors),
                      {"method": "speculative-algorithm", "draft_length": origin,
                       "draft_model": "speculative-draft-model-path"})


def vllm_spec_params(args: Mapping[str, Any] | Sequence[str]) -> SpecParams:
    """vLLM: from `--speculative-config`."""
    cfg = vllm_speculative_config(args)
    if cfg is None:
        return SpecParams("vllm", None, None, None)
    errors = (cfg.error,) if cfg.error else ()
    return SpecParams("vllm", cfg.method, cfg.num_speculative_tokens, cfg.model, cfg.draft_sample_method,
                      cfg.synthetic_acceptance_length, errors, {"method": "speculative-config"})


def trt_spec_params(args: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> SpecParams:
    """TRT-LLM: `speculative_config` plus the forced-acceptance env (AL = value + 1)."""
    cfg = trt_speculative_config(args)
    errors: list[str] = []
    al = None
    if env is not None:
        _, al, err = trt_forced_acceptance(env)
        if err:
            errors.append(err)
    if cfg is None:
        return SpecParams("trt", None, None, None, None, al, tuple(errors))
    if cfg.error:
        errors.append(cfg.error)
    method = cfg.decoding_type.lower() if cfg.decoding_type else None
    return SpecParams("trt", method, cfg.max_draft_len, cfg.speculative_model, None, al, tuple(errors),
                      {"method": "speculative_config.decoding_type"})


def atom_spec_params(args: Mapping[str, Any] | Sequence[str]) -> SpecParams:
    """ATOM: `method` / `num-speculative-tokens` / `draft-model` / `spec-decode-acceptance-length`."""
    flags = normalize_args(args)
    method = flags.get("method")
    errors: list[str] = []
    al = None
    if "spec-decode-acceptance-length" in flags:
        al = _float(flags["spec-decode-acceptance-length"])
        if al is None:
            errors.append("spec-decode-acceptance-length is not a number")
    sample = flags.get("draft-sample-method")
    return SpecParams("atom", str(method).lower() if method else None, _int(flags.get("num-speculative-tokens")),
                      str(flags["draft-model"]) if flags.get("draft-model") else None,
                      str(sample) if sample else None, al, tuple(errors), {"method": "method"})
