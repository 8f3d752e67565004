"""Tokenizer and parser of the static shell reader (bash subset; never executes anything).

Supported: words with single/double quotes, escapes, `$NAME`, `${...}`, `$(...)`, backticks,
`$((...))`; comments; line continuations; here-documents (bodies kept) and here-strings;
redirections (targets kept, never opened); `;`, `&`, `&&`, `||`, `|`, `!`; `if/elif/else/fi`,
`for ... in`, `while`/`until`, `case ... esac`, `{ ...; }`, `( ... )`, `((...))`, `[[ ... ]]`,
function definitions (`f() {...}`, `function f {...}`), array assignments `A=(...)` / `A+=(...)`.
A construct outside this subset raises ShellSyntaxError naming its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

MAX_SCRIPT_CHARS = 1_000_000
MAX_TOKENS = 400_000
MAX_DEPTH = 200

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")
_SPECIAL = "@*#?$!-0123456789"
_KEYWORDS_END = {"then", "do", "done", "fi", "elif", "else", "esac", "}"}
_DECLARERS = {"export", "declare", "local", "readonly", "typeset"}


class ShellSyntaxError(Exception):
    """The script uses a construct the reader does not parse; names the line."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class Word:
    """One shell word: parts are (kind, payload, quoted); kind lit | var | cmd | arith."""

    parts: list[tuple[str, str, bool]]
    line: int
    raw: str
    start: int = 0  # offset of the word in the text it was read from

    def literal(self) -> str | None:
        """The word's text when it has no expansions."""
        if all(kind == "lit" for kind, _, _ in self.parts):
            return "".join(p for _, p, _ in self.parts)
        return None

    @property
    def quoted(self) -> bool:
        """True when any part was quoted."""
        return any(q for _, _, q in self.parts)


@dataclass
class Tok:
    kind: str  # word | op | arr | arith | heredoc
    line: int
    word: Word | None = None
    op: str = ""
    name: str = ""
    append: bool = False
    index: str | None = None
    items: list[Word] = field(default_factory=list)
    body: str = ""


# ------------------------------------------------------------------------------------------ lexer


