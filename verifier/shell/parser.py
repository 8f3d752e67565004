"""Parser: tokens (verifier.shell.lexer) -> syntax tree (verifier.shell.nodes).

Reads simple commands with prefix assignments and redirections, pipelines, `&&`/`||` lists,
background `&`, `if`/`elif`/`else`, `while`/`until`, `for ... in`, `for (( ))`, `select`, `case`
(with `;;`, `;&`, `;;&`), `{ }` groups, `( )` subshells, `(( ))`, `[[ ]]`, function definitions
(`name()`, `function name`), array assignments (also in `declare`/`local`/`export`) and heredocs.
A construct outside this subset raises `ShellSyntaxError` naming the line and what was expected.
"""

from __future__ import annotations

import re
from collections import OrderedDict

from verifier.core import processcache
from verifier.shell.lexer import REDIRECTS, Part, ShellSyntaxError, Tok, Word, tokenize
from verifier.shell.nodes import (
    AndOr,
    Arith,
    ArithFor,
    Assign,
    Body,
    Case,
    CaseArm,
    Command,
    For,
    FuncDef,
    Group,
    If,
    Pipeline,
    Redirect,
    Script,
    Simple,
    Test,
    While,
)

_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")
_ARRAY_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[")
_FUNC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_:.-]*")
DECLARERS = frozenset({"export", "declare", "local", "readonly", "typeset"})
_RESERVED_END = frozenset({"then", "elif", "else", "fi", "do", "done", "esac", "}", "in"})
_LIST_ERRORS = frozenset({")", ";;", ";&", ";;&"})  # operators that cannot start a command of a list
_CACHE: OrderedDict[tuple[str, str, int], Script] = OrderedDict()
_CACHE_SIZE = 256
processcache.register("shell.parsed-texts", _CACHE.clear)
# A syntax tree takes some 60 times its text, and any process cache may hold parts of one (the trees
# here, facts keyed by their nodes, the commands read from them), each bounded by entries, not bytes.
# Once MAX_PARSED_TEXT characters have been parsed since the process caches were last emptied, they
# are all emptied (processcache.clear_all, as between the PRs of a replay) before the next parse:
# what they kept is computed again, the same, when it is asked for. The largest real verdict parses
# 1,237,087 characters (#2263, recorded and judged in one process), so none empties them; a PR that
# brings forty 100 KiB scripts peaks at 261 MiB instead of 520 (benchmarks/many_scripts.py).
MAX_PARSED_TEXT = 2_000_000
_parsed_since = 0  # characters parsed since the process caches were last emptied


def _caches_emptied() -> None:
    global _parsed_since
    _parsed_since = 0


processcache.register("shell.parsed-since", _caches_emptied)


