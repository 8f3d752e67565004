"""The draft-precision rules on srtctl recipes (`backend.<type>_config.<role>`), for the pre-commit
hook and `verify-pr local`.

The hook reads schema-2 recipes (`roles.<role>.args`) itself; srt-slurm recipes of the old layout
keep each role's engine arguments under `backend.<type>_config.<role>` (`sglang_config.prefill`,
`.decode`, `.aggregated`: every key of that mapping is a role) and the extra command-line words
under `backend.<role>_extra_args`, in the document itself or in its `base:` and `override_*` /
`zip_override_*` variants (expanded as srtctl does, verifier.launch.recipes.variants). For a
backend whose KV dtypes Check 13 models (the engine registry's `models_kv_dtypes`: SGLang; a
recipe naming no `backend.type` is the default engine's), the same rules
(verifier.engines.draft_precision) run on each role of each variant, read by the newest committed
parser that accepts them (an srtctl recipe names its image by an alias, not a version), so a
draft-only KV dtype or a draft quantization written there is named by file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verifier.core.errors import InputError
from verifier.core.yaml11 import parse_yaml11
from verifier.engines import Engine, default_engine, engine_named
from verifier.engines.draft_precision import DraftIssue, sglang_issues
from verifier.launch.recipes.argv import flag_name, value_tokens
from verifier.launch.recipes.variants import RecipeError, Variant, expand, is_bundle

_PATH_KEYS = ("model-path", "model_path")


def newest_reading(engine: Engine, argv: list[str], *, shell: bool = False) -> Any:
    """The newest committed release's reading of a command line that accepts it (None when none
    does). `shell`: the command line is a script's (shell expansions are run-time values)."""
    from verifier.engines.argspec.parsing import EngineArgsError

    for version in engine.committed_versions():
        try:
            if shell:
                return engine.resolve_shell_version(argv, version)
            return engine.resolve_version(argv, version)
        except EngineArgsError:
            continue
    return None


class UnreadableFile(Exception):
    """A file the hook cannot judge; the message says why."""


def recipe_variants(path: str, text: str) -> list[Variant]:
    """The variants of a recipe file (schema 2 or srtctl; [] for YAML that is neither), each override
    and zip variant expanded as srtctl does, and a bundle's `base:` too.

    Raises UnreadableFile when the YAML does not parse or its variants cannot be expanded.
    """
    try:
        doc = parse_yaml11(text, path)
    except InputError as exc:
        raise UnreadableFile(f"not valid YAML: {exc.reason}") from None
    data = doc.data
    if not isinstance(data, Mapping) or not any(key in data for key in ("base", "roles", "backend")):
        return []
    try:
        variants = expand(doc)
        if is_bundle(data):
            variants = [*expand(doc, "base"), *variants]
    except RecipeError as exc:
        raise UnreadableFile(f"recipe variants cannot be expanded: {exc}") from None
    return variants


def keep_first(found: list[tuple[DraftIssue, str | None]], issue: DraftIssue, where: str | None) -> None:
    """Keep the first report of an issue (same kind, place and value) across variants, roles and worlds."""
    if not any(issue.kind == i.kind and issue.where == i.where and issue.value == i.value for i, _ in found):
        found.append((issue, where))


def server_argv(args: Mapping[str, Any], extra: list[Any], engine_name: str) -> list[str]:
    """A role's engine arguments as the server command line srtctl writes (the model path stubbed)."""
    argv = ["--model-path", "/model"]
    for key, value in args.items():
        tokens = value_tokens(value)
        if tokens is not None and str(key) not in _PATH_KEYS:
            argv += [flag_name(str(key), engine_name), *tokens]
    return argv + [str(x) for x in extra]


def kv_issues(resolved: Any, origin_of: Any, policy: Mapping[str, Any], auto_kv: str) -> list[DraftIssue]:
    """Check 13's draft-precision rules on a parser's reading of a speculating role ([] when the
    command line was rejected, which is another check's finding, or does not speculate)."""
    if resolved is None or not resolved.value("speculative_algorithm"):
        return []
    target = resolved.value(policy["target_kv_dest"]) or "auto"
    effective = auto_kv if str(target).lower() == "auto" else target
    return sglang_issues(resolved, origin_of, policy, target_kv=effective, target_setting=str(target))


def _role_issues(variant: Variant, engine: Engine, config_key: str, role: Any, args: Mapping[str, Any],
                 extra: list[Any], policy: Mapping[str, Any], auto_kv: str) -> list[DraftIssue]:
    keys = {flag_name(str(k), engine.name): k for k in args}
    extra_key = f"{role}_extra_args"

    def origin_of(flag: str) -> tuple[str | None, int | None]:
        written = flag.split("=", 1)[0]
        key = keys.get(written)
        origin = variant.origin("backend", config_key, role, key) if key is not None else None
        if origin is None:
            for i, item in enumerate(extra):
                if str(item).split("=", 1)[0] == written:
                    origin = variant.origin("backend", extra_key, i) or variant.origin("backend", extra_key)
                    break
        return (origin.path, origin.line) if origin else (variant.file, None)

    return kv_issues(newest_reading(engine, server_argv(args, extra, engine.name)), origin_of, policy, auto_kv)


def variant_issues(variant: Variant, policy: Mapping[str, Any], auto_kv: str) -> list[tuple[DraftIssue, str]]:
    """Findings of one expanded variant of an srtctl recipe: (issue, the role it appeared in).

    `auto_kv`: the target KV dtype SGLang's `auto` means for the recipe's model.
    """
    backend = variant.data.get("backend")
    if not isinstance(backend, Mapping):
        return []
    kind = backend.get("type")
    engine = engine_named(str(kind).lower()) if kind else default_engine()
    if not engine.models_kv_dtypes:
        return []
    config_key = f"{engine.name}_config"  # srtctl: `backend.<type>_config`
    config = backend.get(config_key)
    if not isinstance(config, Mapping):
        return []
    out: list[tuple[DraftIssue, str]] = []
    for role, args in config.items():
        if not isinstance(args, Mapping):
            continue
        extra = backend.get(f"{role}_extra_args")
        extra = extra if isinstance(extra, list) else []
        out += [(issue, str(role)) for issue in
                _role_issues(variant, engine, config_key, role, args, extra, policy, auto_kv)]
    return out


def srtctl_issues(path: str, text: str, policy: Mapping[str, Any], *,
                  auto_kv: str | None = None) -> list[tuple[DraftIssue, str | None]]:
    """Findings of one srtctl recipe: (issue, the role it appeared in, and its variant when that is
    an override), each reported once.

    `auto_kv`: the target KV dtype SGLang's `auto` means for the recipe's model (the hook's
    `hook_auto_kv` by model prefix); default: the policy's default.
    """
    auto = auto_kv or policy["hook_auto_kv"]["default"]
    found: list[tuple[DraftIssue, str | None]] = []
    try:
        variants = recipe_variants(path, text)
    except UnreadableFile:
        return []  # the hook reports a file that is not YAML or whose variants cannot be expanded
    for variant in variants:
        for issue, role in variant_issues(variant, policy, auto):
            keep_first(found, issue, role if variant.key in ("", "base") else f"{role}, variant {variant.key}")
    return found
