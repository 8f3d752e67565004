"""Policies are data: policies/<topic>.yaml, each validated by policies/schema/<topic>.schema.json.

Loaded once per process into read-only mappings. A file that does not validate is a PolicyError
naming the file and the offending field.

InferenceX may override some of this data from its own base tree (verifier.documents.policy_overrides);
the rule that lays an override over ours is `merge_policy` here, and the merged document is held to
the same schema (`schema_problem`).

A wheel ships the policies already validated (verifier.core.cache, the prebuilt layer): a file whose bytes
and whose schema's bytes match the digests recorded at build time is taken from there, without parsing
or validating it again (and without importing jsonschema); any other file (edited, or from a
`--policies` directory) is parsed and validated here as always.
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


def json_keys(value: Any) -> Any:
    """Plain data with JSON semantics: every mapping key a string (YAML `14:` becomes "14")."""
    if isinstance(value, dict):
        return {str(k): json_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_keys(v) for v in value]
    return value


def freeze(value: Any) -> Any:
    """Plain data as a loaded policy is: mappings read-only (MappingProxyType), lists tuples."""
    if isinstance(value, dict):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def schema_problem(topic: str, data: Any, *, schema_dir: Path = POLICY_DIR / "schema") -> tuple[tuple[str, ...], str] | None:
    """Why `data` is not a valid policies/<topic>.yaml document: (the field's path of keys, the schema's
    message) of the first error in document order, or None when it is valid.

    Raises PolicyError when the topic has no schema.
    """
    schema_path = schema_dir / f"{topic}.schema.json"
    if not schema_path.is_file():
        raise PolicyError(f"no schema {schema_path.name} for policy topic '{topic}'")
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    if accepts(schema, schema, data):
        return None  # certainly valid; jsonschema (slow to import) words a refusal
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    err = errors[0]
    return tuple(str(p) for p in err.absolute_path), err.message


def field_name(path: tuple[str, ...]) -> str:
    """How a refusal names a field: its keys joined by "/" (`(top level)` for the document)."""
    return "/".join(path) or "(top level)"


def validate_policy(topic: str, data: Any, *, source: str, schema_dir: Path = POLICY_DIR / "schema") -> None:
    """Validate one policy document against its schema; raise PolicyError naming file and field."""
    try:
        problem = schema_problem(topic, data, schema_dir=schema_dir)
    except PolicyError as exc:
        raise PolicyError(f"{source}: {exc}") from None
    if problem is not None:
        raise PolicyError(f"{source}: field {field_name(problem[0])}: {problem[1]}")


def thaw(value: Any) -> Any:
    """A loaded (frozen) policy document back as plain JSON-like data: dicts and lists."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


def merge_policy(ours: Any, override: Any) -> Any:
    """An override document laid over a policy document (both plain data), as a new document.

    The rule: a mapping merges key by key (a key the override names takes the override's value,
    merged again when both values are mappings; a key it does not name keeps ours); a list or a
    scalar replaces ours whole. Nothing is deleted: an override cannot remove a key. Neither input
    is changed.
    """
    if isinstance(ours, dict) and isinstance(override, dict):
        out = dict(ours)
        for key, value in override.items():
            out[key] = merge_policy(ours[key], value) if key in ours else thaw(value)
        return out
    return thaw(override)


def load_policy_file(path: Path, *, schema_dir: Path = POLICY_DIR / "schema") -> Mapping[str, Any]:
    """Load and validate one policies/<topic>.yaml file."""
    return freeze(_validated(path, schema_dir))


def _prebuilt(path: Path, raw: bytes, schema_dir: Path) -> Any | None:
    """The prebuilt validated data of this policy file, when it and its schema are byte for byte the ones
    the wheel validated at build time; else None."""
    try:
        schema = (schema_dir / f"{path.stem}.schema.json").read_bytes()
    except OSError:
        return None
    return cache.prebuilt_policy(path.stem, raw, schema)


def _parsed(path: Path, raw: bytes, schema_dir: Path) -> Any:
    """One policy file parsed and validated here, as plain JSON-like data."""
    from verifier.core.yamlio import decode_text, load_yaml_data

    try:
        data = json_keys(load_yaml_data(decode_text(raw, str(path)), str(path)))
    except InputError as exc:
        raise PolicyError(str(exc)) from None
    validate_policy(path.stem, data, source=str(path), schema_dir=schema_dir)
    return data


def _validated(path: Path, schema_dir: Path, raw: bytes | None = None) -> Any:
    """One policy file validated, as plain JSON-like data: prebuilt when its digests match, else parsed here."""
    try:
        raw = path.read_bytes() if raw is None else raw
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read: {exc.strerror or exc}") from None
    prebuilt = _prebuilt(path, raw, schema_dir)
    return prebuilt if prebuilt is not None else _parsed(path, raw, schema_dir)


def prebuild_policies(directory: Path = POLICY_DIR) -> dict[str, dict[str, Any]]:
    """Build time (setup.py, for verifier.core.cache.build_prebuilt): every policy file of `directory` that
    validates, by topic, with the SHA-256 of its bytes and of its schema's. A file that does not validate here
    (or that needs jsonschema where the build environment has none) is left out: a run validates it and says why."""
    schema_dir = directory / "schema"
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.yaml")):
        raw = path.read_bytes()
        try:
            data = _parsed(path, raw, schema_dir)
            schema = (schema_dir / f"{path.stem}.schema.json").read_bytes()
        except (PolicyError, ImportError, OSError):
            continue
        if json.loads(json.dumps(data)) != data:
            continue  # not plain JSON data (it would not come back from policies.json as it is)
        out[path.stem] = {"sha256": cache.sha256(raw), "schema_sha256": cache.sha256(schema), "data": data}
    return out


def _policy_set_key(raws: Mapping[Path, bytes], schema_dir: Path) -> str:
    """Content key of a policy set: every policy file and every schema, names and bytes."""
    schemas = sorted(schema_dir.glob("*.json")) if schema_dir.is_dir() else []
    blobs: list[bytes] = []
    for path, raw in raws.items():
        blobs += [path.name.encode(), raw]
    for path in schemas:
        blobs += [path.name.encode(), path.read_bytes()]
    return cache.content_key(_CACHE_KIND, blobs)


@functools.cache
def load_policies(directory: Path = POLICY_DIR) -> Mapping[str, Mapping[str, Any]]:
    """Every policies/*.yaml, by topic (the file stem).

    Parsing and validating 20 files is most of a cold verdict's fixed cost. A wheel ships them validated
    (`_prebuilt`); whatever does not match that is validated here, and the validated set is kept in the
    content-addressed cache (verifier.core.cache) under the hash of every policy and schema byte.
    """
    files = sorted(directory.glob("*.yaml"))
    schema_dir = directory / "schema"
    raws = {path: path.read_bytes() for path in files}
    topics = {path.stem: data for path in files if (data := _prebuilt(path, raws[path], schema_dir)) is not None}
    if len(topics) < len(files):
        key = _policy_set_key(raws, schema_dir)
        cached = cache.read_json(_CACHE_KIND, key)
        if isinstance(cached, dict) and sorted(cached) == sorted(p.stem for p in files):
            topics = cached
        else:
            topics = {p.stem: topics[p.stem] if p.stem in topics else _parsed(p, raws[p], schema_dir) for p in files}
            cache.write_json(_CACHE_KIND, key, topics)
    return MappingProxyType({topic: freeze(data) for topic, data in topics.items()})
