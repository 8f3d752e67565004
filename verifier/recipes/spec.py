"""Speculative-decoding parameters of a recipe role, per engine (`spec_parameters`, FORMATS.md §4.6).

* SGLang: `speculative-algorithm` (or `speculative-algo`; the two must agree) -> method (`DSPARK` ->
  `dspark`, else lowercased); draft length = `speculative-dspark-block-size` for DSpark, else
  `speculative-num-steps`; draft model = `speculative-draft-model-path`.
* vLLM: the `speculative-config` JSON (`method`, `model`, `num_speculative_tokens`, `draft_sample_method`).
* TRT-LLM: `speculative_config.decoding_type` / `max_draft_len` / `speculative_model`.
* ATOM: `method` / `num-speculative-tokens` / `draft-model`; DSpark samples `probabilistic`.
* TileRT: `with-mtp` / `num-mtp`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SpecParams:
    """The spec-decode parameters of one role (method None when the role does not speculate)."""

    role: str
    method: str | None
    draft_length: int | None
    draft_model: str | None
    sample_method: str | None
    arg: str | None  # the arg that names the method (for evidence)
    error: str | None = None

    @property
    def speculating(self) -> bool:
        """True when the role runs speculative decoding."""
        return self.method is not None


def _get(args: Mapping[str, Any], *names: str) -> tuple[str | None, Any]:
    for name in names:
        for spelling in (name, name.replace("-", "_")):
            if spelling in args and args[spelling] is not None:
                return spelling, args[spelling]
    return None, None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _json_obj(value: Any) -> dict[str, Any] | None:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def spec_parameters(role: str, args: Mapping[str, Any] | None, engine: str) -> SpecParams:
    """Read the spec-decode parameters of one role's args for an engine type."""
    args = args or {}
    if engine == "sglang":
        name, algo = _get(args, "speculative-algorithm")
        name2, algo2 = _get(args, "speculative-algo")
        error = None
        if algo is not None and algo2 is not None and str(algo).lower() != str(algo2).lower():
            error = f"{name}={algo} conflicts with {name2}={algo2}"
        algo = algo if algo is not None else algo2
        name = name or name2
        if algo is None or str(algo).lower() in ("", "none"):
            return SpecParams(role, None, None, None, None, None, error)
        method = "dspark" if str(algo).upper() == "DSPARK" else str(algo).lower()
        length_key = "speculative-dspark-block-size" if method == "dspark" else "speculative-num-steps"
        _, length = _get(args, length_key)
        _, model = _get(args, "speculative-draft-model-path")
        _, sample = _get(args, "speculative-dspark-draft-sample-method", "speculative-draft-sample-method")
        return SpecParams(role, method, _int(length), None if model is None else str(model),
                          None if sample is None else str(sample), name, error)
    if engine == "vllm":
        name, raw = _get(args, "speculative-config")
        cfg = _json_obj(raw)
        if raw is not None and cfg is None:
            return SpecParams(role, None, None, None, None, name, "speculative-config is not a JSON object")
        if not cfg or not cfg.get("method"):
            return SpecParams(role, None, None, None, None, name)
        return SpecParams(role, str(cfg["method"]).lower(), _int(cfg.get("num_speculative_tokens")),
                          None if cfg.get("model") is None else str(cfg["model"]),
                          None if cfg.get("draft_sample_method") is None else str(cfg["draft_sample_method"]), name)
    if engine == "trtllm":
        name, raw = _get(args, "speculative_config")
        cfg = _json_obj(raw)
        if not cfg or not cfg.get("decoding_type"):
            return SpecParams(role, None, None, None, None, name)
        return SpecParams(role, str(cfg["decoding_type"]).lower(), _int(cfg.get("max_draft_len")),
                          None if cfg.get("speculative_model") is None else str(cfg["speculative_model"]),
                          None, name)
    if engine == "atom":
        name, method = _get(args, "method")
        if method is None:
            return SpecParams(role, None, None, None, None, None)
        _, length = _get(args, "num-speculative-tokens")
        _, model = _get(args, "draft-model")
        method = str(method).lower()
        return SpecParams(role, method, _int(length), None if model is None else str(model),
                          "probabilistic" if method == "dspark" else None, name)
    if engine == "tilert":
        name, on = _get(args, "with-mtp")
        if not on:
            return SpecParams(role, None, None, None, None, name)
        _, length = _get(args, "num-mtp")
        return SpecParams(role, "mtp", _int(length), None, None, name)
    return SpecParams(role, None, None, None, None, None, f"unknown engine {engine!r}")
