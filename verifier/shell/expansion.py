"""What bash's expansions make of known text (bash manual, "Brace Expansion" and "Shell Parameter
Expansion"), for both walkers: the single-node evaluator (verifier.shell.evaluator) and the
multi-node reader (verifier.shell.trace).

The walkers hold values differently (a `Val` with the line it was written on; a `Text` whose every
character keeps its file and line), so each applies an operator to its own values; what an operator
is, where its operands end, and what it makes of known text are written here once:

* `brace_expand` gives the words of an unquoted literal word with a brace group (`{a,b}`, `{1..4}`);
* `parse_param` splits the text inside `${...}` into its kind (a name, a special parameter, `#`
  length, `!` indirection), name, subscript and operator text;
* `operator` parses that operator text (`:-word`, `##pattern`, `/pattern/string`, `^^`, `@Q`,
  `:offset:length`) into an `Operator`;
* `defaulted`, `slice_bounds`, `convert_case` and `transform` are the operators' string semantics;
* `joins` and `separator` say which expansions of a list are one word and what joins it;
* `field_spans` splits an unquoted expansion's text into fields with IFS.

Both parses are functions of the text alone and are kept per text (a script's expansions are read
again on every evaluation of it).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from verifier.core.processcache import ByText
from verifier.shell.arith import is_number

MAX_BRACE_WORDS = 1024
SPECIAL = frozenset("@*#?$!-0123456789")
_SEQUENCE = re.compile(r"(-?[0-9]+)\.\.(-?[0-9]+)(?:\.\.(-?[0-9]+))?")
_LETTERS = re.compile(r"([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?[0-9]+))?")
_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(\[)?")


class Param(NamedTuple):
    """What the text inside `${...}` is: `kind` "" for a name (with `subscript` and operator text
    `rest`), else "special" (`$#`, `$1`, ...: the name), "length" (`${#X}`: the operand in `name`),
    "indirect" (`${!X...}`: the operand in `name`) or "opaque" (not a parameter bash reads)."""

    kind: str
    name: str
    subscript: str | None
    rest: str


class Operator(NamedTuple):
    """An operator of `${NAME<operator>}`.

    `kind` and `op`:
    * "default": `op` one of `-`, `=`, `+`, `?` (`colon`: the `:` form, which treats empty as
      unset); `operand` the word;
    * "strip": `op` one of `#`, `##`, `%`, `%%`; `operand` the pattern;
    * "replace": `op` the mode, "" (first match), "/" (every match), "#" (anchored at the start) or
      "%" (at the end); `operand` the pattern, `other` the replacement (None: no `/` before it);
    * "case": `op` one of `^^`, `,,`, `^`, `,`;
    * "transform": `op` the letter of `@<letter>`;
    * "slice": `operand` the offset, `other` the length (None: to the end), both arithmetic;
    * "unknown": an operator bash has no meaning for.
    """

    kind: str
    op: str = ""
    colon: bool = False
    operand: str = ""
    other: str | None = None


_PARAMS: ByText[str, Param] = ByText("shell.parameters", 16384)
_OPERATORS: ByText[str, Operator] = ByText("shell.parameter-operators", 16384)
_DEFAULTS = (":-", ":=", ":+", ":?", "-", "=", "+", "?")
_CASES = ("^^", ",,", "^", ",")


def parse_param(expr: str) -> Param:
    """The text inside `${...}` (or after `$`) read as a parameter."""
    got = _PARAMS.get(expr)
    if got is not None:
        return got
    parsed: Param
    if (expr in SPECIAL and len(expr) == 1) or is_number(expr):
        parsed = Param("special", expr, None, "")
    elif expr.startswith("#") and len(expr) > 1:
        parsed = Param("length", expr[1:], None, "")
    elif expr.startswith("!") and len(expr) > 1:
        parsed = Param("indirect", expr[1:], None, "")
    else:
        m = _HEAD.match(expr)
        if not m:
            parsed = Param("opaque", "", None, "")
        elif not m.group(2):
            parsed = Param("", m.group(1), None, expr[m.end(1):])
        else:
            close = bracket_end(expr, m.end(1))
            parsed = Param("opaque", "", None, "") if close < 0 else \
                Param("", m.group(1), expr[m.end(1) + 1:close], expr[close + 1:])
    return _PARAMS.put(expr, parsed)


def operator(rest: str) -> Operator:
    """The operator text after a parameter's name and subscript, parsed."""
    got = _OPERATORS.get(rest)
    if got is not None:
        return got
    parsed: Operator
    default = next((op for op in _DEFAULTS if rest.startswith(op)), None)
    if default is not None:
        parsed = Operator("default", default[-1], default.startswith(":"), rest[len(default):])
    elif rest.startswith(("##", "%%")):
        parsed = Operator("strip", rest[:2], operand=rest[2:])
    elif rest.startswith(("#", "%")):
        parsed = Operator("strip", rest[:1], operand=rest[1:])
    elif rest.startswith("/"):
        body, mode = rest[1:], ""
        if body[:1] in ("/", "#", "%"):  # `${X//#/}`: the pattern of a global replacement may start with `#`
            mode, body = body[0], body[1:]
        pattern, replacement = split_unescaped(body, "/")
        parsed = Operator("replace", mode, operand=pattern, other=replacement)
    elif rest in _CASES:
        parsed = Operator("case", rest)
    elif rest.startswith("@") and len(rest) == 2:
        parsed = Operator("transform", rest[1])
    elif rest.startswith(":"):
        offset, length = split_unescaped(rest[1:], ":")
        parsed = Operator("slice", operand=offset, other=length)
    else:
        parsed = Operator("unknown")
    return _OPERATORS.put(rest, parsed)


