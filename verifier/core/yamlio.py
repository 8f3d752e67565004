"""Safe loading of untrusted YAML and JSON.

Everything a PR or bundle contains is hostile input: files can be huge, not UTF-8, or YAML
alias bombs ("billion laughs"). This module is the one place that turns bytes into data; it
refuses such input with an InputError naming the file, and keeps 1-based line numbers so that
evidence can point at the exact line.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

import yaml as _pyyaml

from verifier.core.errors import InputError

if TYPE_CHECKING:
    from ruamel.yaml import YAML

MAX_TEXT_BYTES = 8 * 1024 * 1024
# Expanded node count above which a document is treated as an alias bomb. A real master config
# has ~60k nodes; anchors in recipes reuse a handful of small mappings.
MAX_EXPANDED_NODES = 2_000_000
MAX_ALIASES = 10_000
MAX_INT = 2**63
# Flow collections nested deeper than this are refused before parsing: ruamel's recursive parser
# fails on them anyway (about 250 levels), but only after seconds of work, and no real file nests
# beyond a few dozen. Brackets inside strings count too, so the bound is generous.
MAX_FLOW_DEPTH = 200
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def decode_text(data: bytes, path: str, *, limit: int = MAX_TEXT_BYTES) -> str:
    """Decode UTF-8 text, refusing oversized input, NUL bytes and invalid encodings."""
    if len(data) > limit:
        raise InputError(path, f"file is {len(data)} bytes, over the {limit}-byte limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    if "\x00" in text:
        raise InputError(path, "contains a NUL byte; not a text file")
    return text.removeprefix("\ufeff")


def text_or_none(data: bytes | None, path: str) -> str | None:
    """`decode_text`, but None when the file is absent (data None) or is not readable text."""
    if data is None:
        return None
    try:
        return decode_text(data, path)
    except InputError:
        return None


# An alias token: `*` at the start or after a blank or flow indicator, followed by a name character
# (\w: a letter or digit as str.isalnum() has it, or `_`; or `-`).
_ALIAS_TOKEN = re.compile(r"(?:\A|(?<=[ \t\n\[{,:\-]))\*(?=[\w-])")


def _count_aliases(text: str) -> int:
    # Cheap upper bound: every alias token starts with '*' followed by a name character.
    return sum(1 for _ in _ALIAS_TOKEN.finditer(text)) if "*" in text else 0


def _flow_depth(text: str) -> int:
    """Upper bound of the nesting depth of flow collections ([...] and {...})."""
    brackets = _NOT_BRACKET.sub("", text)
    if len(brackets) <= MAX_FLOW_DEPTH:
        return len(brackets)
    return max(itertools.accumulate(1 if c in "[{" else -1 for c in brackets), default=0)


def _expanded_size(node: Any, path: str) -> int:
    """Size of the document once every alias is expanded; refuses cycles and bombs."""
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()

    def size(obj: Any) -> int:
        if not isinstance(obj, dict | list):
            if isinstance(obj, int) and not isinstance(obj, bool) and abs(obj) > MAX_INT:
                raise InputError(path, "YAML integer out of range (no bundle number is this large)")
            return 1
        key = id(obj)
        if key in sizes:
            return sizes[key]
        if key in in_progress:
            raise InputError(path, "recursive YAML alias refused")
        in_progress.add(key)
        children = obj.values() if isinstance(obj, dict) else obj
        total = 1
        for child in children:
            total += size(child)
            if total > MAX_EXPANDED_NODES:
                raise InputError(path, "YAML aliases expand past the node limit (alias bomb refused)")
        in_progress.discard(key)
        sizes[key] = total
        return total

    return size(node)


@cache
def _no_recursion_constructor() -> type:
    """ruamel's round-trip constructor, refusing an alias to an anchor that is still being built.

    ruamel's round-trip constructor silently turns such an alias into None when the anchor is not
    the document root (`a: &l [x, *l]` loads as `{'a': ['x', None]}`), which would change the data
    instead of refusing it. A root-level cycle is built as a real cycle and refused by
    `_expanded_size`. (ruamel is imported on first use: a verdict reads YAML with libyaml.)
    """
    from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor

    class _NoRecursionConstructor(RoundTripConstructor):  # type: ignore[misc]
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            if node not in self.constructed_objects and node in self.recursive_objects:
                raise ConstructorError(None, None, "recursive YAML alias refused", node.start_mark)
            return super().construct_object(node, deep=deep)

    return _NoRecursionConstructor


def _yaml(pure: bool = False) -> YAML:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=pure)
    yaml.Constructor = _no_recursion_constructor()
    yaml.allow_duplicate_keys = False
    return yaml


def load_yaml(text: str, path: str) -> Any:
    """Parse YAML 1.2 (round-trip, so line numbers survive) from already-decoded text.

    Raises InputError for syntax errors, duplicate keys, recursive aliases, alias bombs and
    flow collections nested too deeply.
    """
    if _count_aliases(text) > MAX_ALIASES:
        raise InputError(path, "too many YAML aliases (alias bomb refused)")
    if _flow_depth(text) > MAX_FLOW_DEPTH:
        raise InputError(path, f"YAML nests deeper than {MAX_FLOW_DEPTH} levels; refused")
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        raise InputError(path, f"invalid YAML{where}: {problem}") from None
    except (YAMLError, RecursionError, ValueError) as exc:
        raise InputError(path, f"invalid YAML: {type(exc).__name__}: {exc}") from None
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        # ruamel fails this way on some hostile input, e.g. `%YAML 9.9` (no resolver for that version)
        raise InputError(path, f"invalid YAML: the parser refused it ({type(exc).__name__}: {exc})") from None
    _expanded_size(data, path)
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
MAX_JSON_INT_DIGITS = 4000  # below Python's int-from-text limit (4300), which raises a bare ValueError


def _refuse_number(path: str) -> Any:
    def refuse(text: str) -> Any:
        raise InputError(path, f"JSON number {text[:40]}{'...' if len(text) > 40 else ''} is not a finite number")
    return refuse


def _json_int(path: str) -> Any:
    def parse(text: str) -> int:
        if len(text.lstrip("-")) > MAX_JSON_INT_DIGITS:
            raise InputError(path, f"JSON integer of {len(text)} digits refused (over {MAX_JSON_INT_DIGITS})")
        return int(text)
    return parse


def _json_float(path: str) -> Any:
    def parse(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise InputError(path, f"JSON number {text[:40]} overflows a float")
        return value
    return parse


def _lone_surrogate(data: Any) -> str | None:
    """The first string (or key) of parsed JSON holding a lone UTF-16 surrogate, else None."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def load_json(text: str, path: str) -> Any:
    """Parse JSON into data every check can handle, or refuse it with a one-line InputError.

    Refused, beyond syntax errors: NaN/Infinity and numbers that overflow a float, integers too
    long for Python's int conversion limit, and `\\ud800`-style escapes that decode to a lone
    UTF-16 surrogate (a string no encoder can write: it would crash the output, not one check).
    """
    try:
        data = json.loads(text, parse_int=_json_int(path), parse_float=_json_float(path),
                          parse_constant=_refuse_number(path))
    except (json.JSONDecodeError, RecursionError) as exc:
        line = getattr(exc, "lineno", None)
        where = f" at line {line}" if line else ""
        raise InputError(path, f"invalid JSON{where}: {getattr(exc, 'msg', exc)}") from None
    except ValueError as exc:  # what json.loads raises itself on hostile numbers
        raise InputError(path, f"invalid JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(text) and _lone_surrogate(data) is not None:
        raise InputError(path, "JSON string holds a lone UTF-16 surrogate escape (not valid Unicode text)")
    return data


def line_of(node: Any, key: Any = None) -> int | None:
    """1-based line of a mapping key (or of the node itself) in a round-trip document."""
    if "ruamel.yaml.comments" not in sys.modules:
        return None  # no round-trip document was loaded, so `node` is none
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    try:
        if key is not None and isinstance(node, CommentedMap):
            return int(node.lc.key(key)[0]) + 1
        if key is not None and isinstance(node, CommentedSeq):
            return int(node.lc.item(key)[0]) + 1
        if isinstance(node, CommentedMap | CommentedSeq):
            return int(node.lc.line) + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return None


def plain(node: Any) -> Any:
    """Convert a round-trip document into plain dicts, lists and scalars (aliases copied)."""
    if isinstance(node, dict):
        return {plain(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool):
        return bool(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


def walk(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """Yield (path, parent, key) for every leaf and container below node."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k), node, k
            yield from walk(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*prefix, i), node, i
            yield from walk(v, (*prefix, i))


# --- Plain data at C speed -------------------------------------------------------------------------
# Bundle metadata (pr.yaml, comments.yaml, checks.yaml, run records) and policies need plain data, not
# line numbers; round-tripping them through ruamel's pure-Python parser was a third of a cold verdict.
# `load_yaml_data` composes with libyaml and resolves plain scalars with ruamel's own YAML 1.2 implicit
# rules (IMPLICIT_12 below; tests/core/test_yamlio_fast.py checks it against ruamel's own table, so
# both loaders cannot drift apart, without importing ruamel in every verdict): `yes`/`on` stay
# strings, `017` is 17, `0o17` is 15, `12e4` is a float. The same test proves `load_yaml_data` equal
# to `plain(load_yaml(...))` on every bundle and policy file we ship and on a corpus of edge cases.

_TAG = "tag:yaml.org,2002:"
_IMPLICIT_12_TAGS = ("bool", "float", "int", "null", "timestamp", "merge")
# (tag, regular expression, first characters): ruamel.yaml's YAML 1.2 implicit resolvers, all
# verbose (re.X) but the merge key's.
IMPLICIT_12: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (_TAG + "bool", r"^(?:true|True|TRUE|false|False|FALSE)$", tuple("tTfF")),
    (_TAG + "float", r"""^(?:
         [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""", tuple("-+0123456789.")),
    (_TAG + "int", r"""^(?:[-+]?0b[0-1_]+
        |[-+]?0o?[0-7_]+
        |[-+]?[0-9_]+
        |[-+]?0x[0-9a-fA-F_]+)$""", tuple("-+0123456789")),
    (_TAG + "merge", r"^(?:<<)$", ("<",)),
    (_TAG + "null", r"""^(?: ~
        |null|Null|NULL
        | )$""", ("~", "n", "N", "")),
    (_TAG + "timestamp", r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
        |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
        (?:[Tt]|[ \t]+)[0-9][0-9]?
        :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
        (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", tuple("0123456789")),
)


class _Resolver12(_pyyaml.resolver.BaseResolver):
    """YAML 1.2 implicit typing, as ruamel resolves it."""


for _tag, _pattern, _first in IMPLICIT_12:
    _Resolver12.add_implicit_resolver(_tag, re.compile(_pattern, 0 if _tag == _TAG + "merge" else re.X), list(_first))


class _Constructor12(_pyyaml.constructor.SafeConstructor):
    """Safe construction with YAML 1.2 numbers and booleans, refusing duplicate keys like ruamel."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _TAG + "merge" or not isinstance(key_node, _pyyaml.ScalarNode):
                continue
            key = self.construct_object(key_node)
            if key in seen:
                raise _pyyaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_bool(self, node: Any) -> bool:
        return str(self.construct_scalar(node)).lower() == "true"

    def construct_yaml_int(self, node: Any) -> int:
        text = str(self.construct_scalar(node)).replace("_", "")
        sign = -1 if text.startswith("-") else 1
        text = text.lstrip("+-")
        for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
            if text.startswith(prefix):
                return sign * int(text[2:], base)
        return sign * int(text)

    def construct_yaml_float(self, node: Any) -> float:
        text = str(self.construct_scalar(node)).replace("_", "").lower()
        sign = -1.0 if text.startswith("-") else 1.0
        text = text.lstrip("+-")
        if text == ".inf":
            return sign * float("inf")
        if text == ".nan":
            return float("nan")
        return sign * float(text)


class TaggedValue:
    """A node under a tag we do not construct (`!!python/...`, `!foo`): kept as an opaque value, never executed.

    It is no JSON type, so schema validation refuses it naming the field that carries it, as it did
    for the round-trip loader's TaggedScalar.
    """

    __slots__ = ("tag",)

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def __repr__(self) -> str:
        return f"TaggedValue({self.tag!r})"


def _construct_unknown_tag(constructor: Any, node: Any) -> TaggedValue:
    return TaggedValue(str(node.tag))


_Constructor12.add_constructor(None, _construct_unknown_tag)
for _name in ("bool", "int", "float"):
    _Constructor12.add_constructor(_TAG + _name, getattr(_Constructor12, f"construct_yaml_{_name}"))

try:  # libyaml's parser and composer; the pure-Python ones give identical results, only slower
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml

    class _Parser(  # type: ignore[no-redef]
        _pyyaml.reader.Reader, _pyyaml.scanner.Scanner, _pyyaml.parser.Parser, _pyyaml.composer.Composer
    ):
        def __init__(self, stream: str) -> None:
            _pyyaml.reader.Reader.__init__(self, stream)
            _pyyaml.scanner.Scanner.__init__(self)
            _pyyaml.parser.Parser.__init__(self)
            _pyyaml.composer.Composer.__init__(self)


class _Loader12(_Parser, _Constructor12, _Resolver12):  # type: ignore[misc]
    def __init__(self, stream: str) -> None:
        _Parser.__init__(self, stream)
        _Constructor12.__init__(self)
        _Resolver12.__init__(self)


def load_yaml_data(text: str, path: str) -> Any:
    """Parse YAML 1.2 into plain data (no line numbers), refusing what `load_yaml` refuses."""
    return _load12(text, path, None)


def load_yaml_lines(text: str, path: str) -> tuple[Any, dict[tuple[Any, ...], int]]:
    """`load_yaml_data` plus the 1-based line of every mapping key and sequence item, by its path of
    keys and indexes (what `line_of` gives for a round-trip document, without ruamel)."""
    lines: dict[tuple[Any, ...], int] = {}
    return _load12(text, path, lines), lines


def _key_lines(loader: Any, node: Any, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> None:
    if isinstance(node, _pyyaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, _pyyaml.ScalarNode):
                continue
            key = loader.construct_object(key_node)
            if key == "<<" and key_node.tag == _TAG + "merge":
                continue
            lines.setdefault((*path, key), key_node.start_mark.line + 1)
            _key_lines(loader, value_node, (*path, key), lines)
    elif isinstance(node, _pyyaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines.setdefault((*path, index), item.start_mark.line + 1)
            _key_lines(loader, item, (*path, index), lines)


def _load12(text: str, path: str, lines: dict[tuple[Any, ...], int] | None) -> Any:
    if _count_aliases(text) > MAX_ALIASES:
        raise InputError(path, "too many YAML aliases (alias bomb refused)")
    if _flow_depth(text) > MAX_FLOW_DEPTH:
        raise InputError(path, f"YAML nests deeper than {MAX_FLOW_DEPTH} levels; refused")
    loader = _Loader12(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
        if node is not None and lines is not None:
            _expanded_size(data, path)  # the walk below is as large as the data: refuse bombs first
            _key_lines(loader, node, (), lines)
    except _pyyaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        raise InputError(path, f"invalid YAML{where}: {problem}") from None
    except (_pyyaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError) as exc:
        raise InputError(path, f"invalid YAML: {type(exc).__name__}: {exc}") from None
    finally:
        loader.dispose()
    _expanded_size(data, path)
    return plain(data)
