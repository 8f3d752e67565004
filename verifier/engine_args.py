"""Readers for the speculative-decoding and draft-precision settings of non-SGLang engines.

What Checks 11 and 13 (FORMATS §4.6, §4.8, §9) need from a launch, per engine:

* vLLM: the `--speculative-config` JSON (`method`, `model`, `num_speculative_tokens`,
  `rejection_sample_method`, `synthetic_acceptance_length`, draft precision keys).
* TRT-LLM: the `speculative_config` block (`decoding_type`, `max_draft_len`,
  `speculative_model`) and `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS` (= AL - 1).
* ATOM: `--method` / `--num-speculative-tokens` / `--draft-model` /
  `--spec-decode-acceptance-length`, and which draft layers `--online_quant_config`'s
  `exclude_layer` keeps at source precision.
* SGLang's spec parameters as the InferenceX connector reads them (method, draft length, draft
  model), for callers that hold a resolved namespace or a recipe `args` mapping.

Values are hostile text: JSON is read with `json.loads`, srtctl's Python-`str()` dicts with
`ast.literal_eval` (never `eval`); anything else is reported in `.error`, never guessed.
"""

from __future__ import annotations

import ast
import fnmatch
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_VALUE_CHARS = 256 * 1024

# Keys of a vLLM speculative config that change the draft's precision.
VLLM_DRAFT_PRECISION_KEYS = (
    "quantization",
    "dtype",
    "kv_cache_dtype",
    "draft_kv_cache_dtype",
    "draft_dtype",
    "draft_quantization",
)


# --------------------------------------------------------------------------- generic helpers


def parse_structured(value: Any) -> tuple[Any, str | None]:
    """(data, error) of a JSON-ish value: a mapping/list as is, JSON text, or a Python literal."""
    if isinstance(value, Mapping | list):
        return value, None
    if not isinstance(value, str):
        return None, f"not a JSON object: {type(value).__name__}"
    text = value.strip()
    if len(text) > MAX_VALUE_CHARS:
        return None, f"value is {len(text)} characters, over the {MAX_VALUE_CHARS} limit"
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, or a number past Python's int limit
        json_error = str(exc)[:200]
    try:  # srtctl renders dicts with Python str(): single quotes, True/None
        return ast.literal_eval(text), None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None, f"neither JSON nor a Python literal ({json_error})"


def _norm(name: str) -> str:
    return name.lstrip("-").replace("_", "-").lower()


def flag_values(argv: Sequence[str]) -> dict[str, Any]:
    """`--name value` / `--name=value` / bare `--flag` (True) by normalized name (`_` -> `-`); last wins."""
    out: dict[str, Any] = {}
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("-") and len(token) > 1 and not _is_number(token):
            name, sep, value = token.partition("=")
            if sep:
                out[_norm(name)] = value
            elif i + 1 < len(tokens) and (not tokens[i + 1].startswith("-") or _is_number(tokens[i + 1])):
                out[_norm(name)] = tokens[i + 1]
                i += 1
            else:
                out[_norm(name)] = True
        i += 1
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def normalize_args(args: Mapping[str, Any] | Sequence[str]) -> dict[str, Any]:
    """A recipe `args` mapping or an argv, keyed by normalized flag name (`tensor-parallel-size`)."""
    if isinstance(args, Mapping):
        return {_norm(str(k)): v for k, v in args.items()}
    return flag_values(args)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(str(value).strip())
    except ValueError:
        return None


# --------------------------------------------------------------------------- vLLM


@dataclass(frozen=True)
class VllmSpecConfig:
    """vLLM `--speculative-config`."""

    raw: Mapping[str, Any] | None
    error: str | None = None

    def _get(self, key: str) -> Any:
        return (self.raw or {}).get(key)

    @property
    def method(self) -> str | None:
        """`method` (eagle, eagle3, mtp, deepseek_mtp, draft_model, dspark, ...)."""
        value = self._get("method")
        return str(value) if value is not None else None

    @property
    def model(self) -> str | None:
        """The draft model (`model`)."""
        value = self._get("model")
        return str(value) if value is not None else None

    @property
    def num_speculative_tokens(self) -> int | None:
        """`num_speculative_tokens` (the draft length)."""
        return _int(self._get("num_speculative_tokens"))

    @property
    def rejection_sample_method(self) -> str | None:
        """`rejection_sample_method` (`synthetic` when an AL is simulated, `block` on evals)."""
        value = self._get("rejection_sample_method")
        return str(value) if value is not None else None

    @property
    def synthetic_acceptance_length(self) -> float | None:
        """`synthetic_acceptance_length` (the AL itself)."""
        return _float(self._get("synthetic_acceptance_length"))

    @property
    def draft_sample_method(self) -> str | None:
        """`draft_sample_method` (`probabilistic` / greedy), when given."""
        value = self._get("draft_sample_method")
        return str(value) if value is not None else None

    @property
    def precision_overrides(self) -> dict[str, Any]:
        """Draft-precision keys that are set (quantization, dtype, KV dtype, ...)."""
        return {k: self._get(k) for k in VLLM_DRAFT_PRECISION_KEYS if self._get(k) is not None}


