"""A command line as an engine's version-pinned parser read it, and the bounds every reading keeps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from verifier.engines.argspec.parsing import EngineArgError, OptionUse

MAX_ARGV = 4096
MAX_TOKEN = 1 << 20


@dataclass(frozen=True, eq=False, repr=False)
class ResolvedArgs:
    """A launch command as an engine's parser reads it (SGLang's, vLLM's).

    `namespace`: every dest -> value (argparse defaults included). `given`: dests set by an
    option written on the command line, so a restated default is distinguishable from a default.
    `uses`: every option token in order (as written, the option it resolved to, abbreviation,
    deprecation). `launcher`: the stripped launcher prefix (`python3 -m sglang.launch_server`, `vllm serve`), if any.
    `error` is set (and `namespace` empty) only when resolve_sglang(..., raise_errors=False).
    """

    version: str
    mode: Literal["argspec", "real"]
    argv: tuple[str, ...]
    namespace: Mapping[str, Any] = field(default_factory=dict)
    given: frozenset[str] = frozenset()
    uses: tuple[OptionUse, ...] = ()
    launcher: tuple[str, ...] = ()
    error: EngineArgError | None = None
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
        """Whether this engine version declares the dest at all."""
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
        """Options that hit one of the engine's Deprecated* actions (`new_flag` names the replacement)."""
        return tuple(u for u in self.uses if u.deprecated)

    @property
    def ok(self) -> bool:
        """True when the command line parsed."""
        return self.error is None


def check_argv(argv: Iterable[str], error: type[EngineArgError] = EngineArgError) -> tuple[str, ...]:
    """The command line as a tuple of strings, bounded (MAX_ARGV tokens of MAX_TOKEN characters);
    `error` (EngineArgError or an engine's subclass) names what is out of bounds."""
    tokens = tuple(argv)
    if len(tokens) > MAX_ARGV:
        raise error(f"command line has {len(tokens)} tokens, over the {MAX_ARGV} limit")
    for token in tokens:
        if not isinstance(token, str):
            raise error(f"command-line token is not a string: {token!r}")
        if len(token) > MAX_TOKEN:
            raise error(f"a command-line token is {len(token)} characters, over the {MAX_TOKEN} limit")
    return tokens