DEFAULT_IFS = " \t\n"
# variables bash sets itself when the script has not (or that change as it runs): their values are
# the run's (`PWD` and `LINENO` each walker answers from what it follows; `IFS` is DEFAULT_IFS)
SHELL_SET = frozenset({"RANDOM", "SRANDOM", "SECONDS", "EPOCHSECONDS", "EPOCHREALTIME", "BASHPID", "PPID", "UID",
                       "EUID", "GROUPS", "HOSTNAME", "HOSTTYPE", "OSTYPE", "MACHTYPE", "HOME", "USER", "PATH",
                       "BASH", "BASH_VERSION", "BASH_SUBSHELL", "SHLVL", "OLDPWD", "PWD", "SHELL", "TERM",
                       "FUNCNAME", "BASH_LINENO", "BASH_ARGV", "BASH_ARGC", "BASH_COMMAND", "PIPESTATUS",
                       "DIRSTACK", "HISTCMD", "COLUMNS", "LINES", "OPTIND", "OPTARG"})


def field_spans(text: str, ifs: str) -> list[tuple[int, int]]:
    """Word splitting of an unquoted expansion's text (bash manual, "Word Splitting"): where each
    field starts and ends. IFS white space at either end makes no field and a run of it is one
    delimiter; any other IFS character is a delimiter of its own (with the white space around it),
    so two in a row, or one at the start, enclose an empty field; a delimiter at the end ends the
    last field. An empty IFS splits nothing."""
    if not ifs:
        return [(0, len(text))] if text else []
    white = "".join(c for c in DEFAULT_IFS if c in ifs)
    n = len(text)

    def past_white(pos: int) -> int:
        while pos < n and text[pos] in white:
            pos += 1
        return pos

    spans: list[tuple[int, int]] = []
    pos = past_white(0)
    while pos < n:
        start = pos
        while pos < n and text[pos] not in ifs:
            pos += 1
        spans.append((start, pos))
        pos = past_white(pos)
        if pos < n and text[pos] in ifs:  # one delimiter that is not white space
            pos = past_white(pos + 1)
    return spans


def joins(expr: str) -> bool:
    """Whether `"${expr}"` is one word, its elements joined by the first character of IFS (`"$*"`,
    `"${A[*]}"`, with any operator), where `"$@"` and `"${A[@]}"` are a word per element."""
    p = parse_param(expr)
    return (p.name == "*" and p.subscript is None and p.kind in ("", "special")) or \
        (p.kind == "" and p.subscript == "*")


def separator(ifs: str | None) -> str:
    """What joins the elements of `"$*"` and `"${A[*]}"`: the first character of IFS (a space when
    IFS is unset, nothing when it is empty)."""
    return " " if ifs is None else ifs[:1]


def defaulted(op: Operator, present: bool, value: str) -> bool:
    """Whether a `default` operator takes its word: the parameter is unset, or (the `:` form) empty."""
    return not present or (op.colon and value == "")


def slice_bounds(size: int, offset: int, length: int | None) -> tuple[int, int] | None:
    """`${X:offset:length}` of a text (or `${A[@]:offset:length}` of a list) of `size` characters:
    the start and end it keeps (None: nothing; a negative offset counts from the end and one before
    the start keeps nothing; a negative length counts from the end too)."""
    start = offset if offset >= 0 else size + offset
    if start < 0:
        return None
    start = min(start, size)
    if length is None:
        return start, size
    end = start + length if length >= 0 else size + length
    return (start, min(end, size)) if end >= start else None


def convert_case(text: str, op: str) -> str:
    """`^^` upper-cases every character, `,,` lower-cases them, `^` and `,` only the first."""
    if op == "^^":
        return text.upper()
    if op == ",,":
        return text.lower()
    return (text[:1].upper() if op == "^" else text[:1].lower()) + text[1:]


