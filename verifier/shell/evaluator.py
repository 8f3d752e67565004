"""The static evaluator: walks a parsed script over a set of worlds (never executes anything).

`Evaluator(options).run(script, env)` interprets the script the way bash would, with these rules:

* Values: a variable holds a known string, an `Opaque` run-time value (output of a command the
  evaluator does not model, a machine variable such as `$HOSTNAME`) or an `Unknown` (see
  verifier.shell.values). Variables the harness does not set are unset, except the machine
  variables of `options.machine_env`, which are opaque.
* Worlds: a condition that cannot be decided (it tests an opaque value or the status of a command
  the evaluator does not model) splits the world in two, each remembering the branch it assumed;
  worlds that end up equal merge again. At most `options.max_worlds` worlds are alive at once: past
  that, worlds that started the same commands are joined, and values they disagree on become
  `Unknown` (naming the line where they were joined).
* Loops run their known iterations (`for x in a b c`, `for ((i=0; i<4; i++))`, `while` on a
  decidable condition, at most `MAX_ITERATIONS`); a loop whose iteration count cannot be known runs
  until its state stops changing, and whatever it assigns differently becomes `Unknown` ("assigned
  inside the loop on line N"); a loop that assigns nothing the rest uses costs nothing. A counted
  `for ((...))` whose body cannot see its counter stops running its body once a pass repeats the one
  before but for the counter: the passes left end the same worlds with their own counter values
  (`_settled_rest`; a health check's 120 passes cost three).
* `case` on a known value takes the matching arm; on an opaque value each arm is a world.
* Functions (defined in the script or in a `source`d library) run with `local` scoping and their
  positional parameters; `source`/`.` reads the library through `options.reader` (repository paths
  only) and runs it in place, `bash FILE.sh` runs a repository script as a child process (in
  `child` mode it is recorded instead: that is how a runner starts the benchmark script).
* Command substitution runs its commands in a copy of the world and captures what they print when
  the evaluator models them (`echo`, `printf`, `cat` of a heredoc or a generated file, `dirname`,
  `basename`, `seq`, `grep` on known input, ...); otherwise the value is opaque, which is fine as a
  server argument (checks that need the value say so) and undecidable in a condition.
* Heredocs, here-strings, `echo`/`printf` redirected to a file create generated files whose lines
  remember the script line that wrote them; `cat FILE` and `--config FILE` read them back.
* What is recorded: in `server` mode every server start (`verifier.shell.launchers.match_server`),
  in `child` mode the benchmark script a runner starts (`match_child`), each with the environment
  it sees. Once a world has started its server and nothing left in the script could start another,
  the world stops.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from verifier.core.processcache import ByObject
from verifier.shell.arith import ArithError, ArithUnknown, is_number
from verifier.shell.arith import evaluate as evaluate_arith
from verifier.shell.conditions import Operands, eval_double
from verifier.shell.derived import TOKEN, TOKEN_PREFIX, Derivation, derivation_for
from verifier.shell.derived import token as derived_token
from verifier.shell.expansion import (
    DEFAULT_IFS,
    SHELL_SET,
    SPECIAL,
    brace_expand,
    convert_case,
    defaulted,
    field_spans,
    joins,
    may_glob,
    operator,
    parse_param,
    separator,
    slice_bounds,
    transform,
)
from verifier.shell.launchers import Commands, launching_functions, may_launch
from verifier.shell.lexer import Part, ShellSyntaxError, Word, lex_heredoc, lex_operand
from verifier.shell.nodes import (
    AndOr,
    Arith,
    ArithFor,
    Body,
    Case,
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
    iter_nodes,
)
from verifier.shell.options import (
    MAX_FIXPOINT,
    MAX_ITERATIONS,
    MAX_STEPS,
    Options,
    ShellLimit,
)
from verifier.shell.parser import parse
from verifier.shell.relocate import relocate_shared
from verifier.shell.values import (
    Loc,
    Opaque,
    Pattern,
    RefNotFollowed,
    Unknown,
    Val,
    concat,
    follow_ref,
    glob_match,
    replace_pattern,
    shape_unknown,
    shown,
    strip_pattern,
)
from verifier.shell.world import (
    ANY_KEY,
    NO_LOC,
    Assumption,
    Binding,
    GenFile,
    Table,
    World,
    bindings_held,
    differing,
    drop_candidates,
    join,
    opaque_env,
    settle,
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ALL_ELEMENTS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[([@*])\]")
_NAME_REST = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(.*)", re.S)


class KeepEverything(Exception):  # noqa: N818 (a signal to evaluate again, not an error)
    """Text the liveness of the earlier statements did not see (a sourced file, `eval`ed text) reads a
    variable `Evaluator.drop_dead` already forgot: `verifier.shell.evaluate` evaluates the script again
    forgetting nothing (see `Evaluator.run_unseen`)."""


def _many(value: Val) -> Val:
    """A run-time word of an unquoted expansion: the run may split it into any number of words."""
    return Opaque(value.text, value.loc, value.nonempty, True) if isinstance(value, Opaque) and not value.many \
        else value


def _one_word(value: Val) -> Val:
    """A value expanded as one word (quoted, or where no splitting follows)."""
    return Opaque(value.text, value.loc, value.nonempty) if isinstance(value, Opaque) and value.many else value


def _at(bad: Val, text: str, loc: Loc) -> Val:
    """What an expansion gives at or after a list element that may stand for any number of them: the
    Unknown itself, else a run-time value (`text`)."""
    return bad if isinstance(bad, Unknown) else Opaque(text, loc)


def _loc(node: Any) -> Loc:
    return (getattr(node, "src", ""), getattr(node, "line", 0))


def _cmd_text(node: Any, limit: int = 80) -> str:
    """Short source text of a command (for assumption labels)."""
    if isinstance(node, Pipeline):
        text = " | ".join(_cmd_text(c, limit) for c in node.cmds)
        return ("! " + text) if node.negate else text
    if isinstance(node, Simple):
        text = " ".join(w.raw for w in node.words) or " ".join(f"{a.name}=" for a in node.assigns)
    elif isinstance(node, Test):
        text = "[[ " + " ".join(w.raw for w in node.words) + " ]]"
    elif isinstance(node, Arith):
        text = f"(( {node.expr.strip()} ))"
    else:
        text = type(node).__name__.lower()
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


_PIPE_TEXTS: ByObject[str] = ByObject("shell.pipeline-texts", 4096)


def _pipe_text(pipe: Pipeline) -> str:
    """`_cmd_text` of a pipeline, once per node."""
    got = _PIPE_TEXTS.get(pipe)
    return got if got is not None else _PIPE_TEXTS.put(pipe, _cmd_text(pipe))


def _body_text(body: Body) -> str:
    parts = []
    for item in body:
        seg = [_cmd_text(p) for p in item.parts]
        out = seg[0]
        for op, s in zip(item.ops, seg[1:], strict=False):
            out += f" {op} {s}"
        parts.append(out)
    text = "; ".join(parts)
    return text if len(text) <= 100 else text[:99] + "…"


def assigned_texts(script: Script) -> dict[str, list[str]]:
    """name -> raw texts of everything assigned to it anywhere in a file (for `"${CMD[@]}"` heads)."""
    cached = _ASSIGNED.get(script)
    if cached is not None:
        return cached
    out: dict[str, list[str]] = {}

    for node in iter_nodes(script.body):
        if not isinstance(node, Simple):
            continue
        for a in node.assigns:
            if a.append or a.index is not None:  # `+=` / `A[i]=` keep the command's head
                out.setdefault(a.name, [])
                continue
            texts = out.setdefault(a.name, [])
            if a.array is not None:
                texts.append(" ".join(w.raw for w in a.array))
            elif a.value is not None:
                texts.append(a.value.raw)
    return _ASSIGNED.put(script, out)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _raw_texts(root: Any, out: list[str]) -> None:
    for node in iter_nodes(root):
        _own_texts(node, out)


def _own_texts(node: Any, out: list[str]) -> None:
    """The texts a node holds itself (words, assignments, patterns, expressions, redirections)."""
    if isinstance(node, Simple):
        out.extend(w.raw for w in node.words)
        for a in node.assigns:
            out.append(a.name)
            if a.value is not None:
                out.append(a.value.raw)
            if a.array is not None:
                out.extend(w.raw for w in a.array)
    elif isinstance(node, For):
        out.extend(w.raw for w in node.words or ())
        out.append("@")
    elif isinstance(node, ArithFor):
        out.extend((node.init, node.cond, node.step))
    elif isinstance(node, Case):
        out.append(node.word.raw)
        for arm in node.arms:
            out.extend(w.raw for w in arm.patterns)
    elif isinstance(node, Arith):
        out.append(node.expr)
    elif isinstance(node, Test):
        out.extend(w.raw for w in node.words)
    if isinstance(node, (Simple, If, While, For, ArithFor, Group, Case, Arith, Test)):
        for r in node.redirects:
            if r.target is not None:
                out.append(r.target.raw)
            if r.heredoc is not None:
                out.append(r.heredoc.body)


def identifiers(node: Any) -> frozenset[str]:
    """Every identifier a node's text mentions (a superset of the variables it can read)."""
    texts: list[str] = []
    _raw_texts(node, texts)
    return frozenset(_IDENT.findall(" ".join(texts)))


def text_identifiers(script: Script) -> frozenset[str]:
    """`identifiers` of a whole parsed text (a sourced file, `eval`ed text), once per tree."""
    cached = _TEXT_IDENTS.get(script)
    if cached is not None:
        return cached
    return _TEXT_IDENTS.put(script, identifiers(script.body))


def script_functions(script: Script) -> dict[str, frozenset[str]]:
    """The functions a file defines, by name, with the identifiers their bodies mention (a name defined
    twice: both bodies'), once per tree."""
    cached = _SCRIPT_FUNCS.get(script)
    if cached is not None:
        return cached
    found: dict[str, set[str]] = {}
    for node in iter_nodes(script.body):
        if isinstance(node, FuncDef):
            found.setdefault(node.name, set()).update(function_reads(node))
    return _SCRIPT_FUNCS.put(script, {name: frozenset(names) for name, names in found.items()})


def function_reads(func: FuncDef) -> frozenset[str]:
    """`identifiers` of one function's definition, once per node."""
    cached = _FUNC_READS.get(func)
    return cached if cached is not None else _FUNC_READS.put(func, identifiers(func))


# Caches of facts about parsed nodes, once per node (verifier.core.processcache: each entry keeps its
# node, so no other node can take its id while the entry lives).
_ASSIGNED: ByObject[dict[str, list[str]]] = ByObject("shell.assigned-texts", 512)
_TEXT_IDENTS: ByObject[frozenset[str]] = ByObject("shell.text-identifiers", 512)
_SCRIPT_FUNCS: ByObject[dict[str, frozenset[str]]] = ByObject("shell.script-functions", 512)
_FUNC_READS: ByObject[frozenset[str]] = ByObject("shell.function-reads", 4096)
# `_Functions` by the first script with the ids of every script (the value keeps them)
_FUNCTION_TABLES: ByObject[tuple[tuple[Script, ...], _Functions]] = ByObject("shell.function-tables", 64)
# keyed by the body, with the statement index, the functions and scripts (by id: the value keeps them)
_DONE_CACHE: ByObject[tuple[tuple[object, ...], bool]] = ByObject("shell.done-from", 4096)
_LAST_CACHE: ByObject[tuple[dict[str, int], list[list[str]]]] = ByObject("shell.last-mentions", 512)
# keyed by the first script (the main one) with the ids of every script (and, for the flags, of
# every function): the value keeps the objects its key names by id
_ASSIGNED_IN: ByObject[tuple[tuple[object, ...], _AssignedIn]] = ByObject("shell.assigned-in", 512)
_LAUNCHING: ByObject[tuple[tuple[object, ...], _Launching]] = ByObject("shell.launching-functions", 512)
# keyed by the command table with the functions' names and ids (see `_Launching.free`)
_FREE_FLAGS: ByObject[tuple[tuple[object, ...], dict[str, bool]]] = ByObject("shell.launching-free", 512)


class _AssignedIn(Mapping[str, list[str]]):
    """`assigned_texts` of several scripts merged (a name's texts in the order of the scripts), each
    name merged when asked: `may_launch` asks for the few names a command head expands, and `_done`
    for how many names there are (a set union in C), where merging every list of every sourced
    library cost more than the question it answers. Read only."""

    def __init__(self, parts: list[dict[str, list[str]]]) -> None:
        self.parts = parts
        self.merged: dict[str, list[str]] = {}
        self.size: int | None = None

    def __getitem__(self, name: str) -> list[str]:
        got = self.merged.get(name)
        if got is None:
            found = [part[name] for part in self.parts if name in part]
            if not found:
                raise KeyError(name)
            got = self.merged[name] = [text for texts in found for text in texts]
        return got

    def __contains__(self, name: object) -> bool:
        return any(name in part for part in self.parts)

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for part in self.parts:
            for name in part:
                if name not in seen:
                    seen.add(name)
                    yield name

    def __len__(self) -> int:
        if self.size is None:
            self.size = len(set().union(*self.parts))
        return self.size


def _assigned_in(scripts: list[Script]) -> Mapping[str, list[str]]:
    """`assigned_texts` of every script an evaluation has parsed, merged (read only): the same for
    every evaluation of a script that sources the same libraries."""
    if not scripts:
        return {}
    extra = tuple(id(sc) for sc in scripts)
    entry = _ASSIGNED_IN.get(scripts[0], extra)
    if entry is not None:
        return entry[1]
    assigned = _AssignedIn([assigned_texts(sc) for sc in scripts])
    return _ASSIGNED_IN.put(scripts[0], (tuple(scripts), assigned), extra)[1]


