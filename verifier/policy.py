"""Policies are data: policies/<topic>.yaml, each validated by policies/schema/<topic>.schema.json.

Loaded once per process into read-only mappings. A file that does not validate is a PolicyError
naming the file and the offending field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

import jsonschema

from verifier.errors import InputError, PolicyError
from verifier.resources import POLICY_DIR
from verifier.yamlio import decode_text, load_yaml, plain


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
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        field = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise PolicyError(f"{source}: field {field}: {err.message}")


def load_policy_file(path: Path, *, schema_dir: Path = POLICY_DIR / "schema") -> Mapping[str, Any]:
    """Load and validate one policies/<topic>.yaml file."""
    try:
        data = _json_keys(plain(load_yaml(decode_text(path.read_bytes(), str(path)), str(path))))
    except InputError as exc:
        raise PolicyError(str(exc)) from None
    validate_policy(path.stem, data, source=str(path), schema_dir=schema_dir)
    return _freeze(data)


@cache
def load_policies(directory: Path = POLICY_DIR) -> Mapping[str, Mapping[str, Any]]:
    """Every policies/*.yaml, by topic (the file stem)."""
    topics = {p.stem: load_policy_file(p, schema_dir=directory / "schema") for p in sorted(directory.glob("*.yaml"))}
    return MappingProxyType(topics)