def read_vllm_speculative_config(value: Any) -> VllmSpecConfig:
    """Parse a `--speculative-config` value (JSON text, Python-literal text, or a mapping)."""
    data, error = parse_structured(value)
    if error is not None:
        return VllmSpecConfig(None, error)
    if not isinstance(data, Mapping):
        return VllmSpecConfig(None, f"speculative-config is a {type(data).__name__}, not an object")
    return VllmSpecConfig(dict(data))


def vllm_speculative_config(args: Mapping[str, Any] | Sequence[str]) -> VllmSpecConfig | None:
    """The `speculative-config` of a vLLM launch (argv or recipe args), None when absent."""
    flags = normalize_args(args)
    value = flags.get("speculative-config")
    if value is None or value is False:
        return None
    return read_vllm_speculative_config(value)


# --------------------------------------------------------------------------- TRT-LLM

TLLM_FORCE_ACCEPTED = "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"


@dataclass(frozen=True)
class TrtSpecConfig:
    """TRT-LLM `speculative_config`."""

    raw: Mapping[str, Any] | None
    error: str | None = None

    @property
    def decoding_type(self) -> str | None:
        """`decoding_type` (Eagle3, MTP, ...)."""
        value = (self.raw or {}).get("decoding_type")
        return str(value) if value is not None else None

    @property
    def max_draft_len(self) -> int | None:
        """`max_draft_len` (the draft length)."""
        raw = self.raw or {}
        return _int(raw.get("max_draft_len", raw.get("num_nextn_predict_layers")))

    @property
    def speculative_model(self) -> str | None:
        """`speculative_model` (or `speculative_model_dir`)."""
        raw = self.raw or {}
        value = raw.get("speculative_model", raw.get("speculative_model_dir"))
        return str(value) if value is not None else None


def trt_speculative_config(args: Mapping[str, Any]) -> TrtSpecConfig | None:
    """The `speculative_config` block of TRT-LLM recipe args (mapping or JSON text), None when absent."""
    value = args.get("speculative_config", args.get("speculative-config"))
    if value is None:
        return None
    data, error = parse_structured(value)
    if error is not None:
        return TrtSpecConfig(None, error)
    if not isinstance(data, Mapping):
        return TrtSpecConfig(None, f"speculative_config is a {type(data).__name__}, not an object")
    return TrtSpecConfig(dict(data))


def trt_forced_acceptance(env: Mapping[str, Any]) -> tuple[int | None, float | None, str | None]:
    """(forced accepted draft tokens, implied AL = tokens + 1, error) from TLLM env."""
    if TLLM_FORCE_ACCEPTED not in env:
        return None, None, None
    tokens = _int(env[TLLM_FORCE_ACCEPTED])
    if tokens is None:
        return None, None, f"{TLLM_FORCE_ACCEPTED}={env[TLLM_FORCE_ACCEPTED]!r} is not an integer"
    return tokens, float(tokens + 1), None


def trt_kv_cache_dtype(args: Mapping[str, Any]) -> str | None:
    """`kv_cache_config.dtype` of TRT-LLM args (the draft shares the target's pool settings)."""
    cfg = args.get("kv_cache_config")
    if isinstance(cfg, Mapping) and cfg.get("dtype") is not None:
        return str(cfg["dtype"])
    return None


# --------------------------------------------------------------------------- ATOM

# Module names under a draft layer whose coverage decides "excluded" (attention, dense MLP,
# experts, router, NextN projections). Patterns are matched against `<prefix>.<suffix>`.
DRAFT_MODULE_SAMPLES = (
    "self_attn.q_proj",
    "self_attn.kv_a_proj_with_mqa",
    "self_attn.qkv_proj",
    "self_attn.o_proj",
    "mlp.gate_up_proj",
    "mlp.down_proj",
    "mlp.experts",
    "mlp.shared_experts.gate_up_proj",
    "mlp.shared_experts.down_proj",
    "mlp.gate",
    "eh_proj",
)


