"""Reading a command line when the image's engine version is unknown, or a value is known only at run time.

Two rules, shared by the parser-backed engines (SGLang, vLLM):

* **Run-time values.** An old-layout launcher (a shell script: `shell_launched`) can pass a value computed by the shell when the
  server starts (`--scheduler-recv-interval $( [[ $CONC -gt 4 ]] && echo 30 || echo 10 )`); the
  static reading keeps its source text. `split_runtime(argv)` takes such option/value pairs out
  before parsing and reports them; the parse then judges everything else. A check that needs one
  of those dests must say the value is known only at run time (`ResolvedArgs.runtime`); a value
  no check needs does not make the command line unverifiable.
* **Unknown versions.** When the image's version is unknown (a nightly named by commit or date,
  a custom build), the command line is parsed with every candidate spec. The image's own parser
  accepted it (the run produced results), so the versions that reject it are not the image's. If
  every accepting version gives the same reading of the dests a check needs (value, whether it
  was written, the option that set it), that reading is used and marked version-independent
  (`ResolvedArgs.versions`); otherwise `VersionDependent` names the dests that differ.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verifier.engines.argspec.parsing import EngineArgError, UnknownEngineVersion

# Shell expansions a static reading leaves in place: $(...), `...`, ${...}, $NAME, $1, $@.
RUNTIME = re.compile(r"\$\(|`|\$\{|\$[A-Za-z_0-9@*#?]")


class VersionDependent(UnknownEngineVersion):
    """The candidate versions that accept a command line read the needed dests differently."""

    def __init__(self, message: str, *, image: str | None, versions: Sequence[str], dests: Sequence[str]) -> None:
        super().__init__(message, image=image)
        self.versions = tuple(versions)
        self.dests = tuple(dests)


def version_order(versions: Sequence[str]) -> list[str]:
    """Versions oldest first (`0.5.8` < `0.5.8.post1` < `0.5.10`)."""

    def key(version: str) -> tuple[tuple[int, int], ...]:
        return tuple((0, int(p)) if p.isdigit() else (1 if p.startswith("post") else -1,
                                                       int(p[4:]) if p[4:].isdigit() else 0)
                     for p in version.split("."))

    return sorted(versions, key=key)


def shell_launched(launch: Any) -> bool:
    """Whether a launch's server command is run by a shell script (old-layout launcher), so that a
    `$...` left in it is expanded when the server starts; srtctl passes recipe args verbatim."""
    return str(getattr(launch, "recipe_path", "") or "").endswith((".sh", ".bash"))


def is_runtime(token: str) -> bool:
    """Whether a token still holds a shell expansion (a value known only when the server starts)."""
    return bool(RUNTIME.search(token))


def split_runtime(argv: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(argv without run-time option values, [(option as written, value text)]).

    `--x $(...)` and `--x=$(...)` are taken out whole; a run-time token that follows no option is
    left in place (the parser then reports it).
    """
    out: list[str] = []
    found: list[tuple[str, str]] = []
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("-") and "=" in token and is_runtime(token.split("=", 1)[1]):
            found.append((token.split("=", 1)[0], token.split("=", 1)[1]))
            i += 1
            continue
        if token.startswith("-") and not is_runtime(token) and i + 1 < len(tokens) and is_runtime(tokens[i + 1]) \
                and not tokens[i + 1].startswith("-"):
            found.append((token, tokens[i + 1]))
            i += 2
            continue
        out.append(token)
        i += 1
    return out, found


def runtime_dests(parser: Any, found: Sequence[tuple[str, str]]) -> dict[str, str]:
    """dest -> run-time value text, for the options `split_runtime` took out (unknown options by name)."""
    out: dict[str, str] = {}
    for option, text in found:
        dest = option.lstrip("-").replace("-", "_")
        try:
            parsed = parser._parse_optional(option)  # noqa: SLF001 - the classifier parse_args uses
        except Exception:  # noqa: BLE001 - an ambiguous prefix: keep the written name
            parsed = None
        if isinstance(parsed, list):
            parsed = parsed[0] if parsed else None
        if parsed and parsed[0] is not None:
            dest = parsed[0].dest
        out[dest] = text
    return out


def reading(resolved: Any, needed: Sequence[str]) -> tuple[Any, ...]:
    """What a check takes from a parse: per needed dest, (value, written?, option that set it, run-time?)."""
    out = []
    for dest in needed:
        use = resolved.use_for(dest)
        out.append((dest, repr(resolved.namespace.get(dest)), resolved.is_given(dest),
                    use.option_string if use is not None else None, dest in resolved.runtime))
    return tuple(out)


def resolve_across(
    resolve_one: Callable[[str], Any],
    versions: Sequence[str],
    needed: Sequence[str],
    *,
    image: str | None,
    engine: str,
    groups: Mapping[str, str] | None = None,
) -> Any:
    """Parse with each candidate version; one reading of `needed` from all accepting versions, or raise.

    `groups`: version -> a version whose spec is identical apart from its version string (a post
    release and its base); such a version is parsed once for both.

    Raises the newest version's EngineArgError when every version rejects the command line, and
    VersionDependent when the accepting versions disagree on a needed dest.
    """
    accepted: list[tuple[str, Any]] = []
    errors: list[EngineArgError] = []
    groups = groups or {}
    done: dict[str, Any] = {}  # representative version -> its outcome (a result or an error)
    for version in versions:
        rep = groups.get(version, version)
        if rep not in done:
            try:
                done[rep] = resolve_one(rep)
            except EngineArgError as exc:
                done[rep] = exc
        outcome = done[rep]
        if isinstance(outcome, EngineArgError):
            errors.append(outcome)
        else:
            accepted.append((version, outcome))
    if not accepted:
        if errors:
            raise errors[-1]
        raise UnknownEngineVersion(f"no {engine} arg spec is committed", image=image)
    if len(accepted) == 1:
        version, resolved = accepted[0]
        return dataclasses.replace(resolved, versions=(version,)) if len(versions) > 1 else resolved
    readings: dict[tuple[Any, ...], list[str]] = {}
    for version, resolved in accepted:
        readings.setdefault(reading(resolved, needed), []).append(version)
    if len(readings) > 1:
        first, *rest = list(readings)
        differ = [entry[0] for i, entry in enumerate(first) if any(other[i] != entry for other in rest)]
        raise VersionDependent(
            f"the {engine} version of {image} is unknown and the versions that accept its command line "
            f"({', '.join(v for v, _ in accepted)}) read {', '.join(differ)} differently",
            image=image, versions=[v for v, _ in accepted], dests=differ,
        )
    newest = accepted[-1][1]
    return dataclasses.replace(newest, versions=tuple(v for v, _ in accepted))
