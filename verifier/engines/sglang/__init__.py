"""SGLang resolution layer: read a launch command the way the SGLang in its image reads it.

    resolved = resolve_sglang(argv, image="lmsysorg/sglang:v0.5.16-cu130")
    resolved.namespace["kv_cache_dtype"]      # the value argparse stores (defaults included)
    "kv_cache_dtype" in resolved.given         # written on the command line (even if = default)
    resolved.flag_for("tp_size")               # "--tp" if it was abbreviated, "--tensor-parallel-size", ...

Two parser modes that must agree (tests/sglang/test_equivalence.py):

* `argspec` (default, "auto"): a stdlib argparse parser rebuilt from the committed spec
  policies/sglang-argspec/sglang-<version>.argspec.json. ~50 ms once, no torch.
* `real`: SGLang's own `ServerArgs.add_cli_args` + `parse_args`, in process. Only when the
  installed sglang is the wanted version; imports torch (seconds). Never `from_cli_args` or
  `resolve_once` (on old versions construction runs the GPU/network resolution pipeline).

Parse errors raise `EngineArgError` carrying argparse's own message (unknown flag, ambiguous
prefix, invalid choice, ...). An image/version with no known spec raises `UnknownEngineVersion`;
callers report the launch as unverifiable. Importing this package imports neither torch nor sglang.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from verifier.engines.argspec.parsing import EngineArgError, ParserExit, parse_with
from verifier.engines.argspec.resolved import ResolvedArgs, check_argv
from verifier.engines.sglang.argspec import argspec_parser, available_versions, load_argspec
from verifier.engines.sglang.dump import sglang_spec_main
from verifier.engines.sglang.kvdtype import (
    KvDtypes,
    KvStep,
    canonical_dtype,
    checkpoint_kv_quant,
    dtype_rank,
    effective_kv_dtypes,
    model_dtype,
)
from verifier.engines.sglang.parsing import split_launcher
from verifier.engines.sglang.versions import pick_version, version_for_framework, version_for_image

Mode = Literal["auto", "argspec", "real"]

__all__ = [
    "KvDtypes",
    "KvStep",
    "available_versions",
    "canonical_dtype",
    "checkpoint_kv_quant",
    "dtype_rank",
    "effective_kv_dtypes",
    "load_argspec",
    "model_dtype",
    "pick_version",
    "resolve_sglang",
    "sglang_spec_main",
    "split_launcher",
    "version_for_framework",
    "version_for_image",
]


def resolve_sglang(
    argv: Sequence[str],
    *,
    image: str | None = None,
    version: str | None = None,
    framework: str | None = None,
    mode: Mode = "auto",
    policy: Mapping[str, Any] | None = None,
    raise_errors: bool = True,
    runtime: bool = False,
) -> ResolvedArgs:
    """Parse an SGLang server command line with the parser of the right SGLang version.

    `argv` is the server arguments, optionally preceded by `python3 -m sglang.launch_server` (or
    `sglang serve`), which is stripped. The version is `version`, else the image's
    (policies/sglang.yaml), else `framework` (a recipe's identity.frameworks.sglang).
    `mode`: "auto"/"argspec" use the committed spec; "real" uses the installed sglang
    (EngineUnavailable if it is missing or another version).
    `runtime=True`: option values that still hold a shell expansion are taken out before parsing
    and reported in `.runtime` (verifier.engines.versioned.split_runtime).
    Raises UnknownEngineVersion, EngineArgError (unless raise_errors=False: then `.error`).
    """
    wanted = pick_version(image=image, version=version, framework=framework, policy=policy)
    launcher, server_argv = split_launcher(check_argv(argv))
    held: list[tuple[str, str]] = []
    if runtime:
        from verifier.engines.versioned import split_runtime  # noqa: PLC0415

        stripped, held = split_runtime(server_argv)
        server_argv = tuple(stripped)
    unmodelled: frozenset[str] = frozenset()
    if mode == "real":
        from verifier.engines.sglang.real import real_parser  # noqa: PLC0415 - torch only on request

        parser = real_parser(wanted)
        used: Literal["argspec", "real"] = "real"
    elif mode in ("auto", "argspec"):
        spec = load_argspec(wanted)
        parser = argspec_parser(wanted)
        used = "argspec"
        unmodelled = frozenset(spec.unknown_types)
    else:
        raise ValueError(f"mode must be auto, argspec or real, not {mode!r}")
    try:
        namespace, uses = parse_with(parser, server_argv)
    except ParserExit as exc:
        error = EngineArgError(exc.message, version=wanted, mode=used)
    except (AssertionError, ValueError, TypeError) as exc:  # raised by an action itself (LoRAPathAction)
        error = EngineArgError(f"{type(exc).__name__}: {exc}", version=wanted, mode=used)
    else:
        types_hit = frozenset(
            u.dest for u in uses
            if unmodelled and (load_argspec(wanted).action_for(u.option_string) or {}).get("type") in unmodelled
        )
        late: dict[str, str] = {}
        if held:
            from verifier.engines.versioned import runtime_dests  # noqa: PLC0415

            late = runtime_dests(parser, held)
        return ResolvedArgs(
            version=wanted, mode=used, argv=server_argv, namespace=namespace,
            given=frozenset(u.dest for u in uses), uses=tuple(uses), launcher=launcher,
            unmodelled=types_hit, runtime=late,
        )
    if raise_errors:
        raise error
    return ResolvedArgs(version=wanted, mode=used, argv=server_argv, launcher=launcher, error=error)
