"""Simple commands: assignments, builtins, functions, `source`, child scripts and the commands the
evaluator looks for (verifier.shell.launchers).

Modelled (their effect and output are known): `:` `true` `false` `echo` `printf` (also `-v`)
`cat` `tee` `dirname` `basename` `seq` `grep` (on known input) `test`/`[` `export` (`-n`)
`declare`/`typeset`/`local`/`readonly` (`-a -A -x -i -l -u -g`) `unset` `shift` `set` (`--`)
`source`/`.` `eval` `exit` `return` `break` `continue` `let` `read` (`-r -a -d`) `mapfile`/
`readarray` `command` `exec` and no-op builtins (`cd`, `trap`, `wait`, `shopt`, `sleep`, ...).
Any other command is external: its status is unknown and its output opaque. `declare -n` name
references are followed; what `source` and `eval` cannot read fails closed (`_source`, `_eval`).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Protocol

from verifier.core import shellwords
from verifier.core.linear_regex import compile_pattern
from verifier.core.processcache import ByObject, ByText
from verifier.shell.arith import is_number
from verifier.shell.conditions import Operands, compared_number, eval_bracket, eval_single, number_comparison
from verifier.shell.derived import Derivation
from verifier.shell.expansion import may_glob
from verifier.shell.launchers import (
    ChildMatch,
    PythonCode,
    ShellMatch,
    match_child,
    match_python_code,
    match_server,
    match_shell,
    plain_command,
    trusted_download,
)
from verifier.shell.lexer import ShellSyntaxError, Word
from verifier.shell.nodes import Assign, Body, Command, FuncDef, Redirect, Script, Simple
from verifier.shell.options import MAX_CALL_DEPTH, MAX_SOURCE_DEPTH, Options, ShellLimit
from verifier.shell.parser import DECLARERS, parse
from verifier.shell.relocate import relocate
from verifier.shell.unmodelled import (
    OPTION_BUILTINS,
    fetched_code,
    shadowed_declaration,
    unknown_unset,
    unmodelled,
    unmodelled_declaration,
    unread_code,
    unread_script,
)
from verifier.shell.utilities import (
    FETCHERS,
    TRAPS_WITHOUT_SIGNAL,
    basename,
    basename_operands,
    declaration,
    dirname,
    echo_options,
    fetched_at,
    mapfile_lines,
    mapfile_operands,
    note_fetches,
    printf_pieces,
    read_fields,
    read_line,
    read_operands,
    seq_numbers,
    unescape,
)
from verifier.shell.values import Loc, Opaque, Unknown, Val, concat, posix_regex, shape_unknown, shown
from verifier.shell.world import ANY_KEY, NO_LOC, Binding, Found, GenFile, Placed, World


class Evaluator(Protocol):
    """What a simple command reads and changes of the worlds evaluator running it
    (verifier.shell.evaluator.Evaluator, which hands itself in): its settings, what the evaluation has
    read and run so far, and the evaluator's own expansion, assignment and file steps."""

    options: Options
    sink: str | None
    weak: bool
    read_all: bool
    call_depth: int
    source_depth: int
    subst_status: bool | None
    unread: dict[str, Loc]
    sourced: list[str]
    children: list[str]
    scripts: list[Script]
    fetched: dict[str, Loc]
    downloads: dict[str, str]
    reads: set[str]
    initial: dict[str, Binding]
    placed_words: set[str]
    compared: set[tuple[str | Derivation, int, str, str]]
    derived: dict[str, tuple[Derivation, str]]

    def expand_word(self, word: Word, w: World, loc: Loc, split: bool = True, glob: bool = False) -> list[Binding]:
        ...

    def expand_scalar(self, word: Word, w: World, loc: Loc) -> Binding:
        ...

    def expand_text(self, text: str, w: World, loc: Loc) -> Val:
        ...

    def arith(self, expr: str, w: World, loc: Loc, expand: bool = True) -> Val:
        ...

    def ifs(self, w: World) -> str:
        ...

    def lookup(self, w: World, name: str, loc: Loc, record: bool = True) -> Val | None:
        ...

    def holds_start(self, name: str, binding: Binding) -> bool:
        ...

    def held(self, binding: Binding) -> tuple[Derivation, str] | None:
        ...

    def number_of(self, binding: Binding) -> Binding:
        ...

    def derive(self, w: World, name: str, word: Word, loc: Loc) -> bool:
        ...

    def word_derivation(self, w: World, word: Word) -> Derivation | None:
        ...

    def materialized(self, gen: GenFile) -> GenFile:
        ...

    def deref(self, w: World, name: str, loc: Loc) -> str:
        ...

    def assign(self, w: World, name: str, value: Val, loc: Loc, append: bool = False) -> None:
        ...

    def unset(self, w: World, name: str) -> None:
        ...

    def save_local(self, w: World, name: str) -> None:
        ...

    def operands(self, w: World, loc: Loc) -> Operands[Val]:
        ...

    def run_body(self, body: Body, worlds: list[World]) -> list[World]:
        ...

    def run_command(self, cmd: Command, w: World, stdin: list[tuple[Val, Loc]] | None = None) -> list[World]:
        ...

    def run_unseen(self, script: Script) -> None:
        ...

    def calling(self, func: FuncDef) -> None:
        ...

    def repo_path(self, value: str) -> str | None:
        ...

    def read_file(self, value: Val, w: World) -> tuple[GenFile | None, str | None]:
        ...

    def promote(self, path: str) -> None:
        ...

    def redirect_target(self, redirects: Iterable[Redirect], w: World) -> tuple[str, bool, Loc] | None:
        ...

    def write_file(self, w: World, path: str, pieces: list[tuple[Val, Loc]], append: bool, loc: Loc) -> None:
        ...

    def heredoc_lines(self, redirect: Redirect, w: World, src: str, place: bool = False) -> list[tuple[Val, Loc]]:
        ...

# The sink of what a print-only command writes while nothing captures it (see `_sink_kind`):
# reads that went only there are in no world, so they tell no two checkpoints apart (verifier.shell.memo).
UNCAPTURED = "/dev/stdout"

_NOOPS = frozenset({"trap", "wait", "shopt", "sleep", "ulimit", "umask", "alias", "unalias",
                    "hash", "disown", "enable", "complete", "history", "logger"})