_LAUNCH_DEPTH = 32  # `_Launching`: functions being worked out at once before it takes the fixpoint


class _Watched(Mapping[str, list[str]]):
    """The assignment texts `may_launch` reads, noting that it read them (see `_Launching`)."""

    def __init__(self, texts: Mapping[str, list[str]], owner: _Launching) -> None:
        self.texts, self.owner = texts, owner

    def __getitem__(self, name: str) -> list[str]:
        self.owner.touched = True
        return self.texts[name]

    def __contains__(self, name: object) -> bool:
        self.owner.touched = True
        return name in self.texts

    def get(self, name: str, default: Any = None) -> Any:
        self.owner.touched = True
        return self.texts.get(name, default)

    def __iter__(self) -> Iterator[str]:
        self.owner.touched = True
        return iter(self.texts)

    def __len__(self) -> int:
        self.owner.touched = True
        return len(self.texts)


class _Launching(Mapping[str, bool]):
    """`launching_functions(funcs, commands, assigned)` (name -> may the function, through the
    functions it calls, start a server?) worked out for the names asked only: `may_launch` asks
    `name in flags` and `flags[name]` for the functions the rest of a script calls (a few), where
    the fixpoint reads every function of every sourced library.

    A function's flag is `may_launch` of its body with the flags of the functions it calls, asked
    depth first. Where the calls are not circular that is the fixpoint's value (the one solution);
    a call back into a function still being worked out (or a chain of more than `_LAUNCH_DEPTH`
    calls) makes it the fixpoint itself, once, for every name (a circular call has more than one
    solution, and the fixpoint gives the least).

    A flag worked out without reading the assignment texts (nor a flag that read them) is the same
    for every script with the same functions and table: `free` holds those, shared by the
    evaluations of every script that sources the same library (`_launching`)."""

    def __init__(self, funcs: Mapping[str, FuncDef], commands: Commands, assigned: Mapping[str, list[str]],
                 free: dict[str, bool]) -> None:
        self.funcs, self.commands, self.assigned = funcs, commands, assigned
        self.watched = _Watched(assigned, self)
        self.free = free
        self.known: dict[str, bool] = {}
        self.tainted: set[str] = set()  # flags in `known` that read the assignment texts
        self.touched = False  # the flag being worked out read them
        self.open: set[str] = set()  # being worked out (depth first)
        self.circular = False
        self.all: dict[str, bool] | None = None

    def __contains__(self, name: object) -> bool:
        return name in self.funcs

    def __iter__(self) -> Iterator[str]:
        return iter(self.funcs)

    def __len__(self) -> int:
        return len(self.funcs)

    def __getitem__(self, name: str) -> bool:
        if self.all is not None:
            return self.all[name]
        got = self.free.get(name)
        if got is not None:
            return got
        got = self.known.get(name)
        if got is not None:
            if name in self.tainted:
                self.touched = True
            return got
        func = self.funcs[name]  # KeyError for a name that is no function, as a dictionary
        if name in self.open or len(self.open) >= _LAUNCH_DEPTH:
            # a circular call, or a chain of calls too long to follow depth first within the
            # interpreter's stack: the answer is the fixpoint's
            self.circular = True
            return False  # only while working out
        outer, self.touched = self.touched, False
        self.open.add(name)
        try:
            flag = may_launch(func.body, self.commands, self, self.watched)
        finally:
            self.open.discard(name)
        touched = self.touched
        self.touched = outer or touched
        if self.circular:
            if not self.open:  # the outermost question: answer every name by the fixpoint
                self.all = launching_functions(self.funcs, self.commands, self.assigned)
                return self.all[name]
            return flag  # discarded: the outermost question answers by the fixpoint
        if touched:
            self.known[name] = flag
            self.tainted.add(name)
        else:
            self.free[name] = flag
        return flag


def _launching(funcs: dict[str, FuncDef], commands: Commands, scripts: list[Script],
               assigned: Mapping[str, list[str]]) -> Mapping[str, bool]:
    """`launching_functions` (see `_Launching`) once per set of functions, table and scripts
    (`assigned` follows from the scripts): the worlds of a script's evaluations hold the same
    library functions at every statement they ask at (read only). The flags that do not depend on
    the scripts' assignments are shared by every set of scripts with the same functions."""
    items = sorted(funcs.items())
    names = tuple((name, id(f)) for name, f in items)
    got = _FREE_FLAGS.get(commands, names)
    if got is None:  # the entry keeps the functions its key names by id
        got = _FREE_FLAGS.put(commands, (tuple(f for _, f in items), {}), names)
    free = got[1]
    if not scripts:
        return _Launching(funcs, commands, assigned, free)
    extra = (names, tuple(id(sc) for sc in scripts), commands)
    entry = _LAUNCHING.get(scripts[0], extra)
    if entry is not None:
        return entry[1]
    flags = _Launching(funcs, commands, assigned, free)
    return _LAUNCHING.put(scripts[0], ((*(f for _, f in items), *scripts), flags), extra)[1]


def _last_mentions(body: Body) -> tuple[dict[str, int], list[list[str]]]:
    """For each identifier the statements mention, the index of the last statement mentioning it,
    and per statement the identifiers it mentions last. Linear in the text: a variable is live after
    statement i while its last mention is later (one set shrinks as the walk goes, `run_top`),
    never a set of later identifiers per statement (quadratic in a script of distinct names)."""
    cached = _LAST_CACHE.get(body)
    if cached is not None:
        return cached
    last: dict[str, int] = {}
    for k, item in enumerate(body):
        for name in identifiers(item):
            last[name] = k
    deaths: list[list[str]] = [[] for _ in body]
    for name, k in last.items():
        deaths[k].append(name)
    return _LAST_CACHE.put(body, (last, deaths))


_LATER_CACHE: ByObject[frozenset[str]] = ByObject("shell.later-identifiers", 512)


def _later(body: Body, last: dict[str, int], start: int) -> set[str]:
    """The identifiers statement `start` or a later one mentions (a fresh set: `run_top` shrinks it).
    Evaluations of a script resume from the same few statements: computed once for each."""
    cached = _LATER_CACHE.get(body, start)
    if cached is not None:
        return set(cached)
    return set(_LATER_CACHE.put(body, frozenset(name for name, k in last.items() if k >= start), start))


# Past these, what a function mentions is kept to the end of the script, as if any of them could run
# (a hostile script's thousands of functions then cost what they did before `_Functions`).
MAX_TRACKED_FUNCTIONS = 128
MAX_TRACKED_IDENTIFIERS = 8192


class _Functions:
    """The functions of every script an evaluation has parsed, for `Evaluator._kept`: what each one
    mentions (`idents`) and which of them it names (`calls`). A function can run later only if a later
    statement of the main script names it, or a function that can run names it (`reachable`);
    `always`: names no statement can spell as one identifier (`my-fn`), taken as named."""

    def __init__(self, scripts: list[Script]) -> None:
        # each file's sets, shared (`script_functions`): a table holds references, and copies only a
        # name two files define
        idents: dict[str, frozenset[str]] = {}
        for sc in scripts:
            for name, names in script_functions(sc).items():
                have = idents.get(name)
                idents[name] = names if have is None or have is names else have | names
        self.idents = idents
        self.names = names_ = frozenset(idents)
        self.tracked = len(idents) <= MAX_TRACKED_FUNCTIONS and \
            sum(len(v) for v in idents.values()) <= MAX_TRACKED_IDENTIFIERS
        self.calls = {name: mentioned & names_ for name, mentioned in idents.items()}
        self.always = frozenset(name for name in names_ if not _IDENT.fullmatch(name))
        self.mentioned: dict[frozenset[str], frozenset[str]] = {}  # by the functions named later

    def reachable(self, named: frozenset[str]) -> set[str]:
        """The functions that can run when these are named: they and every function one of them names."""
        found = set(named)
        todo = list(named)
        while todo:
            for callee in self.calls[todo.pop()]:
                if callee not in found:
                    found.add(callee)
                    todo.append(callee)
        return found

    def mentioned_by(self, named: frozenset[str]) -> frozenset[str]:
        """What the functions that can run when these are named mention (every function's, untracked)."""
        found = self.mentioned.get(named)
        if found is None:
            grown: set[str] = set()
            for name in (self.reachable(named) if self.tracked else self.names):
                grown |= self.idents[name]
            found = self.mentioned[named] = frozenset(grown)
        return found


class _Operands:
    """The evaluator's values (`Val`) as verifier.shell.conditions sees them, in one world at one place."""

    __slots__ = ("ev", "w", "loc")

    def __init__(self, ev: Evaluator, w: World, loc: Loc) -> None:
        self.ev, self.w, self.loc = ev, w, loc

    def expand(self, word: Word, emptiness: bool) -> Val:
        at = (self.loc[0], word.line)
        return (self.ev.expand_emptiness if emptiness else self.ev.expand_scalar)(word, self.w, at)[0]

    def pattern(self, word: Word) -> Pattern | None:
        return self.ev.expand_pattern(word, self.w, (self.loc[0], word.line))

    def lift(self, text: str) -> Val:
        return text

    def known(self, value: Val) -> str | None:
        return value if isinstance(value, str) else None

    def nonempty(self, value: Val) -> bool | None:
        if isinstance(value, Opaque) and value.nonempty:
            return True
        return value != "" if isinstance(value, str) else None

    def unknown(self, *values: Val) -> None:
        return None  # the worlds split on an undecidable condition whatever made it so

    def file_test(self, op: str, value: Val) -> bool | None:
        return self.ev.file_test(op, value, self.w)

    def is_set(self, name: str) -> bool | None:
        w = self.w
        return self.ev.lookup(w, name, self.loc) is not None or name in w.arrays or name in w.assocs

    def arith(self, text: str) -> int | None:
        result = self.ev.arith(text, self.w, self.loc, expand=False)
        return int(result) if isinstance(result, str) else None


