"""One way through a script (a *world*): the shell state the evaluator carries along it.

When a condition cannot be decided statically the evaluator copies the world and follows both
branches; each copy records the assumption it made (`Assumption`). Worlds whose states are equal
are merged again (keeping the assumptions they share), so branches that change nothing that
matters do not multiply. `join` merges worlds that differ: every value they disagree on becomes an
`Unknown` naming the construct that split them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verifier.shell.nodes import FuncDef
from verifier.shell.values import Loc, Opaque, Unknown, Val

Binding = tuple[Val, Loc]
NO_LOC: Loc = ("", 0)


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


class World:
    """The mutable shell state of one way through the script."""

    __slots__ = ("vars", "arrays", "assocs", "exported", "funcs", "files", "pos", "arg0", "sources", "frames",
                 "found", "status", "flow", "assume", "out", "exit_loc", "attrs", "refs")

    def __init__(self) -> None:
        self.vars: dict[str, Binding] = {}
        self.arrays: dict[str, tuple[Binding, ...]] = {}
        self.assocs: dict[str, dict[str, Binding]] = {}
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
        """An independent copy (assoc arrays are copied on write, see `set_assoc`)."""
        w = World.__new__(World)
        w.vars = self.vars.copy()
        w.arrays = self.arrays.copy()
        w.assocs = self.assocs.copy()
        w.exported = self.exported.copy()
        w.funcs = self.funcs.copy()
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

    def set_assoc(self, name: str, key: str, binding: Binding) -> None:
        """Set one key of an associative array (copying the map first)."""
        table = dict(self.assocs.get(name, {}))
        table[key] = binding
        self.assocs[name] = table

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
                and self.funcs.keys() == other.funcs.keys()
                and all(f is other.funcs[k] for k, f in self.funcs.items()))

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
        # only the names whose bindings differ (a set operation in C: most bindings are shared)
        for name in {name for name, _ in out.vars.items() ^ w.vars.items()}:
            joined = _join_val(out.vars.get(name), w.vars.get(name), unknown)
            if joined is None:
                out.vars.pop(name, None)
            else:
                out.vars[name] = joined
        for name in set(out.arrays) | set(w.arrays):
            a, b = out.arrays.get(name), w.arrays.get(name)
            if a is None or b is None or tuple(v for v, _ in a) != tuple(v for v, _ in b):
                where = (a or b or (((unknown, loc),)))[0][1] if (a or b) else loc
                out.arrays[name] = ((unknown, where),)
        for name in set(out.assocs) | set(w.assocs):
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
        for name, func in w.funcs.items():
            out.funcs.setdefault(name, func)
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


def opaque_env(name: str) -> Opaque:
    """A machine variable the harness does not set (`$HOSTNAME`): known to exist, value unknown."""
    return Opaque("$" + name, NO_LOC, True)
