"""Engines as a registry: one small module per serving engine, asked the same questions.

    engine = engine_for(launch.engine)        # an Engine, or None for a name no module declares
    engine = engine_named(server.engine)      # exact registered name, else the generic engine
    engine.spec_params(role, args)            # SpecParams
    engine.kv_cache(launch), engine.quantization(launch), engine.synthetic(launch), ...

One package per engine, in order: `sglang`, `vllm`, `trtllm`, `atom`, `tilert`; each package's
`answers` module holds its `ENGINE` (a `verifier.engines.base.Engine`), and the packages with a
version-pinned parser hold it beside (`sglang/`, `vllm/`: parser, committed specs, versions).
Adding an engine is one new package with an `answers.ENGINE` and one line in `ENGINE_MODULES`.
Outside this package no module names an engine (tests/engines/test_engine_names.py): it asks the
registry (`engine_for`, `engine_or_generic`, `engine_named`, `default_engine`, `engines`).
The questions and the answer shapes are in `verifier/engines/base.py`; reading a command line
whose image's version is unknown, or whose values are known only at run time, in
`verifier/engines/versioned.py`. Importing this package imports no engine and no torch.
"""

from __future__ import annotations

import importlib
from functools import cache

from verifier.engines.base import (
    Engine,
    EngineAnswers,
    KvCacheSettings,
    PointShape,
    QuantSettings,
    Setting,
    SpecParams,
)

ENGINE_MODULES: tuple[str, ...] = ("sglang", "vllm", "trtllm", "atom", "tilert")
# The engine of a recipe or launch that names none (srtctl's default backend): Check 13 and the
# pre-commit hook read such a launch as this engine's.
DEFAULT_ENGINE = "sglang"
GENERIC = Engine()  # a name no module declares: flag reading, no parser, no synthetic knobs
GENERIC.cli_dashes = False

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINE_MODULES",
    "GENERIC",
    "Engine",
    "EngineAnswers",
    "KvCacheSettings",
    "PointShape",
    "QuantSettings",
    "Setting",
    "SpecParams",
    "default_engine",
    "engine_for",
    "engine_named",
    "engine_or_generic",
    "engines",
]


@cache
def engines() -> tuple[Engine, ...]:
    """Every registered engine, in ENGINE_MODULES order (modules imported on first use)."""
    return tuple(importlib.import_module(f"verifier.engines.{name}.answers").ENGINE for name in ENGINE_MODULES)


@cache
def engine_for(name: str | None) -> Engine | None:
    """The engine a launch names (`sglang`, `vllm`, `trtllm`, `atom`, `tilert`); None for anything else."""
    if not name:
        return None
    key = str(name).strip().lower()
    return next((engine for engine in engines() if engine.name == key), None)


def engine_or_generic(name: str | None) -> Engine:
    """`engine_for(name)`, or the generic engine (flag reading) for an unknown name."""
    return engine_for(name) or GENERIC


def engine_named(name: str | None) -> Engine:
    """The engine whose registered name is exactly `name` (no case folding, no stripping), else the
    generic engine: for names the launch layer compares as written (a recipe's `engine.type`, the
    engine the shell reader recognised)."""
    found = engine_for(name)
    return found if found is not None and found.name == name else GENERIC


def default_engine() -> Engine:
    """The engine read when a recipe or launch names none (`DEFAULT_ENGINE`)."""
    return engine_or_generic(DEFAULT_ENGINE)