class _Parser:
    def __init__(self, toks: list[Tok], src: str) -> None:
        self.toks = toks
        self.i = 0
        self.src = src

    # --- token helpers ----------------------------------------------------------------------

    def peek(self, k: int = 0) -> Tok | None:
        # the hottest call of the parser: an index past the end is rare, so it is caught, not tested
        try:
            return self.toks[self.i + k]
        except IndexError:
            return None

    def is_word(self, tok: Tok | None, *names: str) -> bool:
        return tok is not None and tok.kind == "word" and tok.word is not None and \
            tok.word.unquoted_literal in names

    def is_op(self, tok: Tok | None, *ops: str) -> bool:
        return tok is not None and tok.kind == "op" and tok.op in ops

    def skip_newlines(self) -> None:
        while (t := self.peek()) is not None and t.kind == "nl":
            self.i += 1

    def skip_separators(self) -> None:
        toks, i = self.toks, self.i
        n = len(toks)
        while i < n and (toks[i].kind == "nl" or (toks[i].kind == "op" and toks[i].op == ";")):
            i += 1
        self.i = i

    def expect_word(self, name: str, opener: str, line: int) -> None:
        t = self.peek()
        if not self.is_word(t, name):
            where = t.line if t else None
            raise ShellSyntaxError(f"expected {name!r} to close the {opener!r} on line {line}", where or line)
        self.i += 1

    # --- lists ------------------------------------------------------------------------------

    def parse_list(self, stops: tuple[str, ...] = (), stop_ops: tuple[str, ...] = ()) -> Body:
        out: list[AndOr] = []
        while True:
            self.skip_separators()
            t = self.peek()
            if t is None:
                return tuple(out)
            # what is_word / is_op would test, read once per command instead of once per name
            bare = t.word.unquoted_literal if t.kind == "word" and t.word is not None else None
            op = t.op if t.kind == "op" else None
            if (bare is not None and bare in stops) or (op is not None and op in stop_ops):
                return tuple(out)
            if (op is not None and op in _LIST_ERRORS) or (bare is not None and bare in _RESERVED_END):
                word = t.op if t.kind == "op" else (t.word.raw if t.word else "")
                raise ShellSyntaxError(f"unexpected {word!r}", t.line)
            out.append(self.parse_andor())

    def parse_andor(self) -> AndOr:
        first = self.peek()
        line = first.line if first else 0
        parts = [self.parse_pipeline()]
        ops: list[str] = []
        while self.is_op(self.peek(), "&&", "||"):
            t = self.peek()
            assert t is not None
            ops.append(t.op)
            self.i += 1
            self.skip_newlines()
            parts.append(self.parse_pipeline())
        background = False
        if self.is_op(self.peek(), "&"):
            background = True
            self.i += 1
        return AndOr(tuple(parts), tuple(ops), background, line)

    def parse_pipeline(self) -> Pipeline:
        t = self.peek()
        line = t.line if t else 0
        negate = False
        while self.is_word(self.peek(), "!", "time"):
            if self.is_word(self.peek(), "!"):
                negate = not negate
            self.i += 1
        cmds = [self.parse_command()]
        while self.is_op(self.peek(), "|", "|&"):
            self.i += 1
            self.skip_newlines()
            cmds.append(self.parse_command())
        return Pipeline(tuple(cmds), negate, line)

    # --- commands ---------------------------------------------------------------------------

    def parse_command(self) -> Command:
        t = self.peek()
        if t is None:
            raise ShellSyntaxError("unexpected end of script", self.toks[-1].line if self.toks else None)
        if t.kind == "arith":
            self.i += 1
            return Arith(t.text, self.parse_redirects(), t.line, self.src)
        if t.kind == "word":
            bare = t.word.unquoted_literal if t.word else None
            if bare == "if":
                return self.parse_if()
            if bare in ("while", "until"):
                return self.parse_while(bare == "until")
            if bare in ("for", "select"):
                return self.parse_for()
            if bare == "case":
                return self.parse_case()
            if bare == "{":
                self.i += 1
                body = self.parse_list(("}",))
                self.expect_word("}", "{", t.line)
                return Group(body, False, self.parse_redirects(), t.line, self.src)
            if bare == "[[":
                return self.parse_test()
            if bare == "function":
                return self.parse_function_keyword()
            # `name()`: the cheap token tests first, the name's pattern only when they hold
            if bare is not None and self.is_op(self.peek(1), "(") and self.is_op(self.peek(2), ")") \
                    and _FUNC_NAME.fullmatch(bare):
                self.i += 3
                return self.parse_function_body(bare, t.line)
        if self.is_op(t, "("):
            self.i += 1
            body = self.parse_list((), (")",))
            if not self.is_op(self.peek(), ")"):
                raise ShellSyntaxError(f"expected ')' to close the '(' on line {t.line}", t.line)
            self.i += 1
            return Group(body, True, self.parse_redirects(), t.line, self.src)
        return self.parse_simple()

    def parse_function_keyword(self) -> FuncDef:
        first = self.peek()
        assert first is not None
        self.i += 1
        t = self.peek()
        name = t.word.unquoted_literal if t is not None and t.word is not None else None
        if not name:
            raise ShellSyntaxError("expected a function name after 'function'", first.line)
        self.i += 1
        if self.is_op(self.peek(), "(") and self.is_op(self.peek(1), ")"):
            self.i += 2
        return self.parse_function_body(name, first.line)

    def parse_function_body(self, name: str, line: int) -> FuncDef:
        self.skip_newlines()
        body = self.parse_command()
        if isinstance(body, (Simple, FuncDef)):
            raise ShellSyntaxError(f"function {name} has no compound body", line)
        return FuncDef(name, body, line, self.src)

    def parse_redirects(self) -> tuple[Redirect, ...]:
        out: list[Redirect] = []
        while (t := self.peek()) is not None and t.kind == "op" and t.op in REDIRECTS:
            out.append(self.parse_redirect())
        return tuple(out)

    def parse_redirect(self) -> Redirect:
        t = self.peek()
        assert t is not None
        self.i += 1
        if t.op in ("<<", "<<-"):
            return Redirect(t.op, t.fd, t.word, t.heredoc, t.line)
        target = self.peek()
        if target is None or target.kind != "word" or target.word is None:
            raise ShellSyntaxError(f"expected a file name after {t.op!r}", t.line)
        self.i += 1
        return Redirect(t.op, t.fd, target.word, None, t.line)

    def parse_if(self) -> If:
        first = self.peek()
        assert first is not None
        self.i += 1
        clauses: list[tuple[Body, Body]] = []
        orelse: Body | None = None
        while True:
            cond = self.parse_list(("then",))
            self.expect_word("then", "if", first.line)
            body = self.parse_list(("elif", "else", "fi"))
            clauses.append((cond, body))
            if self.is_word(self.peek(), "elif"):
                self.i += 1
                continue
            if self.is_word(self.peek(), "else"):
                self.i += 1
                orelse = self.parse_list(("fi",))
            self.expect_word("fi", "if", first.line)
            break
        return If(tuple(clauses), orelse, self.parse_redirects(), first.line, self.src)

    def parse_while(self, until: bool) -> While:
        first = self.peek()
        assert first is not None
        self.i += 1
        cond = self.parse_list(("do",))
        self.expect_word("do", "until" if until else "while", first.line)
        body = self.parse_list(("done",))
        self.expect_word("done", "until" if until else "while", first.line)
        return While(cond, body, until, self.parse_redirects(), first.line, self.src)

    def parse_for(self) -> For | ArithFor:
        first = self.peek()
        assert first is not None
        if first.word is not None and first.word.unquoted_literal == "select":
            # its body runs with the choice read from standard input, which only the run has: read
            # as a `for` loop it would run with each word in turn
            raise ShellSyntaxError("`select` reads its choice from standard input at run time, which is not "
                                   "read statically", first.line)
        self.i += 1
        t = self.peek()
        if t is not None and t.kind == "arith":
            self.i += 1
            pieces = t.text.split(";")
            if len(pieces) != 3:
                raise ShellSyntaxError("for (( )) needs three expressions", t.line)
            self.skip_separators()
            body = self.parse_do(first.line)
            return ArithFor(pieces[0], pieces[1], pieces[2], body, self.parse_redirects(), first.line, self.src)
        name = t.word.unquoted_literal if t is not None and t.word is not None else None
        if not name:
            raise ShellSyntaxError("expected a variable name after 'for'", first.line)
        self.i += 1
        self.skip_newlines()
        words: list[Word] | None = None
        if self.is_word(self.peek(), "in"):
            self.i += 1
            words = []
            while (w := self.peek()) is not None and w.kind == "word" and w.word is not None:
                words.append(w.word)
                self.i += 1
        self.skip_separators()
        body = self.parse_do(first.line)
        return For(name, None if words is None else tuple(words), body, self.parse_redirects(), first.line,
                   self.src)

    def parse_do(self, line: int) -> Body:
        if self.is_word(self.peek(), "{"):  # `for x in ...; { ...; }` (old style)
            self.i += 1
            body = self.parse_list(("}",))
            self.expect_word("}", "for", line)
            return body
        self.expect_word("do", "for", line)
        body = self.parse_list(("done",))
        self.expect_word("done", "for", line)
        return body

    def parse_case(self) -> Case:
        first = self.peek()
        assert first is not None
        self.i += 1
        t = self.peek()
        if t is None or t.kind != "word" or t.word is None:
            raise ShellSyntaxError("expected a word after 'case'", first.line)
        word = t.word
        self.i += 1
        self.skip_newlines()
        self.expect_word("in", "case", first.line)
        arms: list[CaseArm] = []
        while True:
            self.skip_separators()
            t = self.peek()
            if t is None:
                raise ShellSyntaxError(f"expected 'esac' to close the 'case' on line {first.line}", first.line)
            if self.is_word(t, "esac"):
                self.i += 1
                break
            if self.is_op(t, "("):
                self.i += 1
            patterns: list[Word] = []
            while True:
                p = self.peek()
                if p is None or p.kind != "word" or p.word is None:
                    raise ShellSyntaxError("expected a case pattern", p.line if p else first.line)
                patterns.append(p.word)
                self.i += 1
                if self.is_op(self.peek(), "|"):
                    self.i += 1
                    continue
                break
            if not self.is_op(self.peek(), ")"):
                bad = self.peek()
                raise ShellSyntaxError("expected ')' after a case pattern", bad.line if bad else t.line)
            self.i += 1
            body = self.parse_list(("esac",), (";;", ";&", ";;&"))
            term = ";;"
            nxt = self.peek()
            if self.is_op(nxt, ";;", ";&", ";;&"):
                assert nxt is not None
                term = nxt.op
                self.i += 1
            arms.append(CaseArm(tuple(patterns), body, term, t.line))
        return Case(word, tuple(arms), self.parse_redirects(), first.line, self.src)

    def parse_test(self) -> Test:
        first = self.peek()
        assert first is not None
        self.i += 1
        words: list[Word] = []
        while True:
            t = self.peek()
            if t is None:
                raise ShellSyntaxError(f"expected ']]' to close the '[[' on line {first.line}", first.line)
            self.i += 1
            if t.kind != "word" or t.word is None:
                raise ShellSyntaxError(f"unexpected {t.op!r} inside '[['", t.line)
            if t.word.unquoted_literal == "]]":
                break
            words.append(t.word)
        return Test(tuple(words), self.parse_redirects(), first.line, self.src)

    def parse_simple(self) -> Simple:
        first = self.peek()
        assert first is not None
        line = first.line
        assigns: list[Assign] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        declaring = False  # the first word is `export`, `declare`, ... (known once it is read)
        while (t := self.peek()) is not None:
            if t.kind == "nl":
                break
            if t.kind == "op":
                if t.op in REDIRECTS:
                    redirects.append(self.parse_redirect())
                    continue
                break
            if t.kind == "arith":
                raise ShellSyntaxError("unexpected '((' inside a command", t.line)
            if t.kind == "arr":
                self.i += 1
                elems: list[Word] = []
                while (e := self.peek()) is not None and not self.is_op(e, ")"):
                    self.i += 1
                    if e.kind == "word" and e.word is not None:
                        elems.append(e.word)
                    elif e.kind == "op":
                        raise ShellSyntaxError(f"unexpected {e.op!r} inside the array {t.name}=(", e.line)
                if e is None:
                    raise ShellSyntaxError(f"unterminated array {t.name}=(", t.line)
                self.i += 1
                name, index = _split_subscript(t.name, t.line)
                if words and not declaring:
                    raise ShellSyntaxError(f"array assignment {t.name}=( after a command word", t.line)
                assigns.append(Assign(name, index, t.append, None, tuple(elems), t.line))
                continue
            assert t.word is not None
            if not words or declaring:
                assign = _assignment(t.word)
                if assign is not None:
                    assigns.append(assign)
                    self.i += 1
                    continue
            if not words and t.word.unquoted_literal in _RESERVED_END:
                break
            words.append(t.word)
            if len(words) == 1:
                declaring = t.word.unquoted_literal in DECLARERS
            self.i += 1
        if not words and not assigns and not redirects:
            bad = self.peek()
            what = (bad.op if bad.kind == "op" else "end of line") if bad else "end of script"
            raise ShellSyntaxError(f"unexpected {what!r}", bad.line if bad else line)
        return Simple(tuple(assigns), tuple(words), tuple(redirects), line, self.src)