def _close(text: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching an `open_` at text[i-1] (quotes and nesting respected)."""
    depth = 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'" and open_ != "{":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if ch == "'" and open_ == "{":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "`":
            j = text.find("`", i + 1)
            i = n if j < 0 else j + 1
            continue
        if ch == "$" and i + 1 < n and text[i + 1] in "({":
            i = _close(text, i + 2, text[i + 1], ")" if text[i + 1] == "(" else "}")
            continue
        if ch == open_:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ShellSyntaxError(f"unbalanced {open_!r}", None)


class _Lexer:
    def __init__(self, text: str, first_line: int = 1) -> None:
        if len(text) > MAX_SCRIPT_CHARS:
            raise ShellSyntaxError(f"script is over {MAX_SCRIPT_CHARS} characters", None)
        self.text = text.replace("\r\n", "\n") if "\r" in text else text
        self.i = 0
        self.line = first_line
        self.toks: list[Tok] = []
        self.pending_heredocs: list[tuple[Tok, str, bool]] = []
        self._at = 0  # line_at: the last position counted and its line
        self._at_line = first_line
        self._first = first_line

    def line_at(self, i: int) -> int:
        if i < self._at:
            self._at, self._at_line = 0, self._first
        self._at_line += self.text.count("\n", self._at, i)
        self._at = i
        return self._at_line

    def emit(self, tok: Tok) -> None:
        self.toks.append(tok)
        if len(self.toks) > MAX_TOKENS:
            raise ShellSyntaxError("script has too many tokens", tok.line)

    def at_command_start(self) -> bool:
        if not self.toks:
            return True
        last = self.toks[-1]
        if last.kind == "op":
            return last.op in (";", "&", "&&", "||", "|", "(", "\n", ";;")
        if last.kind == "word" and last.word is not None:
            return last.word.literal() in ("if", "then", "elif", "else", "do", "while", "until", "!", "{", "for")
        return False

    def run(self) -> list[Tok]:
        text, n = self.text, len(self.text)
        while self.i < n:
            ch = text[self.i]
            if ch == "\\" and self.i + 1 < n and text[self.i + 1] == "\n":
                self.i += 2
                continue
            if ch in " \t":
                self.i += 1
                continue
            if ch == "#":
                j = text.find("\n", self.i)
                self.i = n if j < 0 else j
                continue
            if ch == "\n":
                self.emit(Tok("op", self.line_at(self.i), op="\n"))
                self.i += 1
                self.read_heredocs()
                continue
            if ch == "(" and text.startswith("((", self.i) and self.at_command_start():
                end = _close(text, self.i + 1, "(", ")")
                self.emit(Tok("arith", self.line_at(self.i), body=text[self.i + 2:end - 2]))
                self.i = end
                continue
            op = self.operator()
            if op:
                continue
            self.word()
        self.emit(Tok("op", self.line_at(n), op="\n"))
        return self.toks

    def operator(self) -> bool:
        text, i = self.text, self.i
        line = self.line_at(i)
        m = re.match(r"(\d*)(<<<|<<-|<<|>>|&>>|&>|>&|<&|>\||<>|>|<)", text[i:])
        if m and not (m.group(2) in ("<", ">") and text[i + len(m.group(0)):i + len(m.group(0)) + 1] == "("):
            self.i += len(m.group(0))
            kind = m.group(2)
            if kind in ("<<", "<<-"):
                tok = Tok("heredoc", line, op=kind)
                self.emit(tok)
                while self.i < len(text) and text[self.i] in " \t":
                    self.i += 1
                start = self.i
                self.word()
                delim_tok = self.toks.pop()
                raw = text[start:self.i]
                delim = (delim_tok.word.literal() if delim_tok.word else None) or raw.strip("'\"")
                quoted = any(q in raw for q in "'\"\\")
                self.pending_heredocs.append((tok, delim, kind == "<<-" or quoted))
                tok.name = delim
                tok.append = quoted
                return True
            self.emit(Tok("op", line, op="redir:" + kind, name=m.group(1)))
            # a redirection target like &1 / &2 / - is part of the operator
            if kind in (">&", "<&") or text.startswith("&", self.i):
                mm = re.match(r"&?(\d+|-)", text[self.i:])
                if mm:
                    self.i += len(mm.group(0))
                    self.toks[-1].op += ":fd"
            return True
        for op in (";;", "&&", "||", ";", "&", "|", "(", ")"):
            if text.startswith(op, i):
                self.emit(Tok("op", line, op=op))
                self.i += len(op)
                return True
        return False

    def read_heredocs(self) -> None:
        text = self.text
        for tok, delim, strip_tabs in self.pending_heredocs:
            lines: list[str] = []
            while self.i < len(text):
                j = text.find("\n", self.i)
                end = len(text) if j < 0 else j
                line = text[self.i:end]
                self.i = end + 1 if j >= 0 else end
                check = line.lstrip("\t") if tok.op == "<<-" else line
                if check == delim:
                    break
                lines.append(line)
            tok.body = "\n".join(lines) + ("\n" if lines else "")
            _ = strip_tabs
        self.pending_heredocs = []

    def word(self) -> None:
        text, n = self.text, len(self.text)
        start = self.i
        line = self.line_at(start)
        parts: list[tuple[str, str, bool]] = []
        lit = ""

        def flush(quoted: bool = False) -> None:
            nonlocal lit
            if lit:
                parts.append(("lit", lit, quoted))
                lit = ""

        while self.i < n:
            ch = text[self.i]
            if ch in " \t\n;&|()<>":
                if ch in "<>" and self.i + 1 < n and text[self.i + 1] == "(":  # process substitution
                    flush()
                    end = _close(text, self.i + 2, "(", ")")
                    parts.append(("cmd", text[self.i + 2:end - 1], False))
                    self.i = end
                    continue
                if ch == "(" and lit.endswith("=") and _ASSIGN.match(lit) and len(parts) == 0:
                    m = _ASSIGN.match(lit)
                    assert m is not None
                    self.array(m.group(1), m.group(3) == "+", m.group(2), line)
                    return
                break
            if ch == "\\":
                if self.i + 1 < n and text[self.i + 1] == "\n":
                    self.i += 2
                    continue
                flush()
                if self.i + 1 < n:
                    parts.append(("lit", text[self.i + 1], True))
                self.i += 2
                continue
            if ch == "'":
                flush()
                j = text.find("'", self.i + 1)
                if j < 0:
                    raise ShellSyntaxError("unterminated single quote", line)
                parts.append(("lit", text[self.i + 1:j], True))
                self.i = j + 1
                continue
            if ch == '"':
                flush()
                self.double_quoted(parts, line)
                continue
            if ch == "$" and text.startswith("$'", self.i):
                flush()
                j = self.i + 2
                buf = ""
                while j < n and text[j] != "'":
                    if text[j] == "\\" and j + 1 < n:
                        buf += {"n": "\n", "t": "\t", "\\": "\\", "'": "'"}.get(text[j + 1], text[j + 1])
                        j += 2
                        continue
                    buf += text[j]
                    j += 1
                parts.append(("lit", buf, True))
                self.i = j + 1
                continue
            if ch == "$" or ch == "`":
                flush()
                self.dollar(parts, False, line)
                continue
            lit += ch
            self.i += 1
        flush()
        raw = text[start:self.i]
        self.emit(Tok("word", line, word=Word(parts, line, raw, start)))

    def double_quoted(self, parts: list[tuple[str, str, bool]], line: int) -> None:
        text, n = self.text, len(self.text)
        self.i += 1
        buf = ""
        first = len(parts)
        while self.i < n and text[self.i] != '"':
            ch = text[self.i]
            if ch == "\\" and self.i + 1 < n:
                nxt = text[self.i + 1]
                if nxt == "\n":
                    self.i += 2
                    continue
                if nxt in '"\\$`':
                    buf += nxt
                    self.i += 2
                    continue
                buf += ch
                self.i += 1
                continue
            if ch in "$`":
                if ch == "$" and (self.i + 1 >= n or not (text[self.i + 1] in "({" or _NAME.match(text[self.i + 1])
                                                        or text[self.i + 1] in _SPECIAL)):
                    buf += ch
                    self.i += 1
                    continue
                if buf:
                    parts.append(("lit", buf, True))
                    buf = ""
                self.dollar(parts, True, line)
                continue
            buf += ch
            self.i += 1
        if self.i >= n:
            raise ShellSyntaxError("unterminated double quote", line)
        if buf or len(parts) == first:  # "" is an empty word; "$X" adds nothing more
            parts.append(("lit", buf, True))
        self.i += 1

    def dollar(self, parts: list[tuple[str, str, bool]], quoted: bool, line: int) -> None:
        text, n = self.text, len(self.text)
        ch = text[self.i]
        if ch == "`":
            j = self.i + 1
            while j < n and text[j] != "`":
                j += 2 if text[j] == "\\" else 1
            parts.append(("cmd", text[self.i + 1:j], quoted))
            self.i = j + 1
            return
        nxt = text[self.i + 1] if self.i + 1 < n else ""
        if text.startswith("$((", self.i):
            inner_end = _close(text, self.i + 3, "(", ")")  # just past the `)` closing the inner `(`
            if inner_end < n and text[inner_end] == ")":
                parts.append(("arith", text[self.i + 3:inner_end - 1], quoted))
                self.i = inner_end + 1
                return
            end = _close(text, self.i + 2, "(", ")")
            parts.append(("cmd", text[self.i + 2:end - 1], quoted))
            self.i = end
            return
        if nxt == "(":
            try:
                end = _close(text, self.i + 2, "(", ")")
            except ShellSyntaxError:
                raise ShellSyntaxError("unbalanced $(", line) from None
            parts.append(("cmd", text[self.i + 2:end - 1], quoted))
            self.i = end
            return
        if nxt == "{":
            try:
                end = _close(text, self.i + 2, "{", "}")
            except ShellSyntaxError:
                raise ShellSyntaxError("unbalanced ${", line) from None
            parts.append(("var", text[self.i + 2:end - 1], quoted))
            self.i = end
            return
        m = _NAME.match(text, self.i + 1)
        if m:
            parts.append(("var", m.group(0), quoted))
            self.i = m.end()
            return
        if nxt and nxt in _SPECIAL:
            parts.append(("var", nxt, quoted))
            self.i += 2
            return
        parts.append(("lit", "$", quoted))
        self.i += 1

    def array(self, name: str, append: bool, index: str | None, line: int) -> None:
        text, n = self.text, len(self.text)
        self.i += 1  # past "("
        items: list[Word] = []
        while self.i < n:
            ch = text[self.i]
            if ch in " \t\n":
                self.i += 1
                continue
            if ch == "\\" and self.i + 1 < n and text[self.i + 1] == "\n":
                self.i += 2
                continue
            if ch == "#":
                j = text.find("\n", self.i)
                self.i = n if j < 0 else j
                continue
            if ch == ")":
                self.i += 1
                self.emit(Tok("arr", line, name=name, append=append, index=index, items=items))
                return
            before = len(self.toks)
            self.word()
            tok = self.toks.pop()
            if len(self.toks) != before or tok.word is None:
                raise ShellSyntaxError("unexpected token in an array", line)
            items.append(tok.word)
        raise ShellSyntaxError("unterminated array", line)


def tokenize(text: str, first_line: int = 1) -> list[Tok]:
    """The script's tokens (newlines kept as `\\n` operators); lines count from `first_line`."""
    return _Lexer(text, first_line).run()


# ----------------------------------------------------------------------------------------- parser


@dataclass
class Redir:
    op: str
    target: Word | None
    body: str = ""  # here-document body (quoted delimiter: not expanded)
    expand: bool = True
    fd: str = ""  # the file descriptor written before the operator (`2>`), "" when none
    dup: bool = False  # the target is a descriptor (`>&2`, `2>&1`)


@dataclass
class Simple:
    line: int
    assigns: list[Tok]  # word tokens NAME=.. or arr tokens
    words: list[Word]
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class AndOr:
    line: int
    pipes: list[Pipeline]
    ops: list[str]  # between pipes: && or ||
    background: bool = False


@dataclass
class Pipeline:
    line: int
    cmds: list[Node]
    negate: bool = False


@dataclass
class If:
    line: int
    clauses: list[tuple[list[AndOr], list[AndOr]]]
    orelse: list[AndOr] | None


@dataclass
class For:
    line: int
    var: str
    items: list[Word] | None  # None: "$@"
    body: list[AndOr]


@dataclass
class While:
    line: int
    cond: list[AndOr]
    body: list[AndOr]
    until: bool = False


@dataclass
class Case:
    line: int
    subject: Word
    arms: list[tuple[list[Word], list[AndOr]]]


@dataclass
class Group:
    line: int
    body: list[AndOr]
    subshell: bool = False
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class FuncDef:
    line: int
    name: str
    body: Node


@dataclass
class Arith:
    line: int
    expr: str


@dataclass
class Test:
    """`[[ ... ]]`: the words and operators between the brackets."""

    line: int
    items: list[Word | str]


Node = Simple | If | For | While | Case | Group | FuncDef | Arith | Test


class _Parser:
    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0
        self.depth = 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def is_word(self, tok: Tok | None, *names: str) -> bool:
        return tok is not None and tok.kind == "word" and tok.word is not None and tok.word.literal() in names \
            and not tok.word.quoted

    def is_op(self, tok: Tok | None, *ops: str) -> bool:
        return tok is not None and tok.kind == "op" and tok.op in ops

    def skip_nl(self) -> None:
        while self.is_op(self.peek(), "\n", ";"):
            self.i += 1

    def expect_word(self, name: str) -> None:
        self.skip_nl()
        tok = self.peek()
        if not self.is_word(tok, name):
            raise ShellSyntaxError(f"expected {name!r}", tok.line if tok else None)
        self.i += 1

    def parse_list(self, stop: tuple[str, ...] = ()) -> list[AndOr]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ShellSyntaxError("script nests too deeply", self.peek().line if self.peek() else None)
        out: list[AndOr] = []
        while True:
            while self.is_op(self.peek(), "\n", ";", "&"):
                self.i += 1
            tok = self.peek()
            if tok is None:
                break
            if self.is_word(tok, *stop) or self.is_op(tok, ")", ";;") and (")" in stop or ";;" in stop):
                break
            if tok.kind == "word" and stop and self.is_word(tok, *_KEYWORDS_END) and tok.word.literal() not in stop:
                raise ShellSyntaxError(f"unexpected {tok.word.literal()!r}", tok.line)
            out.append(self.parse_andor(stop))
        self.depth -= 1
        return out

    def parse_andor(self, stop: tuple[str, ...]) -> AndOr:
        first = self.peek()
        line = first.line if first else 0
        pipes = [self.parse_pipeline(stop)]
        ops: list[str] = []
        while self.is_op(self.peek(), "&&", "||"):
            ops.append(self.peek().op)  # type: ignore[union-attr]
            self.i += 1
            while self.is_op(self.peek(), "\n"):
                self.i += 1
            pipes.append(self.parse_pipeline(stop))
        background = False
        if self.is_op(self.peek(), "&"):
            background = True
            self.i += 1
        return AndOr(line, pipes, ops, background)

    def parse_pipeline(self, stop: tuple[str, ...]) -> Pipeline:
        negate = False
        tok = self.peek()
        line = tok.line if tok else 0
        if self.is_word(tok, "!"):
            negate = True
            self.i += 1
        cmds = [self.parse_command(stop)]
        while self.is_op(self.peek(), "|"):
            self.i += 1
            while self.is_op(self.peek(), "\n"):
                self.i += 1
            cmds.append(self.parse_command(stop))
        return Pipeline(line, cmds, negate)

    def redirs(self) -> list[Redir]:
        out: list[Redir] = []
        while True:
            tok = self.peek()
            if tok is not None and tok.kind == "heredoc":
                self.i += 1
                out.append(Redir(tok.op, None, tok.body, not tok.append))
                continue
            if tok is not None and tok.kind == "op" and tok.op.startswith("redir:"):
                self.i += 1
                target = None
                if not tok.op.endswith(":fd"):
                    nxt = self.peek()
                    if nxt is None or nxt.kind != "word":
                        raise ShellSyntaxError("redirection without a target", tok.line)
                    target = nxt.word
                    self.i += 1
                out.append(Redir(tok.op.split(":")[1], target, fd=tok.name, dup=tok.op.endswith(":fd")))
                continue
            return out

    def parse_command(self, stop: tuple[str, ...]) -> Node:
        tok = self.peek()
        if tok is None:
            raise ShellSyntaxError("unexpected end of script", None)
        if tok.kind == "arith":
            self.i += 1
            self.redirs()
            return Arith(tok.line, tok.body)
        if self.is_word(tok, "if"):
            node: Node = self.parse_if()
        elif self.is_word(tok, "for"):
            node = self.parse_for()
        elif self.is_word(tok, "while", "until"):
            node = self.parse_while()
        elif self.is_word(tok, "case"):
            node = self.parse_case()
        elif self.is_word(tok, "{"):
            self.i += 1
            body = self.parse_list(("}",))
            self.expect_word("}")
            node = Group(tok.line, body)
        elif self.is_op(tok, "("):
            self.i += 1
            body = self.parse_list((")",))
            self.skip_nl()
            if not self.is_op(self.peek(), ")"):
                raise ShellSyntaxError("unterminated subshell", tok.line)
            self.i += 1
            node = Group(tok.line, body, subshell=True)
        elif self.is_word(tok, "[["):
            node = self.parse_test()
        elif self.is_word(tok, "function"):
            self.i += 1
            name_tok = self.peek()
            if name_tok is None or name_tok.kind != "word" or name_tok.word is None:
                raise ShellSyntaxError("function without a name", tok.line)
            self.i += 1
            if self.is_op(self.peek(), "(") and self.is_op(self.toks[self.i + 1], ")"):
                self.i += 2
            while self.is_op(self.peek(), "\n"):
                self.i += 1
            return FuncDef(tok.line, name_tok.word.literal() or "", self.parse_command(stop))
        elif (tok.kind == "word" and tok.word is not None and tok.word.literal() and _NAME.fullmatch(
                tok.word.literal() or "") and self.i + 2 < len(self.toks) and self.is_op(self.toks[self.i + 1], "(")
              and self.is_op(self.toks[self.i + 2], ")")):
            self.i += 3
            while self.is_op(self.peek(), "\n"):
                self.i += 1
            return FuncDef(tok.line, tok.word.literal() or "", self.parse_command(stop))
        else:
            return self.parse_simple(stop)
        if isinstance(node, Group):
            node.redirs = self.redirs()
        else:
            self.redirs()
        return node

    def parse_test(self) -> Test:
        start = self.peek()
        assert start is not None
        self.i += 1
        items: list[Word | str] = []
        while True:
            tok = self.peek()
            if tok is None:
                raise ShellSyntaxError("unterminated [[", start.line)
            self.i += 1
            if tok.kind == "word" and tok.word is not None:
                if tok.word.literal() == "]]" and not tok.word.quoted:
                    return Test(start.line, items)
                items.append(tok.word)
            elif tok.kind == "op" and tok.op in ("&&", "||", "(", ")"):
                items.append(tok.op)
            elif tok.kind == "op" and tok.op.startswith("redir:") and tok.op.split(":")[1] in ("<", ">"):
                items.append(tok.op.split(":")[1])
            elif tok.kind == "op" and tok.op == "\n":
                continue
            else:
                raise ShellSyntaxError("unsupported token in [[ ]]", tok.line)

    def parse_if(self) -> If:
        start = self.peek()
        assert start is not None
        self.i += 1
        clauses = []
        cond = self.parse_list(("then",))
        self.expect_word("then")
        body = self.parse_list(("elif", "else", "fi"))
        clauses.append((cond, body))
        orelse = None
        while True:
            self.skip_nl()
            tok = self.peek()
            if self.is_word(tok, "elif"):
                self.i += 1
                cond = self.parse_list(("then",))
                self.expect_word("then")
                body = self.parse_list(("elif", "else", "fi"))
                clauses.append((cond, body))
            elif self.is_word(tok, "else"):
                self.i += 1
                orelse = self.parse_list(("fi",))
            elif self.is_word(tok, "fi"):
                self.i += 1
                return If(start.line, clauses, orelse)
            else:
                raise ShellSyntaxError("unterminated if", start.line)

    def parse_for(self) -> Node:
        start = self.peek()
        assert start is not None
        self.i += 1
        tok = self.peek()
        if tok is not None and tok.kind == "arith":  # for ((...)): not evaluated
            self.i += 1
            self.skip_nl()
            self.expect_word("do")
            body = self.parse_list(("done",))
            self.expect_word("done")
            return While(start.line, [], body)
        if tok is None or tok.kind != "word" or tok.word is None or not tok.word.literal():
            raise ShellSyntaxError("for without a variable", start.line)
        var = tok.word.literal() or ""
        self.i += 1
        items: list[Word] | None = None
        while self.is_op(self.peek(), "\n"):
            self.i += 1
        if self.is_word(self.peek(), "in"):
            self.i += 1
            items = []
            while True:
                tok = self.peek()
                if tok is None or tok.kind != "word" or tok.word is None:
                    break
                items.append(tok.word)
                self.i += 1
        self.skip_nl()
        self.expect_word("do")
        body = self.parse_list(("done",))
        self.expect_word("done")
        return For(start.line, var, items, body)

    def parse_while(self) -> While:
        start = self.peek()
        assert start is not None and start.word is not None
        until = start.word.literal() == "until"
        self.i += 1
        cond = self.parse_list(("do",))
        self.expect_word("do")
        body = self.parse_list(("done",))
        self.expect_word("done")
        return While(start.line, cond, body, until)

    def parse_case(self) -> Case:
        start = self.peek()
        assert start is not None
        self.i += 1
        subject = self.peek()
        if subject is None or subject.kind != "word" or subject.word is None:
            raise ShellSyntaxError("case without a subject", start.line)
        self.i += 1
        while self.is_op(self.peek(), "\n"):
            self.i += 1
        if not self.is_word(self.peek(), "in"):
            raise ShellSyntaxError("expected 'in'", start.line)
        self.i += 1
        arms: list[tuple[list[Word], list[AndOr]]] = []
        while True:
            self.skip_nl()
            tok = self.peek()
            if tok is None:
                raise ShellSyntaxError("unterminated case", start.line)
            if self.is_word(tok, "esac"):
                self.i += 1
                return Case(start.line, subject.word, arms)
            if self.is_op(tok, "("):
                self.i += 1
            patterns: list[Word] = []
            while True:
                tok = self.peek()
                if tok is None or tok.kind != "word" or tok.word is None:
                    raise ShellSyntaxError("bad case pattern", start.line)
                patterns.append(tok.word)
                self.i += 1
                if self.is_op(self.peek(), "|"):
                    self.i += 1
                    continue
                if self.is_op(self.peek(), ")"):
                    self.i += 1
                    break
                raise ShellSyntaxError("bad case pattern", tok.line)
            body = self.parse_list(("esac", ";;"))
            if self.is_op(self.peek(), ";;"):
                self.i += 1
            arms.append((patterns, body))

    def parse_simple(self, stop: tuple[str, ...]) -> Simple:
        tok = self.peek()
        assert tok is not None
        line = tok.line
        assigns: list[Tok] = []
        words: list[Word] = []
        redirs: list[Redir] = []
        while True:
            tok = self.peek()
            if tok is None:
                break
            if tok.kind == "heredoc" or tok.kind == "op" and tok.op.startswith("redir:"):
                redirs.extend(self.redirs())
                continue
            if tok.kind == "arr" and (not words or words[0].literal() in _DECLARERS):
                assigns.append(tok)
                self.i += 1
                continue
            if tok.kind != "word" or tok.word is None:
                break
            if not words and tok.word.parts and tok.word.parts[0][0] == "lit" and not tok.word.parts[0][2] \
                    and _ASSIGN.match(tok.word.parts[0][1]):
                assigns.append(tok)
            else:
                if not words and self.is_word(tok, *_KEYWORDS_END):
                    raise ShellSyntaxError(f"unexpected {tok.word.literal()!r}", tok.line)
                words.append(tok.word)
            self.i += 1
        if not assigns and not words and not redirs:
            bad = self.peek()
            raise ShellSyntaxError(f"unexpected {bad.op if bad and bad.kind == 'op' else 'token'!r}",
                                   bad.line if bad else line)
        return Simple(line, assigns, words, redirs)


def parse(text: str, path: str = "", first_line: int = 1) -> list[AndOr]:
    """The syntax tree of a script; raises ShellSyntaxError naming the line of a construct it cannot read.

    Trees are cached by text (a runner script is read once per point); callers never change them.
    `first_line`: the line the text starts on (a command substitution inside a script).
    """
    _ = path
    return _parse_cached(text, first_line)


@lru_cache(maxsize=1024)
def _parse_cached(text: str, first_line: int) -> list[AndOr]:
    parser = _Parser(tokenize(text, first_line))
    body = parser.parse_list()
    if parser.peek() is not None:
        tok = parser.peek()
        assert tok is not None
        raise ShellSyntaxError(f"unexpected {tok.op or 'token'!r}", tok.line)
    return body


def operand_word(text: str, line: int) -> Word:
    """The word of a parameter-expansion operand (`${X:-<operand>}`): whitespace is literal."""
    lx = _Lexer(text)
    parts: list[tuple[str, str, bool]] = []
    buf = ""
    n = len(text)
    while lx.i < n:
        ch = text[lx.i]
        if ch == "'":
            if buf:
                parts.append(("lit", buf, False))
                buf = ""
            j = text.find("'", lx.i + 1)
            j = n if j < 0 else j
            parts.append(("lit", text[lx.i + 1:j], True))
            lx.i = j + 1
            continue
        if ch == '"':
            if buf:
                parts.append(("lit", buf, False))
                buf = ""
            lx.double_quoted(parts, line)
            continue
        if ch == "\\" and lx.i + 1 < n:
            buf += text[lx.i + 1]
            lx.i += 2
            continue
        if ch in "$`":
            if buf:
                parts.append(("lit", buf, False))
                buf = ""
            lx.dollar(parts, False, line)
            continue
        buf += ch
        lx.i += 1
    if buf:
        parts.append(("lit", buf, False))
    return Word(parts, line, text)


def heredoc_word(body: str, line: int) -> Word:
    """A here-document body with an unquoted delimiter as one word: `$`-expansions and backquotes are
    expanded, `\\` escapes only `$`, backquote, backslash and newline; quotes are plain characters."""
    lx = _Lexer(body)
    parts: list[tuple[str, str, bool]] = []
    buf = ""
    n = len(body)
    while lx.i < n:
        ch = body[lx.i]
        if ch == "\\" and lx.i + 1 < n and body[lx.i + 1] in "$`\\\n":
            if body[lx.i + 1] != "\n":
                buf += body[lx.i + 1]
            lx.i += 2
            continue
        if ch == "$" and lx.i + 1 < n and (body[lx.i + 1] in "({" or _NAME.match(body[lx.i + 1])
                                           or body[lx.i + 1] in _SPECIAL) or ch == "`":
            if buf:
                parts.append(("lit", buf, True))
                buf = ""
            lx.dollar(parts, True, line)
            continue
        buf += ch
        lx.i += 1
    if buf:
        parts.append(("lit", buf, True))
    return Word(parts, line, body)