_UNKNOWN_STATUS = frozenset({"type", "which", "getopts"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYED_ELEMENT = re.compile(r"\[([^\]]*)\]=(.*)", re.S)  # `[key]=value` in an associative array
_LITERAL_KEY = re.compile(r"\[([^\]$`'\"\\]*)\]=")  # `[key]=...` with a key written as plain text
_INDEXED_ELEMENT = re.compile(r"\[([^\]]*)\]=")  # `[i]=value` in an indexed array


def _vals(fields: list[Binding]) -> list[Val]:
    return [v for v, _ in fields]


def _text(content: list[tuple[Val, Loc]] | None) -> str | None:
    """Known input as one text (None when any part is not known)."""
    if content is None:
        return None
    pieces = [v for v, _ in content]
    if not all(isinstance(p, str) for p in pieces):
        return None
    return "".join(pieces)  # type: ignore[arg-type]


def _text_lines(content: list[tuple[Val, Loc]] | None) -> list[str] | None:
    """Known input as lines (None when any part is not known)."""
    text = _text(content)
    if text is None:
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return lines


def run_simple(ev: Evaluator, cmd: Simple, w: World, stdin: list[tuple[Val, Loc]] | None, loc: Loc) -> list[World]:
    """Run one simple command in one world."""
    static = _STATIC.get(cmd)
    if static is None:
        static = _static(cmd)
    _, head_word, sink_kind, plain = static
    if head_word in DECLARERS:
        if head_word in w.funcs:
            raise _limit(shadowed_declaration(head_word), loc)
        return [declare(ev, cmd, w, loc)]
    fields: list[Binding] = []
    testing = head_word in ("[", "test")
    if testing and not cmd.redirects and not cmd.assigns and head_word not in w.funcs:
        closed = head_word == "test" or cmd.words[-1].literal() == "]"
        outcome = compared_test(ev, cmd.words[1:] if head_word == "test" else cmd.words[1:-1], w) if closed else None
        if outcome is not None:
            w.status = outcome
            return [w]
    if sink_kind == 0:
        sink = None
    elif sink_kind == 1:
        target = ev.redirect_target(cmd.redirects, w)
        sink = None if target is None else target[0]
    else:
        sink = UNCAPTURED if w.out is None else None
    saved_sink, ev.sink = ev.sink, sink if sink is not None else ev.sink
    placed: list[Placed] = []
    try:
        early = _expand_fields(ev, cmd, w, testing, fields, plain, placed)
    finally:
        ev.sink = saved_sink
    if early:
        _read_placed(ev, placed)
        return [w]
    return _run_expanded(ev, cmd, w, stdin, loc, fields, sink, placed)


# what a simple command is, the same in every world: its first word unquoted, where its output
# goes (`_sink_kind`) and its plain words' fields (None for a word to expand)
_Static = tuple[Simple, "str | None", int, tuple["Binding | None", ...]]
_STATIC: ByObject[_Static] = ByObject("shell.command-static", 8192)


def _static(cmd: Simple) -> _Static:
    """The command's `_Static`, once per node."""
    head = cmd.words[0].unquoted_literal if cmd.words else None
    plain: list[Binding | None] = []
    for word in cmd.words:
        parts = word.parts
        text = parts[0].text if len(parts) == 1 and parts[0].kind == "lit" and not parts[0].quoted else None
        # a plain word (most are): what `expand_word` makes of it, without the call
        plain.append((text, (cmd.src, word.line)) if text is not None and not word.braced and not word.tilde
                     and not may_glob(text) else None)
    return _STATIC.put(cmd, (cmd, head, _sink_kind(cmd, head), tuple(plain)))


def _sink_kind(cmd: Simple, head: str | None) -> int:
    """Where the output of an `echo`/`printf`/`cat <<EOF` goes when nothing reads it back in this
    evaluation unless that file is read: the reads that only feed it are recorded against the file
    (verifier.shell.memo: they do not make two environments differ). 0: not such a command; 1: the
    file its output is redirected to (when known); 2: standard output, when the world's output is
    not being captured."""
    if head not in ("echo", "printf", "cat"):
        return 0
    raws = [x.raw for x in cmd.words] + [r.heredoc.body for r in cmd.redirects if r.heredoc is not None]
    if any(":=" in t or "$((" in t or "$(" in t or "`" in t or "$[" in t or _EFFECTFUL.search(t) for t in raws):
        return 0
    if head == "printf" and (len(cmd.words) < 2 or cmd.words[1].raw == "-v" or not _stays(cmd.words[1])):
        return 0  # a format that may expand to nothing makes `printf` fail: its status would read it
    if head == "cat" and (len(cmd.words) > 1 or not any(r.heredoc is not None for r in cmd.redirects)):
        return 0  # a file named on the line is read (its status, and what it promotes)
    outputs = [r for r in cmd.redirects if r.op in (">", ">>", ">|", "&>", "&>>") and r.fd in ("", "1")]
    if outputs:
        return 1
    return 2 if head != "cat" else 0


# an expansion that may do more than make text: `${X?msg}` / `${X:?msg}` (exit when unset or empty),
# `${X=v}` (assigns), a subscript or offset (arithmetic, which may assign: `${A[i++]}`, `${X:i++}`),
# `${!X}` (expands whatever X names, operators included). Read under a sink, the variables it reads
# would decide more than the output. Matched at each `${` on the operator right after the name (a
# nested `${...}` is matched at its own `${`), so the search stays linear in the text.
_EFFECTFUL = re.compile(r"\$\{(?:!|#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(?:[?=\[]|:[^-+]))")


def _stays(word: Word) -> bool:
    """Whether a word always makes at least one field (quoted text, or plain text)."""
    return any(p.quoted or (p.kind == "lit" and p.text) for p in word.parts)


# A word that is one starting variable, `$X` / `"${X}"`, or one with literal text around it
# (`--tp=$TP`): the variable's name (`placed_word`).
_WHOLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*|_[A-Za-z0-9_]+")
_PATTERN_CHARS = frozenset("*?[]")


def placeable(binding: Binding | None) -> bool:
    """Whether a variable's value is a number, which a command word made of the variable and literal
    text takes as one field whatever number it is (`placed_word`; verifier.shell.memo reuses an
    evaluation that only placed the variable for any environment where this holds)."""
    return binding is not None and is_number(binding[0])


def placed_word(ev: Evaluator, word: Word, w: World, whole: bool = True,
                derived: bool = False) -> tuple[str, str, str] | None:
    """(variable, text before it, text after it) when a command word is a starting variable's number
    and literal text (`whole`: the variable alone, `$X` / `"${X}"`): the variable still holds the
    starting environment's binding, a number, so the word is one field whatever number it is (no
    IFS of the script splits it, no pattern, brace or tilde expansion is made of it). Whether the
    variable is read depends on the command (`_read_placed`): a server's argument only places the
    value (`_templated`). With `derived`, also a variable that holds a derived number
    (verifier.shell.derived): its starting variables are then the ones placed."""
    parts = word.parts
    if ev.sink is not None or ev.weak or (whole and len(parts) != 1) or word.braced or word.tilde \
            or word.old_arithmetic:
        return None
    found = -1
    for k, part in enumerate(parts):
        if part.kind == "lit":
            if not _PATTERN_CHARS.isdisjoint(part.text):
                return None
        elif part.kind != "param" or found >= 0:
            return None
        else:
            found = k
    if found < 0:
        return None
    param = parts[found]
    name = param.text
    if not _WHOLE_NAME.fullmatch(name) or (w.refs and name in w.refs) or name in w.arrays or name in w.assocs:
        return None
    binding = w.vars.get(name)
    if binding is None:
        return None
    if not (derived and ev.held(binding) is not None) and \
            (not ev.holds_start(name, binding) or not placeable(binding)):
        return None
    if not param.quoted and any(c.isdigit() for c in ev.ifs(w)):
        return None
    return name, "".join(p.text for p in parts[:found]), "".join(p.text for p in parts[found + 1:])


def compared_test(ev: Evaluator, words: Sequence[Word], w: World, double: bool = False) -> bool | None:
    """The outcome of a test (`[[ ]]`'s words, `[ ]`'s or `test`'s arguments) that compares a word
    which is a starting variable's number (`placed_word`), not read so far, with a literal number
    (verifier.shell.conditions.number_comparison), recorded as that comparison (`Evaluator.compared`)
    instead of a read: an environment whose number compares alike goes the same way
    (verifier.shell.memo). A `[[ ]]` (`double`) may join such comparisons with `&&` and `||`
    (`[[ $CONC == 32 || $CONC == 64 ]]`): each is recorded, whichever bash would not need. None: any
    other test, evaluated as before."""
    # the comparisons, in groups joined by `||` of comparisons joined by `&&`
    groups: list[list[list[Word]]] = [[[]]]
    for word in words:
        joiner = word.unquoted_literal if double and word.raw in ("&&", "||") else None
        if joiner == "||":
            groups.append([[]])
        elif joiner == "&&":
            groups[-1].append([])
        else:
            groups[-1][-1].append(word)
    found = [[_comparison(ev, comparison, w) for comparison in group] for group in groups]
    if any(one is None for group in found for one in group):
        return None
    ev.compared.update(one[1] for group in found for one in group if one is not None)
    # `&&` binds tighter than `||` in `[[ ]]`
    return any(all(one is not None and one[0] for one in group) for group in found)


def _comparison(ev: Evaluator, words: Sequence[Word],
                w: World) -> tuple[bool, tuple[str | Derivation, int, str, str]] | None:
    """One comparison of `compared_test`: its outcome and its record (None: not such a comparison)."""
    comparison = number_comparison(words)
    if comparison is None:
        return None
    k, op, literal = comparison
    got = placed_word(ev, words[k], w, derived=True)
    if got is None:
        return None
    binding = w.vars[got[0]]
    value = binding[0]
    derived = ev.held(binding)
    subject: str | Derivation = got[0]
    if derived is not None:  # a derived number: the comparison is of what it is derived from
        subject, value = derived
        if ev.reads.issuperset(subject.bases):
            return None
    elif got[0] in ev.reads:
        return None
    outcome = compared_number(value, k, op, literal)
    return None if outcome is None else (outcome, (subject, k, op, literal))


def _read_placed(ev: Evaluator, placed: list[Placed]) -> None:
    """The placed words' variables are read after all (the command is not a server start)."""
    for word in placed:
        ev.reads.update(word.names)


def _expand_fields(ev: Evaluator, cmd: Simple, w: World, testing: bool, fields: list[Binding],
                   plain: tuple[Binding | None, ...], placed: list[Placed]) -> bool:
    """Expand the command's words into `fields`; True when an expansion ended the world. A word that
    is a starting variable's number (`placed_word`), not read so far, is listed in `placed` instead
    of read."""
    for k, word in enumerate(cmd.words):
        field = plain[k]
        if field is not None:
            fields.append(field)
            if w.flow is not None:
                return True
            continue
        placing = placed_word(ev, word, w, whole=False, derived=True) if k and not testing else None
        held = None if placing is None else ev.held(w.vars[placing[0]])
        derivation = None if held is None else held[0]
        if placing is None and k and not testing:
            derivation = ev.word_derivation(w, word)  # `"$((CONC * 3 / 2))"`: placed as a variable holding it
            if derivation is not None:
                placing = ("", "", "")
        # the starting variables the word would place that nothing has read so far (of a derived
        # number's, those read already are compared whole, and the rest still only placed)
        unread = () if placing is None else [n for n in ((placing[0],) if derivation is None else derivation.bases)
                                             if n not in ev.reads]
        if placing is not None and unread:
            at = (cmd.src, word.line)
            got = ev.expand_word(word, w, at, split=True, glob=True)
            ev.reads.difference_update(unread)
            # a derived number's word is where the evaluator put it, in every environment alike
            placed.append(Placed(len(fields), placing[0], at if derivation is None else got[0][1], placing[1],
                                 placing[2], derivation))
            fields.extend(got)
            if w.flow is not None:
                return True
            continue
        if testing and k and cmd.words[k - 1].unquoted_literal in ("-z", "-n"):
            ev.weak, weak = True, ev.weak
            try:
                fields.extend(ev.expand_word(word, w, (cmd.src, word.line), split=True, glob=True))
            finally:
                ev.weak = weak
        else:
            fields.extend(ev.expand_word(word, w, (cmd.src, word.line), split=True, glob=True))
        if w.flow is not None:
            return True
    return False


def _run_expanded(ev: Evaluator, cmd: Simple, w: World, stdin: list[tuple[Val, Loc]] | None, loc: Loc,
                  fields: list[Binding], sink: str | None, placed: list[Placed]) -> list[World]:
    for r in cmd.redirects:
        if r.op == "<<<" and r.target is not None:
            value, _ = ev.expand_scalar(r.target, w, (cmd.src, r.line))
            stdin = [(concat([value, "\n"], (cmd.src, r.line)), (cmd.src, r.line))]
        elif r.op in ("<<", "<<-"):
            saved_sink, ev.sink = ev.sink, sink if sink is not None else ev.sink
            # `cat <<EOF > FILE`: the lines only go to that file, which may hold numbers in place
            place = sink is not None and sink != UNCAPTURED and bool(fields) and fields[0][0] == "cat"
            try:
                stdin = ev.heredoc_lines(r, w, cmd.src, place)
            finally:
                ev.sink = saved_sink
        elif r.op == "<" and r.target is not None and r.fd in ("", "0"):
            value, _ = ev.expand_scalar(r.target, w, (cmd.src, r.line))
            gen, text = ev.read_file(value, w)
            if gen is not None and gen.lines is not None:
                stdin = [(line + "\n", lc) for line, lc in gen.lines]
            elif text is not None:
                stdin = [(text, (cmd.src, r.line))]
            else:
                stdin = [(Opaque(f"<{shown(value)}", loc), loc)]
    if not fields:
        ev.subst_status = True  # the status of the last command substitution in it, else success
        for a in cmd.assigns:
            do_assign(ev, w, a, cmd.src)
        target = ev.redirect_target(cmd.redirects, w)
        if target is not None and target[0] != "/dev/null":
            ev.write_file(w, target[0], [], target[1], loc)
        w.status = ev.subst_status
        return [w]
    target = ev.redirect_target(cmd.redirects, w)
    saved = w.out
    if target is not None:
        w.out = []
    worlds = dispatch(ev, cmd, fields, w, stdin, loc, placed)
    if target is not None:
        for x in worlds:
            written = x.out
            x.out = saved
            if target[0] != "/dev/null":
                ev.write_file(x, target[0], written or [], target[1], loc)
    return worlds


def dispatch(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
             loc: Loc, placed: list[Placed] | None = None) -> list[World]:
    values = _vals(fields)
    head = values[0]
    # a function of the script runs in place of the command of its name (`python3() { ...; }`)
    shadowed = isinstance(head, str) and head in w.funcs and head not in ("command", "builtin")
    plain = shadowed or (isinstance(head, str) and plain_command(head, ev.options.commands))
    if ev.options.mode == "server" and not plain:
        found = match_server(values, ev.options.commands)
        if found is not None:
            env = {} if found.cleared else _env_snapshot(ev, cmd, w, loc)
            for gone in found.unset:
                if gone is None:
                    raise _limit(unknown_unset(shown(values[0])), loc)
                env.pop(gone, None)
            for name, idx in found.env:
                value = values[idx]
                text = value.split("=", 1)[1] if isinstance(value, str) else value
                env[name] = (text, fields[idx][1])
            templated = _templated(ev, w, found.argv_start, placed or [])
            extra = (("engine", found.engine), ("module", found.module), ("start", found.start),
                     ("argv_start", found.argv_start), *((("templated", templated),) if templated else ()))
            referenced = _referenced_by(values) if w.files else None
            files = tuple((p, f) for p, f in sorted(w.files.items()) if referenced is not None and referenced(p))
            for p, _f in files:
                ev.promote(p)
            w.found = w.found + (Found("server", tuple(fields), tuple([(n, b[0], b[1]) for n, b in env.items()]),
                                       loc, files, "", extra),)
            w.status = None
            _output_unknown(w, loc, cmd)
            return [w]
    if placed:
        _read_placed(ev, placed)
    child = None if plain else match_child(values, ev.options.commands)
    if child is not None and isinstance(values[child.script], str):
        return run_child(ev, cmd, fields, child, w, loc)
    shell = None if plain or child is not None else match_shell(values, ev.options.commands)
    if shell is not None:
        return run_shell(ev, cmd, fields, shell, w, stdin, loc)
    code = None if plain or child is not None else match_python_code(values, ev.options.commands)
    if code is not None:
        why = _unread_python(ev, values, code, stdin)
        if why is not None:
            raise _limit(why, loc)
    if not isinstance(head, str):
        return _ran_unknown(w, loc, cmd)
    if shadowed:
        return call_function(ev, cmd, w.funcs[head], fields[1:], w, loc)
    if head in OPTION_BUILTINS:
        why = unmodelled(head, [v if isinstance(v, str) else None for v in values[1:]])
        if why is not None:
            raise _limit(why, loc)
    handler = _BUILTINS.get(head)
    if handler is not None:
        return handler(ev, cmd, fields, w, stdin, loc)
    if head in _NOOPS:
        w.status = True
        # what a handler that runs at the end prints
        if head == "trap" and any(v in TRAPS_WITHOUT_SIGNAL or not isinstance(v, str) for v in values[2:]):
            _emit(w, Opaque("$(trap ...)", loc), loc)
        return [w]
    known = ev.options.known_functions.get(head)
    if known is not None:
        var, op, value = known
        w.status = eval_single(ev.operands(w, loc), [ev.lookup(w, var, loc) or "", op, value])
        return [w]
    if head in _UNKNOWN_STATUS:  # what they print is the run's too
        w.status = None
        _emit(w, Opaque(f"$({head} ...)", loc), loc)
        return [w]
    # an external command: unknown status, opaque output
    if head in ("hf", "huggingface-cli") and "download" in values:
        _note_download(ev, values)
    if head in FETCHERS:
        _note_fetch(ev, head, values, loc)
    return _ran_unknown(w, loc, cmd)


def _templated(ev: Evaluator, w: World, argv_start: int, placed: list[Placed]) -> tuple[Placed, ...]:
    """The server's placed argument words (`placed_word`), each with its index in the server's argv:
    the server takes whatever number the variable holds, and the evaluation decided nothing with
    it, so they are not reads (`Evaluator.placed_words`; verifier.shell.memo puts another
    environment's number there). A placed word among the launcher's words is read, and so is one
    that may name a generated file the server is handed for some number (`_may_name`)."""
    if not placed:
        return ()
    shapes = _file_shapes(w.files) if w.files else None
    out = []
    for word in placed:
        if word.field >= argv_start and not (shapes and _may_name(word, shapes)):
            out.append(dataclasses.replace(word, field=word.field - argv_start))
            ev.placed_words.update(word.names)
        else:
            ev.reads.update(word.names)
    return tuple(out)


# every run of digits, and the stand-in for a placed number (`_may_name`)
_NUMBER_RUNS = re.compile("[0-9\x00]+")
MAX_PLACED_TAILS = 8  # `=` signs in a placed word past which it is taken to name a file (cost stays linear)


def _file_shapes(paths: Iterable[str]) -> set[str]:
    """The generated files' paths, as written and in normal form, each run of digits made one `#`."""
    out: set[str] = set()
    for path in paths:
        out.add(_NUMBER_RUNS.sub("#", path))
        out.add(_NUMBER_RUNS.sub("#", _normpath(path)))
    return out


def _may_name(word: Placed, shapes: set[str]) -> bool:
    """Whether the word may name one of the files (their `_file_shapes`) for some number, as
    `_referenced_by` reads a word: its normal form is the file's, or the file is what follows an `=`
    of the word. A number is no path component of its own (`.`, `..`), so the normal form of the
    word is that of its text with a stand-in where the number goes; every run of digits is alike
    in a shape, which can only say yes where no number would name the file (the variable is then
    read). Linear in the word and the files."""
    text = word.text("\x00")
    if _NUMBER_RUNS.sub("#", _normpath(text)) in shapes:
        return True
    shape = _NUMBER_RUNS.sub("#", text)
    equals = [i for i, c in enumerate(shape) if c == "="]
    if len(equals) > MAX_PLACED_TAILS:
        return True
    return any(shape[i + 1:] in shapes for i in equals)


def _referenced(path: str, values: list[Val]) -> bool:
    """True when a command word names the file (`--config f`, `--config=f`)."""
    return _referenced_by(values)(path)


# a server's words are normalised for every point and world that starts it: once per text
_normpath = lru_cache(maxsize=16384)(posixpath.normpath)


def _referenced_by(values: list[Val]) -> Callable[[str], bool]:
    """`_referenced` for many files against the same words (each word normalised once).

    A word equal to the path or to its normal form has that normal form itself, so the test is: a
    word's normal form is the path's, or a word ends in `=path`."""
    words = [v for v in values if isinstance(v, str)]
    norms = {_normpath(v) for v in words}
    # what follows each `=` of a word: a word ends in `=path` when path is one of them
    after_eq: set[str] = set()
    for v in words:
        i = v.find("=")
        while i >= 0:
            after_eq.add(v[i + 1:])
            i = v.find("=", i + 1)

    def referenced(path: str) -> bool:
        return _normpath(path) in norms or path in after_eq

    return referenced


def _note_download(ev: Evaluator, values: list[Val]) -> None:
    """`hf download REPO [files] --local-dir DIR`: DIR holds that repository."""
    k = values.index("download")
    repo = values[k + 1] if k + 1 < len(values) else None
    target: Val | None = None
    for i, v in enumerate(values):
        if v == "--local-dir" and i + 1 < len(values):
            target = values[i + 1]
        elif isinstance(v, str) and v.startswith("--local-dir="):
            target = v.split("=", 1)[1]
    if isinstance(repo, str) and isinstance(target, str) and not repo.startswith("-"):
        ev.downloads[posixpath.normpath(target)] = repo


def _note_fetch(ev: Evaluator, head: str, values: list[Val], loc: Loc) -> None:
    """Files a command brings onto the machine at run time (verifier.shell.utilities.fetch_targets):
    sourcing one of them fails closed (`_source`)."""
    note_fetches(ev.fetched, head, [shown(v) for v in values[1:]], loc)


_COMMAND_TEXTS: ByObject[str] = ByObject("shell.command-texts", 4096)


def _command_text(cmd: Simple) -> str:
    """`$(<the command's words>)`, the text of its unknown output, once per command node (an inline
    program `python3 -c "..."` is long, and a library's commands run in every evaluation)."""
    cached = _COMMAND_TEXTS.get(cmd)
    if cached is not None:
        return cached
    return _COMMAND_TEXTS.put(cmd, "$(" + " ".join(x.raw for x in cmd.words) + ")")


def _ran_unknown(w: World, loc: Loc, cmd: Simple) -> list[World]:
    """The outcome of a command the evaluator does not run: unknown status and output."""
    _output_unknown(w, loc, cmd)
    w.status = None
    return [w]


def _output_unknown(w: World, loc: Loc, cmd: Simple) -> None:
    if w.out is not None:
        w.out.append((Opaque(_command_text(cmd), loc), loc))


def _emit(w: World, text: Val, loc: Loc) -> None:
    if w.out is not None:
        w.out.append((text, loc))


_SORTED: list[tuple[frozenset[str], list[str]]] = []


def _sorted_names(names: set[str]) -> list[str]:
    """`sorted(names)`; the last order made is reused while the set is equal (every world and
    point that starts a command exports the same names: comparing sets is cheaper than sorting)."""
    if _SORTED and _SORTED[0][0] == names:
        return _SORTED[0][1]
    order = sorted(names)
    _SORTED[:] = [(frozenset(names), order)]
    return order


def _env_snapshot(ev: Evaluator, cmd: Simple, w: World, loc: Loc) -> dict[str, Binding]:
    """The environment a command sees: exported variables plus its prefix assignments."""
    env: dict[str, Binding] = {}
    for name in _sorted_names(w.exported):
        b = w.vars.get(name)
        if b is None and name in w.arrays and w.arrays[name]:
            b = w.arrays[name][0]
        if b is not None:
            env[name] = ev.number_of(b)
    for a in cmd.assigns:
        if a.value is not None:
            value, _ = ev.expand_scalar(a.value, w, (cmd.src, a.line))
            env[a.name] = (value, (cmd.src, a.line))
    return env


# ------------------------------------------------------------------------------- child scripts


def _child_env(ev: Evaluator, cmd: Simple, child: ChildMatch, w: World, loc: Loc) -> dict[str, Binding]:
    """The environment a started script or shell sees (`ChildMatch`: all exported variables, or
    those a wrapper names, and what it sets)."""
    env = _env_snapshot(ev, cmd, w, loc)
    if not child.passthrough:
        env = {n: env[n] for n in child.names if n in env}
    for name, text in child.sets:
        value: Val = text
        env[name] = (value, loc)
    return env


def run_child(ev: Evaluator, cmd: Simple, fields: list[Binding], child: ChildMatch, w: World, loc: Loc) -> list[World]:
    """`bash FILE.sh`: recorded (runner mode) or followed (server mode). A script that cannot be
    read (not in the repository, or a file the run makes) is not followed: what it starts is not
    known, so the evaluation stops there (verifier.shell.unmodelled)."""
    script_value = fields[child.script][0]
    assert isinstance(script_value, str)
    env = _child_env(ev, cmd, child, w, loc)
    if ev.options.mode == "child":
        w.found = w.found + (Found("child", tuple(fields), tuple((n, v, lc) for n, (v, lc) in env.items()), loc,
                                   (), child.cwd or "", (("script", child.script),)),)
        w.flow = ("stop",)
        w.status = None
        return [w]
    read = _script_file(ev, shown(fields[0][0]), script_value, loc)
    if read is None:
        return _ran_unknown(w, loc, cmd)
    return _follow(ev, read[0], read[1], 1, env, script_value, tuple(fields[child.script + 1:]), w, loc)


def _script_file(ev: Evaluator, program: str, path: str, loc: Loc) -> tuple[str, str] | None:
    """The text and repository path of a script file a started shell runs (None: children are not
    followed, `Options.follow_children`); one the script fetches at run time, or the repository does
    not hold, stops the evaluation (verifier.shell.unmodelled)."""
    if not ev.options.follow_children:
        return None
    fetched = fetched_at(ev.fetched, path)
    if fetched is not None:
        raise _limit(fetched_code(program, path, _where(fetched)), loc)
    repo = ev.repo_path(path)
    text = ev.options.reader(repo) if repo is not None else None
    if text is None:
        raise _limit(unread_script(path, repo is not None), loc)
    return text, repo or path


def run_shell(ev: Evaluator, cmd: Simple, fields: list[Binding], shell: ShellMatch, w: World,
              stdin: list[tuple[Val, Loc]] | None, loc: Loc) -> list[World]:
    """A shell started on code `match_child` does not read (`ShellMatch`): its `-c` code or the
    here-document it reads is followed as a script of its own, with the environment it is given
    (`bash -c CODE NAME ARGS`: NAME is its $0); code only the run knows (a pipe from a download, a
    file it makes, a word it computes) stops the evaluation, naming the line."""
    values = _vals(fields)
    head = shown(values[0])
    index = shell.child.script
    if shell.source == "file":
        target = values[index]
        if not isinstance(target, str):
            raise _limit(unread_code(head, "file", shown(target)), loc)
        read = _script_file(ev, head, target, loc)
        if read is None:
            return _ran_unknown(w, loc, cmd)
        (text, name), first, arg0, args = read, 1, target, tuple(fields[shell.rest:])
    elif shell.source == "inline":
        code = values[index]
        if not isinstance(code, str):
            raise _limit(unread_code(head, "inline", shown(code)), loc)
        text, name, first = code, loc[0], loc[1]  # the code is written on the command's line
        named = values[shell.rest] if shell.rest < len(values) else head
        arg0 = named if isinstance(named, str) else head
        args = tuple(fields[shell.rest + 1:])
    else:
        if not _known_text(stdin):
            why = _unread_stdin(ev, head, stdin)
            if why is not None:
                raise _limit(why, loc)
            return _ran_unknown(w, loc, cmd)  # a trusted download (policy launcher.trusted-downloads)
        assert stdin is not None
        # a here-document's lines carry where they are written; other text is taken as the command's line
        text, name, arg0, args = "".join(str(v) for v, _ in stdin), loc[0], head, tuple(fields[shell.rest:])
        first = stdin[0][1][1] if stdin and stdin[0][1][0] == loc[0] and stdin[0][1][1] else loc[1]
    return _follow(ev, text, name, first, _child_env(ev, cmd, shell.child, w, loc), arg0, args, w, loc)


def _unread_python(ev: Evaluator, values: list[Val], code: PythonCode, stdin: list[tuple[Val, Loc]] | None
                   ) -> str | None:
    """Why the program a Python interpreter runs is not read (`PythonCode`), or None: code from a pipe
    that is no trusted download, a script only the run names (a process substitution, a computed
    path), or one the script fetches. A here-document, a repository script and a file of the image
    are what they were: Python the walkers do not read (docs/hostile-inputs.md)."""
    program = shown(values[0])
    if code.source == "stdin":
        return None if _known_text(stdin) else _unread_stdin(ev, program, stdin)
    target = values[code.index]
    fetched = fetched_at(ev.fetched, shown(target))  # a fetch into a directory only the run names, too
    if fetched is not None:
        return fetched_code(program, shown(target), _where(fetched))
    return None if isinstance(target, str) else unread_code(program, "file", shown(target))


def _known_text(stdin: list[tuple[Val, Loc]] | None) -> bool:
    """Whether a program's standard input is text the script holds (a here-document, a here-string,
    the known output of the command piped into it)."""
    return stdin is not None and all(isinstance(v, str) for v, _ in stdin)


def _unread_stdin(ev: Evaluator, program: str, stdin: list[tuple[Val, Loc]] | None) -> str | None:
    """Why a shell or Python reading its program from standard input that the script does not hold
    is not read, or None when that input is a trusted download (policy `launcher.trusted-downloads`)."""
    fed = "".join(shown(v) for v, _ in stdin or ())
    return None if trusted_download(_piped_words(fed), ev.options.commands) else unread_code(program, "stdin", fed)


def _piped_words(fed: str) -> list[str]:
    """The words of the one command whose output a pipe feeds (`$(curl -LsSf URL)`, the text of its
    unknown output, `_command_text`), split as the shell would; none when a word would be expanded
    at run time (a parameter, a command substitution, a glob)."""
    if not (fed.startswith("$(") and fed.endswith(")")):
        return []
    try:
        words = shellwords.split(fed[2:-1])
    except ValueError:  # an unterminated quote
        return []
    return [] if any(c in word for word in words for c in "$`*?[") else words


def _follow(ev: Evaluator, text: str, name: str, first_line: int, env: dict[str, Binding], arg0: str,
            args: tuple[Binding, ...], w: World, loc: Loc) -> list[World]:
    """Run shell code (of `name`, from `first_line` on) as a process of its own: it starts from
    `env` and its positional arguments; only what it starts comes back to the caller (its servers
    and scripts, and a runner's stop at the benchmark script), not its variables."""
    if ev.source_depth >= 8:
        raise _limit(f"scripts run each other more than 8 deep (limit; {arg0})", loc)
    try:
        script = parse(text, name, first_line)
    except ShellSyntaxError as exc:
        raise _limit(f"{name}:{exc.line}: {exc.message}", loc) from exc
    ev.children.append(name)
    ev.scripts.append(script)
    sub = World()
    for var, binding in env.items():
        sub.vars[var] = binding
        sub.exported.add(var)
    sub.arg0 = arg0
    sub.sources = (script.src,)
    sub.pos = args
    sub.found = w.found
    sub.assume = w.assume
    ev.source_depth += 1
    try:
        outs = ev.run_body(script.body, [sub])
    finally:
        ev.source_depth -= 1
    result: list[World] = []
    for x in outs:
        y = w.copy()
        y.found = x.found
        y.assume = x.assume
        y.status = None
        if x.flow == ("stop",):  # a runner started the benchmark script in it (`run_child`)
            y.flow = x.flow
        result.append(y)
    return result


# ------------------------------------------------------------------------------- functions


def call_function(ev: Evaluator, cmd: Simple, func: FuncDef, args: list[Binding], w: World, loc: Loc) -> list[World]:
    """Run a shell function with its arguments and `local` scoping."""

    if ev.call_depth >= MAX_CALL_DEPTH:
        raise _limit(f"functions call each other more than {MAX_CALL_DEPTH} deep (limit; `{func.name}` on line "
                     f"{loc[1]})", loc)
    ev.calling(func)
    saved_pos = w.pos
    temp = _prefix_on(ev, cmd, w)
    w.pos = tuple(args)
    w.frames = w.frames + ({},)
    ev.call_depth += 1
    try:
        outs = ev.run_command(func.body, w)
    finally:
        ev.call_depth -= 1
    for x in outs:
        frame = x.frames[-1] if x.frames else {}
        for name, (var, arr, table, exported, ref, attrs) in frame.items():
            if attrs is not None or name in x.attrs:  # the attributes it hid (a copy: worlds may share it)
                x.attrs = {**{k: v for k, v in x.attrs.items() if k != name}, **({name: attrs} if attrs else {})}
            x.refs.pop(name, None)
            if ref is not None:
                x.refs[name] = ref
            x.vars.pop(name, None)
            x.arrays.pop(name, None)
            x.assocs.pop(name, None)
            x.exported.discard(name)
            if var is not None:
                x.vars[name] = var
            if arr is not None:
                x.arrays[name] = arr
            if table is not None:
                x.assocs[name] = table
            if exported:
                x.exported.add(name)
        x.frames = x.frames[:-1]
        x.pos = saved_pos
        _prefix_off(x, temp)
        if x.flow is not None and x.flow[0] == "return":
            x.flow = None
    return outs


def _prefix_on(ev: Evaluator, cmd: Simple, w: World) -> dict[str, Binding | None]:
    """`X=v cmd` of a function or `eval`: X holds v while it runs; what X held, to give back."""
    temp: dict[str, Binding | None] = {}
    for a in cmd.assigns:
        temp[a.name] = w.vars.get(a.name)
        do_assign(ev, w, a, cmd.src)
    return temp


def _prefix_off(w: World, temp: dict[str, Binding | None]) -> None:
    for name, old in temp.items():
        if old is None:
            w.vars.pop(name, None)
        else:
            w.vars[name] = old


# ------------------------------------------------------------------------------- assignments


def _any_key(table: dict[str, Binding], loc: Loc) -> dict[str, Binding]:
    """An associative array after a write under a key only the run knows: every entry, and every key
    it does not hold (`ANY_KEY`), may hold that value."""
    unknown = Unknown("an element written with a run-time key", loc)
    out: dict[str, Binding] = {k: (unknown, lc) for k, (_, lc) in table.items()}
    out[ANY_KEY] = (unknown, loc)
    return out


def do_assign(ev: Evaluator, w: World, a: Assign, src: str, assoc: bool = False) -> None:
    """One assignment (`NAME=v`, `NAME+=v`, `NAME[i]=v`, `NAME=(...)`)."""
    loc = (src, a.line)
    if w.refs and a.name in w.refs and (a.array is not None or a.index is not None):
        target = ev.deref(w, a.name, loc)  # an array written through a name reference
        if not target:

            raise ShellLimit(f"an array is assigned through the name reference `{a.name}`, which refers to "
                             "nothing yet", loc)
        a = dataclasses.replace(a, name=target)
    if a.array is not None:
        if assoc or a.name in w.assocs:
            table: dict[str, Binding] = dict(w.assocs.get(a.name, {})) if a.append else {}
            for elem in a.array:
                raw = elem.literal()
                text_value, eloc = ev.expand_scalar(elem, w, (src, elem.line))
                m = _KEYED_ELEMENT.match(raw or (text_value if isinstance(text_value, str) else ""))
                if m:
                    table[m.group(1)] = (m.group(2), (src, elem.line))
                    continue
                # `[k]=$(cmd)`: a run-time value under a key written literally; any other element
                # (a run-time key) may be under any key
                literal = _LITERAL_KEY.match(elem.raw)
                if literal is not None:
                    table[literal.group(1)] = (text_value if isinstance(text_value, Unknown) else
                                               Opaque(f"${{{a.name}[{literal.group(1)}]}}", (src, elem.line)),
                                               (src, elem.line))
                else:
                    table = _any_key(table, (src, elem.line))
            w.assocs[a.name] = table
            w.vars.pop(a.name, None)
            return
        values: list[Binding] = []
        for elem in a.array:
            raw = elem.raw
            m = _INDEXED_ELEMENT.match(raw) if raw.startswith("[") else None
            if m:  # [i]=value inside an indexed array
                value, _ = ev.expand_scalar(elem, w, (src, elem.line))
                text = value.split("=", 1)[1] if isinstance(value, str) and "=" in value else value
                values.append((text, (src, elem.line)))
                continue
            values.extend(ev.expand_word(elem, w, (src, elem.line), split=True, glob=True))
        old = w.arrays.get(a.name, ()) if a.append else ()
        if a.append and not old and a.name in w.vars:
            old = (ev.number_of(w.vars[a.name]),)
        w.arrays[a.name] = tuple(old) + tuple(values)
        w.vars.pop(a.name, None)
        return
    assert a.value is not None
    if a.index is None and not a.append and ev.derive(w, a.name, a.value, loc):
        return
    value, _vloc = ev.expand_scalar(a.value, w, loc)
    if a.index is not None:
        sub = a.index.literal() or ""
        if a.name in w.assocs or assoc:
            key = ev.expand_text(sub, w, loc)
            if isinstance(key, str):
                old = w.assocs.get(a.name, {}).get(key)
                if a.append and old is not None:
                    value = concat([old[0], value], loc)
                w.set_assoc(a.name, key, (value, loc))
            else:
                w.assocs[a.name] = _any_key(w.assocs.get(a.name, {}), loc)
            return
        idx = ev.arith(sub, w, loc, expand=True)
        arr = list(w.arrays.get(a.name, ()))
        if not arr and a.name in w.vars:
            arr = [ev.number_of(w.vars.pop(a.name))]
        if not isinstance(idx, str):
            w.arrays[a.name] = tuple((Unknown("an element written with a run-time index", loc), lc) for _, lc in arr) \
                or ((Unknown("an element written with a run-time index", loc), loc),)
            return
        k = int(idx)
        if k < 0:  # counted from the end (bash fails on one before the first element)
            k += len(arr)
        if k < 0 or k > len(arr):  # before the first element, or past the end: a sparse array,
            # whose elements and count are not modelled from here on
            w.arrays[a.name] = (*arr, (Unknown("an element written past the end (a sparse array)", loc), loc))
            return
        if k == len(arr):
            arr.append(("", loc))
        if a.append:
            value = concat([arr[k][0], value], loc)
        arr[k] = (value, loc)
        w.arrays[a.name] = tuple(arr)
        return
    ev.assign(w, a.name, value, loc, append=a.append)


def declare(ev: Evaluator, cmd: Simple, w: World, loc: Loc) -> World:
    """`export`, `declare`/`typeset`, `local`, `readonly` with their assignments
    (verifier.shell.utilities.declaration)."""
    kind = cmd.words[0].unquoted_literal or ""
    fields = [(value, word.line) for word in cmd.words[1:]
              for value, _ in ev.expand_word(word, w, (cmd.src, word.line), split=True)]
    asked = declaration(kind, [value if isinstance(value, str) else None for value, _ in fields])
    why = unmodelled_declaration(asked, [a.name for a in cmd.assigns])
    if why is not None:
        raise _limit(why, loc)
    if kind == "local" and not w.frames:  # bash refuses `local` outside a function: nothing is assigned
        w.status = False
        return w
    for operand in asked.assigned:
        text, line = fields[operand.position]
        assert isinstance(text, str)
        ev.assign(w, operand.name, text[operand.offset:], (cmd.src, line), append=operand.append)
    names = [name for _, name in asked.names] + [operand.name for operand in asked.assigned]
    flags, unexport = asked.flags, asked.unexport
    is_local = asked.local(bool(w.frames))
    export = asked.exports
    assoc = "A" in flags
    for name in names + [a.name for a in cmd.assigns]:
        if is_local:
            ev.save_local(w, name)
    if "f" in flags:
        w.status = True
        return w
    if asked.refs:
        _declare_refs(ev, cmd, w, names, loc)
        return w
    for name in names:
        if not _NAME.fullmatch(name):
            continue
        if assoc and name not in w.assocs:
            w.assocs[name] = {}
        elif "a" in flags and name not in w.arrays and name not in w.vars:
            w.arrays[name] = ()
        for attr in "ilu":
            if attr in flags:
                w.attrs[name] = w.attrs.get(name, "") + attr
        if unexport:
            w.exported.discard(name)
        elif export:
            w.exported.add(name)
    for a in cmd.assigns:
        for attr in "ilu":
            if attr in flags:
                w.attrs[a.name] = w.attrs.get(a.name, "") + attr
        if assoc and a.name not in w.assocs:
            w.assocs[a.name] = {}
        if "a" in flags and a.array is None and a.name not in w.arrays and a.index is None:
            pass
        do_assign(ev, w, a, cmd.src, assoc=assoc)
        if unexport:
            w.exported.discard(a.name)
        elif export:
            w.exported.add(a.name)
    w.status = True
    return w


def _declare_refs(ev: Evaluator, cmd: Simple, w: World, names: list[str], loc: Loc) -> None:
    """`declare -n REF=NAME` / `local -n` / `typeset -n`: REF stands for NAME from now on (every read
    and write through REF goes to NAME); `declare -n REF` alone is pointed by its next assignment."""

    for name in names:
        if _NAME.fullmatch(name):
            w.refs[name] = w.refs.get(name, "")
            w.vars.pop(name, None)
    for a in cmd.assigns:
        if a.value is None or a.index is not None or a.append:
            raise ShellLimit(f"the name reference `{a.name}` (declare -n) is not followed statically", (cmd.src, a.line))
        value, _ = ev.expand_scalar(a.value, w, (cmd.src, a.line))
        if not isinstance(value, str) or not (value == "" or _NAME.fullmatch(value)):
            raise ShellLimit(f"the name reference `{a.name}` (declare -n) refers to {shown(value)}, which is not "
                             "followed statically", (cmd.src, a.line))
        if value == a.name:
            raise ShellLimit(f"the name reference `{a.name}` (declare -n) refers to itself", (cmd.src, a.line))
        w.refs[a.name] = value
        w.vars.pop(a.name, None)
    w.status = True


# ------------------------------------------------------------------------------- builtins


def _true(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
          loc: Loc) -> list[World]:
    w.status = True
    return [w]


def _false(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
           loc: Loc) -> list[World]:
    w.status = False
    return [w]


def _echo(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
          loc: Loc) -> list[World]:
    args = _vals(fields[1:])
    count, newline, escapes = echo_options([a if isinstance(a, str) else None for a in args])
    pieces: list[Val] = []
    for k, a in enumerate(args[count:]):
        if k:
            pieces.append(" ")
        pieces.append(unescape(a) if escapes and isinstance(a, str) else a)
    if newline:
        pieces.append("\n")
    _emit(w, concat(pieces, loc), loc)
    w.status = True
    return [w]


_PRINTED_TEXT_MAX = 4096  # the longest printed text kept in `_PRINTED`


def format_printf(fmt: str, args: list[Val], loc: Loc) -> Val:
    """bash `printf` of values (verifier.shell.utilities.printf_pieces), kept per known arguments."""
    key: tuple[str, ...] | None = None
    if len(args) <= 512 and all(isinstance(a, str) for a in args):  # known text prints the same (every world)
        key = (fmt, *args)  # type: ignore[arg-type]
        got = _PRINTED.get(key)
        if got is not None:
            return got
    pieces = printf_pieces(fmt, args)
    if pieces is None:  # a conversion or an argument the walkers do not model
        return Opaque(f"$(printf {fmt[:80]})", loc)
    printed = concat(pieces, loc)
    if key is not None and isinstance(printed, str) and len(printed) <= _PRINTED_TEXT_MAX:
        _PRINTED.put(key, printed)
    return printed


_PRINTED: ByText[tuple[str, ...], str] = ByText("shell.printf-printed", 1024)


def _printf(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
            loc: Loc) -> list[World]:
    args = fields[1:]
    target: str | None = None
    if args and args[0][0] == "-v" and len(args) >= 2 and isinstance(args[1][0], str):
        target = str(args[1][0])
        args = args[2:]
    if args and args[0][0] == "--":
        args = args[1:]
    if not args:
        w.status = False
        return [w]
    fmt = args[0][0]
    if not isinstance(fmt, str):
        text: Val = fmt if isinstance(fmt, Unknown) else Opaque("$(printf ...)", loc)
    else:
        text = format_printf(fmt, _vals(args[1:]), loc)
    if target is not None:
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(.*)\])?", target)
        if m and m.group(2) is None:
            ev.assign(w, target, text, loc)
        elif m:
            from verifier.shell.lexer import Part, Word

            do_assign(ev, w, Assign(m.group(1), Word((Part("lit", m.group(2), False),), loc[1], m.group(2)), False,
                                    Word((Part("lit", shown(text), True),), loc[1], shown(text)), None, loc[1]),
                      loc[0])
    else:
        _emit(w, text, loc)
    w.status = True
    return [w]


