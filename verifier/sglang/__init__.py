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

Parse errors raise `SGLangArgError` carrying argparse's own message (unknown flag, ambiguous
prefix, invalid choice, ...). An image/version with no known spec raises `UnknownSGLangVersion`;
callers report the launch as unverifiable. Importing this package imports neither torch nor sglang.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from verifier.sglang.argspec import argspec_parser, available_versions, load_argspec
from verifier.sglang.dump import sglang_spec_main
from verifier.sglang.kvdtype import (
    KvDtypes,
    KvStep,
    canonical_dtype,
    checkpoint_kv_quant,
    dtype_rank,
    effective_kv_dtypes,
    model_dtype,
)
from verifier.sglang.parsing import (
    ArgSpecError,
    OptionUse,
    SGLangArgError,
    SGLangError,
    SGLangUnavailable,
    UnknownSGLangVersion,
    _ParserExit,
    parse_with,
    split_launcher,
)
from verifier.sglang.versions import (
    ImageRef,
    parse_image,
    pick_version,
    version_for_framework,
    version_for_image,
)

Mode = Literal["auto", "argspec", "real"]
MAX_ARGV = 4096
MAX_TOKEN = 1 << 20

__all__ = [
    "ArgSpecError",
    "ImageRef",
    "KvDtypes",
    "KvStep",
    "OptionUse",
    "ResolvedArgs",
    "SGLangArgError",
    "SGLangError",
    "SGLangUnavailable",
    "UnknownSGLangVersion",
    "available_versions",
    "canonical_dtype",
    "check_argv",
    "checkpoint_kv_quant",
    "dtype_rank",
    "effective_kv_dtypes",
    "load_argspec",
    "model_dtype",
    "parse_image",
    "pick_version",
    "resolve_sglang",
    "sglang_spec_main",
    "split_launcher",
    "version_for_framework",
    "version_for_image",
]


@dataclass(frozen=True)
class ResolvedArgs:
    """A launch command as SGLang's parser reads it.

    `namespace`: every dest -> value (argparse defaults included). `given`: dests set by an
    option written on the command line, so a restated default is distinguishable from a default.
    `uses`: every option token in order (as written, the option it resolved to, abbreviation,
    deprecation). `launcher`: the stripped `python3 -m sglang.launch_server` prefix, if any.
    `error` is set (and `namespace` empty) only when resolve_sglang(..., raise_errors=False).
    """

    version: str
    mode: Literal["argspec", "real"]
    argv: tuple[str, ...]
    namespace: Mapping[str, Any] = field(default_factory=dict)
    given: frozenset[str] = frozenset()
    uses: tuple[OptionUse, ...] = ()
    launcher: tuple[str, ...] = ()
    error: SGLangArgError | None = None
    unmodelled: frozenset[str] = frozenset()
    # dest -> the source text of a value known only at run time (taken out before parsing; only
    # when resolve_sglang(..., runtime=True)); see verifier/engines/versioned.py
    runtime: Mapping[str, str] = field(default_factory=dict)
    # the candidate versions that all read the needed dests alike, when the image's version is
    # unknown (verifier.engines.versioned.resolve_across); empty when the version is known
    versions: tuple[str, ...] = ()

    def flag_for(self, dest: str) -> str | None:
        """The option string written for a dest (its last use: argparse keeps the last), else None."""
        use = self.use_for(dest)
        return use.written if use else None

    def use_for(self, dest: str) -> OptionUse | None:
        """The last OptionUse that set a dest."""
        for use in reversed(self.uses):
            if use.dest == dest:
                return use
        return None

    def value(self, dest: str, default: Any = None) -> Any:
        """namespace[dest], or `default` if the version has no such dest."""
        return self.namespace.get(dest, default)

    def has_dest(self, dest: str) -> bool:
        """Whether this SGLang version declares the dest at all."""
        return dest in self.namespace

    def is_given(self, dest: str) -> bool:
        """Whether an option for the dest was written on the command line."""
        return dest in self.given

    @property
    def abbreviated(self) -> tuple[OptionUse, ...]:
        """Options accepted only as a unique prefix of a declared option (`--tp` for `--tp-size`)."""
        return tuple(u for u in self.uses if u.abbreviated)

    @property
    def deprecated(self) -> tuple[OptionUse, ...]:
        """Options that hit one of SGLang's Deprecated* actions (`new_flag` names the replacement)."""
        return tuple(u for u in self.uses if u.deprecated)

    @property
    def ok(self) -> bool:
        """True when the command line parsed."""
        return self.error is None


def check_argv(argv: Iterable[str], error: type[SGLangArgError] = SGLangArgError) -> tuple[str, ...]:
    """The command line as a tuple of strings, bounded (MAX_ARGV tokens of MAX_TOKEN characters);
    `error` (SGLangArgError or an engine's subclass) names what is out of bounds."""
    tokens = tuple(argv)
    if len(tokens) > MAX_ARGV:
        raise error(f"command line has {len(tokens)} tokens, over the {MAX_ARGV} limit")
    for token in tokens:
        if not isinstance(token, str):
            raise error(f"command-line token is not a string: {token!r}")
        if len(token) > MAX_TOKEN:
            raise error(f"a command-line token is {len(token)} characters, over the {MAX_TOKEN} limit")
    return tokens


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
    (SGLangUnavailable if it is missing or another version).
    `runtime=True`: option values that still hold a shell expansion are taken out before parsing
    and reported in `.runtime` (verifier.engines.versioned.split_runtime).
    Raises UnknownSGLangVersion, SGLangArgError (unless raise_errors=False: then `.error`).
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
        from verifier.sglang.real import real_parser  # noqa: PLC0415 - torch only on request

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
    except _ParserExit as exc:
        error = SGLangArgError(exc.message, version=wanted, mode=used)
    except (AssertionError, ValueError, TypeError) as exc:  # raised by an action itself (LoRAPathAction)
        error = SGLangArgError(f"{type(exc).__name__}: {exc}", version=wanted, mode=used)
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
