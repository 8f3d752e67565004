"""One way through a script (a *world*): the shell state the evaluator carries along it.

When a condition cannot be decided statically the evaluator copies the world and follows both
branches; each copy records the assumption it made (`Assumption`). Worlds whose states are equal
are merged again (keeping the assumptions they share), so branches that change nothing that
matters do not multiply. `join` merges worlds that differ: every value they disagree on becomes an
`Unknown` naming the construct that split them.

A world's variables, arrays and associative arrays are dictionaries while small. Copied with more
than `TABLE_FROM` entries, one becomes a `Table`: worlds split from the same one then share the
entries neither wrote since (a `_Base`), so copying, comparing and joining worlds cost what they
wrote, not every variable they hold (a script of thousands of distinct variables split by
undecidable conditions would otherwise cost the square of its size); `settle` moves what all
current worlds agree on into the base they share after a statement of the main script.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from verifier.shell.derived import Derivation
from verifier.shell.nodes import FuncDef
from verifier.shell.values import Loc, Opaque, Unknown, Val

Binding = tuple[Val, Loc]
NO_LOC: Loc = ("", 0)

V = TypeVar("V")
_MISS: Any = object()  # not in a table's own entries: look in its base
_GONE: Any = object()  # in a table's own entries: absent here although the base has it
_FROZEN = object()  # the owner of a base nothing may change (a checkpoint's)
# a world's dictionary of more entries becomes a `Table` when the world is copied (a script's
# variables with the environment it is started with number a hundred or two: copying or comparing
# that many in C costs less than sharing them)
TABLE_FROM = 256


class _Base(dict[str, Any]):
    """The entries tables share. Only the evaluation that owns it (`owner`) changes it, and only
    while every table sharing it is one of its current worlds (`settle`); a base no evaluation owns
    yet (made when a live world was copied) is taken over by the first `settle` that sees it, one
    owned by `_FROZEN` or by another evaluation is copied first. `suspect` holds every name of an
    owned base that no later statement mentions (the evaluator's `drop_dead` looks at these, and
    forgets those a function mentions: they stay to the end); `settled` is what its tables held of
    their own after the last `settle` that moved entries."""

    __slots__ = ("owner", "suspect", "settled")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.owner: object | None = None
        self.suspect: set[str] = set()
        self.settled = 0


class Work:
    """Entries visited by the operations on tables (copying, comparing, joining, settling, dropping),
    counted so tests/shell/test_growth.py can assert they stay linear in a script's size."""

    entries = 0