@dataclass(frozen=True)
class OnlineQuantConfig:
    """ATOM `--online_quant_config`: global target format, per-layer overrides, exclusions."""

    raw: Mapping[str, Any] | None
    error: str | None = None

    @property
    def global_quant(self) -> str | None:
        """`global_quant_config` (ptpc_fp8, mxfp4, per_block_fp8, ...) or None."""
        value = (self.raw or {}).get("global_quant_config")
        return str(value) if value else None

    @property
    def layer_quant(self) -> dict[str, str]:
        """`layer_quant_config`: glob pattern -> format."""
        value = (self.raw or {}).get("layer_quant_config")
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}

    @property
    def exclude(self) -> tuple[str, ...]:
        """`exclude_layer` patterns (kept at source precision; evaluated before overrides)."""
        value = (self.raw or {}).get("exclude_layer")
        if isinstance(value, str):
            return (value,)
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    def excluded(self, module: str) -> bool:
        """Whether a module name is excluded (glob patterns; a plain name matches whole components)."""
        return any(pattern_matches(p, module) for p in self.exclude)

    def format_of(self, module: str) -> str | None:
        """The format a module is quantized to on load (None = left at source precision)."""
        if self.excluded(module):
            return None
        for pattern, fmt in self.layer_quant.items():
            if pattern_matches(pattern, module):
                return fmt
        return self.global_quant


def pattern_matches(pattern: str, module: str) -> bool:
    """ATOM-style layer pattern match: globs by fnmatch; a plain name equals, or is a dotted component run of, the module."""
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(module, pattern)
    if module == pattern or module.startswith(pattern + "."):
        return True
    return f".{pattern}." in f".{module}."


def read_online_quant_config(value: Any) -> OnlineQuantConfig:
    """Parse an `--online_quant_config` value (also accepts vLLM-plugin `additional-config` wrapping)."""
    data, error = parse_structured(value)
    if error is not None:
        return OnlineQuantConfig(None, error)
    if isinstance(data, Mapping) and isinstance(data.get("online_quant_config"), Mapping):
        data = data["online_quant_config"]
    if not isinstance(data, Mapping):
        return OnlineQuantConfig(None, f"online_quant_config is a {type(data).__name__}, not an object")
    return OnlineQuantConfig(dict(data))


@dataclass(frozen=True)
class DraftLayerCoverage:
    """How an online-quant config treats one draft layer (a module-name prefix)."""

    prefix: str
    formats: dict[str, str | None]  # sample module -> format applied (None = source precision)

    @property
    def untouched(self) -> bool:
        """True when every sampled module stays at source precision."""
        return all(v is None for v in self.formats.values())

    @property
    def quantized(self) -> dict[str, str]:
        """Sampled modules that get a new format."""
        return {k: v for k, v in self.formats.items() if v is not None}


def draft_layer_coverage(config: OnlineQuantConfig, prefixes: Iterable[str],
                         samples: Sequence[str] = DRAFT_MODULE_SAMPLES) -> list[DraftLayerCoverage]:
    """For each draft-layer prefix, the format every sampled module under it gets."""
    out = []
    for prefix in prefixes:
        formats = {s: config.format_of(f"{prefix}.{s}") for s in samples}
        out.append(DraftLayerCoverage(prefix, formats))
    return out


def mtp_layer_prefixes(hf_config: Mapping[str, Any]) -> list[str]:
    """Module prefixes of in-checkpoint MTP/NextN layers: `model.layers.<num_hidden_layers + i>`."""
    cfg = hf_config.get("text_config") if isinstance(hf_config.get("text_config"), Mapping) else hf_config
    n_layers = _int(cfg.get("num_hidden_layers"))
    n_mtp = None
    for key in ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers", "n_mtp_layers"):
        n_mtp = _int(cfg.get(key))
        if n_mtp:
            break
    if n_layers is None or not n_mtp:
        return []
    return [f"model.layers.{n_layers + i}" for i in range(n_mtp)]


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


def atom_online_quant(args: Mapping[str, Any] | Sequence[str]) -> OnlineQuantConfig | None:
    """ATOM's `--online_quant_config` (or vLLM-plugin `--additional-config` wrapping), None when absent."""
    flags = normalize_args(args)
    value = flags.get("online-quant-config")
    if value is None:
        extra = flags.get("additional-config")
        if extra is None:
            return None
        data, error = parse_structured(extra)
        if error is not None:
            return OnlineQuantConfig(None, error)
        if not isinstance(data, Mapping) or "online_quant_config" not in data:
            return None
        value = data
    return read_online_quant_config(value)
