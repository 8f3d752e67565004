"""Static evaluation of old-layout per-config launcher scripts (never executes anything).

Before srt-slurm recipes, single-node configs were launched by bash scripts
`benchmarks/single_node/{agentic,fixed_seq_len}/<prefix>_<precision>_<sku>_<framework>[...].sh`.
`evaluate_script(text, env)` walks the small bash subset those scripts use to build the server
command and returns the argv after the launcher module, the exported environment at the moment the
server starts, and the script line that wrote every token.

Supported: assignments (`X=v`, `X="$Y"`, `${Y:-d}`, `${Y-d}`, `${Y:=d}`, `${Y:+a}`, `${#A[@]}`,
`export`/`declare`/`local`), arithmetic `$((...))`, arrays `A=(...)`, `A+=(...)`, `"${A[@]}"`,
`if/elif/else/fi` with `[ ]`, `[[ ]]` and `test` (`=`, `==`, `!=`, `-n`, `-z`, `-eq`..`-le`, `!`),
`&&` / `||` lists, line continuations, comments (also inside arrays), groups, function definitions
(skipped), and the server command (`python3 -m <module> ...`, `sglang serve`, `vllm serve`, directly
or via an array expansion). Values from command substitution are *opaque* (kept as their source
text); a branch whose condition cannot be decided is evaluated both ways and every variable the
branches set differently becomes *unresolved*. An unresolved value that reaches the server argv
raises `ScriptUnresolved` naming the line of the undecidable condition.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

MAX_SCRIPT_CHARS = 512_000
MAX_TOKENS = 200_000
DEFAULT_MODULES = ("sglang.launch_server", "vllm.entrypoints.openai.api_server")
SERVE_LAUNCHERS = {"sglang": "sglang.launch_server", "vllm": "vllm.entrypoints.openai.api_server"}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
_ARRAY_ALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]")
_ARRAY_LEN = re.compile(r"#([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]")
_ARRAY_FIRST = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[0\]")
_PARAM_OP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-=+])(.*))?", re.S)
_PARAM_TRIM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(#|##|%|%%)(.*)", re.S)
_ARITH_NAME = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?|[A-Za-z_][A-Za-z0-9_]*")
_ARITH_INT = re.compile(r"\s*-?\d+\s*")
_DECLARERS = {"export", "declare", "local", "readonly", "typeset"}
_LOOP_OPEN = {"for": "done", "while": "done", "until": "done", "select": "done", "case": "esac"}


class ScriptUnresolved(Exception):
    """The script's server command depends on something a static reading cannot decide."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True)
class Opaque:
    """A value computed at run time (command substitution, `$0`): kept as its source text."""

    text: str
    line: int


@dataclass(frozen=True)
class Unresolved:
    """A value that differs between branches the evaluator could not decide."""

    line: int
    reason: str


Val = str | Opaque | Unresolved


@dataclass(frozen=True)
class ScriptLaunch:
    """The server command a script runs: argv after the launcher module, env, and origins."""

    launcher: tuple[str, ...]  # e.g. ("python3", "-m", "sglang.launch_server") or ("sglang", "serve")
    module: str
    argv: tuple[str, ...]
    argv_lines: tuple[int, ...]
    env: dict[str, str]
    env_lines: dict[str, int]
    line: int  # the line that runs the server
    opaque: tuple[tuple[str, int], ...] = ()  # argv tokens holding run-time values, with their lines
    unresolved_env: dict[str, int] = field(default_factory=dict)

    def flag_lines(self) -> dict[str, int]:
        """`flag name (no dashes) -> line` for every `--flag` in argv (the last occurrence wins)."""
        out: dict[str, int] = {}
        for token, line in zip(self.argv, self.argv_lines, strict=True):
            if token.startswith("--") and len(token) > 2:
                out[token[2:].split("=", 1)[0]] = line
        return out

    def args(self) -> dict[str, object]:
        """argv as `{flag: value}` (`True` for a bare flag, a list for several values)."""
        out: dict[str, object] = {}
        i, argv = 0, self.argv
        while i < len(argv):
            token = argv[i]
            if not token.startswith("--"):
                i += 1
                continue
            name, eq, inline = token[2:].partition("=")
            if eq:
                out[name] = inline
                i += 1
                continue
            values = []
            j = i + 1
            while j < len(argv) and not (argv[j].startswith("--") and len(argv[j]) > 2):
                values.append(argv[j])
                j += 1
            out[name] = True if not values else values[0] if len(values) == 1 else values
            i = j
        return out


# ---------------------------------------------------------------------------------- tokenizer


@dataclass
class Word:
    """One shell word: parts are (kind, payload, quoted)."""

    parts: list[tuple[str, str, bool]]
    line: int
    raw: str
    _literal: str | None | bool = field(default=False, init=False, repr=False, compare=False)

    def literal(self) -> str | None:
        """The word's text when it has no expansions (computed once: a parsed word never changes)."""
        if self._literal is False:
            self._literal = "".join(p for _, p, _ in self.parts) \
                if all(kind == "lit" for kind, _, _ in self.parts) else None
        return self._literal  # type: ignore[return-value]


@dataclass
class Tok:
    kind: str  # word | op | nl | arr (array assignment open: payload name, append)
    line: int
    word: Word | None = None
    op: str = ""
    name: str = ""
    append: bool = False