def _cat(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
         loc: Loc) -> list[World]:
    files = [v for v, _ in fields[1:] if not (isinstance(v, str) and v.startswith("-") and v != "-")]
    if not files:
        for piece in stdin or [(Opaque("<stdin>", loc), loc)]:
            _emit(w, *piece)
        w.status = True
        return [w]
    status: bool | None = True
    for f in files:
        if f == "-":
            for piece in stdin or [(Opaque("<stdin>", loc), loc)]:
                _emit(w, *piece)
            continue
        written = w.generated(f) if isinstance(f, str) and w.out is None else None
        if written is not None and written.lines is not None:
            # a file the script wrote, printed where nothing reads it (`cat "$CONFIG"` to the log): what
            # it holds decides nothing, so neither it nor what wrote it is read
            continue
        gen, text = ev.read_file(f, w)
        if gen is not None and gen.lines is not None:
            for line, lc in gen.lines:
                _emit(w, line + "\n", lc)
        elif text is not None:
            _emit(w, text, loc)
        else:
            _emit(w, Opaque(f"$(cat {shown(f)})", loc), loc)
            status = None
    w.status = status
    return [w]


def _tee(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
         loc: Loc) -> list[World]:
    append = any(v in ("-a", "--append") for v, _ in fields[1:])
    content = stdin if stdin is not None else [(Opaque("<stdin>", loc), loc)]
    for v, _ in fields[1:]:
        if isinstance(v, str) and not v.startswith("-") and v not in ("/dev/null", "/dev/stderr", "/dev/stdout"):
            ev.write_file(w, v, list(content), append, loc)
    for piece in content:
        _emit(w, *piece)
    w.status = True
    return [w]


