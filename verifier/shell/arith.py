"""Bash arithmetic (`$(( ))`, `(( ))`, `let`, array subscripts), evaluated over known integers.

`evaluate(expr, lookup, assign)` parses the expression with precedence climbing: literals (decimal,
`0x` hex, `0` octal, `base#digits`), variables (a variable holding an expression is evaluated in
turn), `( )`, unary `+ - ! ~`, `++`/`--`, `**`, `* / %`, `+ -`, `<< >>`, comparisons, `== !=`,
`& ^ |`, `&& ||`, `?:`, assignments (`= += -= *= /= %= <<= >>= &= ^= |=`) and `,`. A variable
whose value is not a known integer raises `ArithUnknown` (the caller keeps the expression opaque).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeGuard

from verifier.core.processcache import ByText

# what bash skips between the tokens of an arithmetic expression (not a carriage return, a vertical
# tab or any other white space), and its digits: ASCII only, as bash reads them
BLANKS = " \t\n"
# C's white space (isspace), which `[ ]` and printf skip before an integer argument
C_SPACE = " \t\n\v\f\r"
_TOKEN = re.compile(f"[{BLANKS}]*" r"(?:(0[xX][0-9a-fA-F]+|[0-9]+#[0-9A-Za-z@_]+|[0-9]+)|([A-Za-z_][A-Za-z0-9_]*)"
                    r"|(\*\*=|<<=|>>=|\+\+|--|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>=!~&^|?:(),\[\]]))")
MAX_DEPTH = 64


class ArithUnknown(Exception):
    """The expression reads a value that is not a known integer."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class ArithError(Exception):
    """The expression is malformed (bash would fail); the caller treats it as unknown."""


Lookup = Callable[[str], "int | str | None"]
Assign = Callable[[str, int], None]


_TOKENS: ByText[str, list[tuple[str, str]]] = ByText("shell.arithmetic-tokens", 16384)
_INTEGER = re.compile(r"-?[0-9]+")
_DIGITS = re.compile(r"[0-9]+")


def is_number(text: object) -> TypeGuard[str]:
    """Whether a value is a number as bash's tests, counts and command words read it: ASCII digits
    only (Python's `int` and `str.isdigit` take the digits of every script)."""
    return isinstance(text, str) and _DIGITS.fullmatch(text) is not None


def is_integer(text: str) -> bool:
    """`is_number`, or one with a minus sign before it (`seq -3 3`, `head -n -2`)."""
    return _INTEGER.fullmatch(text) is not None


_SIGNED_DIGITS = re.compile(r"[-+]?[0-9]+")  # ASCII digits: bash reads no other digit as a number


def decimal(text: str) -> int | None:
    """The number a text is without evaluating it, when it is a decimal integer (a sign, then digits
    with no leading 0: `012` is octal, 10, and is read as an expression); None for any other text."""
    if _SIGNED_DIGITS.fullmatch(text) is None:
        return None
    digits = text.lstrip("+-")
    return None if len(digits) > 1 and digits[0] == "0" else int(text)


def tokens(expr: str) -> list[tuple[str, str]]:
    """The expression's tokens, each ("num" | "name" | "op", text); ArithError when it has a
    character no token starts with (an expression is read once per text: the lists are never changed)."""
    toks = _TOKENS.get(expr)
    if toks is None:
        toks = _scan(expr)
        if len(expr) > 2000:  # a long (generated) text is not kept
            return toks
        _TOKENS.put(expr, toks)
    return toks


