"""ATOM (ROCm): `python3 -m atom.entrypoints.openai_server`, argparse options (policies/atom.yaml).

* Spec decode: `--method` / `--num-speculative-tokens` / `--draft-model`; DSpark samples
  `probabilistic`.
* KV cache: `--kv_cache_dtype` (one setting for target and draft).
* Quantization: `--online_quant_config` (or the vLLM-plugin `--additional-config` wrapping); its
  `exclude_layer` must cover the draft layers (Check 13).
* Synthetic acceptance: `--spec-decode-acceptance-length`.
* Chat template: `--chat-template`, `--default-chat-template-kwargs`.
* Single-node parallelism: the worker's GPUs = TP; DCP is allowed.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
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
    present,
)
from verifier.engines.common import (
    StructuredConfig,
    arg_value,
    engine_policy,
    loose_int,
    normalize_args,
    option_dests,
    parse_structured,
    read_config,
    to_int,
)

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


def atom_policy() -> Mapping[str, Any]:
    """policies/atom.yaml (validated)."""
    return engine_policy("atom")


@dataclass(frozen=True, eq=False, repr=False)
class OnlineQuantConfig(StructuredConfig):
    """ATOM `--online_quant_config`: global target format, per-layer overrides, exclusions."""

    @property
    def global_quant(self) -> str | None:
        """`global_quant_config` (ptpc_fp8, mxfp4, per_block_fp8, ...) or None."""
        value = self.get("global_quant_config")
        return str(value) if value else None

    @property
    def layer_quant(self) -> dict[str, str]:
        """`layer_quant_config`: glob pattern -> format."""
        value = self.get("layer_quant_config")
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}

    @property
    def exclude(self) -> tuple[str, ...]:
        """`exclude_layer` patterns (kept at source precision; evaluated before overrides)."""
        value = self.get("exclude_layer")
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
    return read_config(value, "online_quant_config", OnlineQuantConfig, unwrap=_unwrap_plugin)


def _unwrap_plugin(data: Any) -> Any:
    """The `online_quant_config` inside a vLLM-plugin `additional-config` object, else the data itself."""
    if isinstance(data, Mapping) and isinstance(data.get("online_quant_config"), Mapping):
        return data["online_quant_config"]
    return data


@dataclass(frozen=True, eq=False, repr=False)
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
    return [DraftLayerCoverage(prefix, {s: config.format_of(f"{prefix}.{s}") for s in samples}) for prefix in prefixes]


def mtp_layer_prefixes(hf_config: Mapping[str, Any]) -> list[str]:
    """Module prefixes of in-checkpoint MTP/NextN layers: `model.layers.<num_hidden_layers + i>`."""
    cfg = hf_config.get("text_config") if isinstance(hf_config.get("text_config"), Mapping) else hf_config
    n_layers = loose_int(cfg.get("num_hidden_layers"))
    n_mtp = None
    for key in ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_layers", "n_mtp_layers"):
        n_mtp = loose_int(cfg.get(key))
        if n_mtp:
            break
    if n_layers is None or not n_mtp:
        return []
    return [f"model.layers.{n_layers + i}" for i in range(n_mtp)]


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


class Atom(Engine):
    """ATOM's answers."""

    name = "atom"
    label = "ATOM"
    single_node_dcp = True

    def spec_params(self, role: str, args: Mapping[str, Any] | None) -> SpecParams:
        """`method` / `num-speculative-tokens` / `draft-model`."""
        name, method = arg_value(args, "method")
        if method is None:
            return SpecParams(role, None, None, None, None, None)
        _, length = arg_value(args, "num-speculative-tokens")
        _, model = arg_value(args, "draft-model")
        method = str(method).lower()
        return SpecParams(role, method, to_int(length), None if model is None else str(model),
                          "probabilistic" if method == "dspark" else None, name)

    def kv_cache(self, launch: LaunchLike) -> KvCacheSettings:
        """`--kv_cache_dtype`: one setting for target and draft."""
        return KvCacheSettings(arg_setting(launch, "kv_cache_dtype", "kv-cache-dtype"), None, draft_shares_target=True)

    def quantization(self, launch: LaunchLike) -> QuantSettings:
        """`--online_quant_config` (target; it reaches the draft unless `exclude_layer` covers it)."""
        found = arg_setting(launch, "online_quant_config", "online-quant-config")
        return QuantSettings(found, (found,) if found is not None else ())

    def synthetic(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """`--spec-decode-acceptance-length`."""
        return present(arg_setting(launch, "spec-decode-acceptance-length"))

    def synthetic_injection(self, role: str, args: Mapping[str, Any], al: float,
                            al_text: str) -> list[tuple[tuple[Any, ...], Any]]:
        """The connector passes the AL as an argument."""
        return [(("roles", role, "args", "spec-decode-acceptance-length"), al)]

    def chat_template(self, launch: LaunchLike) -> tuple[Setting, ...]:
        """`--chat-template` and `--default-chat-template-kwargs` (e.g. `{"enable_thinking": false}`)."""
        return present(arg_setting(launch, "chat-template"), arg_setting(launch, "default-chat-template-kwargs"))

    def parallelism_issues(self, args: Mapping[str, Any], point: PointShape, gpus: int | None) -> list[str]:
        """The worker's GPUs must be TP (ATOM's args carry no parallel sizes the binder compares)."""
        out: list[str] = []
        if gpus != point.tp:
            out.append(f"gpus: recipe {gpus} != TP {point.tp}")
        return out


def serve_options() -> dict[str, str]:
    """Every ATOM server option spelling the policy records -> its dest."""
    return option_dests(atom_policy())


ENGINE = Atom()