def _dirname(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
             loc: Loc) -> list[World]:
    for a in (v for v, _ in fields[1:] if v != "--"):
        if isinstance(a, str):
            _emit(w, dirname(a) + "\n", loc)
        else:
            _emit(w, concat([a if isinstance(a, Unknown) else Opaque(f"$(dirname {shown(a)})", loc), "\n"], loc), loc)
    w.status = True
    return [w]


def _basename(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
              loc: Loc) -> list[World]:
    paths, suffix = basename_operands(_vals(fields[1:]))
    for path in paths:
        if isinstance(path, str) and isinstance(suffix, str):
            _emit(w, basename(path, suffix) + "\n", loc)
        else:
            _emit(w, Opaque(f"$(basename {shown(path)})", loc), loc)
    w.status = True
    return [w]


def _seq(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
         loc: Loc) -> list[World]:
    args = _vals(fields[1:])
    values = seq_numbers([str(a) for a in args]) if all(isinstance(a, str) for a in args) else None
    if values is None:
        _emit(w, Opaque("$(seq ...)", loc), loc)
        w.status = None
        return [w]
    _emit(w, "".join(f"{v}\n" for v in values), loc)
    w.status = True
    return [w]


def _grep(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
          loc: Loc) -> list[World]:
    args = _vals(fields[1:])
    flags = ""
    patterns: list[str] = []
    files: list[Val] = []
    i = 0
    while i < len(args):
        a = args[i]
        if not isinstance(a, str):
            w.status = None
            _emit(w, Opaque("$(grep ...)", loc), loc)
            return [w]
        if a == "--":
            files.extend(args[i + 1:])
            break
        if a in ("-e", "--regexp") and i + 1 < len(args) and isinstance(args[i + 1], str):
            patterns.append(str(args[i + 1]))
            i += 2
            continue
        if a.startswith("-") and len(a) > 1 and not patterns and not files:
            flags += a.lstrip("-") if not a.startswith("--") else {"--quiet": "q", "--silent": "q",
                                                                   "--fixed-strings": "F", "--line-regexp": "x",
                                                                   "--extended-regexp": "E", "--invert-match": "v",
                                                                   "--ignore-case": "i", "--count": "c"}.get(a, "?")
            i += 1
            continue
        if not patterns and "e" not in flags:
            patterns.append(a)
        else:
            files.append(a)
        i += 1
    if files:
        content: list[tuple[Val, Loc]] | None = []
        for f in files:
            gen, text = ev.read_file(f, w)
            if gen is not None and gen.lines is not None:
                content.extend((line + "\n", lc) for line, lc in gen.lines)  # type: ignore[union-attr]
            elif text is not None:
                content.append((text, loc))  # type: ignore[union-attr]
            else:
                content = None
                break
    else:
        content = stdin
    lines = _text_lines(content)
    # -n, -o, -H (and several files without -h) change what it prints: not modelled
    if lines is None or not patterns or any(c not in "qxFEivcswh" for c in flags) or \
            (len(files) > 1 and not set(flags) & set("hq")):
        w.status = None
        _emit(w, Opaque("$(grep ...)", loc), loc)
        return [w]
    regexes = []
    for p in patterns:
        body = re.escape(p) if "F" in flags else posix_regex(p, "E" in flags)
        if "w" in flags:
            body = rf"\b(?:{body})\b"
        # matched in linear time (a pattern the script writes, on text it knows: verifier.core.linear_regex)
        rx = compile_pattern(rf"\A(?:{body})\Z" if "x" in flags else body, "i" in flags)
        if rx is None:
            w.status = None
            return [w]
        regexes.append(rx)
    kept = "v" not in flags
    matched = [ln for ln in lines if any(r.search(ln) is not None for r in regexes) == kept]
    if "q" not in flags:
        if "c" in flags:
            _emit(w, f"{len(matched)}\n", loc)
        else:
            _emit(w, "".join(m + "\n" for m in matched), loc)
    w.status = bool(matched)
    return [w]