def _scan(expr: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    expr = expr.rstrip(BLANKS)
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise ArithError(f"bad arithmetic near {expr[pos:pos + 10]!r}")
        if m.group(1):
            out.append(("num", m.group(1)))
        elif m.group(2):
            out.append(("name", m.group(2)))
        else:
            out.append(("op", m.group(3)))
        pos = m.end()
    return out


def _int_literal(text: str) -> int:
    if "#" in text:
        base_text, digits = text.split("#", 1)
        base = int(base_text)
        # bases 37 to 64 (`@`, `_` and both cases as digits) are not read; in 2 to 36 only letters and
        # digits are (Python's int would take a `_` between digits, and base 0 as "any prefix")
        if not 2 <= base <= 36 or not digits.isalnum():
            raise ArithError(f"unsupported arithmetic base in {text!r}")
        return int(digits, base)
    if text[:2] in ("0x", "0X"):
        return int(text, 16)
    if len(text) > 1 and text.startswith("0"):
        return int(text, 8)
    return int(text)


def _c_div(a: int, b: int) -> int:
    if b == 0:
        raise ArithError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int:
    if b == 0:
        raise ArithError("division by zero")
    return a - b * _c_div(a, b)


def _wrap(value: int) -> int:
    """A value as bash's 64-bit signed integers hold it (they wrap around)."""
    return ((value + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def _shift(a: int, b: int, left: bool) -> int:
    if not 0 <= b < 64:
        raise ArithError("shift count out of range")  # what bash gives there is the machine's
    return a << b if left else a >> b


def _power(a: int, b: int) -> int:
    if b < 0:
        raise ArithError("exponent less than 0")
    return pow(a, b, 1 << 64)


_OPERATIONS: dict[str, tuple[int, Callable[[int, int], int]]] = {
    "||": (1, lambda a, b: int(bool(a) or bool(b))), "&&": (2, lambda a, b: int(bool(a) and bool(b))),
    "|": (3, lambda a, b: a | b), "^": (4, lambda a, b: a ^ b), "&": (5, lambda a, b: a & b),
    "==": (6, lambda a, b: int(a == b)), "!=": (6, lambda a, b: int(a != b)),
    "<": (7, lambda a, b: int(a < b)), ">": (7, lambda a, b: int(a > b)),
    "<=": (7, lambda a, b: int(a <= b)), ">=": (7, lambda a, b: int(a >= b)),
    "<<": (8, lambda a, b: _shift(a, b, True)), ">>": (8, lambda a, b: _shift(a, b, False)),
    "+": (9, lambda a, b: a + b), "-": (9, lambda a, b: a - b),
    "*": (10, lambda a, b: a * b), "/": (10, _c_div), "%": (10, _c_mod),
    "**": (11, _power),
}


def _wrapping(fn: Callable[[int, int], int]) -> Callable[[int, int], int]:
    return lambda a, b: _wrap(fn(a, b))


# the binary operators by precedence; every result wraps around as bash's 64-bit integers do
_BINARY = {op: (prec, _wrapping(fn)) for op, (prec, fn) in _OPERATIONS.items()}
_ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "**="}


class _Eval:
    def __init__(self, toks: list[tuple[str, str]], lookup: Lookup, assign: Assign, depth: int) -> None:
        self.toks = toks
        self.i = 0
        self.lookup = lookup
        self.assign = assign
        self.depth = depth

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, op: str) -> bool:
        t = self.peek()
        if t is not None and t == ("op", op):
            self.i += 1
            return True
        return False

    def var(self, name: str) -> int:
        value = self.lookup(name)
        if value is None:
            return 0
        if isinstance(value, int):
            return value
        text = value.strip(BLANKS)
        if not text:
            return 0
        number = decimal(text)
        if number is not None:
            return number
        if self.depth >= MAX_DEPTH:
            raise ArithError("expression recursion too deep")
        return evaluate(text, self.lookup, self.assign, self.depth + 1)

    def comma(self) -> int:
        value = self.assignment()
        while self.take(","):
            value = self.assignment()
        return value

    def assignment(self) -> int:
        t, t2 = self.peek(), self.toks[self.i + 1] if self.i + 1 < len(self.toks) else None
        if t is not None and t[0] == "name" and t2 is not None and t2[0] == "op" and t2[1] in _ASSIGN_OPS:
            self.i += 2
            right = self.assignment()
            name = t[1]
            if t2[1] != "=":
                op = t2[1][:-1]
                right = _BINARY[op][1](self.var(name), right)
            self.assign(name, right)
            return right
        return self.ternary()

    def ternary(self) -> int:
        cond = self.binary(1)
        if self.take("?"):
            a = self.assignment()
            if not self.take(":"):
                raise ArithError("expected ':'")
            b = self.assignment()
            return a if cond else b
        return cond

    def binary(self, level: int) -> int:
        left = self.unary()
        while True:
            t = self.peek()
            if t is None or t[0] != "op" or t[1] not in _BINARY:
                return left
            prec, fn = _BINARY[t[1]]
            if prec < level:
                return left
            self.i += 1
            right = self.binary(prec + 1 if t[1] != "**" else prec)
            left = fn(left, right)

    def unary(self) -> int:
        t = self.peek()
        if t is None:
            raise ArithError("unexpected end of expression")
        if t[0] == "op" and t[1] in ("+", "-", "!", "~"):
            self.i += 1
            value = self.unary()
            return {"+": value, "-": -value, "!": int(not value), "~": ~value}[t[1]]
        if t[0] == "op" and t[1] in ("++", "--"):
            self.i += 1
            name = self.peek()
            if name is None or name[0] != "name":
                raise ArithError("++/-- needs a variable")
            self.i += 1
            value = self.var(name[1]) + (1 if t[1] == "++" else -1)
            self.assign(name[1], value)
            return value
        return self.postfix()

    def postfix(self) -> int:
        t = self.peek()
        if t is None:
            raise ArithError("unexpected end of expression")
        self.i += 1
        if t[0] == "num":
            return _int_literal(t[1])
        if t[0] == "name":
            nxt = self.peek()
            if nxt is not None and nxt[0] == "op" and nxt[1] in ("++", "--"):
                self.i += 1
                value = self.var(t[1])
                self.assign(t[1], value + (1 if nxt[1] == "++" else -1))
                return value
            if nxt == ("op", "["):
                raise ArithUnknown(t[1])
            return self.var(t[1])
        if t == ("op", "("):
            value = self.comma()
            if not self.take(")"):
                raise ArithError("expected ')'")
            return value
        raise ArithError(f"unexpected {t[1]!r}")


def evaluate(expr: str, lookup: Lookup, assign: Assign, depth: int = 0) -> int:
    """The integer value of an arithmetic expression (see the module docstring)."""
    toks = tokens(expr)
    if not toks:
        return 0
    ev = _Eval(toks, lookup, assign, depth)
    value = ev.comma()
    if ev.i != len(toks):
        raise ArithError("trailing tokens")
    return _wrap(value)
