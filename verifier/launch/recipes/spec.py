"""Speculative-decoding parameters of a recipe role, per engine (`spec_parameters`, FORMATS.md §4.6).

Each engine's reading lives in its engine module (verifier/engines/: `sglang`, `vllm`, `trtllm`,
`atom`, `tilert`); this is the launch layer's entry point to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verifier.engines import engine_for
from verifier.engines.base import SpecParams

__all__ = ["SpecParams", "spec_parameters"]


def spec_parameters(role: str, args: Mapping[str, Any] | None, engine: str) -> SpecParams:
    """Read the spec-decode parameters of one role's args for an engine type."""
    found = engine_for(engine)
    if found is None:
        return SpecParams(role, None, None, None, None, None, f"unknown engine {engine!r}")
    return found.spec_params(role, args or {})
