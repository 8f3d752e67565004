"""Syntax tree of the bash subset (verifier.shell.parser builds it, verifier.shell.evaluator walks it).

Every node carries `src` (the repository path of the file it was read from) and `line` (1-based),
so everything the evaluator derives can name the file and line that wrote it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from verifier.shell.lexer import Heredoc, Word


@dataclass(frozen=True, slots=True)
class Redirect:
    """`[fd]op target` (`target` None for a heredoc, whose body is `heredoc`)."""

    op: str
    fd: str
    target: Word | None
    heredoc: Heredoc | None
    line: int


@dataclass(frozen=True, slots=True)
class Assign:
    """`NAME=value`, `NAME+=value`, `NAME[i]=value` or `NAME=(elements)` (`array` set)."""

    name: str
    index: Word | None
    append: bool
    value: Word | None
    array: tuple[Word, ...] | None
    line: int


@dataclass(frozen=True, slots=True)
class Simple:
    """A simple command: prefix assignments, words, redirections."""

    assigns: tuple[Assign, ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class Pipeline:
    """`[!] cmd | cmd ...`."""

    cmds: tuple[Command, ...]
    negate: bool
    line: int


@dataclass(frozen=True, slots=True)
class AndOr:
    """`pipeline && pipeline || ...` (`ops[i]` joins `parts[i]` and `parts[i + 1]`), optionally `&`."""

    parts: tuple[Pipeline, ...]
    ops: tuple[str, ...]
    background: bool
    line: int


Body = tuple[AndOr, ...]


@dataclass(frozen=True, slots=True)
class If:
    """`if c; then b; elif c; then b; else b; fi`."""

    clauses: tuple[tuple[Body, Body], ...]
    orelse: Body | None
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class While:
    """`while c; do b; done` (`until`: the condition is negated)."""

    cond: Body
    body: Body
    until: bool
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class For:
    """`for name [in words]; do b; done` (`words` None: the positional parameters)."""

    name: str
    words: tuple[Word, ...] | None
    body: Body
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class ArithFor:
    """`for ((init; cond; step)); do b; done`."""

    init: str
    cond: str
    step: str
    body: Body
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class CaseArm:
    """`pattern|pattern) body ;;` (`term`: `;;`, `;&` or `;;&`)."""

    patterns: tuple[Word, ...]
    body: Body
    term: str
    line: int


@dataclass(frozen=True, slots=True)
class Case:
    """`case word in arms esac`."""

    word: Word
    arms: tuple[CaseArm, ...]
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class Group:
    """`{ body; }` (`subshell`: `( body )`)."""

    body: Body
    subshell: bool
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class Arith:
    """`(( expr ))`."""

    expr: str
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class Test:
    """`[[ words ]]`."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    line: int
    src: str


@dataclass(frozen=True, slots=True)
class FuncDef:
    """`name() body` / `function name { body; }`."""

    name: str
    body: Command
    line: int
    src: str
    may_launch: bool = field(default=True, compare=False)


Command = Simple | If | While | For | ArithFor | Case | Group | Arith | Test | FuncDef


@dataclass(frozen=True, slots=True)
class Script:
    """A parsed file: its statements, the repository path it came from and the length of its text
    (what keeping its tree costs grows with it: verifier.shell.memo.Checkpoints counts it)."""

    body: Body
    src: str
    chars: int = field(default=0, compare=False, repr=False)


def iter_nodes(node: Any) -> Iterator[Any]:
    """Every node below `node` (a node, or a tuple/list of them), parents before children, in source
    order; function bodies included (a function can run at any later time)."""
    if isinstance(node, (tuple, list)):
        for item in node:
            yield from iter_nodes(item)
        return
    yield node
    if isinstance(node, AndOr):
        yield from iter_nodes(node.parts)
    elif isinstance(node, Pipeline):
        yield from iter_nodes(node.cmds)
    elif isinstance(node, If):
        for cond, body in node.clauses:
            yield from iter_nodes(cond)
            yield from iter_nodes(body)
        if node.orelse is not None:
            yield from iter_nodes(node.orelse)
    elif isinstance(node, While):
        yield from iter_nodes(node.cond)
        yield from iter_nodes(node.body)
    elif isinstance(node, (For, ArithFor, Group, FuncDef)):
        yield from iter_nodes(node.body)
    elif isinstance(node, Case):
        for arm in node.arms:
            yield from iter_nodes(arm.body)
