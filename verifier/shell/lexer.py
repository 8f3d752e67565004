"""Tokenizer for the bash subset InferenceX launch scripts use (never executes anything).

`tokenize(text, src)` splits a script into `Tok`s: words (`Word`, a list of `Part`s that remember
quoting and expansions), operators, newlines, array-assignment openers (`NAME=(`), arithmetic
commands (`(( ... ))`) and heredoc bodies (attached to the `<<` operator that announced them).
`[[ ... ]]` is read in test mode: `(`, `)`, `<`, `>`, `&&`, `||` and `!` inside it are words, and
the right side of `=~` is one regex word. Every token knows its 1-based line in `src`.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

MAX_SCRIPT_CHARS = 512_000
MAX_TOKENS = 200_000

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DQ_PLAIN = re.compile(r'[^"\\$`\n]+')  # inside double quotes: no quote, escape, expansion or newline
_BLANKS = re.compile(r"[ \t\r]+")
# a word's plain run ends the word when the next character is one of these (in normal and test mode;
# `<(`/`>(` continues it as a process substitution, handled by the full loop)
_WORD_END = frozenset(" \t\r\n;&|()")
_PLAIN = {"normal": re.compile(r"[^\s;&|()<>'\"\\$`]+"), "test": re.compile(r"[^\s;&|()<>'\"\\$`]+"),
          "regex": re.compile(r"[^\s()'\"\\$`]+")}
ARRAY_OPEN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=$")
OPERATORS = ("<<<", "<<-", ";;&", "&>>", ";;", ";&", "&&", "||", "|&", "&>", ">>", ">&", ">|", "<<", "<&", "<>",
             ";", "&", "|", "(", ")", "<", ">")
REDIRECTS = frozenset({">", ">>", ">|", "<", "<>", ">&", "<&", "&>", "&>>", "<<", "<<-", "<<<"})
# words after which a new command starts (so `((` opens an arithmetic command and `[[` a test)
_CMD_STARTERS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "{", "!", "time"})
_OP_CMD_START = frozenset({";", "&", "&&", "||", "|", "|&", "(", ";;", ";&", ";;&"})


class ShellSyntaxError(Exception):
    """The text is not in the bash subset the evaluator reads; names the line."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a word: `lit` text, `param` (text inside `${}` or a bare name), `cmd` (the inner
    text of `$( )` or backquotes), `arith` (inside `$(( ))`) or `proc` (process substitution)."""

    kind: str
    text: str
    quoted: bool


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word with its parts, source line and raw text."""

    parts: tuple[Part, ...]
    line: int
    raw: str
    start: int = field(default=0, compare=False)  # offset of the word in the text it was read from
    # what bash may make of the word's unquoted text beyond its expansions, found once here (`_shape`),
    # not at each of the many times the walkers expand the word:
    # `braced`: unquoted literal text that brace expansion may change (the walkers expand the braces of
    # one-part words, and do not claim a word of several parts that has them); `old_arithmetic`: it holds `$[...]`, bash's old
    # arithmetic expansion (the walkers do not claim the word); `tilde`: it starts with an unquoted
    # `~`, where bash puts a home directory (`~`: $HOME, `~user`, `~+`, `~-`), which is the run's;
    # `may_make_pattern`: an unquoted expansion, or unquoted literal text holding a pattern character
    # (verifier.shell.expansion.may_glob says whether a field is a pathname pattern)
    braced: bool = field(init=False, compare=False, repr=False)
    old_arithmetic: bool = field(init=False, compare=False, repr=False)
    tilde: bool = field(init=False, compare=False, repr=False)
    may_make_pattern: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        braced, old_arithmetic, tilde, may_make_pattern = _shape(self.parts)
        set_field = object.__setattr__  # frozen
        set_field(self, "braced", braced)
        set_field(self, "old_arithmetic", old_arithmetic)
        set_field(self, "tilde", tilde)
        set_field(self, "may_make_pattern", may_make_pattern)

    def literal(self) -> str | None:
        """The word's text when it has no expansions (quotes removed)."""
        parts = self.parts
        if len(parts) == 1:  # most words: one part, no generator or join needed
            return parts[0].text if parts[0].kind == "lit" else None
        for p in parts:
            if p.kind != "lit":
                return None
        return "".join(p.text for p in parts)

    @property
    def unquoted_literal(self) -> str | None:
        """The word's text when it is one unquoted literal (reserved words, names)."""
        parts = self.parts
        if len(parts) == 1:
            p = parts[0]
            if p.kind == "lit" and not p.quoted:
                return p.text
        return None