def _split_subscript(name: str, line: int) -> tuple[str, Word | None]:
    if "[" not in name:
        return name, None
    base, _, rest = name.partition("[")
    text = rest[:-1] if rest.endswith("]") else rest
    return base, Word((Part("lit", text, False),), line, text)


def _subscript_end(raw: str, start: int) -> int | None:
    """Where the `]` closing an array subscript that starts at `start` is in a word's source text
    (quotes, escapes, `$(...)` and `${...}` skipped; None: not closed)."""
    i, depth = start, 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            close = raw.find(c, i + 1) if c == "'" else _closing_quote(raw, i + 1)
            if close < 0:
                return None
            i = close + 1
            continue
        if c == "$" and raw[i + 1:i + 2] in ("(", "{"):
            opening = raw[i + 1]
            closing = ")" if opening == "(" else "}"
            nest, i = 1, i + 2
            while i < len(raw) and nest:
                nest += (raw[i] == opening) - (raw[i] == closing)
                i += 1
            if nest:
                return None
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            if not depth:
                return i
            depth -= 1
        i += 1
    return None


def _closing_quote(raw: str, i: int) -> int:
    while i < len(raw):
        if raw[i] == "\\":
            i += 2
            continue
        if raw[i] == '"':
            return i
        i += 1
    return -1


