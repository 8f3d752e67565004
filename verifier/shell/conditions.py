"""`[[ ... ]]`, `[ ... ]` and `test`: the one three-valued evaluator of both walkers (None: it
cannot be decided statically).

`[[ ]]`: `-z -n -v`, file tests (`-f -e -d -s -r -x ...`, answered by the walker), `== = !=` (an
unquoted right side is a glob pattern), `=~` (POSIX ERE; quoted parts literal), `< >`,
`-eq -ne -lt -le -gt -ge` (arithmetic operands), `!`, `&&`, `||`, `( )`.
`[ ]`/`test`: the same on already split words (decided by the number of arguments, as POSIX
says), with `-a`/`-o` and literal `=`.

The walkers differ only in how they hold a value: the worlds evaluator's `Val` (a string, or an
`Opaque`/`Unknown` run-time value), the multi-node trace's origin-keeping `Text`. Each hands in an
`Operands` over its own value type: how a word expands, what a value's known text is, how files,
variables and arithmetic are looked up, and what to note when an operand is not known.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

from verifier.core.linear_regex import compile_pattern
from verifier.shell.arith import BLANKS, C_SPACE, decimal, is_number
from verifier.shell.lexer import Word
from verifier.shell.values import Pattern, glob_match, has_extglob, pattern_is_literal, posix_regex

V = TypeVar("V")

_UNARY_FILE = frozenset({"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u", "-w",
                         "-x", "-G", "-L", "-N", "-O", "-S"})
_INT_OPS: dict[str, Callable[[int, int], bool]] = {
    "-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b, "-gt": lambda a, b: a > b, "-ge": lambda a, b: a >= b}
_BINARY = frozenset({"=", "==", "!=", "=~", "<", ">", "-nt", "-ot", "-ef", *_INT_OPS})
_CONNECTORS = ("&&", "||", "!", "(", ")")
# `[ ]`'s integer, as bash's legal_number reads it: C white space before it, blanks after it
_BRACKET_INTEGER = re.compile(f"[{C_SPACE}]*" r"([-+]?[0-9]+)[ \t]*")


_DECIMAL = re.compile(r"0|[1-9][0-9]*")  # read alike by `[ ]` (decimal) and `[[ ]]` (arithmetic: no octal 0)
_EQUALITY = frozenset({"=", "==", "!="})


def number_comparison(words: Sequence[Word]) -> tuple[int, str, str] | None:
    """`W op N` or `N op W` (the words of a `[[ ]]`, `[ ]` or `test`) with an integer comparison
    (`-ge`, ...) of a literal decimal N, or a string comparison (`=`, `==`, `!=`) with a literal of
    digits, which no pattern reading changes: (the index of W, op, N), else None."""
    if len(words) != 3:
        return None
    op = words[1].unquoted_literal
    if op is None or words[1].raw != op or (op not in _INT_OPS and op not in _EQUALITY):
        return None
    for k, other in ((0, words[2]), (2, words[0])):
        literal = other.literal()
        if literal is not None and (_DECIMAL.fullmatch(literal) if op in _INT_OPS else is_number(literal)):
            return k, op, literal
    return None


def compared_number(text: object, k: int, op: str, literal: str) -> bool | None:
    """The outcome of a `number_comparison` whose word W is `text`, when it is a number both tests
    read alike (a plain decimal for an integer comparison, digits for a string one); None for any
    other value."""
    if not isinstance(text, str):
        return None
    if op in _INT_OPS:
        if not _DECIMAL.fullmatch(text):
            return None
        value, other = int(text), int(literal)
        return _INT_OPS[op](value, other) if k == 0 else _INT_OPS[op](other, value)
    if not is_number(text):
        return None
    return (text == literal) != (op == "!=")


class Operands(Protocol[V]):
    """A walker's values, as the conditions see them."""

    def expand(self, word: Word, emptiness: bool) -> V:
        """A `[[ ]]` word expanded without field splitting (`emptiness`: only whether it is empty matters)."""
        ...

    def pattern(self, word: Word) -> Pattern | None:
        """A `[[ ]]` right-hand word as a glob pattern, quoted parts literal (None: not known)."""
        ...

    def lift(self, text: str) -> V:
        """A literal text as a value."""
        ...

    def known(self, value: V) -> str | None:
        """The value's text when it is known."""
        ...

    def nonempty(self, value: V) -> bool | None:
        """Whether the value is not empty (None: not known)."""
        ...

    def unknown(self, *values: V) -> None:
        """The result could not be decided because one of these operands is not known."""
        ...

    def file_test(self, op: str, value: V) -> bool | None:
        """A unary file test (`-f PATH`, `-d PATH`, ...)."""
        ...

    def is_set(self, name: str) -> bool | None:
        """`-v NAME`."""
        ...

    def arith(self, text: str) -> int | None:
        """A `[[ ]]` integer operand that is not a plain number, evaluated as an arithmetic expression."""
        ...


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


