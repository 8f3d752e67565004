"""vLLM resolution layer: read a `vllm serve` command line the way the vLLM in its image reads it.

    resolved = resolve_vllm(argv, image="vllm/vllm-openai:v0.25.0")
    resolved.namespace["kv_cache_dtype"], resolved.is_given("speculative_config")

* `argspec` (default): a stdlib parser rebuilt from policies/vllm-argspec/vllm-<version>.argspec.json
  plus vLLM's own command-line rewriting (`verifier.engines.vllm.argspec.preprocess`).
* `real`: vLLM's own parser, in process (only when the installed vllm is the wanted version).

Which image runs which version is policies/vllm.yaml (`verifier.engines.vllm.versions`). A launcher
prefix (`vllm serve`, `python3 -m vllm.entrypoints.openai.api_server`) is stripped; after
`vllm serve` a `--model X` is moved to the positional model as vLLM does, and `model_tag`, when
given, becomes `model` (ServeSubcommand). Returns `verifier.engines.argspec.resolved.ResolvedArgs` (the same shape
for every parser-backed engine). Importing this package imports neither torch nor vllm.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Literal

from verifier.engines.argspec.parsing import ParserExit, parse_with
from verifier.engines.argspec.resolved import ResolvedArgs, check_argv
from verifier.engines.vllm.argspec import (
    UnknownVllmVersion,
    VllmArgError,
    argspec_parser,
    available_versions,
    load_argspec,
    preprocess,
)
from verifier.engines.vllm.versions import candidate_versions, version_for_image

__all__ = [
    "UnknownVllmVersion",
    "VllmArgError",
    "available_versions",
    "candidate_versions",
    "resolve_vllm",
    "split_launcher",
    "version_for_image",
]

_LAUNCHER_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main")
_PYTHON = re.compile(r"^(?:\S*/)?python(?:3(?:\.\d+)?)?$")


def split_launcher(argv: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """(prefix, server args, serve form): `vllm serve ARGS`, `python3 -m <api_server> ARGS`, or ARGS."""
    tokens = tuple(argv)
    if len(tokens) >= 2 and tokens[0].rsplit("/", 1)[-1] == "vllm" and tokens[1] == "serve":
        return tokens[:2], tokens[2:], True
    if len(tokens) >= 3 and _PYTHON.match(tokens[0]) and tokens[1] == "-m":
        if tokens[2] == "vllm.entrypoints.cli.main" and len(tokens) >= 4 and tokens[3] == "serve":
            return tokens[:4], tokens[4:], True
        if tokens[2] in _LAUNCHER_MODULES:
            return tokens[:3], tokens[3:], False
    return (), tokens, False


def _serve_model_first(args: list[str]) -> list[str]:
    """`vllm serve -tp 2 --model M ...` -> `M -tp 2 ...` (FlexibleArgumentParser's serve rewrite)."""
    for i, arg in enumerate(args):
        if re.match(r"^--model(=.+|$)", arg):
            if arg == "--model":
                if i + 1 >= len(args):
                    return args
                return [args[i + 1], *args[:i], *args[i + 2:]]
            return [arg.removeprefix("--model="), *args[:i], *args[i + 1:]]
    return args


@cache
def _real_parser(version: str) -> Any:
    from verifier.engines.vllm.dump import build_real_parser, installed_version  # noqa: PLC0415 - torch on request

    have = installed_version()
    if have != version:
        from verifier.engines.argspec.parsing import EngineUnavailable

        raise EngineUnavailable(f"real vLLM parser requested for {version}, but vllm {have or 'is not'} installed")
    return build_real_parser(raising=True)


def resolve_vllm(
    argv: Sequence[str],
    *,
    image: str | None = None,
    version: str | None = None,
    mode: Literal["auto", "argspec", "real"] = "auto",
    policy: Mapping[str, Any] | None = None,
    raise_errors: bool = True,
    runtime: bool = False,
    serve_model: bool = True,
) -> ResolvedArgs:
    """Parse a vLLM server command line with the parser of the image's (or the given) vLLM version.

    `serve_model=False` keeps `model` as parsed (the parser's own reading, for equivalence tests).
    `runtime=True`: option values that still hold a shell expansion are taken out and reported in
    `.runtime` (verifier.engines.versioned). Raises UnknownVllmVersion, VllmArgError (unless
    raise_errors=False: then `.error`).
    """
    wanted = version or version_for_image(image or "", policy)
    launcher, server_argv, serve = split_launcher(check_argv(argv, VllmArgError))
    args = list(server_argv)
    if serve:
        args = _serve_model_first(args)
    held: list[tuple[str, str]] = []
    if runtime:
        from verifier.engines.versioned import split_runtime  # noqa: PLC0415

        args, held = split_runtime(args)
    used: Literal["argspec", "real"]
    unmodelled: frozenset[str] = frozenset()
    try:
        if mode == "real":
            real = _real_parser(wanted)
            processed = args
            parser = real
            used = "real"
        elif mode in ("auto", "argspec"):
            spec = load_argspec(wanted)
            parser = argspec_parser(wanted)
            processed = preprocess(args, spec.features)
            used = "argspec"
        else:
            raise ValueError(f"mode must be auto, argspec or real, not {mode!r}")
        if used == "real":
            namespace = vars(parser.parse_args(processed))
            uses = []
        else:
            namespace, uses = parse_with(parser, processed)
    except VllmArgError as exc:
        error = VllmArgError(exc.message, version=wanted, mode=mode)
    except ParserExit as exc:
        error = VllmArgError(exc.message, version=wanted, mode=mode)
    except RecursionError:
        error = VllmArgError("a value is nested too deeply to read", version=wanted, mode=mode)
    except Exception as exc:  # noqa: BLE001 - the real parser raises its own error class
        if type(exc).__name__ != "RealParseError" and not isinstance(exc, (AssertionError, ValueError, TypeError)):
            raise
        error = VllmArgError(str(exc) if type(exc).__name__ == "RealParseError" else f"{type(exc).__name__}: {exc}",
                             version=wanted, mode=mode)
    else:
        namespace = dict(namespace)
        if serve_model and namespace.get("model_tag") is not None:
            namespace["model"] = namespace["model_tag"]
        given = frozenset(u.dest for u in uses)
        if used == "argspec":
            unmodelled = frozenset(d for d in given if d in load_argspec(wanted).unmodelled)
        late: dict[str, str] = {}
        if held:
            from verifier.engines.versioned import runtime_dests  # noqa: PLC0415

            late = runtime_dests(parser, held)
        return ResolvedArgs(version=wanted, mode=used, argv=tuple(server_argv), namespace=namespace, given=given,
                            uses=tuple(uses), launcher=launcher, unmodelled=unmodelled, runtime=late)
    if raise_errors:
        raise error
    return ResolvedArgs(version=wanted, mode=used if mode != "auto" else "argspec", argv=tuple(server_argv),
                        launcher=launcher, error=error)