def _match_close(text: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` that balances an already-consumed `open_` (quotes respected)."""
    depth, n = 1, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if text.startswith(open_, i):
            depth += 1
            i += len(open_)
            continue
        if text.startswith(close, i):
            depth -= 1
            i += len(close)
            if depth == 0:
                return i
            continue
        i += 1
    raise ScriptUnresolved(f"unbalanced {open_!r}", None)


def _dollar(text: str, i: int, quoted: bool, parts: list[tuple[str, str, bool]]) -> int:
    """Read a `$` expansion starting at text[i] == '$'; append a part; return the new index."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if text.startswith("$((", i):
        end = _match_close(text, i + 3, "((", "))")
        parts.append(("arith", text[i + 3:end - 2], quoted))
        return end
    if nxt == "(":
        end = _match_close(text, i + 2, "(", ")")
        parts.append(("cmd", text[i:end], quoted))
        return end
    if nxt == "{":
        end = _match_close(text, i + 2, "{", "}")
        parts.append(("param", text[i + 2:end - 1], quoted))
        return end
    m = _NAME.match(text, i + 1)
    if m:
        parts.append(("param", m.group(0), quoted))
        return m.end()
    if nxt and (nxt.isdigit() or nxt in "@*#?$!-"):
        parts.append(("param", nxt, quoted))
        return i + 2
    parts.append(("lit", "$", quoted))
    return i + 1


def tokenize(text: str) -> list[Tok]:
    """Split a script into words, operators and newlines (line numbers are 1-based)."""
    toks: list[Tok] = []
    i, n, line = 0, len(text), 1
    parts: list[tuple[str, str, bool]] = []
    start, wline = 0, 1

    def flush() -> None:
        nonlocal parts
        if parts:
            merged: list[tuple[str, str, bool]] = []
            for part in parts:
                if merged and part[0] == "lit" and merged[-1][0] == "lit" and merged[-1][2] == part[2]:
                    merged[-1] = ("lit", merged[-1][1] + part[1], part[2])
                else:
                    merged.append(part)
            toks.append(Tok("word", wline, Word(merged, wline, text[start:i])))
            parts = []
        if len(toks) > MAX_TOKENS:
            raise ScriptUnresolved("script too large", None)

    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if c in " \t\r":
            flush()
            i += 1
            continue
        if c == "\n":
            flush()
            toks.append(Tok("nl", line))
            line += 1
            i += 1
            continue
        if not parts:
            start, wline = i, line
            if c == "#":
                while i < n and text[i] != "\n":
                    i += 1
                continue
        if c in ";&|()<>":
            lit = "".join(p for k, p, _ in parts) if all(k == "lit" for k, _, _ in parts) else None
            if c == "(" and lit is not None and _ASSIGN.fullmatch(lit):
                m = _ASSIGN.fullmatch(lit)
                assert m is not None
                parts = []
                toks.append(Tok("arr", line, name=m.group(1), append=bool(m.group(2))))
                i += 1
                continue
            if c in "<>" and lit is not None and lit.isdigit():
                parts = []
            flush()
            for op in ("&&", "||", ";;", ">>", ">&", "&>", "<<", ";", "&", "|", "(", ")", ">", "<"):
                if text.startswith(op, i):
                    toks.append(Tok("op", line, op=op))
                    i += len(op)
                    break
            continue
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise ScriptUnresolved("unterminated single quote", line)
            parts.append(("lit", text[i + 1:j], True))
            line += text.count("\n", i, j)
            i = j + 1
            continue
        if c == '"':
            i += 1
            before = len(parts)
            buf: list[str] = []
            while i < n and text[i] != '"':
                ch = text[i]
                if ch == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                    if text[i + 1] != "\n":
                        buf.append(text[i + 1])
                    else:
                        line += 1
                    i += 2
                    continue
                if ch == "$":
                    if buf:
                        parts.append(("lit", "".join(buf), True))
                        buf = []
                    j = _dollar(text, i, True, parts)
                    line += text.count("\n", i, j)
                    i = j
                    continue
                if ch == "`":
                    j = text.find("`", i + 1)
                    if j < 0:
                        raise ScriptUnresolved("unterminated backquote", line)
                    if buf:
                        parts.append(("lit", "".join(buf), True))
                        buf = []
                    parts.append(("cmd", text[i:j + 1], True))
                    line += text.count("\n", i, j)
                    i = j + 1
                    continue
                if ch == "\n":
                    line += 1
                    buf.append(ch)
                    i += 1
                    continue
                run = _QUOTED_RUN.match(text, i)  # the characters up to the next one that means something
                if run is None:
                    buf.append(ch)
                    i += 1
                    continue
                buf.append(run.group(0))
                i = run.end()
            if i >= n:
                raise ScriptUnresolved("unterminated double quote", wline)
            if buf or len(parts) == before:
                parts.append(("lit", "".join(buf), True))
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            parts.append(("lit", text[i + 1], True))
            i += 2
            continue
        if c == "$":
            j = _dollar(text, i, False, parts)
            line += text.count("\n", i, j)
            i = j
            continue
        if c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise ScriptUnresolved("unterminated backquote", line)
            parts.append(("cmd", text[i:j + 1], False))
            line += text.count("\n", i, j)
            i = j + 1
            continue
        run = _PLAIN_RUN.match(text, i)  # a run of ordinary characters (a `#` inside a word is one)
        end = run.end() if run is not None else i + 1
        parts.append(("lit", text[i:end], False))
        i = end
    flush()
    toks.append(Tok("nl", line))
    return toks


_PLAIN_RUN = re.compile(r"[^ \t\r\n\\'\"$`;&|()<>]+")
_QUOTED_RUN = re.compile(r"[^\"\\$`\n]+")


# ---------------------------------------------------------------------------------- parser


@dataclass
class Simple:
    words: list[Word]
    assigns: list[tuple[str, bool, Word | None, list[Word] | None, int]]  # name, append, scalar, array, line
    line: int


@dataclass
class AndOr:
    items: list[tuple[str, list[Simple | If | Block]]]  # (op before, pipeline commands)
    background: bool = False


@dataclass
class If:
    clauses: list[tuple[list[AndOr], list[AndOr]]]
    orelse: list[AndOr] | None
    line: int


@dataclass
class Block:
    kind: str  # group | subshell | skipped
    body: list[AndOr]
    line: int
    poisoned: list[tuple[str, int]] = field(default_factory=list)


class _Parser:
    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def word_is(self, tok: Tok | None, *names: str) -> bool:
        return tok is not None and tok.kind == "word" and tok.word is not None and tok.word.literal() in names

    def skip_nl(self) -> None:
        while (t := self.peek()) is not None and (t.kind == "nl" or (t.kind == "op" and t.op == ";")):
            self.i += 1

    def parse_list(self, stop: tuple[str, ...] = ()) -> list[AndOr]:
        out: list[AndOr] = []
        while True:
            self.skip_nl()
            t = self.peek()
            if t is None or self.word_is(t, *stop) or (t.kind == "op" and t.op == ")" and ")" in stop):
                return out
            at = self.i
            out.append(self.parse_andor(stop))
            if self.i == at:  # a token no command starts with (a stray `)`): refuse instead of looping
                raise ScriptUnresolved("unexpected token", t.line)

    def parse_andor(self, stop: tuple[str, ...]) -> AndOr:
        result = AndOr([("", self.parse_pipeline(stop))])
        while (t := self.peek()) is not None and t.kind == "op" and t.op in ("&&", "||"):
            self.i += 1
            while (n := self.peek()) is not None and n.kind == "nl":
                self.i += 1
            result.items.append((t.op, self.parse_pipeline(stop)))
        t = self.peek()
        if t is not None and t.kind == "op" and t.op == "&":
            result.background = True
            self.i += 1
        return result

    def parse_pipeline(self, stop: tuple[str, ...]) -> list[Simple | If | Block]:
        cmds = [self.parse_command(stop)]
        while (t := self.peek()) is not None and t.kind == "op" and t.op == "|":
            self.i += 1
            cmds.append(self.parse_command(stop))
        return cmds

    def parse_command(self, stop: tuple[str, ...]) -> Simple | If | Block:
        t = self.peek()
        if t is None:
            return Simple([], [], 0)
        if self.word_is(t, "if"):
            return self.parse_if()
        if self.word_is(t, "{"):
            self.i += 1
            body = self.parse_list(("}",))
            self.i += 1
            self.skip_redirects()
            return Block("group", body, t.line)
        if t.kind == "op" and t.op == "(":
            self.i += 1
            body = self.parse_list((")",))
            self.i += 1
            self.skip_redirects()
            return Block("subshell", body, t.line)
        if t.kind == "word" and t.word is not None and t.word.literal() in _LOOP_OPEN:
            return self.skip_compound(_LOOP_OPEN[t.word.literal() or ""], t)
        nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else None
        nxt2 = self.toks[self.i + 2] if self.i + 2 < len(self.toks) else None
        if (t.kind == "word" and nxt is not None and nxt.kind == "op" and nxt.op == "("
                and nxt2 is not None and nxt2.kind == "op" and nxt2.op == ")") or self.word_is(t, "function"):
            return self.skip_function(t)
        return self.parse_simple(stop)

    def skip_redirects(self) -> None:
        while (t := self.peek()) is not None and t.kind == "op" and t.op in (">", ">>", "<", ">&", "&>", "<<"):
            self.i += 2

    def skip_compound(self, closer: str, first: Tok) -> Block:
        opener = first.word.literal() if first.word else ""
        depth = 0
        poisoned: list[tuple[str, int]] = []
        openers = {k for k, v in _LOOP_OPEN.items() if v == closer}
        while (t := self.peek()) is not None:
            self.i += 1
            lit = t.word.literal() if t.kind == "word" and t.word else None
            if t.kind == "arr":
                poisoned.append((t.name, t.line))
            elif lit is not None and (m := _ASSIGN.match(lit)):
                poisoned.append((m.group(1), t.line))
            elif t.kind == "word" and t.word is not None and t.word.parts and t.word.parts[0][0] == "lit":
                m2 = _ASSIGN.match(t.word.parts[0][1])
                if m2:
                    poisoned.append((m2.group(1), t.line))
            if lit in openers:
                depth += 1
            elif lit == closer:
                depth -= 1
                if depth == 0:
                    break
        self.skip_redirects()
        return Block("skipped", [], first.line, poisoned if opener else [])

    def skip_function(self, first: Tok) -> Block:
        while (t := self.peek()) is not None and not self.word_is(t, "{"):
            self.i += 1
        depth = 0
        while (t := self.peek()) is not None:
            self.i += 1
            if self.word_is(t, "{"):
                depth += 1
            elif self.word_is(t, "}"):
                depth -= 1
                if depth == 0:
                    break
        return Block("skipped", [], first.line)

    def parse_if(self) -> If:
        first = self.toks[self.i]
        self.i += 1
        clauses: list[tuple[list[AndOr], list[AndOr]]] = []
        orelse: list[AndOr] | None = None
        while True:
            cond = self.parse_list(("then",))
            self.expect("then")
            body = self.parse_list(("elif", "else", "fi"))
            clauses.append((cond, body))
            t = self.peek()
            if self.word_is(t, "elif"):
                self.i += 1
                continue
            if self.word_is(t, "else"):
                self.i += 1
                orelse = self.parse_list(("fi",))
            self.expect("fi")
            break
        self.skip_redirects()
        return If(clauses, orelse, first.line)

    def expect(self, word: str) -> None:
        t = self.peek()
        if not self.word_is(t, word):
            raise ScriptUnresolved(f"expected {word!r}", t.line if t else None)
        self.i += 1

    def parse_simple(self, stop: tuple[str, ...]) -> Simple:
        words: list[Word] = []
        assigns: list[tuple[str, bool, Word | None, list[Word] | None, int]] = []
        start = self.peek()
        line = start.line if start else 0
        in_test = False
        while (t := self.peek()) is not None:
            if t.kind == "nl":
                break
            if t.kind == "op":
                if in_test and t.op in ("&&", "||", "(", ")", "<", ">"):
                    words.append(Word([("lit", t.op, True)], t.line, t.op))
                    self.i += 1
                    continue
                if t.op in (">", ">>", "<", ">&", "&>", "<<"):
                    self.i += 2
                    continue
                break
            self.i += 1
            if t.kind == "arr":
                elems: list[Word] = []
                while (e := self.peek()) is not None and not (e.kind == "op" and e.op == ")"):
                    self.i += 1
                    if e.kind == "word" and e.word is not None:
                        elems.append(e.word)
                if e is None:
                    raise ScriptUnresolved(f"unterminated array {t.name}=(", t.line)
                self.i += 1
                assigns.append((t.name, t.append, None, elems, t.line))
                continue
            assert t.word is not None
            if not words or (words[0].literal() in _DECLARERS):
                head = t.word.parts[0] if t.word.parts else None
                m = _ASSIGN.match(head[1]) if head and head[0] == "lit" and not head[2] else None
                if m:
                    rest = [("lit", head[1][m.end():], head[2])] if head and head[1][m.end():] else []
                    value = Word(rest + t.word.parts[1:], t.line, t.word.raw)
                    assigns.append((m.group(1), bool(m.group(2)), value, None, t.line))
                    continue
            if not words and t.word.literal() == "[[":
                in_test = True
            elif in_test and t.word.literal() == "]]":
                in_test = False
            words.append(t.word)
        return Simple(words, assigns, line)


# ---------------------------------------------------------------------------------- evaluator


@dataclass
class _State:
    vars: dict[str, Val]
    arrays: dict[str, list[tuple[Val, int]]]
    exported: dict[str, int]
    lines: dict[str, int]
    exited: bool = False

    def copy(self) -> _State:
        return _State(dict(self.vars), {k: list(v) for k, v in self.arrays.items()}, dict(self.exported),
                      dict(self.lines), self.exited)


@dataclass
class _Found:
    words: list[tuple[Val, int]]
    env: dict[str, tuple[Val, int]]
    line: int


def _concat(pieces: list[Val], line: int, raw: str) -> Val:
    for p in pieces:
        if isinstance(p, Unresolved):
            return p
    if any(isinstance(p, Opaque) for p in pieces):
        return Opaque(raw, line)
    return "".join(p for p in pieces if isinstance(p, str))


class _Tainted(Exception):
    """A symbolic value decided something (a test, arithmetic, a comparison): evaluate concretely."""


class _Evaluator:
    def __init__(self, env: Mapping[str, str], modules: Iterable[str],
                 functions: Mapping[str, tuple[str, str, str]] | None = None, symbol: str | None = None) -> None:
        self.state = _State({k: str(v) for k, v in env.items()}, {}, {}, {})
        self.modules = set(modules)
        self.functions = dict(functions or {})
        self.found: list[_Found] = []
        self.depth = 0
        self.symbol = symbol  # a stand-in for a variable's value that may only be carried, never inspected
        self.deferred: dict[str, str] = {}  # arithmetic on the stand-in: expression -> its own stand-in

    def inspect(self, *values: Any) -> None:
        """Values about to decide something: none may hold a stand-in."""
        if self.symbol is not None and any(isinstance(v, str) and _MARK in v for v in values):
            raise _Tainted

    def compare(self, value: Val, constants: Iterable[str]) -> None:
        """A value about to be compared with constants: a stand-in may only be in it when no value it
        stands for (digits; an integer for arithmetic) could equal one of them."""
        if self.symbol is None or not isinstance(value, str) or _MARK not in value:
            return
        pattern = re.compile("".join(
            r"\d+" if part == self.symbol else r"-?\d+" if part.startswith(_MARK) else re.escape(part)
            for part in _TOKENS.split(value)))
        if any(pattern.fullmatch(c) for c in constants):
            raise _Tainted

    def defer(self, expression: str) -> str:
        """The stand-in for an integer expression over the stand-in, computed when it is put back."""
        if expression not in self.deferred:
            self.deferred[expression] = f"{_MARK}A{len(self.deferred)}{_END}"
        return self.deferred[expression]

    # --- expansion -----------------------------------------------------------------------

    def param(self, expr: str, line: int) -> list[tuple[Val, int]] | Val:
        st = self.state
        if _NAME.fullmatch(expr):  # `$NAME` / `${NAME}`: the common case, read directly
            value: Val | None = st.vars.get(expr)
            if value is None and expr in st.arrays:
                value = st.arrays[expr][0][0] if st.arrays[expr] else ""
            return "" if value is None else value
        m = _ARRAY_ALL.fullmatch(expr)
        if m:
            return list(st.arrays.get(m.group(1), []))
        m = _ARRAY_LEN.fullmatch(expr)
        if m:
            elems = st.arrays.get(m.group(1), [])
            bad = next((v for v, _ in elems if isinstance(v, Unresolved)), None)
            return bad if bad is not None else str(len(elems))
        m = _ARRAY_FIRST.fullmatch(expr)
        if m and m.group(1) in st.arrays:
            elems = st.arrays[m.group(1)]
            return elems[0][0] if elems else ""
        m = _PARAM_OP.fullmatch(expr)
        if m:
            name, colon, op, rest = m.group(1), m.group(2), m.group(3), m.group(4)
            value = st.vars.get(name)
            if value is None and name in st.arrays:
                value = st.arrays[name][0][0] if st.arrays[name] else ""
            if op is None:
                return "" if value is None else value
            if isinstance(value, Unresolved):
                return value
            unset = value is None or (bool(colon) and value == "")
            if isinstance(value, Opaque) and colon:
                return Unresolved(line, f"`${{{expr}}}` tests a run-time value")
            if op == "+":
                return "" if unset else self.expand_text(rest, line)
            if not unset:
                assert value is not None
                return value
            default = self.expand_text(rest, line)
            if op == "=":
                st.vars[name] = default
                st.lines[name] = line
            return default
        if expr in ("0",) or expr.startswith(("BASH_SOURCE", "#", "!", "?", "$", "@", "*")) or expr[:1].isdigit():
            return Opaque("${" + expr + "}", line)
        m = _PARAM_TRIM.fullmatch(expr)
        if m:
            value = st.vars.get(m.group(1), "")
            pattern = self.expand_text(m.group(3), line)
            self.inspect(value, pattern)
            if isinstance(value, str) and isinstance(pattern, str) and not any(c in pattern for c in "*?["):
                if m.group(2).startswith("#") and value.startswith(pattern):
                    return value[len(pattern):]
                if m.group(2).startswith("%") and pattern and value.endswith(pattern):
                    return value[: -len(pattern)]
                return value
            return Opaque("${" + expr + "}", line)
        return Opaque("${" + expr + "}", line)

    def expand_text(self, text: str, line: int) -> Val:
        """Expand the text of a default (`${X:-text}`) as a double-quoted string."""
        words = _quoted_words(text)
        if not words:
            return ""
        vals = self.expand(words[0], line)
        return _concat([v for v, _ in vals], line, text) if vals else ""

    def arith(self, expr: str, line: int) -> Val:
        pieces: list[str] = []
        pos = 0
        symbolic = False
        for m in _ARITH_NAME.finditer(expr):
            pieces.append(expr[pos:m.start()])
            name = m.group(1) or m.group(0)
            value = self.state.vars.get(name, "0")
            if isinstance(value, Unresolved):
                return value
            if isinstance(value, str) and self.symbol is not None and _MARK in value:
                # the stand-in's digits keep the value an integer or not, whatever they are; a
                # deferred result inside arithmetic again is not followed
                if _MARK in value.replace(self.symbol, ""):
                    raise _Tainted
                symbolic = True
                probe = value.replace(self.symbol, "1")
            else:
                probe = value
            if isinstance(value, Opaque) or not _ARITH_INT.fullmatch(probe or "0"):
                return Opaque("$((" + expr + "))", line)
            pieces.append(f"({(value or '0').strip()})")
            pos = m.end()
        pieces.append(expr[pos:])
        expression = "".join(pieces).replace("/", "//").strip()
        if symbolic:
            return self.defer(expression)
        result = _arith_value(expression)
        return Opaque("$((" + expr + "))", line) if result is None else result

    def expand(self, word: Word, line: int | None = None) -> list[tuple[Val, int]]:
        """A word -> zero or more fields, each with the line that wrote it."""
        at = word.line if line is None else line
        fields: list[list[Val]] = [[]]
        had_quoted = False
        multi: list[tuple[Val, int]] | None = None
        for kind, payload, quoted in word.parts:
            had_quoted = had_quoted or quoted
            if kind == "lit":
                fields[-1].append(payload)
                continue
            if kind == "cmd":
                fields[-1].append(Opaque(payload, at))
                continue
            if kind == "arith":
                fields[-1].append(self.arith(payload, at))
                continue
            result = self.param(payload, at)
            if isinstance(result, list):
                if len(word.parts) == 1:
                    if quoted:
                        return result
                    multi = []
                    for value, ln in result:
                        if isinstance(value, str):
                            multi += [(piece, ln) for piece in value.split()]
                        else:
                            multi.append((value, ln))
                    return multi
                fields[-1].append(" ".join(v if isinstance(v, str) else "?" for v, _ in result))
                continue
            if not quoted and isinstance(result, str) and len(word.parts) == 1:
                return [(piece, at) for piece in result.split()]
            fields[-1].append(result)
        out = [(_concat(f, at, word.raw), at) for f in fields]
        if not had_quoted and out == [("", at)]:
            return []
        return out

    # --- execution -------------------------------------------------------------------------

    def run(self, body: list[AndOr]) -> None:
        for item in body:
            if self.state.exited:
                return
            self.run_andor(item)

    def run_andor(self, item: AndOr) -> bool | None:
        status = self.run_pipeline(item.items[0][1], item.background)
        for op, pipe in item.items[1:]:
            if self.state.exited:
                return status
            if status is None:
                forked = self.fork(lambda p=pipe: self.run_pipeline(p, item.background), self.line_of(pipe),
                                   "an undecidable command status")
                status = forked
                continue
            if (op == "&&") == status:
                status = self.run_pipeline(pipe, item.background)
        return status

    def line_of(self, pipe: list[Simple | If | Block]) -> int:
        first = pipe[0]
        return first.line

    def fork(self, action, line: int, reason: str) -> None:  # type: ignore[no-untyped-def]
        before = self.state.copy()
        found_before = len(self.found)
        action()
        after = self.state
        if after.exited:
            self.state = before
            self.state.exited = False
            del self.found[found_before:]
            return None
        self.state = _merge(before, after, line, reason, self.symbol)
        return None

    def run_pipeline(self, pipe: list[Simple | If | Block], background: bool) -> bool | None:
        if len(pipe) > 1:  # each side runs in a subshell: nothing it sets survives
            saved = self.state.copy()
            for cmd in pipe:
                self.run_cmd(cmd)
            exited = self.state.exited
            self.state = saved
            self.state.exited = exited and False
            return None
        return self.run_cmd(pipe[0])

    def run_cmd(self, cmd: Simple | If | Block) -> bool | None:
        self.depth += 1
        if self.depth > 200:
            raise ScriptUnresolved("nesting too deep", cmd.line)
        try:
            if isinstance(cmd, If):
                self.run_if(cmd.clauses, cmd.orelse, cmd.line)
                return True
            if isinstance(cmd, Block):
                for name, line in cmd.poisoned:
                    self.state.vars[name] = Unresolved(line, "assigned inside a loop or case")
                    self.state.arrays.pop(name, None)
                if cmd.kind == "group":
                    self.run(cmd.body)
                elif cmd.kind == "subshell":
                    saved = self.state.copy()
                    self.run(cmd.body)
                    self.state = saved
                return None if cmd.kind != "group" else True
            return self.run_simple(cmd)
        finally:
            self.depth -= 1

    def run_if(self, clauses: list[tuple[list[AndOr], list[AndOr]]], orelse: list[AndOr] | None, line: int) -> None:
        if not clauses:
            if orelse:
                self.run(orelse)
            return
        (cond, body), rest = clauses[0], clauses[1:]
        status: bool | None = True
        for item in cond:
            status = self.run_andor(item)
        cond_line = cond[0].items[0][1][0].line if cond else line
        if status is True:
            self.run(body)
        elif status is False:
            self.run_if(rest, orelse, line)
        else:
            taken = self.state.copy()
            self.state, other = taken, self.state
            found_at = len(self.found)
            self.run(body)
            branch_a = self.state
            found_a = self.found[found_at:]
            del self.found[found_at:]
            self.state = other
            self.run_if(rest, orelse, line)
            found_b = self.found[found_at:]
            del self.found[found_at:]
            branch_b = self.state
            reason = f"the condition on line {cond_line} cannot be decided statically"
            if branch_a.exited and not branch_b.exited:
                self.state, self.found[found_at:] = branch_b, found_b
            elif branch_b.exited and not branch_a.exited:
                self.state, self.found[found_at:] = branch_a, found_a
            else:
                self.state = _merge(branch_a, branch_b, cond_line, reason, self.symbol)
                if found_a or found_b:
                    if _launch_key(found_a) != _launch_key(found_b):
                        self.inspect(repr(_launch_key(found_a)), repr(_launch_key(found_b)))
                        raise ScriptUnresolved(f"whether or how the server starts depends on line {cond_line}, "
                                               "which cannot be decided statically", cond_line)
                    self.found[found_at:] = found_a

    def run_simple(self, cmd: Simple) -> bool | None:
        st = self.state
        if not cmd.words or (cmd.words[0].literal() in _DECLARERS):
            declarer = cmd.words[0].literal() if cmd.words else None
            flags = [w.literal() for w in cmd.words[1:]] if declarer else []
            export = declarer == "export" or (declarer in ("declare", "typeset") and "-x" in flags)
            for name, append, scalar, elems, line in cmd.assigns:
                self.assign(name, append, scalar, elems, line)
                if export:
                    st.exported[name] = line
            if export:
                for w in cmd.words[1:]:
                    lit = w.literal()
                    if lit and _NAME.fullmatch(lit):
                        st.exported[lit] = w.line
            return True
        fields: list[tuple[Val, int]] = []
        for w in cmd.words:
            fields += self.expand(w)
        if not fields:
            return True
        head = fields[0][0]
        names = [f for f, _ in fields]
        self.compare(head, (*_BUILTINS, *self.functions))
        if head in ("[", "test", "[["):
            inner = names[1:-1] if head != "test" else names[1:]
            self.inspect(*inner)
            return _test_expr(inner)
        if head in ("true", ":"):
            return True
        if head == "false":
            return False
        if head == "!":
            rest = Simple(cmd.words[1:], [], cmd.line)
            status = self.run_simple(rest)
            return None if status is None else not status
        if head == "exit":
            st.exited = True
            return None
        if head in ("set", "shift", "unset") and head == "unset":
            self.inspect(*names[1:])
            for name in names[1:]:
                if isinstance(name, str):
                    st.vars.pop(name, None)
                    st.arrays.pop(name, None)
                    st.exported.pop(name, None)
            return True
        if isinstance(head, str) and head in self.functions:
            var, op, value = self.functions[head]
            self.inspect(self.state.vars.get(var, ""))
            return _test_expr([self.state.vars.get(var, ""), op, value])
        self.detect_launch(fields, cmd)
        return None if head not in ("echo", "printf", "set", "mkdir", "cd", "shift") else True

    def assign(self, name: str, append: bool, scalar: Word | None, elems: list[Word] | None, line: int) -> None:
        st = self.state
        st.lines[name] = line
        if elems is not None:
            values: list[tuple[Val, int]] = []
            for w in elems:
                values += self.expand(w)
            st.arrays[name] = (st.arrays.get(name, []) if append else []) + values
            st.vars.pop(name, None)
            return
        assert scalar is not None
        vals = self.expand(scalar)
        value = _concat([v for v, _ in vals], line, scalar.raw) if vals else ""
        if append:
            value = _concat([st.vars.get(name, ""), value], line, scalar.raw)
        if name in st.arrays and not append:
            st.arrays[name] = [(value, line)] + st.arrays[name][1:]
        else:
            st.vars[name] = value

    def detect_launch(self, fields: list[tuple[Val, int]], cmd: Simple) -> None:
        words = [f for f, _ in fields]
        i = 0
        while i < len(words) and words[i] in ("exec", "nohup", "env"):
            i += 1
        if self.symbol is not None:
            for k, constants in ((i, (*SERVE_LAUNCHERS, "exec", "nohup", "env")), (i + 1, ("-m", "serve")),
                                 (i + 2, tuple(self.modules))):
                if k < len(words):
                    self.compare(words[k], constants)
        launcher: int | None = None
        if i + 2 < len(words) + 1 and len(words) > i + 2 and words[i + 1] == "-m" and words[i + 2] in self.modules:
            launcher = i + 3
        elif len(words) > i + 1 and words[i] in SERVE_LAUNCHERS and words[i + 1] == "serve":
            launcher = i + 2
        if launcher is None:
            return
        env: dict[str, tuple[Val, int]] = {}
        for name, line in self.state.exported.items():
            env[name] = (self.state.vars.get(name, ""), line)
        for name, _append, scalar, _elems, line in cmd.assigns:
            if scalar is not None:
                vals = self.expand(scalar)
                env[name] = (_concat([v for v, _ in vals], line, scalar.raw) if vals else "", line)
        self.found.append(_Found(fields[i:], env, cmd.line))


def _distinct(symbol: str | None, *values: Any) -> None:
    """Two values found different: with a stand-in in either, the values it stands for might not be."""
    if symbol is not None and any(isinstance(v, str) and _MARK in v for v in values):
        raise _Tainted


def _launch_key(found: list[_Found]) -> list[tuple[str, ...]]:
    return [tuple(repr(v) for v, _ in f.words) for f in found]


def _merge(a: _State, b: _State, line: int, reason: str, symbol: str | None = None) -> _State:
    out = a.copy()
    for name in set(a.vars) | set(b.vars):
        if a.vars.get(name) != b.vars.get(name):
            _distinct(symbol, a.vars.get(name), b.vars.get(name))
            out.vars[name] = Unresolved(line, reason)
    for name in set(a.arrays) | set(b.arrays):
        if a.arrays.get(name) != b.arrays.get(name):
            _distinct(symbol, repr(a.arrays.get(name)), repr(b.arrays.get(name)))
            out.arrays[name] = [(Unresolved(line, reason), line)]
            out.vars.pop(name, None)
    for name in set(a.exported) | set(b.exported):
        if name not in a.exported or name not in b.exported:
            out.exported[name] = line
            out.vars[name] = Unresolved(line, reason)
    return out


@lru_cache(maxsize=4096)
def _arith_value(expr: str) -> str | None:
    """The value of an integer expression whose variables are already substituted, or None."""
    try:
        return str(_safe_int(ast.parse(expr, mode="eval").body))
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _safe_int(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _safe_int(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _safe_int(node.left), _safe_int(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.FloorDiv):
            q = abs(left) // abs(right)
            return q if (left >= 0) == (right >= 0) else -q
        if isinstance(node.op, ast.Mod):
            r = abs(left) % abs(right)
            return r if left >= 0 else -r
    raise ValueError("unsupported arithmetic")


_INT_OPS = {"-eq": int.__eq__, "-ne": int.__ne__, "-gt": int.__gt__, "-ge": int.__ge__,
            "-lt": int.__lt__, "-le": int.__le__}


def _test_expr(args: list[Val]) -> bool | None:
    """Evaluate `[ ... ]` / `[[ ... ]]` arguments (three-valued: None = cannot be decided)."""
    for op in ("||", "-o"):
        if op in args:
            k = args.index(op)
            left, right = _test_expr(args[:k]), _test_expr(args[k + 1:])
            if left is True or right is True:
                return True
            return None if left is None or right is None else False
    for op in ("&&", "-a"):
        if op in args:
            k = args.index(op)
            left, right = _test_expr(args[:k]), _test_expr(args[k + 1:])
            if left is False or right is False:
                return False
            return None if left is None or right is None else True
    if args and args[0] == "!":
        inner = _test_expr(args[1:])
        return None if inner is None else not inner
    if len(args) >= 2 and args[0] == "(" and args[-1] == ")":
        return _test_expr(args[1:-1])
    if any(not isinstance(a, str) for a in args):
        return None
    strs = [a for a in args if isinstance(a, str)]
    if len(strs) == 1:
        return strs[0] != ""
    if len(strs) == 2:
        op, value = strs
        if op == "-n":
            return value != ""
        if op == "-z":
            return value == ""
        return None
    if len(strs) == 3:
        left, op, right = strs
        if op in ("=", "=="):
            return None if any(c in right for c in "*?[") else left == right
        if op == "!=":
            return None if any(c in right for c in "*?[") else left != right
        if op in _INT_OPS:
            try:
                return bool(_INT_OPS[op](int(left), int(right)))
            except ValueError:
                return None
    return None


@lru_cache(maxsize=512)
def parse_script(text: str) -> list[AndOr]:
    """The parsed command list of a script, read once per distinct text (the evaluator never changes
    it: one script serves every point of a config, with a different environment each time)."""
    parser = _Parser(tokenize(text))
    body = parser.parse_list()
    if parser.i < len(parser.toks):
        t = parser.toks[parser.i]
        raise ScriptUnresolved("unexpected token", t.line)
    return body


@lru_cache(maxsize=1024)
def _quoted_words(text: str) -> list[Word]:
    """The words of a default value (`${X:-text}`) read as a double-quoted string, once per text."""
    toks = tokenize('"' + text.replace('"', '\\"') + '"')
    return [t.word for t in toks if t.kind == "word" and t.word is not None]


def evaluate_script(text: str, env: Mapping[str, str], modules: Iterable[str] = DEFAULT_MODULES,
                    functions: Mapping[str, tuple[str, str, str]] | None = None) -> ScriptLaunch:
    """Statically evaluate a launcher script with the given launcher environment.

    `functions` names library functions whose exit status is known: `name -> (VAR, op, value)`
    means the call succeeds exactly when `[ "$VAR" op value ]` holds; any other command is unknown.

    Returns the server command (the last one the script runs). Raises `ScriptUnresolved` (with the
    line) when the script cannot be parsed, runs no server command, or the command depends on a
    branch or value a static reading cannot decide.

    The points of one config differ mostly in their concurrency, which a script usually only passes
    on (`--max-concurrency "$CONC"`). So the script is first evaluated once with a stand-in for
    `$CONC` (`_SYMBOL`), cached per script text and remaining environment, and the point's value
    is put in its place; if the stand-in ever decides anything (a test, arithmetic, a branch merge,
    the command name), that evaluation is dropped and the script is evaluated with the real value.
    """
    if len(text) > MAX_SCRIPT_CHARS:
        raise ScriptUnresolved(f"script larger than {MAX_SCRIPT_CHARS} characters", None)
    value = env.get(SYMBOLIC_VAR)
    if isinstance(value, str) and value.isdigit() and _SYMBOL[0] not in text:
        symbolic = {**{k: str(v) for k, v in env.items()}, SYMBOLIC_VAR: _SYMBOL}
        template = _symbolic(text, tuple(sorted(symbolic.items())), tuple(modules),
                             tuple(sorted((functions or {}).items())))
        if isinstance(template, ScriptUnresolved):
            raise ScriptUnresolved(template.message, template.line)
        launch = _with_value(*template, value) if template is not None else None
        if launch is not None:
            return launch
    return _evaluate(text, env, modules, functions)


SYMBOLIC_VAR = "CONC"
_MARK, _END = "\U000f8888", "\U000f8889"  # private-use characters: in no script, no environment value
_SYMBOL = f"{_MARK}CONC{_END}"
_TOKENS = re.compile(f"({_MARK}[^{_END}]*{_END})")  # the stand-in, and deferred arithmetic results
_BUILTINS = ("[", "test", "[[", "true", ":", "false", "!", "exit", "set", "shift", "unset", "echo", "printf",
             "mkdir", "cd")


@lru_cache(maxsize=512)
def _symbolic(text: str, env: tuple[tuple[str, str], ...], modules: tuple[str, ...],
              functions: tuple[tuple[str, tuple[str, str, str]], ...]
              ) -> tuple[ScriptLaunch, tuple[tuple[str, str], ...]] | ScriptUnresolved | None:
    """The launch with `_SYMBOL` for `$CONC` and its deferred arithmetic (expression, stand-in), the
    refusal, or None when a stand-in decided something."""
    deferred: dict[str, str] = {}
    try:
        launch = _evaluate(text, dict(env), modules, dict(functions), symbol=_SYMBOL, deferred=deferred)
    except ScriptUnresolved as exc:
        return exc
    except _Tainted:
        return None
    return launch, tuple(deferred.items())


def _with_value(launch: ScriptLaunch, deferred: tuple[tuple[str, str], ...], value: str) -> ScriptLaunch | None:
    """The launch for one value of `$CONC` (None when a deferred result is no integer for it)."""
    results = {}
    for expression, token in deferred:
        result = _arith_value(expression.replace(_SYMBOL, value))
        if result is None:
            return None
        results[token] = result

    def put(text: str) -> str:
        text = text.replace(_SYMBOL, value)
        for token, result in results.items():
            text = text.replace(token, result)
        return text

    return ScriptLaunch(tuple(map(put, launch.launcher)), put(launch.module), tuple(map(put, launch.argv)),
                        launch.argv_lines, {k: put(v) for k, v in launch.env.items()}, dict(launch.env_lines),
                        launch.line, tuple((put(t), ln) for t, ln in launch.opaque), dict(launch.unresolved_env))


def _evaluate(text: str, env: Mapping[str, str], modules: Iterable[str],
              functions: Mapping[str, tuple[str, str, str]] | None, symbol: str | None = None,
              deferred: dict[str, str] | None = None) -> ScriptLaunch:
    ev = _Evaluator(env, modules, functions, symbol)
    if deferred is not None:
        ev.deferred = deferred
    ev.run(parse_script(text))
    if not ev.found:
        raise ScriptUnresolved("the script runs no recognised server command", None)
    found = ev.found[-1]
    head: list[str] = []
    module = ""
    for k, (value, _line) in enumerate(found.words):
        if value == "-m" and k + 1 < len(found.words):
            module = str(found.words[k + 1][0])
            head = [v.text if isinstance(v, Opaque) else str(v) for v, _ in found.words[:k + 2]]
            rest = found.words[k + 2:]
            break
    else:
        head = [str(found.words[0][0]), "serve"]
        module = SERVE_LAUNCHERS.get(head[0], head[0])
        rest = found.words[2:]
    argv: list[str] = []
    lines: list[int] = []
    opaque: list[tuple[str, int]] = []
    for value, line in rest:
        if isinstance(value, Unresolved):
            raise ScriptUnresolved(f"a server argument written on line {line} depends on {value.reason} "
                                   f"(line {value.line})", value.line)
        if isinstance(value, Opaque):
            opaque.append((value.text, line))
            value = value.text
        argv.append(value)
        lines.append(line)
    env_out: dict[str, str] = {}
    env_lines: dict[str, int] = {}
    unresolved_env: dict[str, int] = {}
    for name, (value, line) in found.env.items():
        if isinstance(value, Unresolved):
            unresolved_env[name] = value.line
            continue
        env_out[name] = value.text if isinstance(value, Opaque) else value
        env_lines[name] = line
    return ScriptLaunch(tuple(head), module, tuple(argv), tuple(lines), env_out, env_lines, found.line,
                        tuple(opaque), unresolved_env)


_SOURCE_LINE = re.compile(
    r'^\s*(?:source|\.)\s+"?\$\(dirname\s+"?\$(?:0|\{BASH_SOURCE\[0\]\}|BASH_SOURCE)"?\)"?/([\w./-]+)"?')


def sourced_libraries(path: str, text: str) -> list[tuple[str, int]]:
    """Repository paths (and lines) of the libraries a script `source`s relative to its own folder
    (`source "$(dirname "$0")/../../benchmark_lib.sh"`), read statically, never executed."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    out: list[tuple[str, int]] = []
    for number, line in enumerate(text.split("\n"), 1):
        match = _SOURCE_LINE.match(line)
        if match:
            target = posixpath.normpath(posixpath.join(folder, match.group(1)))
            if not target.startswith(".."):
                out.append((target, number))
    return out