def _subscripted(word: Word) -> Assign | None:
    """`NAME[sub]=value` / `NAME[sub]+=value` whose subscript holds expansions or quotes
    (`A[$i]=x`, `M["${k}_${j}"]=v`): the index is the subscript's source text (each walker expands
    it as an index or a key), the value the word's parts after `]=`."""
    head = word.parts[0] if word.parts else None
    m = _ARRAY_HEAD.match(head.text) if head is not None and head.kind == "lit" and not head.quoted else None
    if m is None or len(word.parts) < 2 or not word.raw.startswith(head.text):  # type: ignore[union-attr]
        return None
    end = _subscript_end(word.raw, m.end())
    if end is None:
        return None
    append = word.raw.startswith("+=", end + 1)
    if not (append or word.raw.startswith("=", end + 1)):
        return None
    marker = "]+=" if append else "]="
    # the parts split where the subscript ends: the first unquoted literal part holding the marker,
    # whose text before it ends the subscript's source text
    for k, part in enumerate(word.parts[1:], 1):
        if part.kind != "lit" or part.quoted or marker not in part.text:
            continue
        before, _, rest = part.text.partition(marker)
        subscript = word.raw[m.end():end]
        if not subscript.endswith(before):
            return None
        value_raw = word.raw[end + len(marker):]
        value = Word(((Part("lit", rest, False),) if rest else ()) + word.parts[k + 1:], word.line, value_raw,
                     word.start + end + len(marker))
        return Assign(m.group(1), Word((Part("lit", subscript, False),), word.line, subscript), append, value, None,
                      word.line)
    return None