def _test(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
          loc: Loc) -> list[World]:
    args = _vals(fields[1:])
    ops = ev.operands(w, loc)
    w.status = eval_bracket(ops, args) if fields[0][0] == "[" else eval_single(ops, args)
    return [w]


def _unset(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
           loc: Loc) -> list[World]:
    funcs = refs = False
    for v, _ in fields[1:]:
        if not isinstance(v, str):
            continue
        if v.startswith("-"):
            funcs = "f" in v
            refs = "n" in v
            continue
        if refs and v in w.refs:  # `unset -n REF`: the reference itself
            del w.refs[v]
            continue
        if funcs:
            if v in w.funcs:
                del w.own_funcs()[v]
            continue
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[(.*)\]", v)
        if m and m.group(1) in w.assocs:
            table = dict(w.assocs[m.group(1)])
            table.pop(m.group(2), None)
            w.assocs[m.group(1)] = table
            continue
        if _NAME.fullmatch(v):
            ev.unset(w, v)
    w.status = True
    return [w]


def _shift(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
           loc: Loc) -> list[World]:
    n = fields[1][0] if len(fields) > 1 else "1"
    if not is_number(n) or any(shape_unknown(v) for v, _ in w.pos[:int(n)]):
        # how many it drops, or which words are left, only the run knows
        w.pos = ((Opaque("$@", loc, many=True), loc),)
        w.status = None
        return [w]
    k = int(n)
    w.status = k <= len(w.pos)
    if w.status:  # more than there are: bash fails and shifts nothing
        w.pos = w.pos[k:]
    return [w]


