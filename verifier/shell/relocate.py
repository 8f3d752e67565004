"""Syntax trees of text parsed on its own (a command substitution, `eval`ed text) placed where the
text stands: every command keeps the enclosing file and its line counted from the text's first."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from verifier.core.processcache import ByObject
from verifier.shell.nodes import (
    AndOr,
    ArithFor,
    Body,
    Case,
    CaseArm,
    Command,
    For,
    FuncDef,
    Group,
    If,
    Pipeline,
    While,
)
from verifier.shell.values import Loc


def relocate(body: Body, loc: Loc) -> Body:
    """Command-substitution text is parsed on its own: keep the enclosing file and line."""
    if not body:
        return body
    return _Relocator(loc).body(body)


def relocate_shared(body: Body, loc: Loc) -> Body:
    """`relocate` once for each parsed body and place (the body is kept with its copy, so its id
    is not reused). Only for a command substitution: the functions it defines die with its
    subshell, so sharing their nodes between runs changes no world's identity-compared functions."""
    if not body:
        return body
    kept = _RELOCATED.get(body, loc)
    return kept if kept is not None else _RELOCATED.put(body, _Relocator(loc).body(body), loc)


_RELOCATED: ByObject[Body] = ByObject("shell.relocated-bodies", 4096)


class _Relocator:
    def __init__(self, loc: Loc) -> None:
        self.src, self.base = loc

    def body(self, body: Body) -> Body:
        return tuple(self.andor(a) for a in body)

    def andor(self, a: AndOr) -> AndOr:
        return AndOr(tuple(self.pipe(p) for p in a.parts), a.ops, a.background, self.base)

    def pipe(self, p: Pipeline) -> Pipeline:
        return Pipeline(tuple(self.cmd(c) for c in p.cmds), p.negate, self.base)

    def cmd(self, c: Command) -> Command:
        fields: dict[str, Any] = {}
        if hasattr(c, "src"):
            fields["src"] = self.src
        if hasattr(c, "line"):
            fields["line"] = self.base + max(0, c.line - 1)
        if isinstance(c, If):
            fields["clauses"] = tuple((self.body(a), self.body(b)) for a, b in c.clauses)
            fields["orelse"] = None if c.orelse is None else self.body(c.orelse)
        elif isinstance(c, (While,)):
            fields["cond"] = self.body(c.cond)
            fields["body"] = self.body(c.body)
        elif isinstance(c, (For, ArithFor, Group)):
            fields["body"] = self.body(c.body)
        elif isinstance(c, Case):
            fields["arms"] = tuple(CaseArm(a.patterns, self.body(a.body), a.term, a.line) for a in c.arms)
        elif isinstance(c, FuncDef):
            fields["body"] = self.cmd(c.body)
        return replace(c, **fields)