class Evaluator:
    """Interprets parsed scripts over worlds (see the module docstring)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.reads: set[str] = set()
        self.weak_reads: set[str] = set()  # variables read only to test whether they are empty
        # variables read only through a prefix or suffix removal of a literal pattern (`${X%%_*}`):
        # name -> {(operator, pattern)}; see verifier.shell.memo (`derived_value`)
        self.derived_reads: dict[str, set[tuple[str, Pattern]]] = {}
        # variables whose number a server start takes in an argument word (verifier.shell.builtins
        # ._templated): not reads, unless read elsewhere too (checkpoints still tell them apart)
        self.placed_words: set[str] = set()
        # `[[ $X op N ]]` / `[ $X op N ]` a starting variable's number, or a derived number, was
        # compared in: (X or the derivation, its word's index, op, N) (builtins.compared_test): not reads
        self.compared: set[tuple[str | Derivation, int, str, str]] = set()
        # numbers the script computed from starting numbers, held as tokens (verifier.shell.derived):
        # token -> (its derivation, its number here); and the token of each derivation
        self.derived: dict[str, tuple[Derivation, str]] = {}
        self.tokens: dict[Derivation, str] = {}
        self.downloads: dict[str, str] = {}  # `hf download REPO --local-dir DIR`: DIR -> REPO
        self.fetched: dict[str, Loc] = {}  # files a command brings in at run time (`curl -o F`): F -> line
        self.sink: str | None = None  # the file the output being expanded goes to (see builtins._sink)
        self.sink_reads: dict[str, set[str]] = {}
        self.weak = False
        self.read_all = False
        self.steps = 0
        self.done_work = 0  # statements scanned deciding whether worlds can stop early (`_done`)
        self.snapshot_work = 0  # bindings copied for checkpoints (`run_top`)
        self.call_depth = 0
        self.source_depth = 0
        self.initial: dict[str, Binding] = {}
        self.unread: dict[str, Loc] = {}  # libraries the script sources that could not be read
        self.sourced: list[str] = []  # repository files sourced (in order)
        self.children: list[str] = []  # repository scripts run as children
        self.main_src = ""
        self.scripts: list[Script] = []  # every file parsed so far (main, sourced, children)
        self._live: dict[int, tuple[Any, ...]] = {}  # see `_functions`
        self._kept_before: frozenset[str] | None = None  # `_kept` at the last `drop_dead`
        self._kept_by: dict[tuple[_Functions, frozenset[str]], frozenset[str]] = {}  # `_kept` by table and names
        self._kept_last: tuple[_Functions, frozenset[str]] | None = None  # the last `_kept`, with its table
        self._owner = object()  # owns the table bases its main script's worlds share (world.settle)
        # the status of the last command substitution (an assignment-only command's status is its)
        self.subst_status: bool | None = True
        # variables `drop_dead` removed from some world (see `run_unseen`), and whether it may
        # (False: an evaluation made again because text it had not seen read one of them)
        self.dropped: frozenset[str] = frozenset()  # immutable: checkpoints keep it without a copy
        self.drops = True

    # =========================================================================== entry points

    def run(self, script: Script, env: Mapping[str, Binding], arg0: str, args: Iterable[str] = ()) -> list[World]:
        """Run a script from the given environment; returns the final worlds."""
        self.initial = dict(env)
        self.main_src = script.src
        self.scripts.append(script)
        w = World()
        w.vars = dict(env)  # copied in C (every run builds it; a resumed one replaces it)
        w.exported = set(env)
        w.arg0 = arg0
        w.sources = (script.src,)
        w.pos = tuple((a, (script.src, 0)) for a in args)
        worlds = self.run_top(script.body, [w])
        return worlds

    # --- prefix sharing (see verifier.shell.memo.Checkpoints) ------------------------------

    def _restore(self, start: int, worlds: list[World]) -> tuple[int, list[World]]:
        store, key = self.options.checkpoints, self.options.checkpoint_key
        if store is None or key is None:
            return start, worlds
        found = store.find(key, self.initial)
        if found is None:
            return start, worlds
        index, state, restored = found
        self.reads, self.weak_reads, self.read_all = set(state["reads"]), set(state["weak"]), state["read_all"]
        self.derived_reads = {name: set(specs) for name, specs in state["derived"].items()}
        self.placed_words = set(state["placed"])
        self.compared = set(state["compared"])
        self.derived, self.tokens = dict(state["derived_numbers"]), dict(state["tokens"])
        self.sourced, self.children = list(state["sourced"]), list(state["children"])
        self.scripts, self.unread, self.steps = list(state["scripts"]), dict(state["unread"]), state["steps"]
        self.downloads = dict(state["downloads"])
        self.fetched = dict(state["fetched"])
        self.sink_reads = {k: set(v) for k, v in state["sinks"].items()}
        self.dropped = state["dropped"]
        if self.options.accesses is not None:
            kept = state.get("accesses")
            if kept is None:
                self.options.accesses = None  # the prefix's outside facts are not known
            else:
                self.options.accesses[:] = kept
        return index, restored

    def _state(self) -> dict[str, Any]:
        return {"reads": frozenset(self.reads), "weak": frozenset(self.weak_reads), "read_all": self.read_all,
                "derived": {name: frozenset(specs) for name, specs in self.derived_reads.items()},
                "placed": frozenset(self.placed_words),
                "compared": frozenset(self.compared),
                "derived_numbers": dict(self.derived), "tokens": dict(self.tokens),
                "sourced": tuple(self.sourced), "children": tuple(self.children), "scripts": tuple(self.scripts),
                "unread": dict(self.unread), "steps": self.steps, "downloads": dict(self.downloads),
                "fetched": dict(self.fetched),
                "sinks": {k: frozenset(v) for k, v in self.sink_reads.items()},
                "dropped": self.dropped,
                "accesses": None if self.options.accesses is None else tuple(self.options.accesses)}

    def run_top(self, body: Body, worlds: list[World]) -> list[World]:
        """The main script's statements; a world that has found what it looks for and cannot find
        more stops early, and variables nothing later reads are dropped so worlds can merge."""
        last, deaths = _last_mentions(body)
        store, key = self.options.checkpoints, self.options.checkpoint_key
        start, worlds = self._restore(0, worlds)
        later = _later(body, last, start)  # mentioned by a statement still to run
        keeping = store is not None and key is not None
        if keeping:
            store.begin(key, body)  # type: ignore[union-attr]
        # A checkpoint is worth keeping only before a statement that reads more of the starting
        # environment: a first read of the script's own variables (most new reads) tells points
        # apart no better than the checkpoint before it, and keeping one there filled the store
        # with shallow points (#1970: a runner's three model paths per point evicted each other's
        # deep points, so 108 of 112 runs of a script resumed at statement 10 of 59). Counted by
        # intersecting with the starting environment's names, which walks the smaller set.
        env_names = frozenset(self.initial)  # the main script runs once per evaluation
        env_read = self._env_read(env_names)
        for i in range(start, len(body)):
            item = body[i]
            before = self._read_count()
            # the worlds before a statement are kept only where a checkpoint may be stored (an
            # optimisation only: a checkpoint not stored makes a later evaluation resume earlier)
            # (bounded by a multiple of the script's size: copying every binding before every
            # statement of a script of many distinct names would be quadratic)
            snapshot: list[World] | None = None
            state: dict[str, Any] | None = None
            if keeping and i > 0 and store.wanted(key, body, i) and self.snapshot_work <= 16 * len(body) + 50_000:
                state = self._state()
                if i == start and store.has(key, i, state, self.initial):  # type: ignore[union-attr]
                    # the point this evaluation resumed from: storing it again would keep nothing,
                    # so its worlds are not copied (every resumed evaluation copied them in vain)
                    state = None
                else:
                    bases: dict[int, Any] = {}
                    snapshot = [w.frozen(bases) for w in worlds]
                    self.snapshot_work += bindings_held(snapshot)
            nxt: list[World] = []
            for w in worlds:
                if w.flow is not None:
                    nxt.append(w)
                    continue
                if w.found and self._done(w, body, i):
                    w.flow = ("stop",)
                    nxt.append(w)
                    continue
                nxt.extend(self.run_andor(item, w))
            later.difference_update(deaths[i])
            kept_last = self._kept_last
            if kept_last is not None and not kept_last[0].names.isdisjoint(deaths[i]):
                self._kept_last = None  # a function's name left the later statements: `_kept` looks again
            if len(nxt) > 1:
                self.drop_dead(nxt, later, deaths[i])
            worlds = nxt if len(nxt) <= 1 else self.normalize(nxt, _loc(item.parts[0].cmds[0]) if item.parts else NO_LOC)
            settle(worlds, self._owner, later, deaths[i])
            if keeping and i > 0 and self._read_count() != before:
                now = self._env_read(env_names)
                if now == env_read and self.read_all == before[2]:
                    continue  # only the script's own variables were read first here
                env_read = now
                if snapshot is not None and state is not None:
                    store.add(key, i, state, snapshot, self.initial)  # type: ignore[union-attr]
                else:
                    store.want(key, body, i)  # type: ignore[union-attr]
        if keeping:
            store.finished(key, body)  # type: ignore[union-attr]
        return worlds

    def _read_count(self) -> tuple[int, int, bool, int, int]:
        """How much the evaluation has read so far (it read more where this changed)."""
        return (len(self.reads), len(self.weak_reads), self.read_all,
                sum(len(specs) for specs in self.derived_reads.values()), len(self.compared))

    def _env_read(self, env_names: frozenset[str]) -> tuple[int, int, int, int]:
        """How much of the starting environment (`env_names`) the evaluation has read so far (a
        comparison is always of a starting variable)."""
        return (len(env_names & self.reads), len(env_names & self.weak_reads),
                sum(len(specs) for name, specs in self.derived_reads.items() if name in env_names),
                len(self.compared))

    def _functions(self) -> _Functions:
        """`_Functions` of the scripts parsed so far."""
        # asked after every statement: keyed by the script list and its length (scripts are only
        # appended to it), not by a tuple of every script (quadratic in a script sourcing thousands)
        scripts = self.scripts
        have = self._live.get(id(scripts))
        if have is not None and have[0] is scripts and have[1] == len(scripts):
            return have[2]  # type: ignore[no-any-return]
        # every evaluation of a script parses the same trees (verifier.shell.parser caches them): the
        # table of one list of trees is made once (the entry keeps the trees its key names by id)
        key = tuple(id(sc) for sc in scripts)
        shared = _FUNCTION_TABLES.get(scripts[0], key) if scripts else None
        if shared is not None and all(a is b for a, b in zip(shared[0], scripts, strict=True)):
            table = shared[1]
        else:
            table = _Functions(scripts)
            if scripts:
                _FUNCTION_TABLES.put(scripts[0], (tuple(scripts), table), key)
        self._live.clear()  # one entry: the scripts only grow during an evaluation
        self._live[id(scripts)] = (scripts, len(scripts), table)
        return table

    def _kept(self, later: set[str]) -> frozenset[str]:
        """The starting variables and what a function that can still run mentions: one a later
        statement names, or one such a function names (`_Functions.reachable`). A function run
        otherwise (a command name only the run spells, a file sourced later) is checked when it runs
        (`calling`). Past `MAX_TRACKED_FUNCTIONS`, every function counts as one that can run."""
        table = self._functions()
        last = self._kept_last
        if last is not None and last[0] is table:
            return last[1]  # no function's name left the later statements since (`run_top`): the same can run
        if not table.tracked:
            named = table.names
        else:
            named = table.names.intersection(later)
            if table.always:
                named |= table.always
        key = (table, named)  # the table itself: its id is not reused while this holds it
        kept = self._kept_by.get(key)
        if kept is None:
            # every unquoted expansion reads IFS (`ifs`), though none names it
            kept = self._kept_by[key] = table.mentioned_by(named).union(self.initial, ("IFS",))
        self._kept_last = (table, kept)
        return kept

    def calling(self, func: FuncDef) -> None:
        """A function is about to run: when it mentions a variable `drop_dead` already removed from
        some world (no later statement named it, `_kept`), that world no longer holds what the
        function would read, and the evaluation is made again keeping every variable
        (`KeepEverything`, as `run_unseen` does for text it had not seen)."""
        if self.dropped and not self.dropped.isdisjoint(function_reads(func)):
            raise KeepEverything()

    def drop_dead(self, worlds: list[World], later: set[str], dying: Iterable[str] = ()) -> None:
        """Forget variables no later statement (`later`), no function that can still run (`_kept`) and no
        started command can read.
        Only the names that can be such a variable are looked at (`world.drop_candidates`: what a
        world wrote since its tables were last settled, what the statement just run mentioned last,
        and the names of the shared base no later statement mentions), never every variable of
        every world.

        Liveness is read from the text known now: a file sourced later (or text `eval` runs), or a
        function run by a name only the run spells, may read a variable no statement and no function
        that can run mentions. The names dropped are recorded, and such text and such a function are
        checked against them before they run (`run_unseen`, `calling`)."""
        if self.read_all or not self.drops:
            return
        kept = self._kept(later)
        released = None
        if kept is not self._kept_before:  # one object while the same functions can run (`_kept_by`)
            released = self._kept_before - kept if self._kept_before is not None else None
            self._kept_before = kept
        if released:
            # what only a function that can no longer run kept: a shared base may hold it though no
            # later statement mentions it, so it is a suspect again (`world.drop_candidates`)
            seen: set[int] = set()
            for w in worlds:
                for table in (w.vars, w.arrays, w.assocs):
                    if isinstance(table, Table) and table.base.owner is self._owner and id(table.base) not in seen:
                        seen.add(id(table.base))
                        table.base.suspect.update(table.base.keys() & released)
        forgotten: list[str] | None = None  # made on the first name dropped (most calls drop none)
        for w in worlds:
            if w.flow is not None:
                continue
            for table in (w.vars, w.arrays, w.assocs):
                if not table:
                    continue
                if type(table) is dict:
                    # every name is a candidate: most are the starting environment's, which `kept`
                    # holds and no later statement mentions, so taking those out first leaves a few
                    # names to test against `later` (the same set as the other order, in fewer steps)
                    dead = set(table).difference(kept)
                    if dead:
                        dead = dead.difference(later)
                else:
                    # set operations in C: most candidates are read later or mentioned by a function
                    dead = drop_candidates(table, self._owner, dying).difference(later)
                    if not dead:
                        continue
                    in_functions = dead & kept
                    if in_functions:
                        dead -= in_functions
                        if isinstance(table, Table) and table.base.owner is self._owner:
                            # kept while a function that mentions them can run (`_kept` gives them back)
                            table.base.suspect -= in_functions
                if dead and w.refs:  # what a reference names is read through it, under a name no later text mentions
                    dead -= set(w.refs.values())
                if dead:
                    # `dead - x` walks `dead` (a few names) where `dead -= x` walks x
                    dead = dead - w.exported  # exported variables reach the commands it starts
                for name in dead:
                    if name in table:
                        del table[name]
                        if forgotten is None:
                            forgotten = []
                        forgotten.append(name)
        if forgotten is not None and not self.dropped.issuperset(forgotten):
            self.dropped = self.dropped.union(forgotten)

    def run_unseen(self, script: Script) -> None:
        """Text the liveness of earlier statements did not see is about to run in place (a sourced
        file, `eval`ed text): when it mentions a variable `drop_dead` already removed from some world,
        that world no longer holds what the text would read, so the evaluation is made again keeping
        every variable (`KeepEverything`; rare: a script that sets a variable and sources a file
        reading it after an undecidable condition)."""
        if self.dropped and not self.dropped.isdisjoint(text_identifiers(script)):
            raise KeepEverything()

    def _done(self, w: World, body: Body, i: int) -> bool:
        """True when nothing from statement i on can start another server (or, for a runner, once
        the benchmark script has started)."""
        if self.options.mode == "child":
            return True
        # deciding costs up to the rest of the script per statement: past a multiple of the
        # script's size (only a hostile script gets there) worlds simply run on, which is what the
        # early stop saves (it is an optimisation: nothing after it can start a server)
        if self.done_work > 4 * len(body) + 4_000:
            return False
        self.done_work += 1 + len(w.funcs) // 8
        commands = self.options.commands
        # the functions by name and identity in the world's order (made in C; worlds share the
        # order they defined them in, and a different order only makes another entry)
        funcs_now = tuple(w.funcs.values())
        extra = (i, tuple(w.funcs), tuple(map(id, funcs_now)), tuple(map(id, self.scripts)), commands)
        entry = _DONE_CACHE.get(body, extra)
        cached = entry[1] if entry is not None else None
        if cached is None:
            funcs = dict(w.funcs)
            for item in body[i:]:
                for part in item.parts:
                    for cmd in part.cmds:
                        if isinstance(cmd, FuncDef):
                            funcs[cmd.name] = cmd
            assigned = _assigned_in(self.scripts)
            self.done_work += len(body) - i + len(funcs) + len(assigned)
            cached = not may_launch(body[i:], commands, _launching(funcs, commands, self.scripts, assigned), assigned)
            # the entry keeps the functions and scripts its key names by id
            _DONE_CACHE.put(body, ((*funcs_now, *self.scripts), cached), extra)
        return cached

    # =========================================================================== worlds

    def normalize(self, worlds: list[World], loc: Loc) -> list[World]:
        """Merge equal worlds and keep at most max_worlds alive."""
        if len(worlds) <= 1:
            return worlds
        buckets: dict[Any, _Bucket] = {}
        out: list[World] = []
        for w in worlds:
            group = buckets.get(w.bucket())
            if group is None:
                group = buckets[w.bucket()] = _Bucket()
            have = group.find(w)
            if have is not None:
                shared = set(w.assume)
                have.assume = tuple(a for a in have.assume if a in shared)
                if have.status != w.status:
                    have.status = None
            else:
                group.add(w)
                out.append(w)
        if len(out) <= self.options.max_worlds:
            return out
        groups: dict[Any, list[World]] = {}
        for w in out:
            groups.setdefault((tuple(f.signature() for f in w.found), w.flow), []).append(w)
        reason = f"more than {self.options.max_worlds} ways through the script"
        out = [join(g, reason, loc) for g in groups.values()]
        if len(out) > self.options.max_worlds:
            raise ShellLimit(f"more than {self.options.max_worlds} different ways to start the server", loc)
        return out

    def fork(self, w: World, loc: Loc, text: str, yes: str = "true", no: str = "false") -> tuple[World, World]:
        """Two copies of a world assuming a condition held / did not hold."""
        a = w
        b = w.copy()
        yes_a, no_a = Assumption(loc, text, yes), Assumption(loc, text, no)
        if yes_a not in a.assume:
            a.assume = a.assume + (yes_a,)
        if no_a not in b.assume:
            b.assume = b.assume + (no_a,)
        return a, b

    def step(self, loc: Loc) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ShellLimit(f"the script runs more than {MAX_STEPS} commands", loc)

    # =========================================================================== lists

    def run_body(self, body: Body, worlds: list[World]) -> list[World]:
        for item in body:
            nxt: list[World] = []
            for w in worlds:
                if w.flow is not None:
                    nxt.append(w)
                else:
                    nxt.extend(self.run_andor(item, w))
            worlds = nxt if len(nxt) <= 1 else self.normalize(nxt, _loc(item.parts[0].cmds[0]) if item.parts else NO_LOC)
        return worlds

    def run_andor(self, item: AndOr, w: World) -> list[World]:
        if item.background:
            return self.in_subshell(w, lambda x: self._andor(item, x), background=True)
        return self._andor(item, w)

    def _andor(self, item: AndOr, w: World) -> list[World]:
        if not item.ops:  # one pipeline (most lists)
            return self.run_pipeline(item.parts[0], w)
        worlds = self.run_pipeline(item.parts[0], w)
        for op, part in zip(item.ops, item.parts[1:], strict=True):
            nxt: list[World] = []
            for x in worlds:
                if x.flow is not None:
                    nxt.append(x)
                    continue
                status = x.status
                if status is None:
                    prev = item.parts[item.parts.index(part) - 1]
                    ok, bad = self.fork(x, _loc(prev.cmds[0]), _pipe_text(prev), "succeeds", "fails")
                    ok.status, bad.status = True, False
                    pairs = [(ok, True), (bad, False)]
                else:
                    pairs = [(x, status)]
                for y, st in pairs:
                    if (op == "&&") == st:
                        nxt.extend(self.run_pipeline(part, y))
                    else:
                        nxt.append(y)
            worlds = nxt
        return worlds

    def run_pipeline(self, pipe: Pipeline, w: World) -> list[World]:
        worlds = self.run_command(pipe.cmds[0], w) if len(pipe.cmds) == 1 else self._pipeline(pipe, w)
        if pipe.negate:
            for x in worlds:
                x.status = None if x.status is None else not x.status
        return worlds

    def _pipeline(self, pipe: Pipeline, w: World) -> list[World]:
        """Each command of a pipeline runs in a subshell; known output feeds the next one's input."""
        stdin: list[tuple[Val, Loc]] | None = None
        result: list[World] = []
        # `set -o pipefail` (not followed) makes an earlier command's failure the pipeline's: its
        # status is the last command's only when every earlier one succeeded
        earlier_ok = True
        for k, cmd in enumerate(pipe.cmds):
            last = k == len(pipe.cmds) - 1
            sub = w.copy()
            sub.out = [] if not last or w.out is not None else None
            if last and w.out is not None:
                sub.out = list(w.out)
            outs = self.run_command(cmd, sub, stdin=stdin)
            if not last:
                earlier_ok = earlier_ok and all(x.status is True for x in outs)
                texts = {tuple(x.out or ()) for x in outs if x.flow is None}
                stdin = list(next(iter(texts))) if len(texts) == 1 else [(Opaque("<pipe>", _loc(cmd)), _loc(cmd))]
                found = [x for x in outs if x.found != w.found]
                if found:
                    w = w.copy()
                    w.found = found[0].found
                continue
            keep_out = w.out is not None
            for n, x in enumerate(outs):
                # the world the pipeline ran in is not used after it: the last outcome takes it over
                y = w if n == len(outs) - 1 else w.copy()
                y.status = x.status if earlier_ok or x.status is False else None
                y.found = x.found
                y.files = x.files
                y.assume = x.assume
                if keep_out:
                    y.out = x.out
                if x.flow is not None and x.flow[0] == "stop":
                    y.flow = x.flow
                result.append(y)
        return result

    def in_subshell(self, w: World, action: Callable[[World], list[World]], background: bool = False) -> list[World]:
        """Run in a copy of the world; only started commands, written files and the status survive."""
        sub = w.copy()
        outs = action(sub)
        result: list[World] = []
        keep_out = w.out is not None
        for n, x in enumerate(outs):
            # the world the subshell was started from is not used after it: the last outcome takes it over
            y = w if n == len(outs) - 1 else w.copy()
            y.status = True if background else x.status
            y.found = x.found
            y.files = x.files
            y.assume = x.assume
            if keep_out and x.out is not None:
                y.out = x.out
            if x.flow is not None and x.flow[0] == "stop":
                y.flow = x.flow
            result.append(y)
        return result

    # =========================================================================== commands

    def run_command(self, cmd: Command, w: World, stdin: list[tuple[Val, Loc]] | None = None) -> list[World]:
        if isinstance(cmd, Simple):
            return self.run_simple(cmd, w, stdin)
        self.step(_loc(cmd))
        if isinstance(cmd, FuncDef):
            w.own_funcs()[cmd.name] = cmd
            w.status = True
            return [w]
        redirect_out = self.redirect_target(cmd.redirects, w) if getattr(cmd, "redirects", ()) else None
        if redirect_out is not None:
            return self.with_output_to(redirect_out, w, lambda x: self._compound(cmd, x), _loc(cmd))
        return self._compound(cmd, w)

    def _compound(self, cmd: Command, w: World) -> list[World]:
        if isinstance(cmd, If):
            return self.run_if(cmd, 0, w)
        if isinstance(cmd, Group):
            if cmd.subshell:
                return self.in_subshell(w, lambda x: self.run_body(cmd.body, [x]))
            return self.run_body(cmd.body, [w])
        if isinstance(cmd, While):
            return self.run_while(cmd, w)
        if isinstance(cmd, For):
            return self.run_for(cmd, w)
        if isinstance(cmd, ArithFor):
            return self.run_arith_for(cmd, w)
        if isinstance(cmd, Case):
            return self.run_case(cmd, w)
        if isinstance(cmd, Arith):
            value = self.arith(cmd.expr, w, _loc(cmd))
            w.status = None if not isinstance(value, str) else value != "0"
            return [w]
        if isinstance(cmd, Test):
            w.status = self.double_test(cmd.words, w, _loc(cmd))
            if any(word.raw == "=~" for word in cmd.words):  # the groups it matched: not modelled
                w.arrays["BASH_REMATCH"] = ((Opaque("${BASH_REMATCH[@]}", _loc(cmd), False, True), _loc(cmd)),)
                w.vars.pop("BASH_REMATCH", None)
            return [w]
        raise ShellSyntaxError(f"unsupported command {type(cmd).__name__}", getattr(cmd, "line", None))

    # --- if / loops / case -------------------------------------------------------------------

    def run_if(self, node: If, k: int, w: World) -> list[World]:
        if k >= len(node.clauses):
            if node.orelse is not None:
                return self.run_body(node.orelse, [w])
            w.status = True
            return [w]
        cond, body = node.clauses[k]
        out: list[World] = []
        for x in self.run_body(cond, [w]):
            if x.flow is not None:
                out.append(x)
                continue
            if x.status is True:
                out.extend(self.run_body(body, [x]))
            elif x.status is False:
                out.extend(self.run_if(node, k + 1, x))
            else:
                loc = (node.src, cond[0].line if cond else node.line)
                yes, no = self.fork(x, loc, _body_text(cond))
                out.extend(self.run_body(body, [yes]))
                out.extend(self.run_if(node, k + 1, no))
        return out

    def loop_unknown(self, w: World, loc: Loc, one_pass: Callable[[World], list[World]]) -> list[World]:
        """A loop whose iterations cannot be counted: run it until its state stops changing and join
        every state it can be in after the loop."""
        reason = f"assigned inside the loop on line {loc[1]}"
        state = w
        finished: list[World] = []
        for _ in range(MAX_FIXPOINT):
            outs = one_pass(state.copy())
            ended = [x for x in outs if x.flow is not None and x.flow[0] in ("exit", "return", "stop")]
            finished.extend(ended)
            rest = [x for x in outs if x not in ended]
            for x in rest:
                if x.flow is not None and x.flow[0] in ("break", "continue"):
                    x.flow = None
            same_found = [x for x in rest if x.found == state.found]
            other = [x for x in rest if x.found != state.found]
            finished.extend(other)
            new = join([state, *same_found], reason, loc)
            new.status = True
            if new.signature() == state.signature():
                state = new
                break
            state = new
        out = [state, *finished]
        return self.normalize(out, loc)

    def run_while(self, node: While, w: World) -> list[World]:
        loc = (node.src, node.line)
        active = [w]
        done: list[World] = []
        for _ in range(MAX_ITERATIONS):
            nxt: list[World] = []
            for x in active:
                for c in self.run_body(node.cond, [x]):
                    if c.flow is not None:
                        done.append(c)
                        continue
                    status = c.status if not node.until or c.status is None else not c.status
                    if status is False:
                        c.status = True
                        done.append(c)
                    elif status is True:
                        for y in self.run_body(node.body, [c]):
                            nxt.extend(self._loop_flow(y, done))
                    else:
                        done.extend(self.loop_unknown(c, loc, lambda s: self._while_pass(node, s)))
            active = self.normalize(nxt, loc)
            if not active:
                break
        else:
            for x in active:
                done.extend(self.loop_unknown(x, loc, lambda s: self._while_pass(node, s)))
        return self.normalize(done, loc)

    def _while_pass(self, node: While, w: World) -> list[World]:
        outs: list[World] = []
        for c in self.run_body(node.cond, [w]):
            if c.flow is not None:
                outs.append(c)
                continue
            outs.extend(self.run_body(node.body, [c]))
        return outs

    @staticmethod
    def _loop_flow(y: World, done: list[World]) -> list[World]:
        """Handle break/continue after one iteration: returns the worlds that iterate again."""
        if y.flow is None:
            return [y]
        kind = y.flow[0]
        if kind == "break":
            n = y.flow[1]
            y.flow = None if n <= 1 else ("break", n - 1)
            y.status = True
            done.append(y)
            return []
        if kind == "continue":
            n = y.flow[1]
            if n <= 1:
                y.flow = None
                return [y]
            y.flow = ("continue", n - 1)
            done.append(y)
            return []
        done.append(y)
        return []

    def run_for(self, node: For, w: World) -> list[World]:
        loc = (node.src, node.line)
        if node.words is None:
            items = list(w.pos)
        else:
            items = []
            for word in node.words:
                items.extend(self.expand_word(word, w, (node.src, word.line), split=True, glob=True))
        if any(shape_unknown(v) for v, _ in items) or len(items) > MAX_ITERATIONS:
            def one(s: World) -> list[World]:
                s.vars[node.name] = (Unknown(f"the loop variable of line {loc[1]}", loc), loc)
                return self.run_body(node.body, [s])
            return self.loop_unknown(w, loc, one)
        active = [w]
        done: list[World] = []
        for value, vloc in items:
            nxt: list[World] = []
            for x in active:
                x.vars[node.name] = (value, vloc if vloc != NO_LOC else loc)
                for y in self.run_body(node.body, [x]):
                    nxt.extend(self._loop_flow(y, done))
            active = self.normalize(nxt, loc)
            if not active:
                break
        for x in active:
            x.status = True
        return self.normalize(done + active, loc)

    def run_arith_for(self, node: ArithFor, w: World) -> list[World]:
        loc = (node.src, node.line)
        self.arith(node.init, w, loc)
        active = [w]
        done: list[World] = []
        blind = _blind_loop(node)
        before: _Pass | None = None  # the previous pass, while the loop may settle (`_Pass`)
        for passes in range(MAX_ITERATIONS):
            if blind is not None:
                mark = (len(done), self.steps, self._fingerprint())
            nxt: list[World] = []
            for x in active:
                cond = self.arith(node.cond, x, loc) if node.cond.strip() else "1"
                if not isinstance(cond, str):
                    def one(s: World) -> list[World]:
                        outs = self.run_body(node.body, [s])
                        for o in outs:
                            if o.flow is None:
                                self.arith(node.step, o, loc)
                        return outs
                    done.extend(self.loop_unknown(x, loc, one))
                    continue
                if cond == "0":
                    x.status = True
                    done.append(x)
                    continue
                for y in self.run_body(node.body, [x]):
                    again = self._loop_flow(y, done)
                    for z in again:
                        self.arith(node.step, z, loc)
                    nxt.extend(again)
            active = self.normalize(nxt, loc)
            if not active:
                break
            if blind is not None:
                now = _Pass.of(active, done[mark[0]:], self.steps - mark[1], mark[2], self._fingerprint())
                if before is not None and now.repeats(before, blind[0]):
                    rest = self._settled_rest(node, loc, active[0], now, blind, passes + 1)
                    if rest is not None:
                        done.extend(rest)
                        break
                before = now
        else:
            for x in active:
                done.extend(self.loop_unknown(x, loc, lambda s: self.run_body(node.body, [s])))
        return self.normalize(done, loc)

    def _fingerprint(self) -> tuple[Any, ...]:
        """What a pass of a loop body can leave behind in the evaluator itself (not in a world): a pass
        that changes none of it and leaves its worlds as the pass before did repeats that pass."""
        return (*self._read_count(), sum(len(names) for names in self.sink_reads.values()), len(self.sink_reads),
                len(self.fetched), len(self.downloads), len(self.children), len(self.sourced), len(self.unread),
                len(self.scripts), self.dropped, self.subst_status)

    def _settled_rest(self, node: ArithFor, loc: Loc, world: World, settled: _Pass,
                      blind: tuple[frozenset[str], frozenset[str]], passes: int) -> list[World] | None:
        """The rest of a `for ((...))` loop whose last pass repeated the one before but for its counters
        (`_Pass.repeats`), without running its body again: each further pass ends the same worlds with
        that pass's counters, and the loop ends with the counters that fail its condition. None (the
        loop goes on pass by pass) when the counters' course is not known, or the loop would not end
        within MAX_ITERATIONS passes or MAX_STEPS commands as it does when run pass by pass.

        Exact: the body mentions no counter (`_blind_loop`), calls no function and nothing that
        lists variables, so from a world that agrees but for the counters it does the same."""
        counters, commands = blind
        if len(settled.active) != 1 or any(name in world.exported or name in world.attrs or name in world.refs
                                           or name in world.arrays or name in world.assocs or name not in world.vars
                                           for name in counters):
            return None
        if not commands.isdisjoint(world.funcs):
            return None
        # the counters' course, on a copy: passes until the condition fails
        probe = world.copy()
        courses: list[dict[str, Binding]] = []
        while True:
            if passes + len(courses) >= MAX_ITERATIONS:
                return None
            cond = self.arith(node.cond, probe, loc) if node.cond.strip() else "1"
            if not isinstance(cond, str):
                return None
            if cond == "0":
                break
            courses.append({name: probe.vars[name] for name in counters})
            self.arith(node.step, probe, loc)
            if any(probe.vars.get(name) is None for name in counters):
                return None
        if self.steps + settled.steps * len(courses) > MAX_STEPS:
            return None
        self.steps += settled.steps * len(courses)
        out: list[World] = []
        for course in courses:
            for ended in settled.done:
                copy = ended.copy()
                for name, binding in course.items():
                    copy.vars[name] = binding
                out.append(copy)
        # the world that goes on: the counters' values once the condition fails
        for name in counters:
            world.vars[name] = probe.vars[name]
        world.status = True
        out.append(world)
        return out

    def run_case(self, node: Case, w: World) -> list[World]:
        loc = (node.src, node.line)
        value, _ = self.expand_scalar(node.word, w, loc)
        return self._case_from(node, 0, value, w, False)

    def _case_from(self, node: Case, k: int, value: Val, w: World, falling: bool) -> list[World]:
        out: list[World] = []
        while k < len(node.arms):
            arm = node.arms[k]
            if falling:
                matched: bool | None = True
            else:
                matched = False
                for pat_word in arm.patterns:
                    pattern = self.expand_pattern(pat_word, w, (node.src, arm.line))
                    if pattern is not None and all(not lit and set(t) <= {"*"} for t, lit in pattern) and \
                            any(t for t, _ in pattern):
                        matched = True  # `*)` matches anything, a run-time value too
                        break
                    if pattern is None or not isinstance(value, str):
                        matched = None
                        continue
                    if glob_match(value, pattern):
                        matched = True
                        break
            if matched is None:
                text = f"case {node.word.raw} in {'|'.join(p.raw for p in arm.patterns)})"
                yes, no = self.fork(w, (node.src, arm.line), text, "matches", "does not match")
                out.extend(self._case_arm(node, k, value, yes))
                w = no
                k += 1
                continue
            if matched:
                out.extend(self._case_arm(node, k, value, w))
                return out
            k += 1
        w.status = True
        out.append(w)
        return out

    def _case_arm(self, node: Case, k: int, value: Val, w: World) -> list[World]:
        arm = node.arms[k]
        worlds = self.run_body(arm.body, [w]) if arm.body else [w]
        if not arm.body:
            w.status = True
        if arm.term == ";;" or k + 1 >= len(node.arms):
            return worlds
        out: list[World] = []
        for x in worlds:
            if x.flow is not None:
                out.append(x)
            else:
                out.extend(self._case_from(node, k + 1, value, x, falling=arm.term == ";&"))
        return out

    # --- simple commands -----------------------------------------------------------------------

    def run_simple(self, cmd: Simple, w: World, stdin: list[tuple[Val, Loc]] | None = None) -> list[World]:
        loc = (cmd.src, cmd.line)
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ShellLimit(f"the script runs more than {MAX_STEPS} commands", loc)
        return _builtins().run_simple(self, cmd, w, stdin, loc)

    # =========================================================================== variables

    def deref(self, w: World, name: str, loc: Loc) -> str:
        """The variable a name stands for: itself, or what the `declare -n` references it names lead
        to ("" for a reference not yet pointed anywhere). A reference the evaluator cannot follow (a
        cycle, an array element, one that differs between the ways joined here) is a `ShellLimit`."""
        try:
            return follow_ref(w.refs, name, self.reads)
        except RefNotFollowed as exc:
            target = "a value that differs between ways through the script" if exc.target == "?" else exc.target
            raise ShellLimit(f"the name reference `{exc.name}` (declare -n) to {target} is not followed "
                             "statically", loc) from None

    def holds_start(self, name: str, binding: Binding) -> bool:
        """Whether a variable's binding is still the one the starting environment gave it (not one
        the script set, even to an equal value: a binding carries where it was set)."""
        return binding == self.initial.get(name)

    def lookup(self, w: World, name: str, loc: Loc, record: bool = True) -> Val | None:
        """A variable's value (None when unset); records the read (see verifier.shell.memo) unless the
        caller records it itself (`record`: False)."""
        if w.refs and name in w.refs:
            name = self.deref(w, name, loc)
            if not name:
                return None
        binding = w.vars.get(name)
        if binding is not None and self.held(binding) is not None:
            return self.number_of(binding)[0]
        # a variable the script set itself tells starting environments nothing apart: what it was
        # set from was read where it was set
        if record and (binding is None or self.holds_start(name, binding)):
            if self.sink is not None:
                self.sink_reads.setdefault(self.sink, set()).add(name)
            elif self.weak:
                self.weak_reads.add(name)
            else:
                self.reads.add(name)
        if binding is not None:
            return binding[0]
        arr = w.arrays.get(name)
        if arr is not None:
            return arr[0][0] if arr else None
        table = w.assocs.get(name)
        if table is not None:
            b = table.get("0", table.get(ANY_KEY))
            return None if b is None else b[0]
        if name in self.options.machine_env:
            return opaque_env(name)
        if name == "PWD":
            return "/workspace"
        if name == "LINENO":
            return str(loc[1])
        if name in SHELL_SET:
            return opaque_env(name)
        if name == "IFS":
            return DEFAULT_IFS
        return None

    def held(self, binding: Binding) -> tuple[Derivation, str] | None:
        """The derived number a binding holds (verifier.shell.derived): its derivation and its number
        here; None for any other binding."""
        value = binding[0]
        return self.derived.get(value) if self.derived and isinstance(value, str) else None

    def number_of(self, binding: Binding) -> Binding:
        """A binding as the script sees it: a derived token's number, whose starting variables are
        then read (verifier.shell.derived); any other binding as it is."""
        got = self.held(binding)
        if got is None:
            return binding
        self.reads.update(got[0].bases)
        return got[1], binding[1]

    def derive(self, w: World, name: str, word: Word, loc: Loc) -> bool:
        """`name=word` where the word is a number of starting numbers (`$CONC`, `$((CONC / TP))`,
        verifier.shell.derived): the variable holds the derivation's token and its starting
        variables are placed, not read (True); False: any other assignment, made as before."""
        if self.sink is not None or self.weak or len(word.parts) != 1 or word.old_arithmetic or word.tilde \
                or name == "IFS" or name in w.attrs or name in w.arrays or name in w.assocs \
                or (w.refs and name in w.refs):
            return False

        part = word.parts[0]
        derivation = derivation_for(part.kind, part.text, partial(self._derivable, w))
        if derivation is None:
            return False
        tok = self.token_of(derivation)
        if tok is None:
            return False
        # a checkpoint still tells its starting variables apart (the worlds hold the number where
        # it was put back); an evaluation that only places the token's number does not
        self.placed_words.update(derivation.bases)
        self.assign(w, name, tok, loc)
        return True

    def word_derivation(self, w: World, word: Word) -> Derivation | None:
        """The derivation (verifier.shell.derived) a command word that is one `$(( ))` of starting
        numbers computes (`--max-running-requests "$(( CONC * 3 / 2 > 8 ? CONC * 3 / 2 : 8 ))"`),
        which a server's argument places as it places a variable holding it (None: any other word, or
        one that gives no number here, as `token_of` has it)."""
        parts = word.parts
        if self.sink is not None or self.weak or len(parts) != 1 or parts[0].kind != "arith" or word.braced \
                or word.tilde or word.old_arithmetic:
            return None
        if not parts[0].quoted and any(c.isdigit() or c == "-" for c in self.ifs(w)):
            return None  # the number's text would be split
        derivation = derivation_for("arith", parts[0].text, partial(self._derivable, w))
        return None if derivation is None or derivation.number(self.initial) is None else derivation

    def _derivable(self, w: World, var: str) -> tuple[Binding | None, bool, Derivation | None]:
        """What verifier.shell.derived.derivation_for asks of a variable: its binding (None for an
        array or a name reference), whether it is the starting environment's, its derivation."""
        if (w.refs and var in w.refs) or var in w.arrays or var in w.assocs:
            return None, False, None
        b = w.vars.get(var)
        if b is None:
            return None, False, None
        held = self.held(b)
        return b, self.holds_start(var, b), None if held is None else held[0]

    def binding_loc(self, w: World, name: str) -> Loc | None:
        b = w.vars.get(name)
        if b is not None:
            return b[1]
        arr = w.arrays.get(name)
        if arr:
            return arr[0][1]
        return None

    def assign(self, w: World, name: str, value: Val, loc: Loc, append: bool = False) -> None:
        """`name=value` (`+=`: append); an array's first element when the name is an array."""
        if w.refs and name in w.refs:
            target = self.deref(w, name, loc)
            if not target:  # `declare -n r; r=NAME`: the assignment points the reference
                if not isinstance(value, str) or not _NAME.fullmatch(value):
                    raise ShellLimit(f"the name reference `{name}` (declare -n) is pointed at {shown(value)}, "
                                     "which is not followed statically", loc)
                w.refs[name] = value
                return
            name = target
        attr = w.attrs.get(name, "")
        if "i" in attr and append:  # `N+=3` of an integer adds
            old = self.lookup(w, name, loc)
            old = "0" if old is None or old == "" else old
            value = self.arith(f"({old})+({value})", w, loc) if isinstance(value, str) and isinstance(old, str) \
                else Opaque(f"$(({name}+{shown(value)}))", loc)
            append = False
        elif "i" in attr and isinstance(value, str):
            value = self.arith(value, w, loc)
        if "l" in attr and isinstance(value, str):
            value = value.lower()
        if "u" in attr and isinstance(value, str):
            value = value.upper()
        if append:
            old = self.lookup(w, name, loc)
            value = concat([old if old is not None else "", value], loc)
        if name in w.arrays:
            arr = w.arrays[name]
            w.arrays[name] = ((value, loc),) + arr[1:]
            return
        if name in w.assocs:
            w.set_assoc(name, "0", (value, loc))
            return
        w.vars[name] = (value, loc)

    def save_local(self, w: World, name: str) -> None:
        """Remember a variable's binding before `local` shadows it (restored when the function returns)."""
        if not w.frames:
            return
        frame = w.frames[-1]
        if name in frame:
            return
        frame[name] = (w.vars.get(name), w.arrays.get(name), w.assocs.get(name), name in w.exported,
                       w.refs.get(name), w.attrs.get(name))
        if name in w.attrs:  # a local variable starts without the attributes it hides
            w.attrs = {k: v for k, v in w.attrs.items() if k != name}
        w.refs.pop(name, None)
        w.vars.pop(name, None)
        w.arrays.pop(name, None)
        w.assocs.pop(name, None)

    def unset(self, w: World, name: str) -> None:
        if w.refs and name in w.refs:
            name = self.deref(w, name, (w.sources[-1] if w.sources else "", 0))
            if not name:
                return
        w.vars.pop(name, None)
        w.arrays.pop(name, None)
        w.assocs.pop(name, None)
        w.exported.discard(name)
        self.reads.add(name)

    # =========================================================================== expansion

    def expand_words(self, words: Iterable[Word], w: World, loc: Loc) -> list[Binding]:
        out: list[Binding] = []
        for word in words:
            out.extend(self.expand_word(word, w, (loc[0], word.line), split=True, glob=True))
        return out

    def expand_emptiness(self, word: Word, w: World, loc: Loc) -> Binding:
        """A word whose only use is whether it is empty (`[[ -z ... ]]`): its plain variable reads
        are recorded as emptiness reads (see verifier.shell.memo)."""
        weak, self.weak = self.weak, True
        try:
            return self.expand_scalar(word, w, loc)
        finally:
            self.weak = weak

    def expand_scalar(self, word: Word, w: World, loc: Loc) -> Binding:
        """A word in assignment context: no field splitting; one value."""
        fields = self.expand_word(word, w, loc, split=False)
        if not fields:
            return "", loc
        if len(fields) == 1:
            return fields[0]
        # `V="${A[@]}"`: the words joined by a space (a run-time word stays one: its text is not known)
        return concat([piece for v, _ in fields for piece in (v, " ")][:-1], loc), loc

    def expand_word(self, word: Word, w: World, loc: Loc, split: bool = True, glob: bool = False) -> list[Binding]:
        """Expand one word into fields, each with the place its text was written; with `glob`, a field
        that is a pathname pattern bash makes from unquoted text is a run-time value (the file names
        it matches, which may be any number of words: `expansion.may_glob`)."""
        if (split and word.braced and len(word.parts) > 1) or word.old_arithmetic:  # not modelled
            return [(Opaque(word.raw, (loc[0], word.line), False, split), (loc[0], word.line))]
        fields = self._expanded(word, w, loc, split)
        if word.tilde:  # a home directory: the run's
            return [(v if isinstance(v, Unknown) else Opaque(shown(v), b, True, split), b) for v, b in fields[:1]] + \
                [(_many(v), b) for v, b in fields[1:]]
        if not glob or not word.may_make_pattern:
            return fields
        return [(Opaque(v, b, False, True), b) if isinstance(v, str) and may_glob(v) else (v, b) for v, b in fields]

    def _expanded(self, word: Word, w: World, loc: Loc, split: bool) -> list[Binding]:
        at = (loc[0], word.line)
        parts = word.parts
        if len(parts) == 1:  # the common one-part words, as the general walk below expands them
            part = parts[0]
            if part.kind == "lit":
                text = part.text
                if split and word.braced:
                    words = brace_expand(text)
                    return [(Opaque(text, at, False, True), at)] if words is None else [(t, at) for t in words]
                return [(text, at)]
            if part.kind == "param" and part.quoted:
                result = self.param(part.text, w, at)
                if isinstance(result, list):  # "${A[@]}" / "$@"; "${A[*]}" / "$*" is one word
                    if joins(part.text):
                        return [self.joined(result, w, at)]
                    return [b if b[1] != NO_LOC else (b[0], at) for b in result]
                value, vloc = result
                return [(concat([_one_word(value)], at), vloc if vloc not in (None, NO_LOC) else at)]
            if part.kind == "param":  # unquoted `$X`: split on white space, as the walk below does
                result = self.param(part.text, w, at)
                if not isinstance(result, list):
                    value, vloc = result
                    where = vloc if vloc not in (None, NO_LOC) else at
                    if isinstance(value, str):
                        if not split:
                            return [(value, where)]
                        return [(value[a:b], where) for a, b in field_spans(value, self.ifs(w))]
                    return [(concat([_many(value) if split else _one_word(value)], at), where)]
                return self._expand_parts(word, w, at, split, [result])
        return self._expand_parts(word, w, at, split, None)

    def _expand_parts(self, word: Word, w: World, at: Loc, split: bool,
                      results: list[list[Binding] | Binding] | None) -> list[Binding]:
        """`expand_word`'s general walk (`results`: the first part's parameter already expanded)."""
        fields: list[list[Val]] = [[]]
        has = [False]  # whether the current field exists even if empty (quoted text)
        single_loc: Loc | None = None
        multi: list[Binding] | None = None
        only = len(word.parts) == 1
        for part in word.parts:
            if part.kind == "lit":
                fields[-1].append(part.text)
                if part.quoted or part.text:
                    has[-1] = True
                continue
            if part.kind == "cmd":
                output = self.command_subst(part.text, w, at)
                if part.quoted or not split:
                    fields[-1].append(output)
                    has[-1] = has[-1] or part.quoted
                else:
                    self._split_into(fields, has, output, w)
                continue
            if part.kind == "arith":
                fields[-1].append(self.arith(part.text, w, at, expand=True))
                has[-1] = True
                continue
            if part.kind == "proc":
                fields[-1].append(Opaque(f"<({part.text})", at))
                has[-1] = True
                continue
            result = results.pop() if results else self.param(part.text, w, at)
            if isinstance(result, list) and part.quoted and joins(part.text):  # "${A[*]}" / "$*": one word
                fields[-1].append(self.joined(result, w, at)[0])
                has[-1] = True
                continue
            if isinstance(result, list):  # "${A[@]}" / "$@"
                if only and part.quoted:
                    return [b if b[1] != NO_LOC else (b[0], at) for b in result]
                if only and not part.quoted and split:
                    multi = []
                    for v, lc in result:
                        if isinstance(v, str):
                            multi.extend((v[a:b], lc) for a, b in field_spans(v, self.ifs(w)))
                        else:
                            multi.append((_many(v), lc))
                    return multi
                if part.quoted and split and result:
                    fields[-1].append(result[0][0])
                    has[-1] = True
                    for v, _ in result[1:]:
                        fields.append([v])
                        has.append(True)
                    continue
                if part.quoted and split:
                    continue
                if split:  # unquoted: each element is split on its own, and ends a field
                    for k, (v, _) in enumerate(result):
                        if k:
                            fields.append([])
                            has.append(False)
                        self._split_into(fields, has, v, w)
                    continue
                if joins(part.text):  # `$*` where no splitting follows: joined as "$*" is
                    fields[-1].append(self.joined(result, w, at)[0])
                    continue
                joined = [v for v, _ in result]
                text = concat([*(x for pair in zip(joined, [" "] * len(joined), strict=True) for x in pair)][:-1],
                              at) if joined else ""
                fields[-1].append(text)
                continue
            value, vloc = result
            if only:
                single_loc = vloc
            if part.quoted or not split:
                fields[-1].append(_one_word(value))
                has[-1] = True
                continue
            self._split_into(fields, has, value, w)
        out: list[Binding] = []
        where = single_loc if single_loc not in (None, NO_LOC) else at
        for pieces, present in zip(fields, has, strict=True):
            if not pieces and not present:
                continue
            out.append((concat(pieces, at) if pieces else "", where))
        if not split and len(out) > 1:
            return [(concat([x for v, _ in out for x in (v, " ")][:-1], at), where)]
        return out

    def _split_into(self, fields: list[list[Val]], has: list[bool], value: Val, w: World) -> None:
        """An unquoted expansion's value split into the word's fields (verifier.shell.expansion.field_spans):
        a delimiter first ends the field before it (and encloses no empty field there), one last
        starts the next. A value not known is one piece of the field it falls in, which the run may
        split into any number of words (`Opaque.many`)."""
        if not isinstance(value, str):
            fields[-1].append(_many(value))
            has[-1] = True
            return
        ifs = self.ifs(w)
        spans = field_spans(value, ifs)
        if value[:1] and value[:1] in ifs and (fields[-1] or has[-1]):
            fields.append([])
            has.append(False)
            if spans and spans[0][1] == 0:
                spans = spans[1:]
        if spans:
            fields[-1].append(value[spans[0][0]:spans[0][1]])
            has[-1] = True
        for a, b in spans[1:]:
            fields.append([value[a:b]])
            has.append(True)
        if value[-1:] and value[-1:] in ifs:
            fields.append([])
            has.append(False)

    @staticmethod
    def script_ifs(w: World) -> str | None:
        """IFS as the script set it in this world (bash takes no IFS from its environment); None:
        unset, or a value the evaluator does not know."""
        binding = w.vars.get("IFS")
        return binding[0] if binding is not None and isinstance(binding[0], str) else None

    def ifs(self, w: World) -> str:
        """What splits unquoted expansions in this world: the script's IFS, else space, tab and newline."""
        ifs = self.script_ifs(w)
        return DEFAULT_IFS if ifs is None else ifs

    def joined(self, elems: list[Binding], w: World, loc: Loc) -> Binding:
        """`"${A[*]}"` / `"$*"`: the elements joined by the first character of IFS."""
        sep = separator(self.script_ifs(w))
        pieces: list[Val] = []
        for k, (value, _) in enumerate(elems):
            if k and sep:
                pieces.append(sep)
            pieces.append(value)
        return concat(pieces, loc), loc

    def expand_text(self, text: str, w: World, loc: Loc) -> Val:
        """Text with expansions and quotes (a `${X:-...}` operand) as one value."""
        if not any(c in text for c in "$`'\"\\"):
            return text
        word = lex_operand(text, loc[1])
        return self.expand_scalar(word, w, loc)[0]

    def expand_pattern(self, word: Word, w: World, loc: Loc) -> Pattern | None:
        """A word as a glob pattern: quoted parts literal, unquoted text and expansions are globs."""
        segs: list[tuple[str, bool]] = []
        for part in word.parts:
            if part.kind == "lit":
                segs.append((part.text, part.quoted))
                continue
            if part.kind == "param":
                result = self.param(part.text, w, loc)
                if isinstance(result, list):
                    vals = [v for v, _ in result]
                    if not all(isinstance(v, str) for v in vals):
                        return None
                    segs.append((" ".join(vals), part.quoted))  # type: ignore[arg-type]
                    continue
                value = result[0]
            elif part.kind == "cmd":
                value = self.command_subst(part.text, w, loc)
            elif part.kind == "arith":
                value = self.arith(part.text, w, loc, expand=True)
            else:
                return None
            if not isinstance(value, str):
                return None
            segs.append((value, part.quoted))
        return tuple(segs)

    def pattern_operand(self, text: str, w: World, loc: Loc) -> Pattern | None:
        if not text:
            return ()
        return self.expand_pattern(lex_operand(text, loc[1]), w, loc)

    # --- parameters -------------------------------------------------------------------------

    def param(self, expr: str, w: World, loc: Loc) -> list[Binding] | Binding:
        """`$name` / `${...}`: a value with its origin, or a list for `"$@"` / `"${A[@]}"`."""
        kind, name, subscript, rest = parse_param(expr)
        if kind:
            if kind == "special":
                return self.special(expr, w, loc)
            if kind == "length":
                return self.length(name, w, loc), loc
            if kind == "indirect":
                return self.indirect(name, w, loc)
            return Opaque("${" + expr + "}", loc), loc
        if subscript in ("@", "*"):
            elems = self.elements(name, w, loc)
            if not rest:
                return elems
            return self.array_op(name, elems, rest, w, loc, subscript)
        if name in ("@", "*"):  # `${@:2}`, `${*/a/b}`: the positional parameters, element by element
            elems = list(w.pos)
            if operator(rest).kind == "slice":
                elems = [(w.arg0, loc), *elems]  # `${@:0}` starts at $0
            return self.array_op(name, elems, rest, w, loc, name)
        if rest and subscript is None and self.sink is None and not (w.refs and name in w.refs) \
                and not (is_number(name) or name in SPECIAL):
            spec = self._strip_spec(rest, w, loc)
            if spec is not None:
                # `${X%%_*}` with a literal pattern reads only what the removal leaves: recorded so
                # (not as a read of X), so that environments whose X differ elsewhere share the evaluation
                self.derived_reads.setdefault(name, set()).add(spec)
                got = self.lookup(w, name, loc, record=False)
                return self.operator(name, subscript, got, self.binding_loc(w, name) or loc, rest, w, loc)
        weak = self.weak
        if weak and rest and not rest.startswith((":-", "-", ":=", "=")):
            self.weak = False  # `${X#p}` and friends use the value, not only whether it is empty
        try:
            if subscript is not None:
                value, vloc = self.element(name, subscript, w, loc)
            elif is_number(name) or name in SPECIAL:
                value, vloc = self.special(name, w, loc)
            else:
                got = self.lookup(w, name, loc)
                value, vloc = (got, self.binding_loc(w, name) or loc)
        finally:
            self.weak = weak
        if not rest:
            return ("" if value is None else value), vloc
        return self.operator(name, subscript, value, vloc, rest, w, loc)

    def _strip_spec(self, rest: str, w: World, loc: Loc) -> tuple[str, Pattern] | None:
        """(operator, pattern) of a prefix or suffix removal (`#`, `##`, `%`, `%%`) whose pattern is
        literal text (no expansion: the same pattern in every evaluation of the script, read without
        reading any variable); None for any other operator."""
        op = operator(rest)
        if op.kind != "strip" or "$" in op.operand or "`" in op.operand:
            return None
        pattern = self.pattern_operand(op.operand, w, loc)
        return None if pattern is None else (op.op, pattern)

    def special(self, name: str, w: World, loc: Loc) -> list[Binding] | Binding:
        if name in ("@", "*"):
            return list(w.pos)
        if name == "#":
            many = next((v for v, _ in w.pos if shape_unknown(v)), None)
            return (str(len(w.pos)) if many is None else _at(many, "$#", loc)), loc
        if name == "?":  # a failure's own code (1 to 255) is not modelled, only that it failed
            return "0" if w.status else Opaque("$?", loc, w.status is False), loc
        if name == "0":
            return w.arg0, loc
        if is_number(name):
            k = int(name)
            first = next((i for i, (v, _) in enumerate(w.pos) if shape_unknown(v)), None)
            if first is not None and k - 1 >= first:  # after (or at) a word that may be any number of them
                return _at(w.pos[first][0], "$" + name, loc), loc
            return w.pos[k - 1] if 0 < k <= len(w.pos) else ("", loc)
        if name == "-":
            return "hB", loc
        return Opaque("$" + name, loc, name in "$!"), loc

    def elements(self, name: str, w: World, loc: Loc) -> list[Binding]:
        self.reads.add(name)
        if w.refs and name in w.refs:
            name = self.deref(w, name, loc)
            if not name:
                return []
        if name in ("@", "*"):
            return list(w.pos)
        if name == "BASH_SOURCE":
            return [(s, loc) for s in reversed(w.sources)]
        if name in w.arrays:
            return list(w.arrays[name])
        if name in w.assocs:
            return list(w.assocs[name].values())
        value = self.lookup(w, name, loc)
        return [] if value is None else [(value, self.binding_loc(w, name) or loc)]

    def element(self, name: str, subscript: str, w: World, loc: Loc) -> Binding:
        if name == "BASH_SOURCE":
            idx = self.arith(subscript, w, loc, expand=True)
            stack = list(reversed(w.sources))
            if isinstance(idx, str) and is_number(idx.lstrip("-")) and 0 <= int(idx) < len(stack):
                return stack[int(idx)], loc
            return ("" if isinstance(idx, str) else Opaque(f"${{BASH_SOURCE[{subscript}]}}", loc)), loc
        self.reads.add(name)
        if w.refs and name in w.refs:
            name = self.deref(w, name, loc)
            if not name:
                return "", loc
        if name in w.assocs:
            key = self.expand_text(subscript, w, loc)
            if not isinstance(key, str):
                return (key if isinstance(key, Unknown) else Opaque(f"${{{name}[{subscript}]}}", loc)), loc
            table = w.assocs[name]
            b = table.get(key, table.get(ANY_KEY))
            return ("", loc) if b is None else b
        idx = self.arith(subscript, w, loc, expand=True)
        if not isinstance(idx, str):
            return (idx if isinstance(idx, Unknown) else Opaque(f"${{{name}[{subscript}]}}", loc)), loc
        k = int(idx)
        if name in w.arrays:
            arr = w.arrays[name]
            # an Unknown element may stand for any number of them (`read -a` of run-time input):
            # where the ones from there on are is not known
            bad = next((i for i, (v, _) in enumerate(arr) if shape_unknown(v)), None)
            if bad is not None and (k < 0 or k >= bad):
                return _at(arr[bad][0], f"${{{name}[{subscript}]}}", loc), loc
            if k < 0:
                k += len(arr)
            return arr[k] if 0 <= k < len(arr) else ("", loc)
        if k == 0:
            value = self.lookup(w, name, loc)
            return ("" if value is None else value), self.binding_loc(w, name) or loc
        return "", loc

    def length(self, expr: str, w: World, loc: Loc) -> Val:
        m = _ALL_ELEMENTS.fullmatch(expr)
        if m or expr in ("@", "*"):
            elems = self.elements(m.group(1) if m else expr, w, loc)
            bad = next((v for v, _ in elems if shape_unknown(v)), None)
            if isinstance(bad, Opaque):  # it may stand for any number of elements
                return Opaque("${#" + expr + "}", loc)
            return bad if bad is not None else str(len(elems))
        value = self.param(expr, w, loc)
        if isinstance(value, list):
            return str(len(value))
        v = value[0]
        return str(len(v)) if isinstance(v, str) else v if isinstance(v, Unknown) else Opaque("${#" + expr + "}", loc)

    def indirect(self, expr: str, w: World, loc: Loc) -> list[Binding] | Binding:
        m = _ALL_ELEMENTS.fullmatch(expr)
        if m:  # ${!A[@]}: the keys
            name = m.group(1)
            if name in w.assocs:
                table = w.assocs[name]
                return [table[ANY_KEY]] if ANY_KEY in table else [(k, loc) for k in table]
            elems = self.elements(name, w, loc)
            # an Unknown element may stand for any number of them
            bad = next((b for b in elems if shape_unknown(b[0])), None)
            if bad is not None:
                return [(_at(bad[0], f"${{!{name}[@]}}", loc), loc)]
            return [(str(i), loc) for i in range(len(elems))]
        if expr.endswith(("*", "@")) and _NAME.fullmatch(expr[:-1]):
            if any(n.startswith(expr[:-1]) for n in self.dropped):
                raise KeepEverything()  # a name it lists was forgotten (see `run_unseen`)
            self.read_all = True
            names = sorted(n for n in {*w.vars, *w.arrays, *self.initial} if n.startswith(expr[:-1]))
            return [(n, loc) for n in names]
        m2 = _NAME_REST.match(expr)
        if not m2:
            return Opaque("${!" + expr + "}", loc), loc
        if not m2.group(2) and m2.group(1) in w.refs:  # `${!REF}` of a name reference: the name it refers to
            self.reads.add(m2.group(1))
            return w.refs[m2.group(1)], loc
        weak, self.weak = self.weak, False
        try:
            target = self.lookup(w, m2.group(1), loc)
        finally:
            self.weak = weak
        if not isinstance(target, str):
            return (target if isinstance(target, Unknown) else Opaque("${!" + expr + "}", loc)), loc
        if not target:
            return "", loc
        return self.param(target + m2.group(2), w, loc)

    def operator(self, name: str, subscript: str | None, value: Val | None, vloc: Loc, rest: str, w: World,
                 loc: Loc) -> Binding:
        """`${X<op>...}` for a scalar value (verifier.shell.expansion)."""
        op = operator(rest)
        if op.kind == "default":
            if isinstance(value, Unknown):
                return value, vloc
            if isinstance(value, Opaque) and op.colon and not value.nonempty:
                # a run-time value that may be empty: the result is a run-time value too
                other = self.expand_text(op.operand, w, loc) if op.op in "-=+" else ""
                sure = isinstance(other, str) and bool(other) and op.op in "-="
                return Opaque("${" + name + rest + "}", loc, sure), loc
            unset = not isinstance(value, Opaque) and defaulted(op, value is not None, value or "")
            if op.op == "+":
                return ("", loc) if unset else (self.expand_text(op.operand, w, loc), loc)
            if not unset:
                assert value is not None
                return value, vloc
            if op.op == "?":
                w.flow = ("exit",)
                w.exit_loc = loc
                return "", loc
            default = self.expand_text(op.operand, w, loc)
            if op.op == "=" and subscript is None:
                self.assign(w, name, default, loc)
            return default, loc
        if value is None:
            value = ""
        if op.kind == "strip":
            pattern = self.pattern_operand(op.operand, w, loc)
            if isinstance(value, str) and pattern is not None:
                return strip_pattern(value, pattern, op.op), vloc
            return self._opaque_op(value, name, rest, loc), loc
        if op.kind == "replace":
            pattern = self.pattern_operand(op.operand, w, loc)
            repl = self.expand_text(op.other, w, loc) if op.other is not None else ""
            if isinstance(value, str) and pattern is not None and isinstance(repl, str):
                return replace_pattern(value, pattern, repl, op.op), vloc
            return self._opaque_op(value, name, rest, loc), loc
        if op.kind == "case":
            if not isinstance(value, str):
                return self._opaque_op(value, name, rest, loc), loc
            return convert_case(value, op.op), vloc
        if op.kind == "transform":
            done = transform(value, op.op) if isinstance(value, str) else None
            return (done, vloc) if done is not None else (self._opaque_op(value, name, rest, loc), loc)
        if op.kind == "slice":
            off = self.arith(op.operand, w, loc, expand=True)
            length = self.arith(op.other, w, loc, expand=True) if op.other is not None else None
            if isinstance(value, str) and isinstance(off, str) and (length is None or isinstance(length, str)):
                bounds = slice_bounds(len(value), int(off), None if length is None else int(length))
                return (value[bounds[0]:bounds[1]] if bounds else ""), vloc
            return self._opaque_op(value, name, rest, loc), loc
        return Opaque("${" + name + rest + "}", loc), loc

    @staticmethod
    def _opaque_op(value: Val, name: str, rest: str, loc: Loc) -> Val:
        return value if isinstance(value, Unknown) else Opaque("${" + name + rest + "}", loc)

    def array_op(self, name: str, elems: list[Binding], rest: str, w: World, loc: Loc, sub: str
                 ) -> list[Binding] | Binding:
        """`${A[@]:off:len}`, `${A[@]/p/r}`, `${A[@]^^}`, `${A[@]:-x}` ... element by element."""
        op = operator(rest)
        if op.kind == "slice":
            off = self.arith(op.operand, w, loc, expand=True)
            length = self.arith(op.other, w, loc, expand=True) if op.other is not None else None
            bad = next((b for b in elems if shape_unknown(b[0])), None)
            if bad is not None:  # it may stand for any number of elements
                return [(_at(bad[0], f"${{{name}[{sub}]{rest}}}", loc), loc)]
            if isinstance(off, str) and (length is None or isinstance(length, str)):
                bounds = slice_bounds(len(elems), int(off), None if length is None else int(length))
                return elems[bounds[0]:bounds[1]] if bounds else []
            return [(Unknown(f"`${{{name}[{sub}]{rest}}}`", loc), loc)]
        if op.kind == "default" and op.op != "?":
            empty = not elems
            if op.op == "+":
                return [] if empty else [(self.expand_text(op.operand, w, loc), loc)]
            return [(self.expand_text(op.operand, w, loc), loc)] if empty else elems
        out: list[Binding] = []
        for value, vloc in elems:
            out.append(self.operator(name, None, value, vloc, rest, w, loc))
        return out

    # --- arithmetic -----------------------------------------------------------------------------

    def arith(self, expr: str, w: World, loc: Loc, expand: bool = True) -> Val:
        """An arithmetic expression's value as a decimal string (Opaque/Unknown when it reads one)."""
        weak, self.weak = self.weak, False
        try:
            return self._arith(expr, w, loc, expand)
        finally:
            self.weak = weak

    def _arith(self, expr: str, w: World, loc: Loc, expand: bool) -> Val:
        text = expr
        if expand and any(c in text for c in "$`"):
            expanded = self.expand_text(text.replace('"', ""), w, loc)
            if not isinstance(expanded, str):
                return expanded if isinstance(expanded, Unknown) else Opaque(f"$(({expr}))", loc, True)
            text = expanded
        bad: list[Val] = []

        def lookup(name: str) -> int | str | None:
            value = self.lookup(w, name, loc)
            if value is None:
                return None
            if not isinstance(value, str):
                bad.append(value)
                raise ArithUnknown(name)
            return value

        def assign(name: str, value: int) -> None:
            self.assign(w, name, str(value), loc)

        try:
            return str(evaluate_arith(text, lookup, assign))
        except ArithUnknown:
            first = bad[0] if bad else None
            return first if isinstance(first, Unknown) else Opaque(f"$(({expr}))", loc, True)
        except (ArithError, ValueError, RecursionError, OverflowError):
            return Opaque(f"$(({expr}))", loc, True)

    # --- command substitution ---------------------------------------------------------------

    def command_subst(self, text: str, w: World, loc: Loc) -> Val:
        """`$(...)`: what the commands print, when the evaluator models them; else opaque."""
        weak, self.weak = self.weak, False
        try:
            return self._command_subst(text, w, loc)
        finally:
            self.weak = weak

    def _command_subst(self, text: str, w: World, loc: Loc) -> Val:
        stripped = text.strip()
        self.subst_status = True
        if not stripped:
            return ""
        m = re.fullmatch(r"<\s*(\S+)", stripped)  # $(< file)
        if m:
            stripped = "cat " + m.group(1)
        try:
            script = parse(stripped, loc[0])
        except ShellSyntaxError:
            self.subst_status = None
            return Opaque(f"$({text})", loc)
        sub = w.copy()
        sub.out = []
        sub.flow = None
        found_before = w.found
        saved_assume = sub.assume
        try:
            outs = self.run_body(relocate_shared(script.body, loc), [sub])
        except ShellLimit:
            raise
        values: set[Any] = set()
        results: list[Val] = []
        statuses = {x.status for x in outs}
        self.subst_status = statuses.pop() if len(statuses) == 1 else None
        for x in outs:
            if x.found != found_before:
                w.found = x.found
            pieces = [v for v, _ in (x.out or [])]
            value = concat(pieces, loc)
            if isinstance(value, str):
                value = value.rstrip("\n")
            if x.out is None:
                value = Opaque(f"$({text})", loc)
            key = value if not isinstance(value, Opaque) else ("opaque",)
            if key not in values:
                values.add(key)
                results.append(value)
        del saved_assume
        if len(results) == 1:
            value = results[0]
            if isinstance(value, Opaque):
                return Opaque(f"$({text})", loc)
            return value
        if not results:
            return ""
        if any(isinstance(v, Unknown) for v in results):
            return next(v for v in results if isinstance(v, Unknown))
        return Opaque(f"$({text})", loc)

    # --- conditions ---------------------------------------------------------------------------

    def double_test(self, words: tuple[Word, ...], w: World, loc: Loc) -> bool | None:
        """`[[ ... ]]` (three-valued: None when it cannot be decided).

        `[[ $CONC -ge 16 ]]` is recorded as that comparison, not as a read of the variable, and so
        are comparisons joined with `&&` and `||` (builtins.compared_test)."""
        outcome = _builtins().compared_test(self, words, w, double=True)
        if outcome is not None:
            return outcome
        return eval_double(self.operands(w, loc), words)

    def operands(self, w: World, loc: Loc) -> Operands[Val]:
        """This world's values as the conditions (`[[ ]]`, `[ ]`, `test`) at `loc` see them."""
        return _Operands(self, w, loc)

    def repo_path(self, value: str) -> str | None:
        """The repository path a run-time path names, or None when it is outside the repository."""
        if not value:
            return None
        path = value
        if path.startswith("/"):
            for root in self.options.roots:
                if path == root.rstrip("/"):
                    return ""
                if path.startswith(root):
                    path = path[len(root):]
                    break
            else:
                return None
        path = posixpath.normpath(path) if path else "."
        if path.startswith(".."):
            return None
        return "" if path == "." else path

    def file_test(self, op: str, value: Val, w: World) -> bool | None:
        if not isinstance(value, str):
            return None
        if w.generated(value) is not None:
            return op != "-d"
        repo = self.repo_path(value)
        if repo is None:
            return None
        if repo == "":
            return op in ("-d", "-e", "-a")
        return self.options.file_test(op, repo)

    def promote(self, path: str) -> None:
        """A generated file is read back: the reads that wrote it now matter."""
        for key in (path, posixpath.normpath(path)):
            self.reads |= self.sink_reads.pop(key, set())

    def read_file(self, value: Val, w: World) -> tuple[GenFile | None, str | None]:
        """(generated file, repository text) for a path, when known."""
        if not isinstance(value, str):
            return None, None
        self.promote(value)
        gen = w.generated(value)
        if gen is not None:
            return self.materialized(gen), None
        repo = self.repo_path(value)
        if repo is None:
            return None, None
        return None, self.options.reader(repo)

    # --- output redirection ---------------------------------------------------------------------

    def redirect_target(self, redirects: Iterable[Redirect], w: World) -> tuple[str, bool, Loc] | None:
        """(path, append, loc) when stdout goes to a file the evaluator can name."""
        target: tuple[str, bool, Loc] | None = None
        for r in redirects:
            if r.op in (">", ">>", ">|", "&>", "&>>") and r.fd in ("", "1") and r.target is not None:
                value, _ = self.expand_scalar(r.target, w, (getattr(r, "src", ""), r.line))
                if isinstance(value, str) and value not in ("/dev/null", "/dev/stderr", "/dev/stdout"):
                    target = (value, r.op in (">>", "&>>"), ("", r.line))
                else:
                    target = ("/dev/null", False, ("", r.line))
        return target

    def with_output_to(self, target: tuple[str, bool, Loc], w: World, action: Callable[[World], list[World]],
                       loc: Loc) -> list[World]:
        """Run an action whose output is written to a file (a compound command `{ ...; } > f`)."""
        path, append, _ = target
        saved = w.out
        w.out = []
        outs = action(w)
        for x in outs:
            written = x.out or []
            x.out = saved
            if path != "/dev/null":
                self.write_file(x, path, written, append, loc)
        return outs

    def write_file(self, w: World, path: str, pieces: list[tuple[Val, Loc]], append: bool, loc: Loc) -> None:
        lines: list[tuple[str, Loc]] | None = []
        for value, vloc in pieces:
            if not isinstance(value, str):
                lines = None
                break
            chunk = value.split("\n")
            if chunk and chunk[-1] == "":
                chunk = chunk[:-1]
            assert lines is not None
            lines.extend((c, vloc if vloc != NO_LOC else loc) for c in chunk)
        old = w.files.get(path) if append else None
        if append and old is not None:
            if old.lines is None or lines is None:
                w.files[path] = GenFile(None, old.loc)
            else:
                w.files[path] = GenFile(old.lines + tuple(lines), old.loc)
            return
        w.files[path] = GenFile(None if lines is None else tuple(lines), loc)

    # --- heredocs -------------------------------------------------------------------------------

    def heredoc_lines(self, redirect: Redirect, w: World, src: str, place: bool = False) -> list[tuple[Val, Loc]]:
        """A heredoc's text, line by line, each line with the script line it comes from. With `place`
        (`cat <<EOF > FILE`: the lines only go to that file), a line of literal text and one
        variable that holds a starting number or a derived number holds its token instead
        (`place_in_file`): the file's reader puts the number back (`materialized`), a server
        handed the file places it (verifier.shell.ServerStart.file_templated)."""
        doc = redirect.heredoc
        if doc is None:
            return []
        out: list[tuple[Val, Loc]] = []
        body = doc.body
        raw_lines = body.split("\n")
        if raw_lines and raw_lines[-1] == "":
            raw_lines = raw_lines[:-1]
        for k, raw in enumerate(raw_lines):
            loc = (src, doc.line + k)
            if doc.quoted or not any(c in raw for c in "$`\\"):
                out.append((raw + "\n", loc))
                continue
            word = lex_heredoc(raw, loc[1])
            placed = self.place_in_file(w, word.parts) if place else None
            if placed is not None:
                out.append((placed + "\n", loc))
                continue
            value = self.expand_scalar(Word(word.parts, loc[1], raw), w, loc)[0] if word.parts else ""
            out.append((concat([value, "\n"], loc), loc))
        return out

    def place_in_file(self, w: World, parts: tuple[Part, ...]) -> str | None:
        """A heredoc line of literal text and one `$X` / `${X}`, where X holds a starting number or a
        derived number not read so far, with X's token in X's place (the starting variables placed,
        not read); None for any other line."""
        params = [p for p in parts if p.kind != "lit"]
        if len(params) != 1 or params[0].kind != "param":
            return None
        # `$X` of a derived X or of a starting number: what `Y=$X` would derive
        derivation = derivation_for("param", params[0].text, partial(self._derivable, w))
        if derivation is None or self.reads.issuperset(derivation.bases):
            return None
        tok = self.token_of(derivation)
        if tok is None:
            return None
        self.placed_words.update(derivation.bases)
        return "".join(tok if p is params[0] else p.text for p in parts)

    def token_of(self, derivation: Derivation) -> str | None:
        """The derivation's token, made on first use (None: it gives no number here)."""
        tok = self.tokens.get(derivation)
        if tok is None:
            number = derivation.number(self.initial)
            if number is None:
                return None
            tok = self.tokens[derivation] = derived_token(len(self.tokens))
            self.derived[tok] = (derivation, number)
        return tok

    def materialized(self, gen: GenFile) -> GenFile:
        """A generated file as its reader sees it: the numbers in place of the tokens its lines hold
        (`place_in_file`), whose starting variables are then read."""
        if not self.derived or gen.lines is None or not any(TOKEN_PREFIX in line for line, _ in gen.lines):
            return gen
        return GenFile(tuple((self.put_numbers(line), lc) for line, lc in gen.lines), gen.loc)

    def put_numbers(self, text: str) -> str:
        """A text with the numbers in place of its tokens, whose starting variables are read."""
        def number(m: re.Match[str]) -> str:
            derivation, value = self.derived[m.group(0)]
            self.reads.update(derivation.bases)
            return value

        return TOKEN.sub(number, text)


