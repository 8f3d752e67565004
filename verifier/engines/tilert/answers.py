"""TileRT: `with-mtp` / `num-mtp` spec decode; `TILERT_SIMULATE_ACC_*` synthetic acceptance (decode role)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verifier.engines.base import Engine, SpecParams
from verifier.engines.common import arg_value, to_int


class TileRT(Engine):
    """TileRT's answers."""

    name = "tilert"
    label = "TileRT"
    synthetic_env_prefixes = ("TILERT_SIMULATE_ACC",)

    def spec_params(self, role: str, args: Mapping[str, Any] | None) -> SpecParams:
        """`with-mtp` turns MTP on; `num-mtp` is the draft length."""
        name, on = arg_value(args, "with-mtp")
        if not on:
            return SpecParams(role, None, None, None, None, name)
        _, length = arg_value(args, "num-mtp")
        return SpecParams(role, "mtp", to_int(length), None, None, name)

    def synthetic_injection(self, role: str, args: Mapping[str, Any], al: float,
                            al_text: str) -> list[tuple[tuple[Any, ...], Any]]:
        """The connector simulates acceptance on the decode worker only."""
        if role != "decode":
            return []
        env = ("roles", role, "env")
        return [((*env, "TILERT_SIMULATE_ACC_LEN"), al_text), ((*env, "TILERT_SIMULATE_ACC_METHOD"), "match-expected")]


ENGINE = TileRT()