class Item(Generic[V]):
    """One word of a condition: its operator spelling (unquoted literal text), its value and, on
    the right of `==`/`!=`/`=~` in `[[ ]]`, its glob pattern."""

    __slots__ = ("op", "value", "pattern")

    def __init__(self, op: str | None, value: V, pattern: Pattern | None = None) -> None:
        self.op = op
        self.value = value
        self.pattern = pattern


def unary(ops: Operands[V], op: str, value: V) -> bool | None:
    """One unary test."""
    if op in ("-z", "-n"):
        nonempty = ops.nonempty(value)
        if nonempty is None:
            ops.unknown(value)
            return None
        return nonempty if op == "-n" else not nonempty
    if op == "-v":
        name = ops.known(value)
        return None if name is None else ops.is_set(name.split("[", 1)[0])
    if op in ("-o", "-t"):
        if ops.known(value) is None:
            ops.unknown(value)
        return None
    return ops.file_test(op, value)


def binary(ops: Operands[V], left: V, op: str, right: Item[V], double: bool) -> bool | None:
    """One binary test (`right` keeps its glob pattern for `==`)."""
    if double and op in ("=", "==", "!=") and right.pattern is not None and has_extglob(right.pattern):
        ops.unknown(left, right.value)  # an extended glob: which values it matches is not modelled
        return None
    a = ops.known(left)
    b = ops.known(right.value)
    # the right side read as a pattern (a glob for `==`, a regex for `=~`) does not need its text
    by_pattern = double and right.pattern is not None and (
        op == "=~" or (op in ("=", "==", "!=") and not pattern_is_literal(right.pattern)))
    if a is None or (b is None and not by_pattern):
        ops.unknown(left, right.value)
        return None
    if op in ("=", "==", "!="):
        result = glob_match(a, right.pattern) if by_pattern and right.pattern is not None else a == b
        return result if op != "!=" else not result
    if op == "=~":
        if not by_pattern or right.pattern is None:
            return None
        regex = "".join(re.escape(t) if lit else posix_regex(t) for t, lit in right.pattern)
        compiled = compile_pattern(regex)  # the script's pattern, matched in linear time
        return None if compiled is None else compiled.search(a) is not None
    assert b is not None
    if op in ("<", ">"):
        return a < b if op == "<" else a > b
    if op in _INT_OPS:
        x = _int_operand(ops, a, double)
        y = _int_operand(ops, b, double)
        if x is None or y is None:
            return None
        if x is False or y is False:
            return False
        return _INT_OPS[op](x, y)
    return None


def _int_operand(ops: Operands[V], text: str, double: bool) -> int | bool | None:
    # `[ ]` reads decimal; `[[ ]]` evaluates arithmetic, where a leading 0 is octal (`010` is 8) and
    # blanks and newlines around the expression are skipped (`arith.BLANKS`)
    if not double:
        found = _BRACKET_INTEGER.fullmatch(text)
        return int(found.group(1)) if found else False  # `[ x -eq 1 ]` with a non-integer: an error, the test fails
    text = text.strip(BLANKS)
    number = decimal(text)
    return number if number is not None else ops.arith(text)