class _Bucket:
    """The worlds `Evaluator.normalize` keeps under one `World.bucket()` key, none the same as another.

    From INDEX_FROM of them on, they are also indexed by their bindings of the variables the first two
    hold differently: a world can be the same as a member only if it binds those alike, and the first
    such member in order is the one a scan of every member finds. The hundred worlds a health-check
    loop ends, which differ in their counter, are then not each compared with all the others."""

    __slots__ = ("members", "names", "index")
    INDEX_FROM = 8

    def __init__(self) -> None:
        self.members: list[World] = []
        self.names: tuple[str, ...] = ()
        self.index: dict[tuple[Any, ...], list[World]] | None = None

    def find(self, w: World) -> World | None:
        """The first member that is the same as `w` (None: none is)."""
        candidates = self.members if self.index is None else self.index.get(self._key(w), ())
        for have in candidates:
            if have.same(w):
                return have
        return None

    def add(self, w: World) -> None:
        self.members.append(w)
        if self.index is not None:
            self.index.setdefault(self._key(w), []).append(w)
        elif len(self.members) == self.INDEX_FROM:
            self.names = tuple(sorted(differing(self.members[0].vars, self.members[1].vars, hashable=True)))
            if self.names:
                self.index = {}
                for member in self.members:
                    self.index.setdefault(self._key(member), []).append(member)

    def _key(self, w: World) -> tuple[Any, ...]:
        return tuple(w.vars.get(name) for name in self.names)


