"""`[[ ... ]]`, `[ ... ]` and `test`, evaluated three-valued (None: cannot be decided statically).

`[[ ]]`: `-z -n -v`, file tests (`-f -e -d -s -r -x ...`, through the evaluator's repository
view), `== = !=` (an unquoted right side is a glob pattern), `=~` (POSIX ERE; quoted parts
literal), `< >`, `-eq -ne -lt -le -gt -ge` (arithmetic operands), `!`, `&&`, `||`, `( )`.
`[ ]`/`test`: the same on already split words, with `-a`/`-o` and literal `=`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from verifier.shell.lexer import Word
from verifier.shell.values import (
    Loc,
    Opaque,
    Pattern,
    Unknown,
    Val,
    ere_to_python,
    glob_match,
    pattern_is_literal,
)
from verifier.shell.world import World

if TYPE_CHECKING:
    from verifier.shell.evaluator import Evaluator

_UNARY_FILE = frozenset({"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w",
                         "-x", "-G", "-L", "-N", "-O", "-S"})
_INT_OPS = {"-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-lt": lambda a, b: a < b,
            "-le": lambda a, b: a <= b, "-gt": lambda a, b: a > b, "-ge": lambda a, b: a >= b}
_BINARY = frozenset({"=", "==", "!=", "=~", "<", ">", "-nt", "-ot", "-ef", *_INT_OPS})


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _or(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def _not(a: bool | None) -> bool | None:
    return None if a is None else not a


class _Item:
    __slots__ = ("word", "op", "value", "pattern", "segments")

    def __init__(self, word: Word | None, op: str | None, value: Val, pattern: Pattern | None,
                 segments: list[tuple[str, bool]] | None) -> None:
        self.word = word
        self.op = op  # the unquoted literal text (operators are recognised only unquoted)
        self.value = value
        self.pattern = pattern
        self.segments = segments


class _Double:
    # `[[ ]]` joins conditions with `||` / `&&`; `test` (the subclass) with `-o` / `-a`
    OR, AND = "||", "&&"

    def __init__(self, ev: Evaluator, items: list[_Item], w: World, loc: Loc) -> None:
        self.ev = ev
        self.items = items
        self.i = 0
        self.w = w
        self.loc = loc

    def peek_op(self) -> str | None:
        return self.items[self.i].op if self.i < len(self.items) else None

    def expr(self) -> bool | None:
        left = self.conj()
        while self.peek_op() == self.OR:
            self.i += 1
            left = _or(left, self.conj())
        return left

    def conj(self) -> bool | None:
        left = self.neg()
        while self.peek_op() == self.AND:
            self.i += 1
            left = _and(left, self.neg())
        return left

    def neg(self) -> bool | None:
        if self.peek_op() == "!":
            self.i += 1
            return _not(self.neg())
        return self.primary()

    def primary(self) -> bool | None:
        if self.i >= len(self.items):
            return None
        item = self.items[self.i]
        if item.op == "(":
            self.i += 1
            value = self.expr()
            if self.peek_op() == ")":
                self.i += 1
            return value
        nxt = self.items[self.i + 1] if self.i + 1 < len(self.items) else None
        unary_op = item.op in _UNARY_FILE or item.op in ("-z", "-n", "-v", "-o")
        if unary_op and nxt is not None and not (nxt.op in _BINARY and self.i + 2 < len(self.items)):
            self.i += 2
            return unary(self.ev, str(item.op), nxt.value, self.w, self.loc)
        if nxt is not None and nxt.op in _BINARY and self.i + 2 < len(self.items):
            right = self.items[self.i + 2]
            self.i += 3
            return binary(self.ev, item.value, nxt.op, right, self.w, self.loc, double=True)
        self.i += 1
        return _nonempty(item.value)


def _nonempty(value: Val) -> bool | None:
    if isinstance(value, Opaque) and value.nonempty:
        return True
    return value != "" if isinstance(value, str) else None


def unary(ev: Evaluator, op: str, value: Val, w: World, loc: Loc) -> bool | None:
    """One unary test."""
    if op == "-z":
        empty = _nonempty(value)
        return None if empty is None else not empty
    if op == "-n":
        return _nonempty(value)
    if op == "-v":
        if not isinstance(value, str):
            return None
        name = value.split("[", 1)[0]
        return ev.lookup(w, name, loc) is not None or name in w.arrays or name in w.assocs
    if op == "-o":
        return None
    if op in ("-t",):
        return None
    return ev.file_test(op, value, w)


def binary(ev: Evaluator, left: Val, op: str, right: _Item, w: World, loc: Loc, double: bool) -> bool | None:
    """One binary test (`right` keeps its glob pattern for `==`)."""
    rv = right.value
    if op in ("=", "==", "!="):
        if not isinstance(left, str):
            return None
        if double and right.pattern is not None and not pattern_is_literal(right.pattern):
            result = glob_match(left, right.pattern)
        else:
            if not isinstance(rv, str):
                return None
            result = left == rv
        return result if op != "!=" else not result
    if op == "=~":
        if not isinstance(left, str) or right.segments is None:
            return None
        regex = "".join(re.escape(t) if lit else ere_to_python(t) for t, lit in right.segments)
        try:
            return re.search(regex, left) is not None
        except re.error:
            return None
    if op in ("<", ">"):
        if not isinstance(left, str) or not isinstance(rv, str):
            return None
        return left < rv if op == "<" else left > rv
    if op in _INT_OPS:
        a = _int_operand(ev, left, w, loc, double)
        b = _int_operand(ev, rv, w, loc, double)
        if a is None or b is None:
            return None
        if a is False or b is False:
            return False
        return _INT_OPS[op](a, b)
    return None


def _int_operand(ev: Evaluator, value: Val, w: World, loc: Loc, double: bool) -> int | bool | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if not double:
        return False  # `[ x -eq 1 ]` with a non-integer: an error, the test fails
    result = ev.arith(text, w, loc, expand=False)
    return int(result) if isinstance(result, str) else None


def eval_double(ev: Evaluator, words: tuple[Word, ...], w: World, loc: Loc) -> bool | None:
    """`[[ words ]]`."""
    items: list[_Item] = []
    prev_op: str | None = None
    for word in words:
        op = word.unquoted_literal
        if op in ("&&", "||", "!", "(", ")") and word.raw == op:
            items.append(_Item(word, op, op, None, None))
            prev_op = op
            continue
        if prev_op in ("-z", "-n"):
            value, _ = ev.expand_emptiness(word, w, (loc[0], word.line))
        else:
            value, _ = ev.expand_scalar(word, w, (loc[0], word.line))
        pattern = ev.expand_pattern(word, w, (loc[0], word.line)) if prev_op in ("==", "=", "!=", "=~") else None
        segments = list(pattern) if pattern is not None and prev_op == "=~" else None
        items.append(_Item(word, op, value, pattern, segments))
        prev_op = op
    if not items:
        return False
    return _Double(ev, items, w, loc).expr()


def eval_single(ev: Evaluator, args: list[Val], w: World, loc: Loc) -> bool | None:
    """`[ args ]` / `test args` (args already expanded and split, without the closing `]`)."""
    items = [_Item(None, a if isinstance(a, str) else None, a, None, None) for a in args]
    return _Single(ev, items, w, loc).run()


class _Single(_Double):
    OR, AND = "-o", "-a"

    def run(self) -> bool | None:
        n = len(self.items)
        if n == 0:
            return False
        if n == 1:
            return _nonempty(self.items[0].value)
        if n == 2 and self.items[0].op == "!":
            return _not(_nonempty(self.items[1].value))
        if n == 2:
            op = self.items[0].op
            if op in _UNARY_FILE or op in ("-z", "-n", "-v"):
                return unary(self.ev, op, self.items[1].value, self.w, self.loc)
            return None
        if n == 3 and self.items[1].op in _BINARY:
            return binary(self.ev, self.items[0].value, self.items[1].op, self.items[2], self.w, self.loc,
                          double=False)
        return self.expr()

    def primary(self) -> bool | None:
        if self.i >= len(self.items):
            return None
        item = self.items[self.i]
        nxt = self.items[self.i + 1] if self.i + 1 < len(self.items) else None
        if nxt is not None and nxt.op in _BINARY and self.i + 2 < len(self.items):
            right = self.items[self.i + 2]
            self.i += 3
            return binary(self.ev, item.value, nxt.op, right, self.w, self.loc, double=False)
        if (item.op in _UNARY_FILE or item.op in ("-z", "-n")) and nxt is not None:
            self.i += 2
            return unary(self.ev, item.op, nxt.value, self.w, self.loc)
        if item.op == "(":
            self.i += 1
            value = self.expr()
            if self.peek_op() == ")":
                self.i += 1
            return value
        self.i += 1
        return _nonempty(item.value)


__all__ = ["eval_double", "eval_single", "unary", "binary", "Opaque", "Unknown"]