class Table(Generic[V]):
    """A mapping of names (a world's variables, arrays or associative arrays) that shares most of
    its entries with the other worlds split from the same one: a `_Base` they share and the entries
    this world wrote since (`own`, `_GONE` for a name removed here). Copying, comparing and joining
    worlds cost the entries they wrote, not every entry (a script of many distinct variables split
    by undecidable conditions would otherwise cost the square of its size)."""

    __slots__ = ("base", "own", "size")

    def __init__(self, base: _Base | None = None, own: dict[str, Any] | None = None, size: int = 0) -> None:
        self.base: _Base = _Base() if base is None else base
        self.own: dict[str, Any] = {} if own is None else own
        self.size = size

    def get(self, name: str, default: Any = None) -> Any:
        v = self.own.get(name, _MISS)
        if v is _MISS:
            return self.base.get(name, default)
        return default if v is _GONE else v

    def __getitem__(self, name: str) -> V:
        v = self.own.get(name, _MISS)
        if v is _MISS:
            return self.base[name]  # type: ignore[no-any-return]
        if v is _GONE:
            raise KeyError(name)
        return v  # type: ignore[no-any-return]

    def __contains__(self, name: object) -> bool:
        v = self.own.get(name, _MISS)  # type: ignore[call-overload]
        if v is _MISS:
            return name in self.base
        return v is not _GONE

    def __setitem__(self, name: str, value: V) -> None:
        own = self.own
        v = own.get(name, _MISS)
        if v is _GONE or (v is _MISS and name not in self.base):
            self.size += 1
        own[name] = value

    def __delitem__(self, name: str) -> None:
        own = self.own
        v = own.get(name, _MISS)
        if v is _GONE or (v is _MISS and name not in self.base):
            raise KeyError(name)
        if name in self.base:
            own[name] = _GONE
        else:
            del own[name]
        self.size -= 1

    def pop(self, name: str, default: Any = _MISS) -> Any:
        v = self.get(name, _MISS)
        if v is _MISS:
            if default is _MISS:
                raise KeyError(name)
            return default
        del self[name]
        return v

    def setdefault(self, name: str, default: V) -> V:
        v = self.get(name, _MISS)
        if v is _MISS:
            self[name] = default
            return default
        return v  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __iter__(self) -> Iterator[str]:
        Work.entries += len(self.base) + len(self.own)
        own = self.own
        for name in self.base:
            if name not in own:
                yield name
        for name, v in own.items():
            if v is not _GONE:
                yield name

    def keys(self) -> list[str]:
        return list(self)

    def items(self) -> list[tuple[str, V]]:
        Work.entries += len(self.base) + len(self.own)
        own = self.own
        out = [(name, v) for name, v in self.base.items() if name not in own]
        out += [(name, v) for name, v in own.items() if v is not _GONE]
        return out

    def values(self) -> list[V]:
        return [v for _, v in self.items()]

    def copy(self) -> Table[V]:
        Work.entries += len(self.own)
        return Table(self.base, self.own.copy(), self.size)

    def frozen(self, bases: dict[int, _Base]) -> Table[V]:
        """A copy sharing nothing any evaluation changes (a kept checkpoint): tables that share a
        base share its copy (`bases`, by the original's id)."""
        base = bases.get(id(self.base))
        if base is None:
            Work.entries += len(self.base)
            base = bases[id(self.base)] = _Base(self.base)
            base.owner = _FROZEN
        Work.entries += len(self.own)
        return Table(base, self.own.copy(), self.size)

    def flat(self) -> dict[str, V]:
        """The entries as one dictionary (copied in C)."""
        Work.entries += len(self.base) + len(self.own)
        out = self.base.copy()
        if self.own:
            out.update(self.own)
            for name in [name for name, v in self.own.items() if v is _GONE]:
                del out[name]
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Table):
            if isinstance(other, dict):
                return self.size == len(other) and self.flat() == other
            return NotImplemented
        if self.size != other.size:
            return False
        if other.base is self.base:
            a, b = self.own, other.own
            Work.entries += len(a) + len(b)
            if a.keys() == b.keys():
                return a == b  # the usual case, compared in C (`_GONE` equals only itself)
            base = self.base
            for name in a.keys() ^ b.keys():  # written by one world only: the other holds the base's
                x, y = a.get(name, _MISS), b.get(name, _MISS)
                if not _same_entry(base.get(name, _GONE) if x is _MISS else x, base.get(name, _GONE) if y is _MISS else y):
                    return False
            return all(_same_entry(a[name], b[name]) for name in a.keys() & b.keys())
        if not self.own and not other.own:
            Work.entries += len(self.base)
            return self.base == other.base
        return self.flat() == other.flat()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Table({dict(self.items())!r})"


