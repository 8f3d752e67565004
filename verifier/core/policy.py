"""Policies are data: policies/<topic>.yaml, each validated by policies/schema/<topic>.schema.json.

Loaded once per process into read-only mappings. A file that does not validate is a PolicyError
naming the file and the offending field.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from verifier.core import cache
from verifier.core.errors import InputError, PolicyError
from verifier.core.quickschema import accepts
from verifier.core.resources import POLICY_DIR

# Bump when the cached form of the policies changes.
_CACHE_KIND = "policies-v1"


def _json_keys(value: Any) -> Any:
    # Policies follow JSON semantics: mapping keys are strings (YAML `0:` becomes "0").
    if isinstance(value, dict):
        return {str(k): _json_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_keys(v) for v in value]
    return value


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def validate_policy(topic: str, data: Any, *, source: str, schema_dir: Path = POLICY_DIR / "schema") -> None:
    """Validate one policy document against its schema; raise PolicyError naming file and field."""
    schema_path = schema_dir / f"{topic}.schema.json"
    if not schema_path.is_file():
        raise PolicyError(f"{source}: no schema {schema_path.name} for policy topic '{topic}'")
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    if accepts(schema, schema, data):
        return  # certainly valid; jsonschema (slow to import) words a refusal
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        field = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise PolicyError(f"{source}: field {field}: {err.message}")


def load_policy_file(path: Path, *, schema_dir: Path = POLICY_DIR / "schema") -> Mapping[str, Any]:
    """Load and validate one policies/<topic>.yaml file."""
    return _freeze(_validated(path, schema_dir))


def _validated(path: Path, schema_dir: Path) -> Any:
    """One policy file parsed and validated, as plain JSON-like data."""
    from verifier.core.yamlio import decode_text, load_yaml_data

    try:
        data = _json_keys(load_yaml_data(decode_text(path.read_bytes(), str(path)), str(path)))
    except InputError as exc:
        raise PolicyError(str(exc)) from None
    validate_policy(path.stem, data, source=str(path), schema_dir=schema_dir)
    return data


def _policy_set_key(files: list[Path], schema_dir: Path) -> str:
    """Content key of a policy set: every policy file and every schema, names and bytes."""
    schemas = sorted(schema_dir.glob("*.json")) if schema_dir.is_dir() else []
    blobs: list[bytes] = []
    for path in [*files, *schemas]:
        blobs += [path.name.encode(), path.read_bytes()]
    return cache.content_key(_CACHE_KIND, blobs)


@functools.cache
def load_policies(directory: Path = POLICY_DIR) -> Mapping[str, Mapping[str, Any]]:
    """Every policies/*.yaml, by topic (the file stem).

    Parsing and validating 20 files is most of a cold verdict's fixed cost, so the validated set is
    kept in the content-addressed cache (verifier.core.cache) under the hash of every policy and schema byte.
    """
    files = sorted(directory.glob("*.yaml"))
    schema_dir = directory / "schema"
    key = _policy_set_key(files, schema_dir)
    topics = cache.read_json(_CACHE_KIND, key)
    if not isinstance(topics, dict) or sorted(topics) != sorted(p.stem for p in files):
        topics = {p.stem: _validated(p, schema_dir) for p in files}
        cache.write_json(_CACHE_KIND, key, topics)
    return MappingProxyType({topic: _freeze(data) for topic, data in topics.items()})
