"""YAML 1.1 loading with line numbers, as InferenceX and srtctl read their files.

InferenceX (`infx.matrix`) and srtctl load master configs and srt-slurm recipes with PyYAML's
`safe_load`, i.e. YAML 1.1: `on`/`yes` are booleans, `1_000` is an int, `1e-3` stays a string,
and `<<: *anchor` merge keys are resolved at load time with the keys written next to `<<` winning.
Because those values become command-line text, the verifier must read the files the same way;
`verifier.core.yamlio` (ruamel, YAML 1.2) would not.

This module composes the document with libyaml (C speed) and builds plain Python data itself, so
it can keep the 1-based line of every mapping key and sequence item (`Doc.lines`, keyed by the
path tuple) and can refuse hostile input: oversized text, alias bombs, unknown tags. Aliases are
expanded into independent copies (as `yaml.safe_load` + deep_merge would behave), with a node
budget so a "billion laughs" document is refused instead of exhausting memory.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from verifier.core import processcache
from verifier.core.errors import InputError

_intern = sys.intern

try:  # libyaml is the fast path; the pure loader gives identical results
    _Base: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Base = yaml.SafeLoader

# plain scalar text -> resolved tag
_TAGS: processcache.ByText[str, str] = processcache.ByText("yaml11.resolved_tags", 100_000)


# (resolved tag, scalar text) -> the value its constructor built, for the tags below only: their
# constructors read nothing but the tag and the text and build immutable values (int, float, bool,
# None, date/datetime), so a value built once serves every later scalar of the same tag and text.
# Only accepted values are kept (a refused scalar is constructed, and refused, every time).
_VALUES: processcache.ByText[tuple[str, str], Any] = processcache.ByText("yaml11.scalar_values", 100_000)
_CACHED_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                          "tag:yaml.org,2002:null", "tag:yaml.org,2002:timestamp"})
_MISSING = object()
# Frames a leaf scalar may take below its parent's `build` frame in the general path (`build`,
# `scalar`, the constructor's chain, C calls that count against the limit), with room to spare.
_LEAF_FRAMES = 50


def resolved_tags() -> processcache.ByText[str, str]:
    """The process-wide table of resolved scalar tags (a cache: a long-lived process may clear it)."""
    return _TAGS


class _Loader(_Base):  # type: ignore[misc,valid-type]
    """The safe loader, resolving each distinct plain scalar's tag once per process.

    A safe loader has no path resolvers, so a scalar's implicit tag depends only on its text and
    `implicit` flags; a master config repeats the same few hundred scalars tens of thousands of times.
    libyaml calls `resolve` for every node without an explicit tag: the answers PyYAML's resolver
    gives without looking at the text (a quoted scalar is a string, a collection its default tag)
    are returned at once.
    """

    # libyaml's composer calls these two hooks around every node so that path resolvers can track
    # where they are; a safe loader has none (`yaml_path_resolvers` is empty, as `resolve` already
    # assumes), so PyYAML's versions return at once. C callables that take the same arguments and
    # do nothing save two Python calls per node: `{}.get(parent, index)` and `().__len__()`.
    descend_resolver: Any = {}.get
    ascend_resolver: Any = ().__len__

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode:
            if not implicit[0]:  # quoted (or `!`-tagged): no implicit resolver applies
                return _STR_TAG
            tag = _TAGS.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if isinstance(value, str) and len(value) <= 200:
                    _TAGS.put(value, tag)
            return tag
        if kind is MappingNode:
            return _MAP_TAG
        if kind is SequenceNode:
            return _SEQ_TAG
        return super().resolve(kind, value, implicit)

MAX_NODES = 2_000_000
# Built values per node the document itself holds, plus a floor: without aliases every node is
# built once, so this bounds alias and merge expansion (a "billion laughs" of 500 bytes used to
# build 2,000,000 values, ~6 s and 1 GB, once per re-parse) to cost linear in the input, while a
# recipe that merges a defaults block into its variants stays far below it. MAX_NODES stays the ceiling.
EXPANSION = 8
NODE_FLOOR = 50_000
# Key/value pairs handled while resolving `<<` merge keys (each cached merge source counts its
# size again where it is reused). The real master config needs a few thousand.
MAX_MERGE_WORK = 1_000_000
MAX_INT = 2**63
MAX_SHARED_TEXT = 100  # scalars up to this length are shared (sys.intern), longer ones are rarely repeated
MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_COLLECTION_TAGS = frozenset({_SEQ_TAG, _MAP_TAG})
Path = tuple[Any, ...]


@dataclass(eq=False, repr=False)
class Doc:
    """A parsed YAML document: plain data plus the 1-based line of every key / item path."""

    data: Any
    path: str
    lines: dict[Path, int] = field(default_factory=dict)
    duplicates: list[tuple[Path, int]] = field(default_factory=list)
    # Each repeated key: its path, the line of its first copy and of the repeat (the repeat wins,
    # as in PyYAML's safe_load).
    duplicate_pairs: list[tuple[Path, int, int]] = field(default_factory=list)
    # How deep collections nest: the longest path of a mapping or sequence (0: a scalar document
    # or none; 1: the top collection's collections; ...).
    depth: int = 0

    def line(self, *path: Any) -> int | None:
        """1-based line of the key (or sequence item) at this path; None if absent."""
        return self.lines.get(tuple(path))

    def get(self, *path: Any, default: Any = None) -> Any:
        """The value at a path of keys / indexes, or default."""
        node = self.data
        for part in path:
            in_map = isinstance(node, dict) and part in node
            in_list = isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node)
            if not (in_map or in_list):
                return default
            node = node[part]
        return node


class _Builder:
    """Turns a composed node graph into plain data, recording lines; expands aliases by copy.

    The node budget (`node_limit`) needs a walk of the whole composed graph; it is taken only once
    the values built pass NODE_FLOOR, the least the budget can be, so a document that stays below it
    (every master-config entry, every recipe) never pays for the walk, and one that passes it is
    refused at the same value as when the budget was known from the start.
    """

    def __init__(self, loader: Any, path: str, line_offset: int, max_nodes: int = MAX_NODES,
                 root: Node | None = None, merges: bool = True) -> None:
        self.loader = loader
        self.path = path
        self.offset = line_offset
        self.count = 0
        # With `root`, the budget is node_limit(root), computed when first needed.
        self.root = root
        self.max_nodes = min(max_nodes, NODE_FLOOR) if root is not None else max_nodes
        self.lines: dict[Path, int] = {}
        self.duplicates: list[tuple[Path, int]] = []
        self.duplicate_pairs: list[tuple[Path, int, int]] = []
        self.active: set[int] = set()
        self.merging: set[int] = set()
        self.pairs_of: dict[int, list[tuple[Node, Node, bool]]] = {}
        self.merge_work = 0
        self.depth = 0
        # False when the document cannot hold a merge key (see parse_yaml11): no mapping looks for one.
        self.merges = merges
        # Leaf scalars under paths shorter than this are built inline by their mapping or sequence
        # (no `build` / `scalar` call, constructed values reused from _VALUES). Each nesting level
        # takes at most two frames (`build`, `mapping`), so below this length the general path
        # could not have reached Python's recursion limit at the leaf either: a document nested
        # deep enough to be refused ("nests too deeply") takes the general path at its deepest
        # levels and is refused exactly where it always was.
        frames = 0
        frame: types.FrameType | None = sys._getframe()
        while frame is not None:
            frames += 1
            frame = frame.f_back
        self.inline_below = (sys.getrecursionlimit() - frames - _LEAF_FRAMES) // 2

    def line(self, node: Node) -> int:
        return int(node.start_mark.line) + 1 + self.offset

    def build(self, node: Node, path: Path) -> Any:
        self.count += 1
        if self.count > self.max_nodes:
            root = self.root
            if root is not None:  # the real budget, now needed (see the class docstring)
                self.root = None
                # node_limit, unrolled here: one call less on the stack deep inside a document, or a
                # deeply nested one would be refused at one level less than with the budget known first
                limit = NODE_FLOOR + EXPANSION * _composed(root)
                self.max_nodes = limit if limit < MAX_NODES else MAX_NODES
        if self.count > self.max_nodes:
            raise InputError(self.path, f"YAML aliases or merge keys expand past {self.max_nodes} values, the limit "
                                        "for a document of this size (alias bomb refused)")
        kind = node.__class__
        if kind is ScalarNode:
            return self.scalar(node)  # type: ignore[arg-type]
        if node.tag not in _COLLECTION_TAGS:
            raise InputError(self.path, f"unsupported YAML tag {node.tag!r} at line {self.line(node)}")
        if len(path) > self.depth:
            self.depth = len(path)
        ident = id(node)
        if ident in self.active:
            raise InputError(self.path, f"recursive YAML alias refused (line {self.line(node)})")
        self.active.add(ident)
        try:
            if kind is SequenceNode:
                out_list: list[Any] = []
                lines = self.lines
                first = 1 + self.offset
                inline = len(path) < self.inline_below
                values = _VALUES
                for i, item in enumerate(node.value):
                    sub = (*path, i)
                    lines.setdefault(sub, item.start_mark.line + first)
                    # A leaf scalar within the budget: what `build` + `scalar` do, inline (see __init__).
                    if inline and item.__class__ is ScalarNode and self.count < self.max_nodes:
                        self.count += 1
                        tag = item.tag
                        if tag == _STR_TAG:
                            value = item.value
                            out_list.append(_intern(value) if len(value) <= MAX_SHARED_TEXT else value)
                        else:
                            value = values.get((tag, item.value), _MISSING)
                            out_list.append(self.leaf(item, tag) if value is _MISSING else value)
                    else:
                        out_list.append(self.build(item, sub))
                return out_list
            if kind is MappingNode:
                return self.mapping(node, path)  # type: ignore[arg-type]
        finally:
            self.active.discard(ident)
        raise InputError(self.path, f"unsupported YAML node at line {self.line(node)}")

    def scalar(self, node: ScalarNode) -> Any:
        if node.tag == _STR_TAG:
            value = node.value
            # The loader makes a new string for every scalar: a master config repeats the same keys
            # and values (`tp`, `conc`, images) tens of thousands of times, in both trees, and each
            # key is held again in its line path. One copy of each short text is enough.
            return _intern(value) if len(value) <= MAX_SHARED_TEXT else value
        constructor = self.loader.yaml_constructors.get(node.tag)
        if constructor is None or node.tag in ("tag:yaml.org,2002:binary", "tag:yaml.org,2002:set"):
            raise InputError(self.path, f"unsupported YAML tag {node.tag!r} at line {self.line(node)}")
        try:
            value = constructor(self.loader, node)
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            raise InputError(self.path, f"invalid YAML scalar at line {self.line(node)}: {exc}") from None
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            # No configuration number is this large; past it, float() conversions in checks overflow.
            raise InputError(self.path, f"integer at line {self.line(node)} is out of range")
        return value

    def leaf(self, node: ScalarNode, tag: str) -> Any:
        """`scalar` of a non-string leaf not yet in _VALUES (the loops look there first), kept there."""
        key = (tag, node.value)
        value = _VALUES.get(key, _MISSING)
        if value is _MISSING:
            value = self.scalar(node)
            if tag in _CACHED_TAGS:
                _VALUES.put(key, value)
        return value

    def _merge_sources(self, value: Node) -> list[MappingNode]:
        if isinstance(value, MappingNode):
            return [value]
        if isinstance(value, SequenceNode) and all(isinstance(v, MappingNode) for v in value.value):
            # PyYAML: earlier mappings in a merge list win over later ones.
            return list(value.value)
        raise InputError(self.path, f"a '<<' merge key needs a mapping or a list of mappings (line {self.line(value)})")

    def _pairs(self, node: MappingNode, depth: int = 0) -> list[tuple[Node, Node, bool]]:
        """(key, value, explicit) pairs after resolving merge keys the way PyYAML does.

        Merged pairs are reduced to one per key (the one PyYAML would keep) and memoized per node,
        so a chain of `<<: [*a, *a]` merges costs work linear in the document, not exponential;
        every pair handled counts against MAX_MERGE_WORK.
        """
        ident = id(node)
        cached = self.pairs_of.get(ident)
        if cached is not None:
            self._charge(len(cached))
            return cached
        if depth > 64:
            raise InputError(self.path, "merge keys nest too deeply")
        if ident in self.merging:
            raise InputError(self.path, f"recursive YAML merge refused (line {self.line(node)})")
        self.merging.add(ident)
        try:
            merged: dict[Any, tuple[Node, Node, bool]] = {}
            explicit: list[tuple[Node, Node, bool]] = []
            for key_node, value_node in node.value:
                self._charge(1)
                if key_node.tag == MERGE_TAG:
                    groups = [self._pairs(src, depth + 1) for src in self._merge_sources(value_node)]
                    for group in reversed(groups):
                        for k, v, _ in group:
                            self._charge(1)
                            # Insertion order of the first occurrence, value of the last: what the
                            # later `out[key] = ...` of the unreduced list would leave.
                            merged[self._merge_key(k)] = (k, v, False)
                else:
                    explicit.append((key_node, value_node, True))
        finally:
            self.merging.discard(ident)
        pairs = [*merged.values(), *explicit]
        self.pairs_of[ident] = pairs
        return pairs

    def _merge_key(self, key_node: Node) -> Any:
        if not isinstance(key_node, ScalarNode):
            return ("node", id(key_node))  # complex keys are refused when the mapping is built
        key = self.scalar(key_node)
        try:
            hash(key)
        except TypeError:
            return ("node", id(key_node))
        return ("key", type(key).__name__, key)

    def _charge(self, work: int) -> None:
        self.merge_work += work
        if self.merge_work > MAX_MERGE_WORK:
            raise InputError(self.path, "YAML merge keys expand past the work limit (merge-key bomb refused)")

    def mapping(self, node: MappingNode, path: Path) -> dict[Any, Any]:
        # Only the pair that wins each key is built: a value overridden by a later key (or by an
        # explicit key over a merged one) is never expanded, so no work is spent on it.
        pairs = node.value
        first = 1 + self.offset
        winners: dict[Any, tuple[Node, Node]]
        for key_node, _ in pairs if self.merges else ():
            if key_node.tag == MERGE_TAG:
                winners = self._merged_winners(node, path)
                break
        else:
            # No merge key: every pair is explicit and handled once, which is all `_pairs` would
            # charge (whether or not an earlier visit memoized them).
            self._charge(len(pairs))
            winners = {}
            firsts: dict[Any, int] | None = None  # repeated key -> the line of its first copy
            for key_node, value_node in pairs:
                if key_node.__class__ is not ScalarNode:
                    raise InputError(self.path, f"complex mapping key at line {self.line(key_node)}")
                if key_node.tag == _STR_TAG:
                    key = key_node.value
                    if len(key) <= MAX_SHARED_TEXT:
                        key = _intern(key)
                else:
                    key = self.scalar(key_node)
                    try:
                        hash(key)
                    except TypeError:
                        raise InputError(self.path, f"unhashable mapping key at line {self.line(key_node)}") from None
                earlier = winners.get(key)
                if earlier is not None:
                    if firsts is None:
                        firsts = {}
                    at = key_node.start_mark.line + first
                    was = firsts.setdefault(key, earlier[0].start_mark.line + first)
                    self.duplicates.append(((*path, key), at))
                    self.duplicate_pairs.append(((*path, key), was, at))
                # The key written last wins, as in PyYAML; its line is the one that counts.
                winners[key] = (key_node, value_node)
        # Built here, not in a helper: a nesting level costs the same two frames (build, mapping)
        # as it always did, so a deeply nested document is refused at the same depth.
        out: dict[Any, Any] = {}
        lines = self.lines
        inline = len(path) < self.inline_below
        values = _VALUES
        for key, (key_node, value_node) in winners.items():
            sub = (*path, key)
            lines[sub] = key_node.start_mark.line + first
            # A leaf scalar within the budget: what `build` + `scalar` do, inline (see __init__).
            if inline and value_node.__class__ is ScalarNode and self.count < self.max_nodes:
                self.count += 1
                tag = value_node.tag
                if tag == _STR_TAG:
                    value = value_node.value
                    out[key] = _intern(value) if len(value) <= MAX_SHARED_TEXT else value
                else:
                    value = values.get((tag, value_node.value), _MISSING)
                    out[key] = self.leaf(value_node, tag) if value is _MISSING else value
            else:
                out[key] = self.build(value_node, sub)
        return out

    def _merged_winners(self, node: MappingNode, path: Path) -> dict[Any, tuple[Node, Node]]:
        """The pair that wins each key of a mapping with merge keys, repeats of explicit keys noted."""
        winners: dict[Any, tuple[Node, Node]] = {}
        seen_explicit: dict[Any, int] = {}
        for key_node, value_node, is_explicit in self._pairs(node):
            if not isinstance(key_node, ScalarNode):
                raise InputError(self.path, f"complex mapping key at line {self.line(key_node)}")
            key = self.scalar(key_node)
            try:
                hash(key)
            except TypeError:
                raise InputError(self.path, f"unhashable mapping key at line {self.line(key_node)}") from None
            if is_explicit:
                first = seen_explicit.get(key)
                if first is not None:
                    self.duplicates.append(((*path, key), self.line(key_node)))
                    self.duplicate_pairs.append(((*path, key), first, self.line(key_node)))
                else:
                    seen_explicit[key] = self.line(key_node)
            # The key written last wins, as in PyYAML; its line is the one that counts.
            winners[key] = (key_node, value_node)
        return winners


def _composed(node: Node) -> int:
    """How many distinct nodes the composed document holds (an alias is the node it names)."""
    seen: set[int] = set()
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, MappingNode):
            for key, value in current.value:
                stack.append(key)
                stack.append(value)
    return len(seen)


def node_limit(node: Node) -> int:
    """The most values a document may build: EXPANSION per composed node plus NODE_FLOOR, at most MAX_NODES."""
    return min(MAX_NODES, NODE_FLOOR + EXPANSION * _composed(node))


def parse_yaml11(text: str, path: str, *, line_offset: int = 0) -> Doc:
    """Parse one YAML 1.1 document (already-decoded text) into a Doc; InputError when refused.

    `line_offset` is added to every line (for a fragment cut out of a larger file).
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Doc(data=None, path=path)
        # A merge key is a plain `<<` (the only text the resolver makes a merge tag) or a scalar with
        # an explicit tag, and every tag is written with `!` (`!!merge`, `!<...>`, a %TAG handle):
        # a text with neither cannot hold one.
        builder = _Builder(loader, path, line_offset, root=node, merges="<<" in text or "!" in text)
        data = builder.build(node, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1 + line_offset}" if mark is not None else ""
        raise InputError(path, f"invalid YAML{where}: {exc.problem or exc.context or 'syntax error'}") from None
    except yaml.YAMLError as exc:
        raise InputError(path, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise InputError(path, "YAML nests too deeply") from None
    finally:
        loader.dispose()
    return Doc(data=data, path=path, lines=builder.lines, duplicates=builder.duplicates,
               duplicate_pairs=builder.duplicate_pairs, depth=builder.depth)


_PARSED: processcache.ByText[tuple[str, str, int], Doc | InputError] = processcache.ByText("yaml11.parsed", 4096)


def parse_yaml11_shared(text: str, path: str, *, line_offset: int = 0) -> Doc:
    """`parse_yaml11`, done once per process for the same text, path and line offset: the recording
    pass, each of its resolution contexts and the verdict read the same master configs, changelog
    and recipes. The Doc (or the refusal, raised again) is shared by every caller, which must not
    change it. Bounded and dropped between replayed PRs like every verifier.core.processcache cache.
    """
    key = (path, text, line_offset)
    hit = _PARSED.get(key)
    if hit is None:
        try:
            hit = parse_yaml11(text, path, line_offset=line_offset)
        except InputError as exc:
            hit = exc
        _PARSED.put(key, hit)
    if isinstance(hit, InputError):
        raise hit.with_traceback(None)
    return hit


def iter_leaves(data: Any, prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Yield (path, value) for every non-container value below data (lists descend by index)."""
    if isinstance(data, dict):
        for k, v in data.items():
            yield from iter_leaves(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from iter_leaves(v, (*prefix, i))
    else:
        yield prefix, data