def _shape(parts: tuple[Part, ...]) -> tuple[bool, bool, bool, bool]:
    """`Word.braced`, `old_arithmetic`, `tilde` and `may_make_pattern` of a word's parts."""
    braced = old_arithmetic = pattern = False
    tilde = bool(parts) and parts[0].kind == "lit" and not parts[0].quoted and parts[0].text.startswith("~")
    for part in parts:
        if part.kind != "lit":
            pattern = pattern or not part.quoted
            continue
        text = part.text
        old_arithmetic = old_arithmetic or "$[" in text
        if not part.quoted:
            braced = braced or ("{" in text and ("," in text or ".." in text))
            pattern = pattern or "*" in text or "?" in text or "[" in text or "]" in text
    return braced, old_arithmetic, tilde, pattern


@dataclass(slots=True)
class Heredoc:
    """The body of a here-document (`quoted`: the delimiter was quoted, so nothing expands)."""

    body: str
    quoted: bool
    line: int  # line of the first body line
    strip_tabs: bool


@dataclass(slots=True)
class Tok:
    """A token: `word`, `op`, `nl`, `arr` (array assignment opener), `arith` (`(( ))` command)."""

    kind: str
    line: int
    word: Word | None = None
    op: str = ""
    name: str = ""  # arr: the array name (with a subscript when written)
    append: bool = False
    fd: str = ""  # op: an explicit file descriptor before a redirection (`2>`)
    text: str = ""  # arith: the expression
    heredoc: Heredoc | None = field(default=None, repr=False)



def skip_expansion(text: str, i: int) -> int:
    """The index after the `$((...))`, `$(...)` or `${...}` starting at text[i] (a `$((` that is not
    arithmetic, `$( (cmd) )`, is a command substitution)."""
    if text.startswith("$((", i):
        try:
            return match_arith(text, i + 3)
        except ShellSyntaxError:
            return match_close(text, i + 2, "(", ")")
    if text[i + 1] == "(":
        return match_close(text, i + 2, "(", ")")
    return match_close(text, i + 2, "{", "}")

# Runs of characters the scanners below only step over (each stops at every character one of their
# tests looks at: escapes, quotes, backquotes, `$`, `#`, and the bracket pair being balanced).
_ORDINARY = {"()": re.compile(r"[^\\'\"`$#()]+"), "{}": re.compile(r"[^\\'\"`$#{}]+")}
_ARITH_ORDINARY = re.compile(r"[^\\$()]+")
_DQ_ORDINARY = re.compile(r'[^\\"$`]+')