def _set(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
         loc: Loc) -> list[World]:
    args = fields[1:]
    if args and args[0][0] == "--":
        w.pos = tuple(args[1:])
    elif not args:
        ev.read_all = True
    w.status = True
    return [w]


def _limit(message: str, loc: Loc) -> Exception:

    return ShellLimit(message, loc)


_RUNTIME_TEXT = ("$(", "`", "<(")  # an Opaque value holding these is a command's output


def _where(loc: Loc) -> str:
    return f"{posixpath.basename(loc[0]) or 'the script'}:{loc[1]}"


def _source(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
            loc: Loc) -> list[World]:
    """`source FILE` / `. FILE`: a repository file or a file the script generated with known text is
    run in place. What the reader cannot know fails closed (`ShellLimit` naming the line): a process
    substitution (`source <(curl ...)`), a path that is a command's output or that the evaluator lost
    track of, a file the script fetched or wrote at run time. A known path outside the repository
    that nothing in the script wrote (an image's environment file) is recorded in `unread`."""

    if len(fields) < 2:
        w.status = False
        return [w]
    target = fields[1][0]
    word = " ".join(x.raw for x in cmd.words[:3])[:120]
    if isinstance(target, Unknown):
        raise _limit(f"`{word}` sources a file whose path is not known statically ({target.reason}, line "
                     f"{target.loc[1]})", loc)
    if isinstance(target, Opaque):
        if target.text.startswith("<("):
            raise _limit(f"`{word}` sources the output of a process substitution, which is not read statically", loc)
        if any(t in target.text for t in _RUNTIME_TEXT):
            raise _limit(f"`{word}` sources a file whose path is a command's output at run time", loc)
        fetched = fetched_at(ev.fetched, target.text)
        if fetched is not None:
            raise _limit(f"`{word}` sources a file the script fetches at run time ({_where(fetched)})", loc)
        ev.unread.setdefault(target.text, loc)
        w.status = None
        return [w]
    if target.startswith(("/dev/stdin", "/dev/fd/", "/proc/self/fd/")):
        raise _limit(f"`{word}` sources its input stream, which is not read statically", loc)
    if ev.source_depth >= MAX_SOURCE_DEPTH:
        raise _limit(f"`{word}` sources files nested more than {MAX_SOURCE_DEPTH} deep (limit)", loc)
    gen = w.generated(target)
    repo = ev.repo_path(target)
    if gen is not None:
        gen = ev.materialized(gen)
        if gen.lines is None:
            raise _limit(f"`{word}` sources {target}, which the script writes at run time with contents not known "
                         f"statically ({_where(gen.loc) if gen.loc[0] else 'line ' + str(gen.loc[1])})", loc)
        ev.promote(target)
        text: str | None = gen.text
        name = repo or posixpath.normpath(target)
    else:
        fetched = fetched_at(ev.fetched, target)
        if fetched is not None:
            raise _limit(f"`{word}` sources {target}, which the script fetches at run time ({_where(fetched)})", loc)
        text = ev.options.reader(repo) if repo else None
        name = repo or ""
    if text is None:
        ev.unread.setdefault(repo or shown(target), loc)
        w.status = None
        return [w]
    try:
        script = parse(text, name)
    except ShellSyntaxError as exc:
        raise _limit(f"{name}:{exc.line}: {exc.message}", loc) from exc
    ev.run_unseen(script)
    if gen is None:
        ev.sourced.append(repo or "")
    ev.scripts.append(script)
    saved_pos, saved_sources = w.pos, w.sources
    if len(fields) > 2:
        w.pos = tuple(fields[2:])
    w.sources = w.sources + (script.src,)
    ev.source_depth += 1
    try:
        outs = ev.run_body(script.body, [w])
    finally:
        ev.source_depth -= 1
    for x in outs:
        x.sources = saved_sources
        if len(fields) > 2:
            x.pos = saved_pos
        if x.flow is not None and x.flow[0] == "return":
            x.flow = None
    return outs