class Layer(Table[V]):
    """A copy of a mapping that the multi-node reader (verifier.shell.trace) gives a branch of its
    state (variables, functions, unresolved names): the
    parent's mapping as the base (nothing changes the parent while its copy lives: the branch runs
    on the copy and the merge reads the copy before writing the parent) plus what the branch wrote,
    so copying costs nothing and merging looks only at the written names (`own`: every name set,
    unset or popped here). Iteration keeps a dictionary's order (a name unset and set again comes
    last, `moved`): the events' environments list variables in the order a shell would."""

    __slots__ = ("moved",)

    def __init__(self, base: Names[V]) -> None:
        self.base = base  # type: ignore[assignment]  # the parent's mapping, read only while this lives
        self.own: dict[str, Any] = {}
        self.size = len(base)
        self.moved: set[str] = set()

    def __setitem__(self, name: str, value: V) -> None:
        own = self.own
        v = own.get(name, _MISS)
        if v is _GONE:
            del own[name]  # set again after an unset: it comes last, as in a dictionary
            if name in self.base:
                self.moved.add(name)
            self.size += 1
        elif v is _MISS and name not in self.base:
            self.size += 1
        own[name] = value

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self.own[name] = _GONE
        self.size -= 1

    def pop(self, name: str, default: Any = _MISS) -> Any:
        v = self.get(name, _MISS)
        if v is _MISS:
            self.own.setdefault(name, _GONE)  # written (unset) here all the same: the merge looks at it
            if default is _MISS:
                raise KeyError(name)
            return default
        self.own[name] = _GONE
        self.size -= 1
        return v

    def items(self) -> list[tuple[str, V]]:
        base, own, moved = self.base, self.own, self.moved
        Work.entries += len(base) + len(own)
        out: list[tuple[str, V]] = []
        for name, v in base.items():
            w = own.get(name, _MISS)
            if w is _MISS:
                out.append((name, v))
            elif w is not _GONE and name not in moved:
                out.append((name, w))
        out += [(name, w) for name, w in own.items() if w is not _GONE and (name in moved or name not in base)]
        return out

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, _ in self.items()])

    def copy(self) -> Layer[V]:
        return Layer(self)

    def flat(self) -> dict[str, V]:
        return dict(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (dict, Table)):
            return len(self) == len(other) and self.flat() == (other.flat() if isinstance(other, Table) else other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Layer({self.flat()!r})"


def last_held(layers: Sequence[Layer[V]], name: str) -> tuple[bool, Any]:
    """What `for m in layers: target.update(m)` leaves at `name`: (True, the value of the last layer
    holding it), or (False, None) when none holds it."""
    for m in reversed(layers):
        v = m.get(name, _MISS)
        if v is not _MISS:
            return True, v
    return False, None


def written(layers: Sequence[Layer[V]]) -> dict[str, None]:
    """The names the layers wrote, in the order they wrote them, layer after layer."""
    out: dict[str, None] = {}
    for m in layers:
        out.update(dict.fromkeys(m.own))
    return out


def _same_entry(a: Any, b: Any) -> bool:
    return a is b or (a is not _GONE and b is not _GONE and a == b)


Names = dict[str, V] | Table[V]  # a world's variables, arrays or associative arrays


def _shared(table: Names[V]) -> Names[V]:
    """The table to copy a world's from: a large dictionary becomes a `Table` (whose base both the
    world and its copy then share)."""
    if type(table) is dict and len(table) > TABLE_FROM:
        Work.entries += len(table)
        return Table(_Base(table), {}, len(table))
    return table


def differing(a: Names[V], b: Names[V], hashable: bool = False) -> Iterable[str]:
    """The names whose entries differ between two worlds' tables (tables sharing a base compare
    what they hold of their own; others compare as dictionaries, in C when the values are
    `hashable`, and give every name of both otherwise)."""
    if isinstance(a, Table) and isinstance(b, Table) and a.base is b.base:
        x, y = a.own, b.own
        Work.entries += len(x) + len(y)
        return {name for name in x.keys() | y.keys() if not _same_entry(a.get(name, _GONE), b.get(name, _GONE))}
    x = a.flat() if isinstance(a, Table) else a
    y = b.flat() if isinstance(b, Table) else b
    if hashable:  # a set operation in C: most bindings are shared
        return {name for name, _ in x.items() ^ y.items()}
    return set(x) | set(y)


@dataclass(frozen=True)
class Assumption:
    """A condition the evaluator could not decide and the outcome this world assumed."""

    loc: Loc
    text: str
    outcome: str  # "true" | "false" | "matches <pattern>" | "no pattern matches" ...

    def __str__(self) -> str:
        return f"{self.loc[0].rsplit('/', 1)[-1]}:{self.loc[1]} `{self.text}` {self.outcome}"


@dataclass(frozen=True)
class GenFile:
    """A file the script writes (heredoc, echo, printf): its lines, each with the script line that
    wrote it; `content` is None when the text is not known (an opaque command wrote it)."""

    lines: tuple[tuple[str, Loc], ...] | None
    loc: Loc

    @property
    def text(self) -> str | None:
        """The file's text, when known."""
        if self.lines is None:
            return None
        return "".join(line + "\n" for line, _ in self.lines)


@dataclass(frozen=True)
class Placed:
    """A command word that is a starting variable's number with literal text around it (`prefix`,
    `suffix`; both empty for the variable alone), not counted as read (verifier.shell.builtins
    .placed_word): the field `field` of the command (of a server's argv, in `ServerStart.templated`);
    `at` is the word's own place."""

    field: int
    name: str
    at: Loc
    prefix: str = ""
    suffix: str = ""
    # set when the variable holds a derived number (verifier.shell.derived): `name` is the
    # script's variable (empty for a word that is the `$(( ))` itself, Evaluator.word_derivation),
    # the starting variables placed are the derivation's, and `at` is where the evaluator put the
    # number (the same in every environment)
    derivation: Derivation | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The starting variables the word places."""
        return (self.name,) if self.derivation is None else self.derivation.bases

    def text(self, value: str) -> str:
        """The word for another number."""
        return self.prefix + value + self.suffix


@dataclass(frozen=True)
class Found:
    """A command the evaluator was looking for: a server start (`server`) or a benchmark script
    the runner starts (`child`). `words` are the expanded words with the place each was written,
    `env` the environment that command sees, `files` the generated files at that moment."""

    kind: str
    words: tuple[Binding, ...]
    env: tuple[tuple[str, Val, Loc], ...]
    loc: Loc
    files: tuple[tuple[str, GenFile], ...] = ()
    cwd: str = ""
    extra: tuple[tuple[str, Any], ...] = ()

    def signature(self) -> tuple[Any, ...]:
        """What makes two finds the same command (values, not where they were written)."""
        return (self.kind, tuple(v for v, _ in self.words), tuple((n, v) for n, v, _ in self.env), self.cwd,
                tuple((p, f.lines) for p, f in self.files), self.extra)


# The key of an associative array's entry that stands for every key the table does not hold, when
# one was written with a key only the run knows (no bash key holds NUL): its value is Unknown.
ANY_KEY = "\x00"


class World:
    """The mutable shell state of one way through the script."""

    __slots__ = ("vars", "arrays", "assocs", "exported", "funcs", "files", "pos", "arg0", "sources", "frames",
                 "found", "status", "flow", "assume", "out", "exit_loc", "attrs", "refs")

    def __init__(self) -> None:
        self.vars: Names[Binding] = {}
        self.arrays: Names[tuple[Binding, ...]] = {}
        self.assocs: Names[dict[str, Binding]] = {}
        self.exported: set[str] = set()
        self.funcs: dict[str, FuncDef] = {}
        self.files: dict[str, GenFile] = {}
        self.pos: tuple[Binding, ...] = ()
        self.arg0: str = ""
        self.sources: tuple[str, ...] = ()
        self.frames: tuple[dict[str, Any], ...] = ()
        self.found: tuple[Found, ...] = ()
        self.status: bool | None = True
        self.flow: tuple[Any, ...] | None = None
        self.assume: tuple[Assumption, ...] = ()
        self.out: list[tuple[Val, Loc]] | None = None
        self.exit_loc: Loc | None = None
        self.attrs: dict[str, str] = {}  # declare -l/-u/-i
        self.refs: dict[str, str] = {}  # `declare -n REF=NAME`: REF -> NAME (reads and writes go to NAME)

    def copy(self) -> World:
        """An independent copy (assoc arrays are copied on write, see `set_assoc`; a large table
        becomes a `Table` the world and its copy share)."""
        self.vars, self.arrays, self.assocs = _shared(self.vars), _shared(self.arrays), _shared(self.assocs)
        return self._copy()

    def _copy(self) -> World:
        """A copy (tables copied as they are)."""
        w = World.__new__(World)
        w.vars = self.vars.copy()
        w.arrays = self.arrays.copy()
        w.assocs = self.assocs.copy()
        w.exported = self.exported.copy()
        w.funcs = self.funcs  # shared until one of them defines or unsets a function (`own_funcs`)
        w.files = self.files.copy()
        w.pos = self.pos
        w.arg0 = self.arg0
        w.sources = self.sources
        w.frames = tuple([dict(f) for f in self.frames]) if self.frames else ()
        w.found = self.found
        w.status = self.status
        w.flow = self.flow
        w.assume = self.assume
        w.out = None if self.out is None else list(self.out)
        w.exit_loc = self.exit_loc
        w.attrs = self.attrs.copy() if self.attrs else {}
        w.refs = self.refs.copy() if self.refs else {}
        return w

    def frozen(self, bases: dict[int, _Base]) -> World:
        """A copy to keep beyond the current statement (a checkpoint): its tables share nothing an
        evaluation changes (copies of the same world share `bases`, see `Table.frozen`)."""
        w = self._copy()  # its dictionaries are copies already
        for name in ("vars", "arrays", "assocs"):
            table = getattr(self, name)
            if isinstance(table, Table):
                setattr(w, name, table.frozen(bases))
        return w

    def own_funcs(self) -> dict[str, FuncDef]:
        """The world's functions, to change: a copy is made first while another world (or a kept
        checkpoint) holds the same dictionary. Worlds share it from `copy` on, so splitting and
        merging worlds costs nothing per function; the count of references tells whether another
        holder is left (the attribute and the call's argument are two), and a holder of any kind
        only makes the copy happen, never a change another world sees."""
        if sys.getrefcount(self.funcs) > 2:
            self.funcs = dict(self.funcs)
        return self.funcs

    def set_assoc(self, name: str, key: str, binding: Binding) -> None:
        """Set one key of an associative array (copying the map first)."""
        table = dict(self.assocs.get(name, {}))
        table[key] = binding
        self.assocs[name] = table

    def generated(self, path: str) -> GenFile | None:
        """The file the script wrote at this path, as written or in normal form (None: it wrote none)."""
        return self.files.get(path) or self.files.get(posixpath.normpath(path))

    def bucket(self) -> tuple[Any, ...]:
        """A cheap key: worlds in different buckets are never equal."""
        return (len(self.vars), len(self.arrays), len(self.assocs), len(self.exported), len(self.files),
                len(self.found), self.flow, self.sources, len(self.frames))

    def same(self, other: World) -> bool:
        """Equal state (bindings with their origins, functions by identity)."""
        return (self.vars == other.vars and self.arrays == other.arrays and self.assocs == other.assocs
                and self.exported == other.exported and self.files == other.files and self.found == other.found
                and self.flow == other.flow and self.pos == other.pos and self.sources == other.sources
                and self.frames == other.frames and self.out == other.out and self.attrs == other.attrs
                and self.refs == other.refs
                and (self.funcs is other.funcs or (self.funcs.keys() == other.funcs.keys()
                                                   and all(f is other.funcs[k] for k, f in self.funcs.items()))))

    def signature(self) -> tuple[Any, ...]:
        """Everything that can influence what the rest of the script does (values, not lines)."""
        return (
            tuple(sorted((k, v) for k, (v, _) in self.vars.items())),
            tuple(sorted((k, tuple(v for v, _ in a)) for k, a in self.arrays.items())),
            tuple(sorted((k, tuple(sorted((kk, v) for kk, (v, _) in t.items()))) for k, t in self.assocs.items())),
            tuple(sorted(self.exported)),
            tuple(sorted((k, id(f)) for k, f in self.funcs.items())),
            tuple(sorted((k, f.lines) for k, f in self.files.items())),
            tuple(v for v, _ in self.pos), self.sources,
            tuple(tuple(sorted(f)) for f in self.frames),
            tuple(f.signature() for f in self.found), self.flow,
            None if self.out is None else tuple(v for v, _ in self.out),
            tuple(sorted(self.attrs.items())),
            tuple(sorted(self.refs.items())),
        )


def _join_val(a: Binding | None, b: Binding | None, unknown: Unknown) -> Binding | None:
    if a is None and b is None:
        return None
    if a is not None and b is not None and a[0] == b[0]:
        return a
    loc = (a or b)[1]  # type: ignore[index]
    return (unknown, loc)


def join(worlds: list[World], reason: str, loc: Loc) -> World:
    """One world standing for several: values they disagree on become `Unknown(reason, loc)`."""
    first = worlds[0]
    if len(worlds) == 1:
        return first
    unknown = Unknown(reason, loc)
    out = first.copy()
    for w in worlds[1:]:
        # only the names whose entries differ (most are shared: `differing`)
        for name in differing(out.vars, w.vars, hashable=True):
            joined = _join_val(out.vars.get(name), w.vars.get(name), unknown)
            if joined is None:
                out.vars.pop(name, None)
            else:
                out.vars[name] = joined
        for name in differing(out.arrays, w.arrays):
            a, b = out.arrays.get(name), w.arrays.get(name)
            if a is None or b is None or tuple(v for v, _ in a) != tuple(v for v, _ in b):
                where = (a or b or (((unknown, loc),)))[0][1] if (a or b) else loc
                out.arrays[name] = ((unknown, where),)
        for name in differing(out.assocs, w.assocs):
            a2, b2 = out.assocs.get(name, {}), w.assocs.get(name, {})
            if a2 != b2:
                table = {}
                for key in set(a2) | set(b2):
                    joined = _join_val(a2.get(key), b2.get(key), unknown)
                    if joined is not None:
                        table[key] = joined
                out.assocs[name] = table
        out.exported |= w.exported
        for name, target in w.refs.items():  # a reference one way through the script makes and another not
            if out.refs.setdefault(name, target) != target:
                out.refs[name] = "?"  # refers to nothing known: reads and writes through it fail closed
        if w.funcs is not out.funcs and not w.funcs.keys() <= out.funcs.keys():
            funcs = out.own_funcs()
            for name, func in w.funcs.items():
                funcs.setdefault(name, func)
        for path in set(out.files) | set(w.files):
            fa, fb = out.files.get(path), w.files.get(path)
            if fa != fb:
                out.files[path] = GenFile(None, (fa or fb).loc)  # type: ignore[union-attr]
        if out.pos != w.pos:
            out.pos = tuple((unknown, lc) for _v, lc in out.pos) if len(out.pos) == len(w.pos) else ((unknown, loc),)
        if out.status != w.status:
            out.status = None
        if out.out is not None and w.out is not None and out.out != w.out:
            out.out = [(unknown, loc)]
        shared = set(w.assume)
        out.assume = tuple(a for a in out.assume if a in shared)
    return out


# `settle` leaves the tables of a base alone while they hold at most SETTLE_PER_TABLE entries of
# their own each (plus SETTLE_FREE in all, and twice what they held after the last move): copying
# or comparing them visits few entries, and moving entries costs what the worlds wrote since
SETTLE_PER_TABLE = 16
SETTLE_FREE = 32


def bindings_held(worlds: list[World]) -> int:
    """What copying these worlds copies: their bindings (variables, arrays, associative arrays), and
    one for each world (the evaluator's budget for checkpoint snapshots, and a checkpoint's weight,
    verifier.shell.memo)."""
    return sum(len(w.vars) + len(w.arrays) + len(w.assocs) + 1 for w in worlds)


def settle(worlds: list[World], owner: object, later: set[str], dying: Iterable[str]) -> None:
    """After a statement of the main script: move the entries all current worlds' `Table`s agree on
    into the base they share, so what each holds of its own is what sets it apart (and what it
    wrote since). `worlds` must be every world that shares those bases (a checkpoint keeps `frozen`
    copies); a base another evaluation may hold is copied first. `later` and `dying` (the names the
    statement mentioned last) keep `_Base.suspect` complete for `drop_candidates`."""
    groups: dict[int, list[Table[Any]]] | None = None
    for w in worlds:
        for t in (w.vars, w.arrays, w.assocs):
            if type(t) is not Table:
                continue
            if groups is None:
                groups = {}
            group = groups.get(id(t.base))
            if group is None:
                groups[id(t.base)] = [t]
            else:
                group.append(t)
    if groups is None:
        return
    for tables in groups.values():
        base = tables[0].base
        if base.owner is None:  # made copying a live world of this evaluation: no other holds it
            Work.entries += len(base)
            base.owner = owner
            base.suspect = {name for name in base if name not in later}
        elif base.owner is not owner:
            Work.entries += len(base)
            base = _Base(base)
            base.owner = owner
            base.suspect = {name for name in base if name not in later}
            for t in tables:
                t.base = base
        elif dying:
            Work.entries += len(tables)
            base.suspect.update(base.keys() & dying)
        held = 0
        for t in tables:
            held += len(t.own)
        if held > SETTLE_PER_TABLE * len(tables) + SETTLE_FREE + 2 * base.settled:
            Work.entries += held
            base.settled = _fold(tables, base, later)


def _fold(tables: list[Table[Any]], base: _Base, later: set[str]) -> int:
    """Move the entries all the tables agree on into their (owned) base; what they hold of their
    own after."""
    names: set[str] = set()
    for t in tables:
        names.update(t.own)
    suspect = base.suspect
    first, rest = tables[0].own, tables[1:]
    for name in names:
        value = first.get(name, _MISS)
        if value is _MISS:
            value = base.get(name, _GONE)
        for t in rest:
            v = t.own.get(name, _MISS)
            if not _same_entry(value, base.get(name, _GONE) if v is _MISS else v):
                break
        else:
            for t in tables:
                t.own.pop(name, None)
            if value is _GONE:
                base.pop(name, None)
                suspect.discard(name)
            else:
                base[name] = value
                if name not in later:
                    suspect.add(name)
    return sum(len(t.own) for t in tables)


def drop_candidates(table: Names[Any], owner: object, dying: Iterable[str]) -> set[str]:
    """A set holding every name of a world's table that may be held though no later statement
    mentions it: for a `Table` whose base this evaluation owns, what the world wrote since the base
    was settled, the base's suspects and the names the statement just run mentioned last; every
    name otherwise."""
    if not isinstance(table, Table):
        return set(table)
    base = table.base
    names = set(dying)
    names.update(table.own)
    names.update(base if base.owner is not owner else base.suspect)
    Work.entries += len(names)
    return names


def opaque_env(name: str) -> Opaque:
    """A machine variable the harness does not set (`$HOSTNAME`): known to exist, value unknown."""
    return Opaque("$" + name, NO_LOC, True)