class _Double(Generic[V]):
    # `[[ ]]` joins conditions with `||` / `&&`; `test` (the subclass) with `-o` / `-a`
    OR, AND = "||", "&&"

    def __init__(self, ops: Operands[V], items: Sequence[Item[V]]) -> None:
        self.ops = ops
        self.items = items
        self.i = 0

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

    def group(self) -> bool | None:
        self.i += 1
        value = self.expr()
        if self.peek_op() == ")":
            self.i += 1
        return value

    def primary(self) -> bool | None:
        if self.i >= len(self.items):
            return None
        item = self.items[self.i]
        if item.op == "(":
            return self.group()
        nxt = self.items[self.i + 1] if self.i + 1 < len(self.items) else None
        unary_op = item.op in _UNARY_FILE or item.op in ("-z", "-n", "-v", "-o")
        if unary_op and nxt is not None and not (nxt.op in _BINARY and self.i + 2 < len(self.items)):
            self.i += 2
            return unary(self.ops, str(item.op), nxt.value)
        if nxt is not None and nxt.op in _BINARY and self.i + 2 < len(self.items):
            right = self.items[self.i + 2]
            self.i += 3
            return binary(self.ops, item.value, str(nxt.op), right, double=True)
        self.i += 1
        return self.ops.nonempty(item.value)


class _Single(_Double[V]):
    OR, AND = "-o", "-a"

    def run(self) -> bool | None:
        items, ops = self.items, self.ops
        n = len(items)
        if n == 0:
            return False
        if n == 1:
            return ops.nonempty(items[0].value)
        if n == 2 and items[0].op == "!":
            return _not(ops.nonempty(items[1].value))
        if n == 2:
            op = items[0].op
            if op in _UNARY_FILE or op in ("-z", "-n", "-v"):
                return unary(ops, op, items[1].value)
            return None
        if n == 3 and items[1].op in _BINARY:
            return binary(ops, items[0].value, str(items[1].op), items[2], double=False)
        return self.expr()

    def primary(self) -> bool | None:
        if self.i >= len(self.items):
            return None
        item = self.items[self.i]
        nxt = self.items[self.i + 1] if self.i + 1 < len(self.items) else None
        if nxt is not None and nxt.op in _BINARY and self.i + 2 < len(self.items):
            right = self.items[self.i + 2]
            self.i += 3
            return binary(self.ops, item.value, str(nxt.op), right, double=False)
        if (item.op in _UNARY_FILE or item.op in ("-z", "-n")) and nxt is not None:
            self.i += 2
            return unary(self.ops, str(item.op), nxt.value)
        if item.op == "(":
            return self.group()
        self.i += 1
        return self.ops.nonempty(item.value)


def eval_double(ops: Operands[V], words: Sequence[Word]) -> bool | None:
    """`[[ words ]]`."""
    items: list[Item[V]] = []
    prev_op: str | None = None
    for word in words:
        op = word.unquoted_literal
        if op in _CONNECTORS and word.raw == op:
            items.append(Item(op, ops.lift(op)))
            prev_op = op
            continue
        value = ops.expand(word, prev_op in ("-z", "-n"))
        pattern = ops.pattern(word) if prev_op in ("==", "=", "!=", "=~") else None
        items.append(Item(op, value, pattern))
        prev_op = op
    if not items:
        return False
    return _Double(ops, items).expr()


def eval_single(ops: Operands[V], args: Sequence[V]) -> bool | None:
    """`test args` (already expanded and split)."""
    return _Single(ops, [Item(ops.known(a), a) for a in args]).run()


def eval_bracket(ops: Operands[V], args: Sequence[V]) -> bool | None:
    """`[ args ]`: without its closing `]` the command fails."""
    if not args or ops.known(args[-1]) != "]":
        return False
    return eval_single(ops, args[:-1])


__all__ = ["Item", "Operands", "binary", "compared_number", "eval_bracket", "eval_double", "eval_single",
           "number_comparison", "unary"]