def _eval(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
          loc: Loc) -> list[World]:
    """`eval TEXT`: known text is parsed and run in place. Text with a run-time value inside (a machine
    variable) is run from its source text, so the value stays run-time; text that is a command's
    output, a value the evaluator lost track of, or text that does not parse fails closed."""
    values = _vals(fields[1:])
    word = " ".join(x.raw for x in cmd.words)[:120]
    pieces: list[str] = []
    for v in values:
        if isinstance(v, Unknown):
            raise _limit(f"`{word}` evaluates text that is not known statically ({v.reason}, line {v.loc[1]})", loc)
        if isinstance(v, Opaque):
            if any(t in v.text for t in _RUNTIME_TEXT):
                raise _limit(f"`{word}` evaluates the output of a command, which is not read statically", loc)
            pieces.append(v.text)
        else:
            pieces.append(v)
    text = " ".join(pieces)
    try:
        script = parse(text, loc[0])
    except ShellSyntaxError as exc:
        raise _limit(f"`{word}` evaluates text that cannot be read statically: {exc.message}", loc) from exc
    ev.run_unseen(script)

    temp = _prefix_on(ev, cmd, w)  # `X=v eval ...`: X holds v while it runs
    outs = ev.run_body(relocate(script.body, loc), [w])
    for x in outs:
        _prefix_off(x, temp)
    return outs