# Commands a settled `for ((...))` pass may run (`_blind_loop`): ones that start no other command (no
# wrapper such as `timeout`), read no variable by name and list none (no `set`, `declare`, `env`, `eval`,
# `source`, `export`, functions, ...).
_BLIND_COMMANDS = frozenset({
    "echo", "printf", "sleep", "curl", "wget", "kill", "wait", "cat", "tail", "head", "grep", "true", "false", ":",
    "test", "[", "return", "exit", "break", "continue", "nc", "ls", "date", "ps", "pgrep", "pkill",
    "nvidia-smi", "rocm-smi", "amd-smi", "rm", "mkdir", "touch", "tee", "wc", "cut", "sort", "tr",
})
_ASSIGNS = re.compile(r"\+\+|--|(?<![=!<>])=(?!=)")  # an arithmetic assignment (`i++`, `n=2`, `n+=2`)
# per loop node: (counters, the body's command names), or () when the body may see its counters
_BLIND: ByObject[tuple[frozenset[str], ...]] = ByObject("shell.blind-loops", 512)


def _blind_loop(node: ArithFor) -> tuple[frozenset[str], frozenset[str]] | None:
    """(the counters, the names of the commands its body runs) of a `for ((init; cond; step))` loop
    whose body cannot see its counters (the names its step mentions): the body mentions none of them
    (`identifiers`), defines no function and runs only literal commands of `_BLIND_COMMANDS` (none
    lists or reads variables by name; whether one is a function of the script is asked at run time,
    with the names given here). None otherwise: the loop runs pass by pass."""
    got = _BLIND.get(node)
    if got is None:
        got = _BLIND.put(node, _find_blind_loop(node))
    return (got[0], got[1]) if got else None