def _assignment(word: Word) -> Assign | None:
    """`NAME=value` / `NAME+=value` / `NAME[sub]=value` when the word starts with one."""
    head = word.parts[0] if word.parts else None
    if head is None or head.kind != "lit" or head.quoted:
        return None
    m = _ASSIGN.match(head.text)
    if not m:
        return _subscripted(word)
    rest = head.text[m.end():]
    value_parts = ((Part("lit", rest, False),) if rest else ()) + word.parts[1:]
    value = Word(value_parts, word.line, word.raw[m.end():] if word.raw.startswith(head.text[:m.end()]) else word.raw,
                 word.start + m.end())
    index = None
    if m.group(2):
        text = m.group(2)[1:-1]
        index = Word((Part("lit", text, False),), word.line, text)
    return Assign(m.group(1), index, bool(m.group(3)), value, None, word.line)


def parse(text: str, src: str = "", first_line: int = 1) -> Script:
    """Parse a script (memoized by its text); raises `ShellSyntaxError` with the line. `first_line`:
    the line the text starts on (a command substitution or `eval` text inside a file)."""
    # keyed by the text itself: a str's hash is kept on the object, so the many readings of one sourced
    # file cost a dictionary lookup (a digest of the text cost a pass over it on every call)
    key = (src, text, first_line)
    cached = _CACHE.get(key)
    if cached is not None:
        _CACHE.move_to_end(key)
        return cached
    global _parsed_since
    if _parsed_since + len(text) > MAX_PARSED_TEXT:
        processcache.clear_all()  # sets _parsed_since to 0
    _parsed_since += len(text)
    parser = _Parser(tokenize(text, first_line), src)
    body = parser.parse_list()
    if parser.i < len(parser.toks):
        t = parser.toks[parser.i]
        raise ShellSyntaxError("unexpected token", t.line)
    script = Script(body, src, len(text))
    _CACHE[key] = script
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return script