def _exit(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
          loc: Loc) -> list[World]:
    code = fields[1][0] if len(fields) > 1 else ("0" if w.status else "1") if w.status is not None else None
    w.status = None if not isinstance(code, str) else code == "0"
    w.flow = ("exit",)
    w.exit_loc = loc
    return [w]


def _return(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
            loc: Loc) -> list[World]:
    if len(fields) > 1:
        code = fields[1][0]
        w.status = None if not isinstance(code, str) else code == "0"
    w.flow = ("return",)
    return [w]


def _break(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
           loc: Loc) -> list[World]:
    n = fields[1][0] if len(fields) > 1 else "1"
    w.flow = (str(fields[0][0]), int(n) if is_number(n) else 1)
    w.status = True
    return [w]


def _let(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
         loc: Loc) -> list[World]:
    """`let EXPR...`: each argument an arithmetic expression, its status the last one's. An argument
    only the run knows (`let X=Y*2` unquoted may be a pathname pattern) may assign any name its words
    hold: each of those is then a run-time value."""
    result: Val = "0"
    for v, _ in fields[1:]:
        if not isinstance(v, str):
            for word in cmd.words[1:]:
                for name in _NAME.findall(word.raw):
                    w.vars[name] = (Unknown(f"assigned by `let` of a value known only at run time (line {loc[1]})",
                                            loc), loc)
            w.status = None
            return [w]
        result = ev.arith(v, w, loc, expand=False)
    w.status = None if not isinstance(result, str) else result != "0"
    return [w]


def _read(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
          loc: Loc) -> list[World]:
    """`read` (verifier.shell.utilities.read_line, read_fields) of known input; of any other, or a call
    the walkers do not model, run-time values."""
    call = read_operands([a if isinstance(a, str) else None for a in _vals(fields[1:])])
    text = _text(stdin)
    got = read_line(call, text) if text is not None else None
    seps: Val = ev.ifs(w)
    for a in cmd.assigns:  # `IFS=: read ...`: the prefix assignment holds for the read alone
        if a.name == "IFS" and a.value is not None and a.index is None:
            seps = ev.expand_scalar(a.value, w, (cmd.src, a.line))[0]
    if got is None or not isinstance(seps, str):
        unknown = Opaque(f"$(read on line {loc[1]})", loc)
        if call.array is not None:  # how many elements, and which, only the run knows
            w.arrays[call.array] = ((Unknown(f"`read -a` of run-time input on line {loc[1]}", loc), loc),)
            w.vars.pop(call.array, None)
        for name in call.names:
            ev.assign(w, name, unknown, loc)
        w.status = None
        return [w]
    line, found = got
    if call.array is not None:
        w.arrays[call.array] = tuple((p, loc) for p in read_fields(line, seps, None)) if line or found else ()
        w.vars.pop(call.array, None)
    else:
        for name, value in zip(call.names, read_fields(line, seps, len(call.names)), strict=True):
            ev.assign(w, name, value, loc)
    w.status = found
    return [w]


def _mapfile(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
             loc: Loc) -> list[World]:
    call = mapfile_operands([v if isinstance(v, str) else None for v, _ in fields[1:]])
    text = _text(stdin)
    name = call.name
    if not call.modelled or text is None:  # how many lines, and which, only the run knows
        w.arrays[name] = ((Unknown(f"`mapfile` of run-time input on line {loc[1]}", loc), loc),)
        w.status = None
    else:
        w.arrays[name] = tuple((line, loc) for line in mapfile_lines(text, call.strip))
        w.status = True
    w.vars.pop(name, None)
    return [w]


def _command(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
             loc: Loc) -> list[World]:
    rest = fields[1:]
    if rest and rest[0][0] in ("-v", "-V"):
        w.status = None
        _emit(w, Opaque("$(command -v ...)", loc), loc)
        return [w]
    if not rest:
        w.status = True
        return [w]
    head = rest[0][0]
    handler = _BUILTINS.get(head) if isinstance(head, str) else None
    if handler is not None:
        return handler(ev, cmd, rest, w, stdin, loc)
    return _ran_unknown(w, loc, cmd)


def _exec(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
          loc: Loc) -> list[World]:
    if len(fields) == 1:
        w.status = True
        return [w]
    w.status = None
    _emit(w, Opaque("$(exec ...)", loc), loc)  # the command it becomes prints what the run prints
    w.flow = ("exit",)
    w.exit_loc = loc
    return [w]


def _cd(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
        loc: Loc) -> list[World]:
    args = [v for v, _ in fields[1:] if not (isinstance(v, str) and v.startswith("-") and v != "-")]
    current = ev.lookup(w, "PWD", loc)
    if fields[0][0] in ("pushd", "popd"):
        _emit(w, Opaque("$(dirs)", loc), loc)  # they print the directory stack
    # `cd` (home), `cd -`, `popd` and `pushd +N` go where only the run's directory stack says
    if not args or not isinstance(args[0], str) or not isinstance(current, str) or args[0] == "-" or \
            fields[0][0] == "popd" or (args[0][:1] == "+" and is_number(args[0][1:])):
        ev.assign(w, "PWD", Opaque("$PWD", loc), loc)
        w.status = None
        return [w]
    target = posixpath.normpath(posixpath.join(current, args[0]))
    ev.assign(w, "PWD", target, loc)
    w.status = None if ev.repo_path(target) is None else True
    return [w]


def _pwd(ev: Evaluator, cmd: Simple, fields: list[Binding], w: World, stdin: list[tuple[Val, Loc]] | None,
         loc: Loc) -> list[World]:
    current = ev.lookup(w, "PWD", loc)
    _emit(w, concat([current if current is not None else Opaque("$PWD", loc), "\n"], loc), loc)
    w.status = True
    return [w]


_BUILTINS = {
    "cd": _cd, "pushd": _cd, "popd": _cd, "pwd": _pwd,
    ":": _true, "true": _true, "false": _false, "echo": _echo, "printf": _printf, "cat": _cat, "tee": _tee,
    "dirname": _dirname, "basename": _basename, "seq": _seq, "grep": _grep, "egrep": _grep, "fgrep": _grep,
    "test": _test, "[": _test, "unset": _unset, "shift": _shift, "set": _set, "source": _source, ".": _source,
    "eval": _eval, "exit": _exit, "return": _return, "break": _break, "continue": _break, "let": _let,
    "read": _read, "mapfile": _mapfile, "readarray": _mapfile, "command": _command, "builtin": _command,
    "exec": _exec,
}

__all__ = ["run_simple", "format_printf", "NO_LOC"]