def _find_blind_loop(node: ArithFor) -> tuple[frozenset[str], ...]:
    counters = frozenset(_IDENT.findall(node.step))
    if not counters or counters & identifiers(node.body) or _ASSIGNS.search(node.cond):
        return ()  # (a condition that assigns would change more than the counters)
    commands: set[str] = set()
    for n in iter_nodes(node.body):
        if isinstance(n, FuncDef):
            return ()
        if isinstance(n, Simple) and n.words:
            head = n.words[0]
            name = "".join(part.text for part in head.parts)
            if any(part.kind != "lit" for part in head.parts) or name not in _BLIND_COMMANDS:
                return ()
            commands.add(name)
    return counters, frozenset(commands)


@dataclass
class _Pass:
    """One pass of a `for ((...))` loop (`Evaluator.run_arith_for`): copies of the worlds that go on
    (after the step) and of those it ended (returned, exited, broke out), the commands it ran, and
    the evaluator's fingerprint before and after it."""

    active: list[World]
    done: list[World]
    steps: int
    quiet: bool  # the pass left the evaluator itself as it found it

    @staticmethod
    def of(active: list[World], done: list[World], steps: int, start: tuple[Any, ...], end: tuple[Any, ...]) -> _Pass:
        return _Pass([w.copy() for w in active], [w.copy() for w in done], steps, start == end)

    def repeats(self, before: _Pass, counters: frozenset[str]) -> bool:
        """Whether this pass did what the pass before did but for the counters' values."""
        return (self.quiet and self.steps == before.steps and len(self.active) == len(before.active)
                and len(self.done) == len(before.done)
                and all(_same_but(a, b, counters) for a, b in zip(self.active, before.active, strict=True))
                and all(_same_but(a, b, counters) for a, b in zip(self.done, before.done, strict=True)))


def _same_but(a: World, b: World, counters: frozenset[str]) -> bool:
    """Two worlds equal in every slot, their counters' bindings aside."""
    x, y = a.copy(), b.copy()
    for name in counters:
        x.vars.pop(name, None)
        y.vars.pop(name, None)
    return (x.same(y) and x.arg0 == y.arg0 and x.status == y.status and x.assume == y.assume
            and x.exit_loc == y.exit_loc)


@lru_cache(maxsize=1)
def _builtins() -> Any:
    """verifier.shell.builtins, imported on first use: a process that imports the shell package only to
    parse, or for its names, does not load the simple commands' thousand lines."""
    import verifier.shell.builtins

    return verifier.shell.builtins


__all__ = ["Evaluator", "Options", "ShellLimit", "may_launch"]
