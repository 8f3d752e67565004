"""Fast acceptance of documents by the small JSON Schema subset our own schemas use.

`jsonschema` is exact but costs about a tenth of a second to import in every fresh process. Most
documents a verdict reads (bundle metadata, policies) are valid, so `accepts(root, schema, value)`
answers the common question alone: True only when the value is certainly valid under draft 2020-12
for the keywords it knows (type, enum, const, properties, required, additionalProperties,
propertyNames, min/maxProperties, items, minItems, uniqueItems, minLength, maxLength, pattern,
minimum, maximum, exclusiveMinimum, oneOf between branches a value's type, enum or required properties tell apart, local `$ref`). Anything else -- an invalid value,
a keyword it does not know, a value it is not sure about -- returns False, and the caller asks
`jsonschema`, which also words the error. So a refusal, and its message, never depends on this
module; only the time an acceptance takes does.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# Keywords that never change whether a value is valid.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default", "examples", "$defs",
                          "definitions", "format", "deprecated", "readOnly", "writeOnly"})
_JSON_TYPES = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),  # 1.0 is left to jsonschema
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
}
MAX_DEPTH = 64


@lru_cache(maxsize=256)
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values, for the plain values an enum lists (no bool/number confusion)."""
    return type(a) is type(b) and a == b and not isinstance(a, dict | list)


def _refuses(root: dict[str, Any], schema: Any, value: Any, depth: int) -> bool:
    """True when `value` is certainly invalid against `schema` by its JSON type, or by an enum of
    strings it is not among (a string, object or array equals no other kind of value), or by a
    required property an object lacks."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return False
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = (root.get("$defs") or {}).get(ref.removeprefix("#/$defs/"))
        if target is not None and _refuses(root, target, value, depth + 1):
            return True
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    # (1.0 is an integer to jsonschema, so a float is never refused where an integer is allowed)
    if names is not None and all(n in _JSON_TYPES for n in names) and not any(
            _JSON_TYPES[n](value) for n in names) and not (isinstance(value, float) and "integer" in names):
        return True
    options = schema.get("enum")
    if isinstance(options, list) and isinstance(value, str | dict | list) and all(isinstance(o, str) for o in options):
        return value not in options
    required = schema.get("required")
    # an object without a property the schema requires (required applies to objects only)
    return isinstance(value, dict) and isinstance(required, list) and any(
        isinstance(name, str) and name not in value for name in required)


def accepts(root: dict[str, Any], schema: Any, value: Any, depth: int = 0) -> bool:
    """True when `value` is certainly valid against `schema` (local refs resolve in `root`)."""
    if schema is True:
        return True
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return False
    for key, rule in schema.items():
        if key in _ANNOTATIONS or key in ("properties", "additionalProperties"):
            continue
        if key == "$ref":
            if not isinstance(rule, str) or not rule.startswith("#/$defs/"):
                return False
            target = (root.get("$defs") or {}).get(rule.removeprefix("#/$defs/"))
            if target is None or not accepts(root, target, value, depth + 1):
                return False
        elif key == "type":
            names = [rule] if isinstance(rule, str) else rule
            if not isinstance(names, list) or not any(n in _JSON_TYPES and _JSON_TYPES[n](value) for n in names):
                return False
        elif key == "enum":
            if not isinstance(rule, list) or not any(_same(value, option) for option in rule):
                return False
        elif key == "const":
            if not _same(value, rule):
                return False
        elif key == "required":
            if isinstance(value, dict) and not all(name in value for name in rule):
                return False
        elif key == "items":
            if isinstance(value, list) and not all(accepts(root, rule, item, depth + 1) for item in value):
                return False
        elif key == "minItems":
            if isinstance(value, list) and len(value) < rule:
                return False
        elif key in ("minLength", "maxLength"):
            if isinstance(value, str) and (len(value) < rule if key == "minLength" else len(value) > rule):
                return False
        elif key == "pattern":
            if isinstance(value, str) and _pattern(rule).search(value) is None:
                return False
        elif key in ("minimum", "maximum", "exclusiveMinimum"):
            number = _JSON_TYPES["number"](value)
            if number and (value < rule if key == "minimum" else value > rule if key == "maximum" else value <= rule):
                return False
        elif key in ("minProperties", "maxProperties"):
            if isinstance(value, dict) and (len(value) < rule if key == "minProperties" else len(value) > rule):
                return False
        elif key == "propertyNames":
            if isinstance(value, dict) and not all(accepts(root, rule, name, depth + 1) for name in value):
                return False
        elif key == "oneOf":
            # one branch accepts and every other one certainly refuses (by JSON type, enum or a missing
            # required property)
            branches = [b for b in rule if not accepts(root, b, value, depth + 1)] if isinstance(rule, list) else None
            if branches is None or len(branches) != len(rule) - 1 or not all(
                    _refuses(root, b, value, depth + 1) for b in branches):
                return False
        elif key == "uniqueItems":
            # only lists of strings are judged here (JSON equality of other values has corner cases)
            if rule is True and isinstance(value, list) and not (
                    all(isinstance(v, str) for v in value) and len(set(value)) == len(value)):
                return False
        else:
            return False  # a keyword this subset does not know: let jsonschema decide
    if isinstance(value, dict) and ("properties" in schema or "additionalProperties" in schema):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in properties:
                if not accepts(root, properties[name], item, depth + 1):
                    return False
            elif extra is False or not accepts(root, extra, item, depth + 1):
                return False
    return True
