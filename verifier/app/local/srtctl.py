"""The draft-precision rules on srtctl recipes (`backend.<type>_config.<role>`), for `verify-pr local`.

The pre-commit hook reads schema-2 recipes (`roles.<role>.args`); real srt-slurm recipes of the
old layout keep each role's engine arguments under `backend.<type>_config` (`sglang_config`, of
`base:` or of the document itself). For a backend whose KV dtypes Check 13 models (the engine
registry's `models_kv_dtypes`: SGLang), the same rules (verifier.engines.draft_precision) run on
those role mappings, read by the newest committed parser that accepts them, so a draft-only KV
dtype or a draft quantization written there is named by file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verifier.core.errors import InputError
from verifier.core.yaml11 import parse_yaml11
from verifier.engines import Engine, engine_named
from verifier.engines.draft_precision import DraftIssue, sglang_issues
from verifier.launch.recipes.argv import flag_name, value_tokens


def _resolve(engine: Engine, argv: list[str]) -> Any:
    """The newest release's reading of the command line that accepts it (None when none does; an
    srtctl recipe names its image by an alias, not a version)."""
    from verifier.engines.argspec.parsing import EngineArgsError

    for version in engine.committed_versions():
        try:
            return engine.resolve_version(argv, version)
        except EngineArgsError:
            continue
    return None


def srtctl_issues(path: str, text: str, policy: Mapping[str, Any]) -> list[tuple[DraftIssue, str | None]]:
    """Findings of one srtctl recipe: (issue, the role it appeared in)."""
    try:
        doc = parse_yaml11(text, path)
    except InputError:
        return []
    data = doc.data if isinstance(doc.data, Mapping) else {}
    prefix: tuple[str, ...] = ("base",) if isinstance(data.get("base"), Mapping) else ()
    section = data.get("base") if prefix else data
    backend = section.get("backend") if isinstance(section, Mapping) else None
    if not isinstance(backend, Mapping):
        return []
    engine = engine_named(str(backend.get("type", "")).lower())
    if not engine.models_kv_dtypes:
        return []
    config_key = f"{engine.name}_config"  # srtctl: `backend.<type>_config`
    config = backend.get(config_key)
    if not isinstance(config, Mapping):
        return []
    found: list[tuple[DraftIssue, str | None]] = []
    for role, args in config.items():
        if not isinstance(args, Mapping):
            continue
        keys = {flag_name(str(k), engine.name): k for k in args}

        def origin_of(flag: str, _role: Any = role, _keys: dict[str, Any] = keys) -> tuple[str | None, int | None]:
            key = _keys.get(flag.split("=", 1)[0])
            line = doc.line(*prefix, "backend", config_key, _role, key) if key is not None else None
            return path, line

        argv = ["--model-path", "/model"]
        for key, value in args.items():
            tokens = value_tokens(value)
            if tokens is not None and str(key) not in ("model-path", "model_path"):
                argv += [flag_name(str(key), engine.name), *tokens]
        resolved = _resolve(engine, argv)
        if resolved is None or not resolved.value("speculative_algorithm"):  # rejected: another check's finding
            continue
        target = resolved.value(policy["target_kv_dest"]) or "auto"
        effective = policy["hook_auto_kv"]["default"] if str(target).lower() == "auto" else target
        for issue in sglang_issues(resolved, origin_of, policy, target_kv=effective, target_setting=str(target)):
            found.append((issue, str(role)))
    return found