def transform(text: str, letter: str) -> str | None:
    """`${X@<letter>}` of a known text (None: a transformation not modelled, or one whose result
    depends on what only the run knows: `@E`/`@P` of text with a backslash, `@A`, `@a`, `@K`)."""
    if letter == "Q":
        return "'" + text.replace("'", "'\\''") + "'"
    if letter == "U":
        return text.upper()
    if letter == "L":
        return text.lower()
    if letter == "u":
        return text[:1].upper() + text[1:]
    if letter in ("E", "P") and "\\" not in text and (letter == "E" or "$" not in text):
        return text
    return None


def brace_expand(text: str) -> list[str] | None:
    """The words bash makes of an unquoted literal word by brace expansion: `a{b,c}d` -> abd acd,
    nested and several groups (`{a,b}{1,2}`), sequences of integers (`{1..9..2}`, zero-padded as
    `{01..10}`) and of letters (`{a..e}`); a `{...}` that is neither is literal text. None: more than
    `MAX_BRACE_WORDS` words (what they are is then not claimed)."""
    try:
        return _braces(text)
    except _TooMany:
        return None


class _TooMany(Exception):
    pass


def _braces(text: str) -> list[str]:
    start = text.find("{")
    while start >= 0:
        end, commas = _brace_group(text, start)
        if end is not None:
            body = text[start + 1:end]
            if commas:
                cuts = [start + 1, *(c + 1 for c in commas)]
                items = [word for a, b in zip(cuts, [*commas, end], strict=True) for word in _braces(text[a:b])]
            else:
                items = _sequence(body)  # type: ignore[assignment]
            if items is not None:
                rest = _braces(text[end + 1:])
                if len(items) * len(rest) > MAX_BRACE_WORDS:
                    raise _TooMany
                return [text[:start] + item + tail for item in items for tail in rest]
        start = text.find("{", start + 1)
    return [text]


def _brace_group(text: str, start: int) -> tuple[int | None, list[int]]:
    """The `}` closing the `{` at `start` and the commas at its own level (None: not closed)."""
    depth = 0
    commas: list[int] = []
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            if not depth:
                return i, commas
            depth -= 1
        elif c == "," and not depth:
            commas.append(i)
        i += 1
    return None, []


def _sequence(body: str) -> list[str] | None:
    """`x..y[..step]` of integers or of single letters (None: not a sequence)."""
    numeric = _SEQUENCE.fullmatch(body)
    found = numeric or _LETTERS.fullmatch(body)
    if found is None:
        return None
    letters = numeric is None
    step = abs(int(found.group(3) or 1)) or 1
    if letters:
        a, b = ord(found.group(1)), ord(found.group(2))
        codes = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        if len(codes) > MAX_BRACE_WORDS:
            raise _TooMany
        return [chr(c) for c in codes]
    first, last = found.group(1), found.group(2)
    a, b = int(first), int(last)
    numbers = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
    if len(numbers) > MAX_BRACE_WORDS:
        raise _TooMany
    padded = any(len(t.lstrip("-")) > 1 and t.lstrip("-").startswith("0") for t in (first, last))
    width = max(len(first), len(last)) if padded else 0
    return [f"{n:0{width}d}" if width else str(n) for n in numbers]


def may_glob(field: str) -> bool:
    """Whether a field holds a pathname pattern (`*`, `?`, `[...]`): bash replaces one it makes from
    unquoted text with the names of the files it matches (or keeps it when none does), which only
    the run's file system decides. A field also holding quoted text is counted too (erring towards
    a value the run decides)."""
    if "*" in field or "?" in field:
        return True
    # a `[` with a `]` after it, found in linear time (a regular expression `\[.*\]` backtracks from
    # every `[` of a field that has no `]`: quadratic in the field's length)
    start = field.find("[")
    return start >= 0 and field.find("]", start + 1) >= 0


def bracket_end(expr: str, start: int) -> int:
    """Index of the `]` closing the `[` at expr[start] (-1: none)."""
    depth = 0
    for i in range(start, len(expr)):
        if expr[i] == "[":
            depth += 1
        elif expr[i] == "]":
            depth -= 1
            if depth == 0:
                return i
    return -1


def split_unescaped(text: str, sep: str) -> tuple[str, str | None]:
    """Split at the first `sep` outside quotes, nested braces and backslash escapes (None: there is
    none): `${MODEL//\\//--}` replaces every `/`, `${X:${#Y}:2}` takes two characters."""
    depth = 0
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == sep and depth == 0:
            return text[:i], text[i + 1:]
        i += 1
    return text, None


__all__ = ["DEFAULT_IFS", "MAX_BRACE_WORDS", "SHELL_SET", "SPECIAL", "field_spans", "may_glob", "Operator", "Param", "brace_expand", "bracket_end", "convert_case", "defaulted", "joins", "operator", "parse_param",
           "separator", "slice_bounds", "split_unescaped", "transform"]