def match_close(text: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` that balances an already-consumed `open_` (quotes, comments,
    nested `$(`/`${`/backquotes and `case` patterns respected as far as these scripts need)."""
    depth, n = 1, len(text)
    at_word_start = True
    start = i
    ordinary = _ORDINARY.get(open_ + close)
    while i < n:
        m = ordinary.match(text, i) if ordinary is not None else None
        if m is not None:
            # a run of characters none of the tests below looks at: each would only have set
            # at_word_start from itself, so the last one decides it
            i = m.end()
            at_word_start = text[i - 1] in " \t\n;|&("
            continue
        c = text[i]
        if c == "\\":
            i += 2
            at_word_start = False
            continue
        if c == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            at_word_start = False
            continue
        if c == '"':
            i = _skip_dquote(text, i + 1)
            at_word_start = False
            continue
        if c == "`":
            j = text.find("`", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == "#" and at_word_start and open_ == "(":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "$" and i + 1 < n and text[i + 1] in "({":
            i = skip_expansion(text, i)
            at_word_start = False
            continue
        if text.startswith(close, i) and (close != ")" or not _case_pattern_close(text, start, i)):
            depth -= 1
            i += len(close)
            if depth == 0:
                return i
            continue
        if text.startswith(open_, i):
            depth += 1
            i += len(open_)
            continue
        at_word_start = c in " \t\n;|&("
        i += 1
    raise ShellSyntaxError(f"unbalanced {open_!r}", None)


def match_arith(text: str, i: int) -> int:
    """Index just past the `))` closing an arithmetic expression whose `((` ends at i (inner
    parentheses are counted one by one: `$(( 2 * ((a + b) / c) ))`)."""
    depth, n = 2, len(text)
    while i < n:
        m = _ARITH_ORDINARY.match(text, i)
        if m is not None:  # characters the loop would only step over
            i = m.end()
            continue
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "$" and text.startswith("$(", i) and not text.startswith("$((", i):
            i = match_close(text, i + 2, "(", ")")
            continue
        if c == "$" and text.startswith("${", i):
            i = match_close(text, i + 2, "{", "}")
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                if text[i - 1] != ")":
                    raise ShellSyntaxError("unbalanced '(('", None)
                return i + 1
            if depth == 1 and not text.startswith(")", i + 1):
                raise ShellSyntaxError("unbalanced '(('", None)
        i += 1
    raise ShellSyntaxError("unbalanced '(('", None)


def _case_pattern_close(text: str, start: int, i: int) -> bool:
    """True when the `)` at text[i] ends a `case` pattern inside a command substitution (rare) whose
    text starts at text[start]: only a `case` of that substitution still open there counts (one the
    script closed before the substitution began made `b")"` in `"$(echo "a<newline>b")"` a pattern)."""
    line_start = max(text.rfind("\n", 0, i) + 1, start)
    segment = text[line_start:i]
    # the pattern starts after the line's last `in` or `;;` (`case $a in a) ...;; b) ...` on one line)
    starts = [m.end() for m in _PATTERN_START.finditer(segment)]
    before = (segment[starts[-1]:] if starts else segment).strip()
    # `(a)`: the pattern's own `(` was counted, so its `)` balances it like any other
    if not before or before.startswith("(") or not re.fullmatch(r"[\w*.|\"'-]+", before):
        return False
    opens, closes = _case_marks(text)
    return _count_between(opens, start, i) > _count_between(closes, start, i)


_PATTERN_START = re.compile(r"\bin\b|;;&?|;&")
_CASE_OPEN = re.compile(r"\bcase\b[^\n]*\bin\b")
_ESAC = re.compile(r"\besac\b")
_MARKS: list[tuple[str, tuple[list[int], list[int]]]] = []  # the last text's marks (one pass per text)


def _case_marks(text: str) -> tuple[list[int], list[int]]:
    """Where each `case ... in` and each `esac` of a text ends, ascending (found once per text, so a
    substitution with many `)` costs a lookup per `)`, not a scan of its text)."""
    if _MARKS and _MARKS[0][0] is text:
        return _MARKS[0][1]
    marks = ([m.end() for m in _CASE_OPEN.finditer(text)], [m.end() for m in _ESAC.finditer(text)])
    _MARKS[:] = [(text, marks)]
    return marks


def _count_between(ends: list[int], start: int, i: int) -> int:
    return bisect_right(ends, i) - bisect_left(ends, start)


def _skip_dquote(text: str, i: int) -> int:
    """Index just past the closing double quote of a string whose opening quote is at i - 1."""
    n = len(text)
    while i < n:
        m = _DQ_ORDINARY.match(text, i)
        if m is not None:  # characters the loop would only step over
            i = m.end()
            continue
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        if c == "$" and i + 1 < n and text[i + 1] in "({":
            i = skip_expansion(text, i)
            continue
        if c == "`":
            j = text.find("`", i + 1)
            i = n if j < 0 else j + 1
            continue
        i += 1
    raise ShellSyntaxError("unterminated double quote", None)


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "e": "\x1b",
         "E": "\x1b", "f": "\f", "v": "\v", "0": "\0"}


def _ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "x":
                m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
                if m:
                    out.append(chr(int(m.group(0), 16)))
                    i += 2 + len(m.group(0))
                    continue
            out.append(_ANSI.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _Lexer:
    def __init__(self, text: str, first_line: int = 1) -> None:
        self.text = text
        self.n = len(text)
        self.i = 0
        self.line = first_line
        self.toks: list[Tok] = []
        self.pending: list[tuple[Tok, str, bool]] = []  # heredocs announced on this line
        self.cmd_start = True
        self.test_depth = 0  # inside [[ ... ]]
        self.plain_parts: dict[str, tuple[Part]] = {}  # unquoted literal text -> its parts (see read_word)

    # --- helpers --------------------------------------------------------------------------

    def emit(self, tok: Tok) -> None:
        self.toks.append(tok)
        if len(self.toks) > MAX_TOKENS:
            raise ShellSyntaxError("script too large", tok.line)

    def dollar(self, i: int, quoted: bool, parts: list[Part]) -> int:
        """Read a `$` expansion at text[i] == '$'; append a part; return the new index."""
        text = self.text
        nxt = text[i + 1] if i + 1 < self.n else ""
        if text.startswith("$((", i):
            try:
                end = match_arith(text, i + 3)
            except ShellSyntaxError:  # `$( (cmd) )`: a command substitution starting with a subshell
                end = match_close(text, i + 2, "(", ")")
                parts.append(Part("cmd", text[i + 2:end - 1], quoted))
                return end
            parts.append(Part("arith", text[i + 3:end - 2], quoted))
            return end
        if nxt == "(":
            end = match_close(text, i + 2, "(", ")")
            parts.append(Part("cmd", text[i + 2:end - 1], quoted))
            return end
        if nxt == "{":
            end = match_close(text, i + 2, "{", "}")
            parts.append(Part("param", text[i + 2:end - 1], quoted))
            return end
        if nxt == "'" and not quoted:
            j = i + 2
            while j < self.n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            if j >= self.n:
                raise ShellSyntaxError("unterminated $'...' string", self.line)
            parts.append(Part("lit", _ansi_c(text[i + 2:j]), True))
            return j + 1
        if nxt == '"' and not quoted:  # $"..." (locale translation): a plain double-quoted string
            return i + 1
        m = _NAME.match(text, i + 1)
        if m:
            parts.append(Part("param", m.group(0), quoted))
            return m.end()
        if nxt and ("0" <= nxt <= "9" or nxt in "@*#?$!-"):
            parts.append(Part("param", nxt, quoted))
            return i + 2
        parts.append(Part("lit", "$", quoted))
        return i + 1

    def read_dquote(self, i: int, parts: list[Part]) -> int:
        """Read a double-quoted string whose opening quote is at i - 1."""
        text, n = self.text, self.n
        buf: list[str] = []
        start_line = self.line
        before = len(parts)
        while i < n and text[i] != '"':
            m = _DQ_PLAIN.match(text, i)
            if m is not None:  # a run of characters that stand for themselves, taken at once
                buf.append(m.group(0))
                i = m.end()
                continue
            ch = text[i]
            if ch == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                if text[i + 1] == "\n":
                    self.line += 1
                else:
                    buf.append(text[i + 1])
                i += 2
                continue
            if ch == "$" or ch == "`":
                if buf:
                    parts.append(Part("lit", "".join(buf), True))
                    buf = []
                if ch == "$":
                    j = self.dollar(i, True, parts)
                else:
                    j = text.find("`", i + 1)
                    if j < 0:
                        raise ShellSyntaxError("unterminated backquote", self.line)
                    parts.append(Part("cmd", text[i + 1:j].replace("\\`", "`"), True))
                    j += 1
                self.line += text.count("\n", i, j)
                i = j
                continue
            if ch == "\n":
                self.line += 1
            buf.append(ch)
            i += 1
        if i >= n:
            raise ShellSyntaxError("unterminated double quote", start_line)
        if buf or len(parts) == before:
            parts.append(Part("lit", "".join(buf), True))
        return i + 1

    def read_word(self, mode: str = "normal") -> Word | None:
        """Read one word at self.i. mode: normal | test (inside [[ ]]) | regex (right of =~)."""
        text, n = self.text, self.n
        start, line = self.i, self.line
        i = self.i
        plain = _PLAIN[mode]
        parts: list[Part] = []
        if mode != "regex":
            # fast path, most words: one plain run followed by a character that ends the word. The
            # full loop below would append this one part, stop at that character and merge nothing.
            m = plain.match(text, i)
            if m is not None:
                e = m.end()
                if e == n or text[e] in _WORD_END or (text[e] in "<>" and not text.startswith("(", e + 1)):
                    self.i = e
                    raw = m.group(0)
                    # a Part, and a word's tuple of parts, are immutable and fully given by their
                    # contents: the words a script repeats (`fi`, `then`, `echo`, flags) share one
                    # tuple, its Part and its text instead of building them again
                    parts_of = self.plain_parts.get(raw)
                    if parts_of is None:
                        parts_of = self.plain_parts[raw] = (Part("lit", raw, False),)
                    return Word(parts_of, line, parts_of[0].text, start)
                # the loop's first step, already matched: take the run and go on after it
                parts.append(Part("lit", m.group(0), False))
                i = e
        depth = 0
        while i < n:
            m = plain.match(text, i)
            if m:
                parts.append(Part("lit", m.group(0), False))
                i = m.end()
                continue
            c = text[i]
            if c == "\\" and i + 1 < n and text[i + 1] == "\n":
                i += 2
                self.line += 1
                continue
            if c in " \t\r\n":
                break
            if c in "<>" and text.startswith("(", i + 1) and mode != "regex":
                end = match_close(text, i + 2, "(", ")")
                parts.append(Part("proc", text[i + 2:end - 1], False))
                self.line += text.count("\n", i, end)
                i = end
                continue
            if mode == "regex":
                if c == "(":
                    depth += 1
                elif c == ")":
                    if depth == 0:
                        break
                    depth -= 1
            elif c in ";&|()<>":
                break
            if c == "'":
                j = text.find("'", i + 1)
                if j < 0:
                    raise ShellSyntaxError("unterminated single quote", self.line)
                parts.append(Part("lit", text[i + 1:j], True))
                self.line += text.count("\n", i, j)
                i = j + 1
                continue
            if c == '"':
                i = self.read_dquote(i + 1, parts)
                continue
            if c == "\\" and i + 1 < n:
                parts.append(Part("lit", text[i + 1], True))
                i += 2
                continue
            if c == "$":
                j = self.dollar(i, False, parts)
                self.line += text.count("\n", i, j)
                i = j
                continue
            if c == "`":
                j = text.find("`", i + 1)
                if j < 0:
                    raise ShellSyntaxError("unterminated backquote", self.line)
                parts.append(Part("cmd", text[i + 1:j].replace("\\`", "`"), False))
                self.line += text.count("\n", i, j)
                i = j + 1
                continue
            parts.append(Part("lit", c, False))
            i += 1
        self.i = i
        if not parts:
            return None
        if len(parts) == 1:  # nothing to merge
            return Word((parts[0],), line, text[start:i], start)
        merged: list[Part] = []
        for part in parts:
            if merged and part.kind == "lit" and merged[-1].kind == "lit" and merged[-1].quoted == part.quoted:
                merged[-1] = Part("lit", merged[-1].text + part.text, part.quoted)
            else:
                merged.append(part)
        return Word(tuple(merged), line, text[start:i], start)

    def read_heredocs(self) -> None:
        """After a newline: read the bodies of the heredocs announced on the line just ended."""
        for tok, delim, strip in self.pending:
            body_line = self.line
            lines: list[str] = []
            while self.i < self.n:
                end = self.text.find("\n", self.i)
                raw = self.text[self.i:] if end < 0 else self.text[self.i:end]
                self.i = self.n if end < 0 else end + 1
                self.line += 1
                candidate = raw.lstrip("\t") if strip else raw
                if candidate.rstrip("\r") == delim:
                    break
                lines.append(candidate)
            assert tok.heredoc is not None
            tok.heredoc.body = "\n".join(lines) + ("\n" if lines else "")
            tok.heredoc.line = body_line
        self.pending = []

    # --- main loop ------------------------------------------------------------------------

    def run(self) -> list[Tok]:
        text, n = self.text, self.n
        while self.i < n:
            c = text[self.i]
            if c == "\\" and self.i + 1 < n and text[self.i + 1] == "\n":
                self.i += 2
                self.line += 1
                continue
            if c in " \t\r":
                self.i = _BLANKS.match(text, self.i).end()  # type: ignore[union-attr]  # matches at c
                continue
            if c == "\n":
                if self.test_depth == 0:
                    self.emit(Tok("nl", self.line))
                    self.cmd_start = True
                self.i += 1
                self.line += 1
                if self.pending:
                    self.read_heredocs()
                continue
            if c == "#":
                j = text.find("\n", self.i)
                self.i = n if j < 0 else j
                continue
            if self.test_depth:
                self.lex_test()
                continue
            if self.cmd_start and text.startswith("((", self.i):
                end = match_arith(text, self.i + 2)
                self.emit(Tok("arith", self.line, text=text[self.i + 2:end - 2]))
                self.line += text.count("\n", self.i, end)
                self.i = end
                self.cmd_start = False
                continue
            if c in ";&|()<>":
                if c in "<>" and text.startswith("(", self.i + 1):
                    word = self.read_word()
                    if word is not None:
                        self.emit(Tok("word", word.line, word=word))
                        self.cmd_start = False
                    continue
                self.lex_op()
                continue
            word = self.read_word()
            if word is None:  # a lone character the word reader stops at
                self.i += 1
                continue
            self.after_word(word)
        if self.pending:
            self.read_heredocs()
        return self.toks

    def lex_op(self) -> None:
        text = self.text
        for op in OPERATORS:
            if text.startswith(op, self.i):
                tok = Tok("op", self.line, op=op)
                self.i += len(op)
                if op in ("<<", "<<-"):
                    self.announce_heredoc(tok, strip=op == "<<-")
                self.emit(tok)
                self.cmd_start = op in _OP_CMD_START
                return
        self.i += 1

    def announce_heredoc(self, tok: Tok, strip: bool) -> None:
        while self.i < self.n and self.text[self.i] in " \t":
            self.i += 1
        word = self.read_word()
        if word is None:
            raise ShellSyntaxError("here-document without a delimiter", self.line)
        delim = "".join(p.text if p.kind == "lit" else "$" + p.text for p in word.parts)
        quoted = any(p.quoted for p in word.parts)
        tok.heredoc = Heredoc("", quoted, self.line + 1, strip)
        tok.word = word
        self.pending.append((tok, delim, strip))

    def after_word(self, word: Word) -> None:
        text = self.text
        nxt = text[self.i] if self.i < self.n else ""
        # both special cases below need a `(` or a redirection right after the word; most words have
        # neither, and then only the plain token is emitted
        lit = word.literal() if nxt and nxt in "(<>" else None
        # NAME=( / NAME+=( / NAME[i]=( : an array assignment
        if lit is not None and nxt == "(" and word.parts[-1].kind == "lit" \
                and not word.parts[0].quoted:
            m = ARRAY_OPEN.match(lit)
            if m:
                self.emit(Tok("arr", word.line, name=m.group(1) + (m.group(2) or ""), append=bool(m.group(3))))
                self.i += 1
                self.cmd_start = False
                return
        # a redirection with an explicit fd: 2>file, 2>&1
        if lit is not None and lit.isascii() and lit.isdigit() and nxt in "<>" \
                and not any(p.quoted for p in word.parts):
            for op in OPERATORS:
                if op[0] in "<>" and text.startswith(op, self.i):
                    tok = Tok("op", self.line, op=op, fd=lit)
                    self.i += len(op)
                    if op in ("<<", "<<-"):
                        self.announce_heredoc(tok, strip=op == "<<-")
                    self.emit(tok)
                    self.cmd_start = False
                    return
        toks = self.toks  # emit(), inlined: one call less on the hottest path
        toks.append(Tok("word", word.line, word=word))
        if len(toks) > MAX_TOKENS:
            raise ShellSyntaxError("script too large", word.line)
        bare = word.unquoted_literal
        if bare == "[[" and self.cmd_start:
            self.test_depth = 1
            self.cmd_start = False
            return
        if bare == "for" and self.cmd_start:
            j = self.i
            while j < self.n and text[j] in " \t":
                j += 1
            if text.startswith("((", j):
                end = match_arith(text, j + 2)
                self.emit(Tok("arith", self.line, text=text[j + 2:end - 2]))
                self.line += text.count("\n", j, end)
                self.i = end
                self.cmd_start = False
                return
        self.cmd_start = self.cmd_start and bare in _CMD_STARTERS

    def lex_test(self) -> None:
        """One token inside [[ ... ]]."""
        text = self.text
        for op in ("&&", "||"):
            if text.startswith(op, self.i):
                self.emit(Tok("word", self.line, word=Word((Part("lit", op, False),), self.line, op)))
                self.i += 2
                return
        c = text[self.i]
        prev = self.toks[-1].word.raw if self.toks and self.toks[-1].word is not None else ""
        if c == "!" and text.startswith("(", self.i + 1) and prev in _PATTERN_OPS:
            raise ShellSyntaxError(_EXTGLOB_IN_TEST, self.line)
        if c in "()" or (c in "<>" and (self.i + 1 >= self.n or text[self.i + 1] in " \t")) or \
                (c == "!" and (self.i + 1 >= self.n or text[self.i + 1] in " \t(")):
            self.emit(Tok("word", self.line, word=Word((Part("lit", c, False),), self.line, c)))
            self.i += 1
            return
        if c in ";&|":
            self.test_depth = 0
            self.lex_op()
            return
        word = self.read_word("regex" if prev == "=~" else "test")
        if word is None:
            self.i += 1
            return
        if prev in _PATTERN_OPS and text.startswith("(", self.i) and word.raw[-1:] in "?*+@!":
            raise ShellSyntaxError(_EXTGLOB_IN_TEST, self.line)
        self.emit(Tok("word", word.line, word=word))
        if word.unquoted_literal == "]]":
            self.test_depth = 0
            self.cmd_start = False


# `[[ X == +(a|b) ]]`: bash matches the right side of `==`, `=` and `!=` in `[[ ]]` as if `extglob`
# were set, and an extended glob's operators (`?(`, `*(`, `+(`, `@(`, `!(`) are not modelled
_PATTERN_OPS = frozenset({"==", "=", "!="})
_EXTGLOB_IN_TEST = "an extended glob pattern (`+(...)`, `@(...)`, ...) on the right of `==` in `[[ ]]` is not read statically"


def tokenize(text: str, first_line: int = 1) -> list[Tok]:
    """Split a script into tokens (see the module docstring); lines count from `first_line` (the
    line a command substitution's text starts on in its file)."""
    if len(text) > MAX_SCRIPT_CHARS:
        raise ShellSyntaxError(f"script larger than {MAX_SCRIPT_CHARS} characters", None)
    return _Lexer(text, first_line).run()


def lex_operand(text: str, line: int) -> Word:
    """A `${X:-...}` operand (or any text) read as one word in which whitespace and operators are
    ordinary characters; quotes and expansions are honoured."""
    lexer = _Lexer(text)
    lexer.line = line
    parts: list[Part] = []
    buf: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"$`\\":
            if buf:
                parts.append(Part("lit", "".join(buf), False))
                buf = []
            if c == "'":
                j = text.find("'", i + 1)
                j = n if j < 0 else j
                parts.append(Part("lit", text[i + 1:j], True))
                i = j + 1
            elif c == '"':
                try:
                    i = lexer.read_dquote(i + 1, parts)
                except ShellSyntaxError:
                    parts.append(Part("lit", text[i + 1:], True))
                    i = n
            elif c == "$":
                i = lexer.dollar(i, False, parts)
            elif c == "`":
                j = text.find("`", i + 1)
                j = n if j < 0 else j
                parts.append(Part("cmd", text[i + 1:j], False))
                i = j + 1
            else:
                parts.append(Part("lit", text[i + 1:i + 2], True))
                i += 2
            continue
        buf.append(c)
        i += 1
    if buf:
        parts.append(Part("lit", "".join(buf), False))
    return Word(tuple(parts), line, text)


def lex_heredoc(body: str, line: int) -> Word:
    """An unquoted heredoc body as one word: `$` expansions and backquotes expand, backslash escapes
    only `$`, backquote, backslash and newline, and quotes are ordinary characters."""
    lexer = _Lexer(body)
    lexer.line = line
    parts: list[Part] = []
    buf: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "\\" and i + 1 < n and body[i + 1] in "$`\\\n":
            if body[i + 1] != "\n":
                buf.append(body[i + 1])
            i += 2
            continue
        if c == "$" or c == "`":
            if buf:
                parts.append(Part("lit", "".join(buf), True))
                buf = []
            if c == "$":
                try:
                    i = lexer.dollar(i, True, parts)
                except ShellSyntaxError:
                    parts.append(Part("lit", body[i:], True))
                    i = n
            else:
                j = body.find("`", i + 1)
                j = n if j < 0 else j
                parts.append(Part("cmd", body[i + 1:j], True))
                i = j + 1
            continue
        buf.append(c)
        i += 1
    if buf:
        parts.append(Part("lit", "".join(buf), True))
    return Word(tuple(parts), line, body)
