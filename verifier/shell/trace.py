"""The multi-node trace: walks a script parsed by verifier.shell.parser (the one bash lexer, parser
and syntax tree of the verifier) with a known environment, following one run and recording every
command it would start (the single-node worlds evaluator, verifier.shell.evaluator, walks the same
tree looking for a server start).

Nothing runs. Builtins that only change the shell's state (assignments, `export`, `cd`, `source`,
`eval`, `set --`, `shift`, `read ... <<<`, functions, `[[ ]]`, `((...))`, `case`, `for`) are followed;
every other command becomes an `Event` with its expanded argv, the exported environment at that
moment and the file and line of every word. Command substitutions are followed when they only
print (`echo`, `printf`, `seq`, `dirname`, `basename`, a function of the script); otherwise their
value is unknown (kept as its source text). A condition that cannot be decided runs every branch
and merges them: a variable the branches leave different becomes unknown (its origin is the
condition's line), and the events of each branch carry that condition as a guard. A branch that
ends in `exit` is the end of a failed run and is dropped. A `while`/`until` loop runs while the
reader decides its condition (with `break` and `continue`), and so does `for ((...))`; one it cannot
follow is not run: what it may assign is unknown after it (`Reader.loop_not_run`).

A file the script writes with text the reader computes (a python3 data snippet, `echo`, `printf`,
`cat` of a here-document, written with `>` to one file) is a generated file: a later `source` of the
same path (a known path, or the very `$(mktemp)` value a variable holds) reads that text, while no
later write or command may have changed it (`Reader.note_written`).

Nothing is dropped: a construct the reader does not model (a process-substituted `source <(...)`, a
file fetched (`curl -o`, `wget`, `git clone`) or written by a command with output the reader does not
know and then sourced, `eval` of a command's output, a name reference it cannot follow) is a problem
"cannot be read statically" and taints every later command (`Event.taint`), so a server started after
it is not resolved. `declare
-n` name references are followed. Limits (steps, call and source depth) end the reading as a
problem naming the limit.

Stand-ins (`Reader.stand_in`): a caller may run the reader with placeholder values for some
variables of the starting environment, to learn which of them decide anything. A stand-in is a
unique known text, so it travels wherever the value goes (assignments, arrays, function arguments,
command substitutions, exported environments) and names its variable wherever it arrives. Every
place whose outcome depends on a value's characters records the stand-ins in it as decided
(`Reader.decided`, `Reader.decide`) and ends the reading (`Decided`: the caller reads again with
those variables' values, so the reading never goes where the run with the values would not, nor
asks its loader what that run would not): a `[`/`test` test, a `case` subject or pattern,
arithmetic, a loop's word list, a merge of branches that set different values, a parameter
operator that reads the characters (`${#X}`, `${X/a/b}`, `${X:1}`, case changes, `${!X}`), a
command name, the first words of a recorded command when the reader stops on them (`stop_at`),
every argument and input of a builtin the reader follows (`cd`, `source`, `read`, `eval`, `set`,
`shift`, `exit`, ...) and of `echo`/`printf`/`python3` whose output the reader keeps (and every
variable a python3 data snippet looks up, `_Observed`), the path of a sourced file (and the
files written before it is compared with). A test whose outcome only picks a branch or what the
reader keeps (a `[[ ]]` comparison, whether a command names or writes a file the script generated,
whether a field of an unquoted expansion is a pathname pattern, whether a value split on the
script's IFS holds one of its characters) is a check instead (`Reader.checks`): kept with the
outcome the stand-ins give, for the caller to re-check with other values; the reader knows each
stand-in's value, and a check that comes out otherwise with it decides on the spot. A file test is the loader's (`file_test`). What is left, a
value only copied into the words, redirect targets or environment of recorded commands, does not
change the run the reader follows: the reading made with the stand-in is the reading for any value
that, like every stand-in, is not empty and holds no blank or NUL (emptiness tests and field
splitting then come out alike) and gives every check its outcome, with the value put in place of
the stand-in. The removal of a prefix or suffix (`${X%%:*}`) from a whole stand-in is not a
decision: it gives a derived stand-in whose value is that operation applied to the value
(`Reader.marks`). A caller checks the places a value can reach outside the reader itself (the names
of files it loads or tests, problem messages). Without stand-ins none of this costs anything.
"""

from __future__ import annotations

import contextlib
import dataclasses
import posixpath
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial

from verifier.core import processcache
from verifier.shell import arith, expansion, utilities
from verifier.shell.arith import is_number
from verifier.shell.conditions import eval_bracket, eval_double, eval_single
from verifier.shell.launchers import Commands, program_code
from verifier.shell.lexer import ShellSyntaxError, Word, lex_heredoc, lex_operand
from verifier.shell.nodes import (
    AndOr,
    Arith,
    ArithFor,
    Assign,
    Body,
    Case,
    Command,
    For,
    FuncDef,
    Group,
    If,
    Pipeline,
    Simple,
    Test,
    While,
    iter_nodes,
)
from verifier.shell.parser import DECLARERS, parse
from verifier.shell.text import (
    Mark,
    Seg,
    Text,
    as_vals,
    blocking,
    concat,
    is_known,
    join_fields,
    known_seg,
    may_stand_in,
    origin,
    plain,
    shape_unknown,
    slice_text,
    split_fields,
    text_of,
)
from verifier.shell.unmodelled import (
    OPTION_BUILTINS,
    shadowed_declaration,
    startup_file,
    unmodelled,
    unmodelled_declaration,
)
from verifier.shell.values import (
    Pattern,
    RefNotFollowed,
    follow_ref,
    glob_match,
    replace_pattern,
    strip_pattern,
)
from verifier.shell.world import Layer, Names, last_held, written

MAX_STEPS = 300_000
MAX_CALL_DEPTH = 24
MAX_LOOP = 256
MAX_NAMING_PAIRS = 20_000  # generated files times arguments one command is compared for (`note_written`)
_DECLARERS = DECLARERS
# builtins the reader follows whose arguments decide what it does (Reader.decide_command)
_FOLLOWED = frozenset({"eval", "cd", "pushd", "popd", "exit", "return", "unset", "shift", "set", "true", ":", "false", "[", "test",
                       "read"})
_STARTERS = frozenset({"bash", "sh", "python", "python3"})  # interpreters: they run a script
_FILE_TESTS = frozenset({"-f", "-d", "-e", "-s", "-r", "-x", "-w"})  # asked of the loader's file_test
_QUIET = {"true", ":", "set", "shopt", "trap", "wait", "sleep", "ulimit", "umask", "hash", "type", "echo",
          "printf", "mkdir", "rm", "alias", "unalias", "sync"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SENTINEL = re.compile(r"\$\{__v(\d+)\}")
_MARK = re.compile("\x00([0-9]+)\x00")  # a stand-in (`Reader.stand_in`)


@lru_cache(maxsize=4096)
def _operand(text: str, line: int) -> Word:
    """`lex_operand`, kept by text and line: a `${X:-...}` operand is lexed again on every reading of
    its script, and the word (frozen) is a function of these two alone."""
    return lex_operand(text, line)


@lru_cache(maxsize=1024)
def _heredoc(body: str, line: int) -> Word:
    """`lex_heredoc`, kept by text and line as `_operand` is (an unquoted here-document, an
    arithmetic text)."""
    return lex_heredoc(body, line)


@dataclass(frozen=True)
class Event:
    """One command the script would run."""

    file: str
    line: int
    argv: tuple[Text, ...]
    env: dict[str, Text]  # the exported environment, with the command's own NAME=value prefixes
    cwd: Text
    guards: tuple[tuple[str, int], ...] = ()  # undecidable conditions around it (file, line)
    stdin: str | None = None  # a here-document or here-string fed to it
    background: bool = False
    taint: tuple[str, int, str] | None = None  # an earlier `eval` of unknown text (State.taint)
    fed_by: tuple[str, ...] | None = None  # the words of the command piped into it (`Reader.subshells`)

    def words(self) -> list[str]:
        """argv as plain strings."""
        return [plain(t) for t in self.argv]


class Stop(Exception):
    """`exit` ran: the script ends here (line)."""

    def __init__(self, file: str, line: int, status: bool | None) -> None:
        super().__init__(f"exit at {file}:{line}")
        self.file = file
        self.line = line
        self.status = status


class Decided(Exception):
    """A stand-in decided something (`Reader.decide`): the reading ends here; its caller reads again
    with the values of `names` (every stand-in's when `names` is empty: one could not be named)."""

    def __init__(self, names: set[str]) -> None:
        super().__init__("a stand-in decided the reading")
        self.names = names


class _Return(Exception):
    def __init__(self, status: bool | None) -> None:
        super().__init__("return")
        self.status = status


class _Jump(Exception):
    """`break N` / `continue N` (`levels`: how many enclosing loops it leaves)."""

    def __init__(self, levels: int) -> None:
        super().__init__("jump")
        self.levels = levels


class _Break(_Jump):
    pass


class _Continue(_Jump):
    pass


class _LoopUndecided(_Jump):
    """A loop whose course the reader cannot follow (a condition it cannot decide, a `break` on one
    branch of one, more passes than `MAX_LOOP`): the loop `levels` out is not run (`loop_not_run`);
    `why` is "branch" when only run-time facts decide its course, else "loop"."""

    def __init__(self, levels: int, why: str = "loop") -> None:
        super().__init__(levels)
        self.why = why


class _Budget(Exception):
    """A limit of the reading (steps, call depth): the script is not followed further (fails closed)."""

    def __init__(self, what: str = "") -> None:
        super().__init__(what)
        self.what = what


@dataclass(frozen=True)
class Generated:
    """A file the script wrote whose whole text the reader computed: the text, the path as written
    (its unknown segments are the very values the path was built from, see `_file_key`), the line
    of the write and the reader's step at that write (`Reader.written`: only the last write counts)."""

    text: Text
    path: Text
    line: int
    step: int


@dataclass
class State:
    """What the shell knows at one moment."""

    vars: Names[Text] = field(default_factory=dict)
    arrays: dict[str, list[Text]] = field(default_factory=dict)
    exported: set[str] = field(default_factory=set)
    unset: set[str] = field(default_factory=set)  # names known to be unset (shadowing unknown env)
    funcs: Names[tuple[Command, str]] = field(default_factory=dict)  # name -> (body, file it is defined in)
    positional: list[Text] = field(default_factory=list)
    cwd: Text = ()
    file: str = ""
    zero: str = ""
    unresolved: Names[tuple[str, int]] = field(default_factory=dict)
    # set when the script evaluates text the reader cannot know (`eval "$(python3 ...)"`): what it
    # would set is unknown from there on
    taint: tuple[str, int, str] | None = None
    source_text: str = ""  # ${BASH_SOURCE[0]}: the path the current file was run or sourced by
    refs: dict[str, str] = field(default_factory=dict)  # `declare -n REF=NAME`: REF -> NAME
    # files the script wrote with text the reader computed (`python3 - <<PY > "$F"`), by `_file_key`
    generated: dict[tuple[object, ...], Generated] = field(default_factory=dict)
    assoc: set[str] = field(default_factory=set)  # `declare -A` arrays: their elements are not modelled
    # names declared with attributes that change what an assignment stores: `i` (arithmetic), `l`,
    # `u` (case), by name (`Reader.attributed`)
    attributed: dict[str, str] = field(default_factory=dict)

    def copy(self) -> State:
        """A copy for a branch, a subshell or a command substitution (`world.Layer`s over this state's
        mappings: this state must not change while the copy lives)."""
        return State(Layer(self.vars), {k: list(v) for k, v in self.arrays.items()}, set(self.exported),
                     set(self.unset), Layer(self.funcs), list(self.positional), self.cwd, self.file, self.zero,
                     Layer(self.unresolved), self.taint, self.source_text, dict(self.refs), dict(self.generated),
                     set(self.assoc), dict(self.attributed))


@dataclass(frozen=True)
class _Hidden:
    """What a variable held before a function's `local` (`Reader.localize`) or a prefix assignment
    (`Reader.prefixed`) hid it, given back when the function (or `eval`) returns."""

    value: Text | None
    array: list[Text] | None
    exported: bool
    unset: bool
    unresolved: tuple[str, int] | None
    ref: str | None
    assoc: bool
    attributes: str | None
    undecided: bool  # declared on a branch the reader could not decide

    @staticmethod
    def of(var: str, st: State, undecided: bool = False) -> _Hidden:
        return _Hidden(st.vars.get(var), list(st.arrays[var]) if var in st.arrays else None, var in st.exported,
                       var in st.unset, st.unresolved.get(var), st.refs.get(var), var in st.assoc,
                       st.attributed.get(var), undecided)

    def restore(self, var: str, st: State, line: int) -> None:
        st.vars.pop(var, None)
        st.arrays.pop(var, None)
        if self.undecided:  # local on one way, global on another: not known after the function
            st.vars[var] = (Seg(f"${{{var}}}", st.file, line, False, "undecided"),)
            st.unset.discard(var)
            if self.attributes is not None or var in st.attributed:
                st.attributed[var] = "?"
            return
        if self.value is not None:
            st.vars[var] = self.value
        if self.array is not None:
            st.arrays[var] = self.array
        for flag, names in ((self.exported, st.exported), (self.unset, st.unset), (self.assoc, st.assoc)):
            if flag:
                names.add(var)
            else:
                names.discard(var)
        if self.unresolved is not None:
            st.unresolved[var] = self.unresolved
        else:
            st.unresolved.pop(var, None)
        if self.ref is not None:
            st.refs[var] = self.ref
        else:
            st.refs.pop(var, None)
        if self.attributes is not None:
            st.attributed[var] = self.attributes
        else:
            st.attributed.pop(var, None)


@dataclass
class ReadResult:
    """What a script leaves behind and everything it would run."""

    state: State
    events: list[Event]
    stopped: tuple[str, int] | None
    problems: list[tuple[str, int | None, str]]

    def var(self, name: str) -> Text | None:
        """A variable's final value (None when unset)."""
        return self.state.vars.get(name)


Loader = Callable[[Text, State], tuple[str, str] | None]
FileTest = Callable[[str, Text, State], bool | None]


class Reader:
    """Walks scripts statically (see module docstring).

    `load(path_text, state)` returns (repository path, text) of a file a script sources (None: not
    available); `unknown(name)` says whether a variable nobody set is a run-time value (True) or
    simply unset (False); `file_test(op, path, state)` decides `-f`/`-d`/`-e` tests (None: unknown);
    `commands` names the programs that may start a server or a script, whose environment an event
    keeps (verifier.shell.launchers.Commands, from verifier.launch.commands; None: every command's).
    """

    def __init__(self, load: Loader | None = None, unknown: Callable[[str], bool] | None = None,
                 file_test: FileTest | None = None, max_steps: int = MAX_STEPS,
                 stop_at: Callable[[list[str]], bool] | None = None, commands: Commands | None = None) -> None:
        self.load = load
        self.commands = commands
        self.unknown = unknown or (lambda _name: True)
        self.file_test = file_test
        self.max_steps = max_steps
        self.stop_at = stop_at  # the reading ends after the first command this accepts
        self.steps = 0
        self.events: list[Event] = []
        self.problems: list[tuple[str, int | None, str]] = []
        self.guards: list[tuple[str, int]] = []
        self.capture: list[list[Text]] | None = None
        self.external_in_capture = False
        self.depth = 0
        self.origin_at: Callable[[Word], tuple[str, int] | None] | None = None
        self.event_line: int | None = None  # inside `eval`: events are on the eval's line
        self.files: list[str] = []  # every file read (sourced scripts, YAML read by snippets)
        # why the condition being decided is unknown: runtime (only the run knows: a host, a file on
        # the cluster, a command's status) or undecided (the reader could not establish an operand)
        self.cond_why: str | None = None
        self.return_unknown = False  # a function returned on an undecided path: its status is unknown
        self.loop_depth = 0  # loops being run: `break` and `continue` outside every loop do nothing
        # the functions being run, innermost last: the state each local variable hid, by name
        # (`Reader.localize`), and how many undecided branches were open when the function began
        self.frames: list[tuple[dict[str, _Hidden], int]] = []
        self.sentinels: list[Seg] = []  # unknown values written into re-read shell text (shell_text)
        self.reads: set[str] = set()  # every variable name the script expanded or tested
        self.fetched: dict[str, int] = {}  # files a command brings in at run time (`curl -o F`): F -> line
        # of those, the files a download or copy brought in (`note_fetch`), not the script's own writes
        self.downloaded: dict[str, int] = {}
        # stand-ins (module docstring, verifier.shell.text `Mark`), and the variables whose stand-in
        # decided something; `decided_all`: a stand-in was cut, its variable cannot be named (every
        # stand-in counts as decided)
        self.marks: list[Mark] = []
        self.decided: set[str] = set()
        self.decided_all = False
        self.checks: list[tuple[tuple[Text, ...], Callable[[tuple[Text, ...]], object], object]] = []
        self.actual: list[str] = []  # each stand-in's value (`stand_in`, `derive`)
        # the reader's step at the last write to each file (`_file_key`), and at the last write to a
        # path the reader cannot tell apart from any other: a generated file (`State.generated`) is
        # read back only while its own write is the last one that may have reached it
        self.written: dict[tuple[object, ...], int] = {}
        self.written_anywhere = -1
        self.write_count = 0

    # ------------------------------------------------------------------ entry points

    def run(self, path: str, text: str, env: Mapping[str, Text | str] | None = None,
            args: Sequence[Text | str] = (), cwd: str = "", state: State | None = None,
            zero: str | None = None) -> ReadResult:
        """Read one script from the top with an exported environment and positional arguments
        (`zero`: `$0`, the path the script was invoked by; default its repository path)."""
        st = state.copy() if state is not None else State()
        for name, value in (env or {}).items():
            st.vars[name] = value if isinstance(value, tuple) else text_of(str(value), "<env>", None)
            st.exported.add(name)
        st.positional = [a if isinstance(a, tuple) else text_of(str(a), "<args>", None) for a in args]
        st.file, st.zero = path, zero if zero is not None else path
        st.source_text = st.zero
        if not st.cwd:
            st.cwd = text_of(cwd, "<env>", None) if cwd else ()
        startup = st.vars.get("BASH_ENV") if "BASH_ENV" in st.exported else None
        if startup is not None:
            self.decide(startup)  # whether it is empty
            why = startup_file(plain(startup) if is_known(startup) else None)
            if why is not None:
                self.unmodelled(st, 0, why)
        return self._walk(text, path, st, "cannot be read statically", "is too long to follow statically")

    def _walk(self, text: str, path: str, st: State, unreadable: str, too_long: str) -> ReadResult:
        """Walk a script's statements; a syntax error or the budget becomes a problem of `path`."""
        stopped = None
        try:
            self.body(_parse(text, path), st)
        except Stop as stop:
            stopped = (stop.file, stop.line)
        except _Return:
            pass
        except ShellSyntaxError as exc:
            self.problems.append((path, exc.line, f"{unreadable}: {exc.message}"))
        except _Budget as limit:
            self.problems.append((path, None, f"{too_long} ({limit.what})" if limit.what else too_long))
        return ReadResult(st, self.events, stopped, self.problems)

    def run_inline(self, code: Text, env: Mapping[str, Text | str] | None = None, args: Sequence[Text | str] = (),
                   cwd: str = "", file: str = "") -> ReadResult:
        """Read a script given as text (`bash -c TEXT`); its words keep the origins the text carries."""
        st = State()
        for name, value in (env or {}).items():
            st.vars[name] = value if isinstance(value, tuple) else text_of(str(value), "<env>", None)
            st.exported.add(name)
        st.positional = [a if isinstance(a, tuple) else text_of(str(a), "<args>", None) for a in args]
        st.file, st.zero = file, "bash"
        st.cwd = text_of(cwd, "<env>", None) if cwd else ()
        source, owners = self.shell_text(code)

        def where(word: Word) -> tuple[str, int] | None:
            i = word.start
            while i < len(source) - 1 and source[i] in "\"'":
                i += 1
            if 0 <= i < len(owners):
                seg = owners[i]
                return seg.file or file, seg.line or 1
            return None

        self.origin_at = where
        try:
            return self._walk(source, file, st, "runs inline text that cannot be read statically",
                              "runs inline text too long to follow statically")
        finally:
            self.origin_at = None

    # ------------------------------------------------------------------ statements

    def body(self, items: Body, st: State) -> bool | None:
        status: bool | None = True
        for item in items:
            status = self.andor(item, st)
        return status

    def andor(self, item: AndOr, st: State) -> bool | None:
        # the step budget, counted in place (every statement passes here and in `command`)
        self.steps += 1
        if self.steps > self.max_steps:
            raise _Budget(f"more than {self.max_steps} commands")
        self.cond_why = None
        status = self.pipeline(item.parts[0], st)
        if len(item.parts) == 1:  # no `&&` / `||`
            return status
        for op, pipe in zip(item.ops, item.parts[1:], strict=True):
            if status is None:
                if self.cond_why is None:
                    self.cond_why = "runtime"
                status = self.branch_unknown([lambda s, p=pipe: self.pipeline(p, s), None], st, (st.file, pipe.line))
                continue
            if (op == "&&" and status) or (op == "||" and not status):
                status = self.pipeline(pipe, st)
        return status

    def pipeline(self, pipe: Pipeline, st: State) -> bool | None:
        status: bool | None = None
        if len(pipe.cmds) > 1:
            status = self.text_pipeline(pipe, st)
        if status is None and len(pipe.cmds) == 1:
            status = self.command(pipe.cmds[0], st)
        elif status is None:
            status = self.subshells(pipe, st)
        if pipe.negate:
            return None if status is None else not status
        return status

    def subshells(self, pipe: Pipeline, st: State) -> bool | None:
        """The commands of a pipeline, each in a subshell (a copy of the state: what one assigns, or
        where it goes, stays there; an `exit` ends only it): the files they write stay written, and
        only the last command's output is the pipeline's (what the others print feeds the next).
        The status is the last command's when every earlier one succeeded (`set -o pipefail` is not
        followed)."""
        status: bool | None = True
        earlier_ok = True
        feeding: Event | None = None  # the last command the previous one recorded
        for k, cmd in enumerate(pipe.cmds):
            last = k == len(pipe.cmds) - 1
            sub = st.copy()
            before = len(self.events)
            piped = self.capture is not None and not last
            if piped:
                assert self.capture is not None
                self.capture.append([])
                external = self.external_in_capture
            try:
                status = self.command(cmd, sub)
            except Stop as stop:
                status = stop.status
            finally:
                if piped:
                    assert self.capture is not None
                    self.capture.pop()
                    self.external_in_capture = external
            _left_by_subshell(st, sub)
            if feeding is not None and len(self.events) > before and self.reads_stdin(self.events[before]) and \
                    all(is_known(a) for a in feeding.argv):
                # a shell reading the previous command's output: a caller judges it by that command's
                # words (verifier.launch.follow, a trusted download), which then decide the reading
                self.decide(*feeding.argv)
                self.events[before] = dataclasses.replace(self.events[before],
                                                          fed_by=tuple(plain(a) for a in feeding.argv))
            feeding = self.events[-1] if len(self.events) > before else None
            if not last:
                earlier_ok = earlier_ok and status is True
        return status if earlier_ok or status is False else None

    def text_pipeline(self, pipe: Pipeline, st: State) -> bool | None:
        """`echo "$X" | grep/sed/tr/...` on known text, evaluated (None: not a pure text pipeline)."""
        from verifier.shell.filters import apply_filter

        first = pipe.cmds[0]
        if not isinstance(first, Simple) or not first.words or first.assigns:
            return None
        argv: list[Text] = []
        for word in first.words:
            argv.extend(self.expand(word, st))
        if not argv or plain(argv[0]) not in ("echo", "printf") or not all(is_known(a) for a in argv):
            return None
        self.decide(*argv)  # the filters read the text's characters
        text = self.echo(plain(argv[0]), argv[1:])
        if text is None:
            return None
        status: bool | None = True
        for cmd in pipe.cmds[1:]:
            if not isinstance(cmd, Simple) or not cmd.words or cmd.assigns or cmd.redirects:
                return None
            words: list[Text] = []
            for word in cmd.words:
                words.extend(self.expand(word, st))
            if not all(is_known(w) for w in words):
                return None
            self.decide(*words)
            result = apply_filter([plain(w) for w in words], text, (st.file, cmd.line))
            if result is None:
                return None
            text, status = result
        if self.capture is not None and not self.redirected(pipe.cmds[-1]):  # type: ignore[arg-type]
            self.capture[-1].append(text)
        return status

    def command(self, node: Command, st: State) -> bool | None:
        self.steps += 1  # the step budget, as in `andor`
        if self.steps > self.max_steps:
            raise _Budget(f"more than {self.max_steps} commands")
        if isinstance(node, Simple):
            return self.simple(node, st)
        if isinstance(node, If):
            return self.if_(node, st)
        if isinstance(node, Test):
            status = self.double_test(node.words, st, node.line)
            if any(word.raw == "=~" for word in node.words):  # the groups it matched: not modelled
                self.unknown_array("BASH_REMATCH", st, node.line, "runtime")
            return status
        if isinstance(node, Group):
            if node.subshell:  # `( ... )`: what it assigns stays there, and an `exit` ends only it
                sub = st.copy()
                try:
                    status = self.body(node.body, sub)
                except Stop as stop:
                    status = stop.status
                _left_by_subshell(st, sub)
                return status
            return self.body(node.body, st)
        if isinstance(node, FuncDef):
            st.funcs[node.name] = (node.body, st.file)
            return True
        if isinstance(node, For):
            return self.for_(node, st)
        if isinstance(node, While):
            return self.while_(node, st)
        if isinstance(node, ArithFor):
            return self.arith_for(node, st)
        if isinstance(node, Case):
            return self.case(node, st)
        if isinstance(node, Arith):
            value = self.arith(node.expr, st, node.line)
            return None if value is None else value != 0
        return None

    def jump(self, name: str, args: list[Text], st: State, line: int) -> bool:
        """`break [N]` / `continue [N]` inside a loop being run (outside every loop: nothing)."""
        if not self.loop_depth:
            return True
        self.decide(*args)
        levels = plain(args[0]) if args else "1"
        if args and (not is_known(args[0]) or not is_number(levels) or levels == "0"):
            raise _LoopUndecided(1)
        raise (_Break if name == "break" else _Continue)(int(levels))

    def while_(self, node: While, st: State) -> bool | None:
        """A `while`/`until` loop whose condition the reader decides on every pass runs as bash
        runs it (an argument-parsing `while [[ $# -gt 0 ]]; do case $1 in ...; shift; done`), at most
        `MAX_LOOP` passes (`followed_loop`)."""

        def passes(sub: State) -> None:
            for _ in range(MAX_LOOP):
                status = self.body(node.cond, sub)
                if status is not None and node.until:
                    status = not status
                if status is None:  # a run-time fact (a command's status) or an operand the reader lacks
                    raise _LoopUndecided(1, "loop" if self.cond_why == "undecided" else "branch")
                if not status or self.loop_pass(node.body, sub)[1]:
                    return
            raise _LoopUndecided(1)

        return self.followed_loop(node, st, passes)

    def arith_for(self, node: ArithFor, st: State) -> bool | None:
        """`for ((init; cond; step))` runs as bash runs it: `init` once, then the body and `step` while
        the reader decides `cond` (an empty one is true), at most `MAX_LOOP` passes (`followed_loop`);
        an expression it cannot evaluate gives the loop up (a count an operand it lacks decides is not
        one it may claim)."""

        def evaluated(expr: str, sub: State) -> int | None:
            if not expr.strip():
                return None
            value = self.arith(expr, sub, node.line)
            if value is None:
                raise _LoopUndecided(1)
            return value

        def passes(sub: State) -> None:
            evaluated(node.init, sub)
            for _ in range(MAX_LOOP):
                if evaluated(node.cond, sub) == 0 or self.loop_pass(node.body, sub)[1]:
                    return
                evaluated(node.step, sub)
            raise _LoopUndecided(1)

        return self.followed_loop(node, st, passes)

    def followed_loop(self, node: While | ArithFor, st: State, passes: Callable[[State], None]) -> bool | None:
        """A loop run pass by pass (`passes`, on a copy of the state) while the reader decides its
        course; when it cannot (`_LoopUndecided`: an undecided condition, a `break` on one branch of
        one, more than `MAX_LOOP` passes) the loop is not run (`loop_given_up`) and what its attempt
        recorded is taken back."""
        sub = st.copy()
        events, problems = len(self.events), len(self.problems)
        captured = len(self.capture[-1]) if self.capture is not None else None
        self.loop_depth += 1
        try:
            passes(sub)
        except _LoopUndecided as undecided:
            del self.events[events:]
            del self.problems[problems:]
            self.loop_given_up(node, st, undecided, captured)
            return None
        finally:
            self.loop_depth -= 1
        self.merge(st, [sub], (st.file, node.line))
        st.positional, st.refs, st.generated = sub.positional, sub.refs, sub.generated  # what `merge` leaves
        return True

    def loop_pass(self, body: Body, st: State) -> tuple[bool | None, bool]:
        """One pass of a loop's body: its status, and whether a `break` ended the loop (a `break N`
        or `continue N` meant for an enclosing loop goes on out to it)."""
        try:
            return self.body(body, st), False
        except _Break as jump:
            if jump.levels > 1:
                raise _Break(jump.levels - 1) from None
            return True, True
        except _Continue as jump:
            if jump.levels > 1:
                raise _Continue(jump.levels - 1) from None
            return True, False

    def loop_given_up(self, node: While | ArithFor | For, st: State, undecided: _LoopUndecided,
                      captured: int | None = None) -> None:
        """A loop whose course the reader could not follow: not run (`loop_not_run`), and what it
        prints into a capture (from `captured` on) is not known; an enclosing loop the undecided
        `break N` meant is given up too."""
        self.loop_not_run(node, st, undecided.why)
        if captured is not None and self.capture is not None:
            del self.capture[-1][captured:]
            self.capture[-1].append((Seg("$(...)", st.file, node.line, False, undecided.why),))
        if undecided.levels > 1:
            raise _LoopUndecided(undecided.levels - 1, undecided.why) from None

    def loop_not_run(self, node: While | ArithFor | For, st: State, why: str = "loop") -> None:
        """A loop the reader does not follow (one whose course it cannot decide):
        every variable the loop may assign (`_loop_assigned`) holds, from here on, a value the
        reader does not know, and so does the working directory when the loop may change it: "branch"
        when only run-time facts decide the loop's course (the first interpreter `command -v` finds),
        else "loop" (which blocks a server argument that uses it)."""
        names, moves, shifts = _loop_assigned(node, st.funcs)
        if shifts:  # `shift` / `set --` in it: the positional parameters, and how many, are not known
            st.positional = [(Seg("$@", st.file, node.line, False, why),)]
        for name in sorted(names):
            st.vars[name] = (Seg(f"${{{name}}}", st.file, node.line, False, why),)
            st.arrays.pop(name, None)
            st.unset.discard(name)
            st.unresolved[name] = (st.file, node.line)
        if moves:
            st.cwd = (Seg("${PWD}", st.file, node.line, False, why),)

    def if_(self, node: If, st: State) -> bool | None:
        pending: list[tuple[tuple[str, int], Body, Body]] = []
        reasons: list[str] = []
        for cond, body in node.clauses:
            self.cond_why = None
            status = self.body(cond, st)
            if status is None:
                reasons.append(self.cond_why or "runtime")
            if status is None:
                pending.append(((st.file, cond[0].line if cond else node.line), cond, body))
                continue
            if status:
                if not pending:
                    return self.body(body, st)
                pending.append(((st.file, node.line), (), body))
                break
        else:
            if not pending:
                return self.body(node.orelse, st) if node.orelse is not None else True
            pending.append(((st.file, node.line), (), node.orelse or ()))
        branches = [lambda s, b=body: self.body(b, s) for _, _, body in pending]
        guard = pending[0][0]
        self.cond_why = "undecided" if "undecided" in reasons else "runtime"
        return self.branch_unknown(branches, st, guard)

    def shell_text(self, code: Text) -> tuple[str, list[Seg]]:
        """Text to re-read as shell code (eval, bash -c), and the segment each character came from.

        A value the reader does not know is written as a sentinel variable `${__vN}` standing for it,
        never as its source text (which may hold quotes or spaces the real value does not)."""
        out: list[str] = []
        owners: list[Seg] = []
        for seg in code:
            text = seg.text
            if not seg.known:
                self.sentinels.append(seg)
                text = f"${{__v{len(self.sentinels) - 1}}}"
            out.append(text)
            owners.extend([seg] * len(text))
        return "".join(out), owners

    def restore(self, text: Text) -> Text:
        """Put back the values sentinels stand for where they survived as literal text (inside quotes)."""
        if not self.sentinels or not any("${__v" in seg.text for seg in text):
            return text
        pieces: list[Seg] = []
        for seg in text:
            last = 0
            for m in _SENTINEL.finditer(seg.text):
                if m.start() > last:
                    pieces.append(Seg(seg.text[last:m.start()], seg.file, seg.line, seg.known, seg.why, seg.many))
                index = int(m.group(1))
                pieces.append(self.sentinels[index] if index < len(self.sentinels) else seg)
                last = m.end()
            if last < len(seg.text):
                pieces.append(Seg(seg.text[last:], seg.file, seg.line, seg.known, seg.why, seg.many))
        return tuple(pieces)

    def note(self, why: str) -> None:
        """Record why a condition is unknown (undecided/unreadable win over runtime)."""
        if self.cond_why in ("undecided", "unreadable"):
            return
        self.cond_why = "undecided" if why in ("undecided", "unreadable") else "runtime"

    def branch_unknown(self, branches: list[Callable[[State], bool | None] | None], st: State,
                       guard: tuple[str, int]) -> bool | None:
        """Run every branch on a copy and merge (undecidable condition at `guard`): variables the
        branches set differently become unknown, `branch` when only run-time facts decide the
        condition, `undecided` when the reader could not establish it."""
        why = "branch" if self.cond_why == "runtime" else "undecided"
        self.cond_why = None
        survivors: list[State] = []
        statuses: list[bool | None] = []
        returned = False
        # what each branch prints into a capture, from the same point (`printed`)
        captured = self.capture[-1] if self.capture is not None else None
        start = len(captured) if captured is not None else 0
        outputs: list[list[Text]] = []
        self.guards.append(guard)
        try:
            for branch in branches:
                sub = st.copy()
                mark = len(self.events)
                try:
                    statuses.append(branch(sub) if branch is not None else True)
                except Stop:
                    del self.events[mark:]  # a branch that exits is another (failed) run: its commands go too
                    if captured is not None:
                        del captured[start:]
                    continue
                except _Return:
                    returned = True  # the function returns on this path; it goes on along the others
                    if captured is not None:
                        outputs.append(captured[start:])
                        del captured[start:]
                    continue
                except _Jump as jump:  # `break`/`continue` on one branch: the loop's course is not known
                    raise _LoopUndecided(jump.levels, "branch" if why == "branch" else "loop") from None
                survivors.append(sub)
                if captured is not None:
                    outputs.append(captured[start:])
                    del captured[start:]
        finally:
            self.guards.pop()
        if captured is not None:
            self.printed(captured, outputs, guard, why)
        if returned:
            self.return_unknown = True
        if not survivors:
            if returned:
                raise _Return(None)
            raise Stop(guard[0], guard[1], False)
        self.merge(st, survivors, guard, why)
        return statuses[0] if statuses and all(s == statuses[0] for s in statuses) else None

    @staticmethod
    def printed(captured: list[Text], outputs: list[list[Text]], guard: tuple[str, int], why: str) -> None:
        """What undecided branches print into a capture: their output when every branch prints the
        same, else a value the reader does not know (which branch ran decides it)."""
        texts = {plain(concat(*out)) for out in outputs}
        if len(texts) <= 1:
            captured.extend(outputs[0] if outputs else [])
        else:
            captured.append((Seg("$(...)", guard[0], guard[1], False, why),))

    def merge(self, st: State, states: list[State], guard: tuple[str, int], why: str = "undecided") -> None:
        """Merge the branches' states (each a `State.copy` of `st`, see `world.Layer`) into `st`: only
        the names some branch wrote are looked at, each as `for s in states: st.X.update(s.X)`
        (for functions and unresolved names) or the branch merge below (for variables) would leave
        it."""
        first = states[0]
        layers = [s.vars for s in states]
        if not all(isinstance(m, Layer) and m.base is st.vars for m in layers):
            raise TypeError("merge takes copies of the state it merges into")
        names = set(written(layers))  # type: ignore[arg-type]
        guarded: dict[str, None] = {}  # names made unresolved here, written after the branches' are read
        before = st.vars
        for name in sorted(names):  # a new name enters the environment in one order on every run
            kept = before.get(name)
            if kept is not None and all(s.vars.get(name) is kept for s in states):
                continue  # no branch touched it: it stays as it was
            # a branch set it: what it holds now depends on the value it had (equal or common prefix)
            self.reads.add(name)
            values = [s.vars.get(name) for s in states]
            if all(v == values[0] for v in values):
                if values[0] is None:
                    st.vars.pop(name, None)
                else:
                    st.vars[name] = values[0]
                continue
            self.decide(*values)  # equal or not, and their common prefix: the characters decide
            kind = why
            if why == "branch" and all(v and all(not seg.known and seg.why == "runtime" for seg in v) for v in values):
                kind = "runtime"  # every branch sets a run-time value (a host address found one way or another)
            st.vars[name] = _common_prefix([v or () for v in values], (Seg(f"${{{name}}}", guard[0], guard[1],
                                                                              False, kind),))
            guarded[name] = None
        anames = set().union(*(s.arrays.keys() for s in states)) | set(st.arrays)
        for name in anames:
            avalues = [s.arrays.get(name) for s in states]
            if all(v == avalues[0] for v in avalues):
                if avalues[0] is None:
                    st.arrays.pop(name, None)
                else:
                    st.arrays[name] = avalues[0]
                continue
            self.decide(*(item for items in avalues for item in items or ()))
            st.arrays[name] = [(Seg(f"${{{name}[@]}}", guard[0], guard[1], False, why),)]
            guarded[name] = None
        st.exported = set().union(*(s.exported for s in states))
        st.assoc = set().union(*(s.assoc for s in states))
        # an attribute only some ways set: what a later assignment stores is not known (`attributed`)
        attributed = [s.attributed for s in states]
        st.attributed = {var: flags if all(a.get(var) == flags for a in attributed) else "?"
                         for var, flags in {k: v for a in attributed for k, v in a.items()}.items()}
        st.taint = next((s.taint for s in states if s.taint is not None), st.taint)
        st.unset = set.intersection(*(s.unset for s in states))
        funcs = [s.funcs for s in states]
        for name in written(funcs):  # type: ignore[arg-type]
            found, body = last_held(funcs, name)  # type: ignore[arg-type]
            if found:
                st.funcs[name] = body
        # a name made unresolved here, then what the last branch holding it holds (which may be what
        # it was before this merge: the branches hold the names they did not write as `st` held them)
        unresolved = [s.unresolved for s in states]
        held = {name: last_held(unresolved, name) for name in [*guarded, *written(unresolved)]}  # type: ignore[arg-type]
        for name, (found, value) in held.items():
            if found:
                st.unresolved[name] = value
            elif name in guarded:
                st.unresolved[name] = guard
        if all(s.cwd == first.cwd for s in states):
            st.cwd = first.cwd
        else:
            self.decide(*(s.cwd for s in states))
            st.cwd = (Seg("${PWD}", guard[0], guard[1], False, why),)

    def for_(self, node: For, st: State) -> bool | None:
        fields: list[Text] = []
        if node.words is None:
            fields = list(st.positional)
        else:
            for word in node.words:
                fields.extend(self.expand(word, st))
        self.decide(*fields)  # how many times the body runs, and with what
        if len(fields) > MAX_LOOP or any(not is_known(f) for f in fields):
            self.cond_why = None
            self.unknown_operand(*fields)
            return self.branch_unknown([lambda s: self.loop_body(node, s, fields[:1]), None], st, (st.file, node.line))
        return self.loop_body(node, st, fields)

    def loop_body(self, node: For, st: State, fields: list[Text]) -> bool | None:
        status: bool | None = True
        self.loop_depth += 1
        try:
            for value in fields:
                st.vars[node.name] = value
                st.unset.discard(node.name)
                status, broke = self.loop_pass(node.body, st)
                if broke:
                    break
        except _LoopUndecided as undecided:  # the passes run so far ran; what the rest prints is not known
            self.loop_given_up(node, st, undecided, len(self.capture[-1]) if self.capture is not None else None)
            return None
        finally:
            self.loop_depth -= 1
        return status

    def case(self, node: Case, st: State) -> bool | None:
        subject = self.expand_one(node.word, st)
        self.decide(subject)
        if not is_known(subject):
            self.cond_why = None
            self.unknown_operand(subject)
            return self.case_unknown(node, st)
        text = plain(subject)
        status: bool | None = True
        k = 0
        while k < len(node.arms):
            arm = node.arms[k]
            k += 1
            for pattern in arm.patterns:
                pat = self.pattern(pattern, st)
                if pat is None:
                    return self.case_unknown(node, st)
                if glob_match(text, pat):
                    break
            else:
                continue
            status = self.body(arm.body, st)
            while arm.term == ";&" and k < len(node.arms):  # falls through into the next body
                arm = node.arms[k]
                k += 1
                status = self.body(arm.body, st)
            if arm.term != ";;&":  # `;;&` tests the arms after it too
                return status
        return status

    def case_unknown(self, node: Case, st: State) -> bool | None:
        """A `case` whose arm the reader cannot pick: each arm (with the arms `;&` falls into) on a
        branch of its own, and none."""
        def from_arm(s: State, k: int) -> bool | None:
            status = self.body(node.arms[k].body, s)
            while node.arms[k].term == ";&" and k + 1 < len(node.arms):
                k += 1
                status = self.body(node.arms[k].body, s)
            return status

        branches = [partial(from_arm, k=k) for k in range(len(node.arms))]
        return self.branch_unknown([*branches, None], st, (st.file, node.line))

    # ------------------------------------------------------------------ simple commands

    def simple(self, node: Simple, st: State) -> bool | None:
        if not node.words:
            for assign in node.assigns:
                self.assign(assign, st, export=False)
            return True
        argv: list[Text] = []
        for word in node.words:
            argv.extend(self.expand(word, st))
        prefix: dict[str, Text] = {}
        # a declarer's assignments are its arguments (asked only when there are assignments)
        if node.assigns and node.words[0].unquoted_literal not in _DECLARERS:
            for assign in node.assigns:
                if assign.value is not None and assign.index is None:
                    prefix[assign.name] = self.expand_one(assign.value, st)
        if not argv:
            return True
        name = plain(argv[0]) if is_known(argv[0]) else None
        fed = self.stdin_text(node, st) if node.redirects else None  # fed only by a redirect
        stdin = None if fed is None else plain(fed)
        if self.marks:
            self.decide_command(name, argv, prefix, stdin, node, st)
        if node.redirects or st.generated:
            self.note_written(node, st, argv, name)
        if name is not None and name in st.funcs:  # as in bash, a function runs in place of a builtin of its name
            if name in _DECLARERS:
                self.unmodelled(st, node.line, shadowed_declaration(name))
            with self.prefixed(prefix, st):
                return self.call(name, argv[1:], st, node)
        if name in OPTION_BUILTINS:
            if self.marks:
                self.decide(*argv[1:])  # which options it sets: their text decides
            why = unmodelled(name, [plain(a) if is_known(a) else None for a in argv[1:]])
            if why is not None:
                self.unmodelled(st, node.line, why)
        if name in _DECLARERS:
            return self.declare(name, argv[1:], node, st)
        if name in ("source", "."):
            return self.source(argv[1:], node, st)
        if name == "eval":
            with self.prefixed(prefix, st):
                return self.eval_(argv[1:], node, st)
        if name in ("cd", "pushd", "popd"):
            # `cd DIR` / `pushd DIR` go there; `cd` (home), `cd -`, `popd` and `pushd` of the stack go
            # where only the run's directory stack says
            args = [a for a in argv[1:] if not (is_known(a) and plain(a) in ("-P", "-L", "-e", "-@", "-n", "--"))]
            where = plain(args[0]) if args and is_known(args[0]) else None
            if name == "popd" or not args or where == "-" or (name == "pushd" and where is not None and
                                                                where[:1] in "+-" and is_number(where[1:])):
                st.cwd = (Seg("${PWD}", st.file, node.line, False, "runtime"),)
            else:
                st.cwd = args[0] if plain(args[0]).startswith("/") or not st.cwd else \
                    concat(st.cwd, text_of("/"), args[0])
                # whether it succeeds (`cd "$(dirname "$0")" && pwd`) is the loader's to say (op `cd`)
                return self.file_test("cd", st.cwd, st) if self.file_test is not None else None
            return None
        if name in ("exit",):
            code = plain(argv[1]) if len(argv) > 1 else "0"
            raise Stop(st.file, node.line, code == "0")
        if name == "return":
            code = plain(argv[1]) if len(argv) > 1 else "0"
            raise _Return(None if not is_number(code) else code == "0")
        if name == "unset":
            by_name = any(plain(a).startswith("-") and "n" in plain(a) for a in argv[1:])
            functions = any(plain(a).startswith("-") and "f" in plain(a) for a in argv[1:])
            for a in argv[1:]:
                n = plain(a)
                if n.startswith("-"):
                    continue
                if functions:  # `unset -f NAME`: the function, not a variable
                    st.funcs.pop(n, None)
                    continue
                if n in st.refs:  # `unset REF` unsets what it refers to; `unset -n REF` the reference
                    if by_name:
                        del st.refs[n]
                        continue
                    n = self.deref(n, st, node.line) or n
                st.vars.pop(n, None)
                st.arrays.pop(n, None)
                st.exported.discard(n)
                st.unset.add(n)
            return True
        if name == "shift":
            count = plain(argv[1]) if len(argv) > 1 and is_known(argv[1]) else "1" if len(argv) == 1 else ""
            if _positional_unknown(st):
                return True
            if not is_number(count) or any(shape_unknown(p) for p in st.positional[:int(count)]):
                # how many it drops, or which words are left, only the run knows
                st.positional = [(Seg("$@", st.file, node.line, False, "runtime"),)]
                return None
            if int(count) > len(st.positional):  # more than there are: bash fails and shifts nothing
                return False
            st.positional = st.positional[int(count):]
            return True
        if name == "set":
            words = [plain(a) for a in argv[1:]]
            if "--" in words:
                st.positional = argv[1 + words.index("--") + 1:]
            return True
        if name in ("break", "continue"):
            return self.jump(name, argv[1:], st, node.line)
        if name in ("true", ":"):
            return True
        if name == "false":
            return False
        if name in ("[", "test"):
            return self.single_test(name, argv[1:], st, node.line)
        if name == "read":
            return self.read(argv[1:], prefix, fed, st)
        if name in ("mapfile", "readarray"):
            return self.mapfile(argv[1:], fed, st, node.line)
        if name == "let":  # each argument an arithmetic expression; its status, the last one's
            value: int | None = 0
            for arg in argv[1:]:
                self.decide(arg)
                value = self.arith(plain(arg), st, node.line) if is_known(arg) else None
                if value is None:
                    for var in _ARITH_NAME.findall(plain(arg)):
                        st.vars[var] = (Seg(f"${{{var}}}", st.file, node.line, False, "undecided"),)
                    return None
            return value != 0
        if name == "printf" and len(argv) > 3 and plain(argv[1]) == "-v":
            return self.printf_to(argv[2], argv[3:], st, node.line)
        if name in ("echo", "printf") and self.capture is not None and not self.redirected(node):
            printed = self.echo(name, argv[1:])
            self.capture[-1].append(printed if printed is not None else
                                    (Seg(f"$({name})", *origin(argv[0]), False, "runtime"),))
            return True
        if name in ("python3", "python") and self.capture is not None and not self.redirected(node):
            out = self.snippet(argv[1:], node, st, stdin)
            if out is not None:
                self.capture[-1].append(out)
                return True
        if name == "trap" and self.capture is not None and \
                any(plain(a) in utilities.TRAPS_WITHOUT_SIGNAL or not is_known(a) for a in argv[2:]):
            self.external_in_capture = True  # what the handler prints when the capture's shell ends
        if name in _QUIET and not (self.capture is not None and name in ("ulimit", "umask", "type", "hash", "alias")):
            return True
        if self.capture is not None and name in ("seq", "dirname", "basename", "pwd") and not self.redirected(node):
            out = self.builtin_output(name, argv[1:], st)
            if out is not None:
                self.capture[-1].append(out)
                return True
        argv = [self.restore(a) for a in argv] if self.sentinels else argv
        env: dict[str, Text] = {}
        if self.may_start(name):  # only a command that can run a script or a server needs its environment
            env = {k: v for k, v in st.vars.items() if k in st.exported}
            env.update(prefix)
            if self.sentinels:
                env = {k: self.restore(v) for k, v in env.items()}
        file, line = st.file, node.line
        if self.origin_at is not None:  # eval'd or inline text: the command is where its words were written
            found = origin(argv[0])
            if found[0] and found[1]:
                file, line = found[0], found[1]
            elif self.event_line is not None:
                line = self.event_line
        if self.downloaded and self.commands is not None:
            self.run_fetched(argv, st, node.line)
        if name in utilities.FETCHERS:
            self.note_fetch(name, [plain(a) for a in argv[1:]], node.line)
        self.events.append(Event(file, line, tuple(argv), env, st.cwd, tuple(self.guards), stdin,
                                 taint=st.taint))
        if self.stop_at is not None and not self.guards and self.stop_at([plain(a) for a in argv[:3]]):
            raise Stop(file, line, True)
        if self.capture is not None and not self.redirected(node):
            self.external_in_capture = True
        return None

    def note_written(self, node: Simple, st: State, argv: list[Text], name: str | None) -> None:
        """Files a command writes (`cmd > F`, `cmd 2> F`) or names (`rm -f F`, `sed -i ... F`).

        A command whose whole standard output the reader computes (`written_text`) written to one
        file makes it a generated file (`State.generated`), which a later `source` of the same path
        reads. Any other write marks the file as written at run time (`fetched`: sourcing it fails
        closed). A generated file is read back only while its own write is the last one that may have
        reached it (`generated_file`): a later write to it, a write to a path the reader cannot tell
        apart from it (one holding a run-time value), or a command that names it in its arguments
        (other than to read it) may have changed it, and it is no longer known."""
        writes = [r for r in node.redirects if r.target is not None and (
            r.op in (">", ">>", ">|", "&>", "&>>") or (r.op == ">&" and not is_number(r.target.raw) and r.target.raw != "-"))]
        self.write_count += 1
        step = self.write_count
        for r in writes:
            assert r.target is not None
            target = self.expand_one(r.target, st)
            text = plain(target)
            if not text or (is_known(target) and text in ("/dev/null", "/dev/stderr", "/dev/stdout")):
                continue
            stdout = r.fd in ("", "1") and r.op in (">", ">>", ">|")
            if self.capture is None and stdout:
                self.fetched.setdefault(posixpath.normpath(text), node.line)
            key = _file_key(target, st.cwd)
            if key is None or not is_known(target):  # may be any file (a run-time path, an unknown directory)
                self.written_anywhere = step
            if key is None:
                continue
            out = self.written_text(node, st, argv, name) if stdout and len(writes) == 1 else None
            if out is not None and r.op == ">>":
                before = self.generated_file(target, st)
                out = None if before is None else concat(before.text, out)
            self.written[key] = step
            if out is None:
                st.generated.pop(key, None)
            else:
                st.generated[key] = Generated(out, target, node.line, step)
        if st.generated and name not in _READS_FILES:
            # each generated file against each argument: past a bound, every one may be named (none
            # is known any more, so reading one back fails closed) and the cost stays linear
            every = _too_many_to_name(st.generated, argv)
            for key, gen in list(st.generated.items()):
                if every or any(_names_file(arg, gen.path) for arg in argv[1:]):
                    self.written[key] = step
                    del st.generated[key]

    def written_text(self, node: Simple, st: State, argv: list[Text], name: str | None) -> Text | None:
        """The whole standard output of a command the reader can compute without running it (None:
        not known): a python3 data snippet (verifier.shell.pysnippet) whose code holds no run-time
        value, `echo` / `printf '%s\\n'` of words, `cat` of a here-document, a here-string or a
        generated file."""
        args = argv[1:]
        if name in ("python3", "python"):
            code = self.stdin_text(node, st)
            return self.snippet(args, node, st, plain(code) if code is not None else None)
        if name in ("echo", "printf"):
            return self.echo(name, args)
        if name == "cat":
            if not args or [plain(a) for a in args] == ["-"]:
                return self.stdin_text(node, st)
            if len(args) == 1:
                gen = self.generated_file(args[0], st)
                return None if gen is None else gen.text
        return None

    def stdin_text(self, node: Simple, st: State) -> Text | None:
        """The text a here-document or here-string feeds a command, with its origins (None: none, or
        standard input is a file; the last input redirection wins, as in bash)."""
        fed: Text | None = None
        for r in node.redirects:
            if r.op in ("<<", "<<-") and r.heredoc is not None:
                fed = text_of(r.heredoc.body, st.file, node.line) if r.heredoc.quoted else \
                    self.expand_one(_heredoc(r.heredoc.body, node.line), st)
            elif r.op == "<<<" and r.target is not None:
                fed = concat(self.expand_one(r.target, st), text_of("\n", st.file, node.line))
            elif r.op in ("<", "<&", "<>") and r.fd in ("", "0"):
                fed = None
        return fed

    def generated_file(self, path: Text, st: State) -> Generated | None:
        """The generated file a path names, while its own write is the last that may have reached it."""
        key = _file_key(path, st.cwd)
        gen = st.generated.get(key) if key is not None else None
        if gen is None or self.written.get(key) != gen.step or gen.step < self.written_anywhere:  # type: ignore[arg-type]
            return None
        return gen

    def note_fetch(self, name: str, words: list[str], line: int) -> None:
        """Files a command brings in at run time (verifier.shell.utilities.fetch_targets)."""
        if self.fetched:  # whether a word names a fetched file is asked of its characters
            self.decide(*words)
        utilities.note_fetches(self.fetched, name, words, line)
        utilities.note_fetches(self.downloaded, name, words, line)

    def reads_stdin(self, event: Event) -> bool:
        """Whether a recorded command is a shell or Python reading its program from standard input
        (verifier.shell.launchers.program_code): from a pipe, the previous command's output."""
        if self.commands is None:
            return False
        found = program_code(as_vals(event.argv, (event.file, event.line)), self.commands)
        return found is not None and found[0] == "stdin"

    def run_fetched(self, argv: list[Text], st: State, line: int) -> None:
        """A shell or Python started on a file the script downloaded or copied in first (`curl -o F URL;
        bash F`; `downloaded`, not the script's own writes): what runs is the download, not the tree's
        file, so the command and every later one carry it (`unmodelled`), as a fetched file sourced does."""
        assert self.commands is not None
        found = program_code(as_vals(argv, (st.file, line)), self.commands)
        if found is None or found[0] != "file":
            return
        index = found[1]
        self.decide(argv[index])  # whether it names a fetched file is asked of its characters
        path = plain(argv[index])
        fetched = utilities.fetched_at(self.downloaded, posixpath.normpath(path))
        if fetched is not None:
            self.unmodelled(st, line, f"runs {path[:100]}, which the script fetches at run time (line {fetched})")

    def may_start(self, name: str | None) -> bool:
        """Whether a command can start a script or a server (an unknown program might)."""
        if name is None or self.commands is None:
            return True
        return name in _STARTERS or name in self.commands.env_heads or "/" in name or \
            name.endswith((".sh", ".slurm", ".bash", "python", "python3"))

    def redirected(self, node: Simple) -> bool:
        """True when the command's standard output goes elsewhere than the caller (a file, stderr)."""
        for r in node.redirects:
            if r.op in ("&>", "&>>"):
                return True
            if r.op in (">", ">>", ">|", ">&") and r.fd in ("", "1"):
                return True
        return False

    def assign(self, node: Assign, st: State, export: bool) -> None:
        """`NAME=value`, `NAME+=value`, `NAME[i]=value`, `NAME=(...)`, `NAME+=(...)`."""
        if st.refs and node.name in st.refs:
            target = self.deref(node.name, st, node.line)
            if not target:
                if node.array is None and node.index is None and node.value is not None and not node.append:
                    pointed = plain(self.expand_one(node.value, st))
                    if _NAME.match(pointed):
                        st.refs[node.name] = pointed  # `declare -n r; r=NAME` points the reference
                        return
                self.unmodelled(st, node.line, f"assigns through the name reference `{node.name}`, which refers "
                                               "to nothing known")
                return
            node = dataclasses.replace(node, name=target)
        if node.array is not None:
            if node.name in st.assoc or node.name in st.attributed or \
                    any(w.raw.startswith("[") and "]=" in w.raw for w in node.array):
                # `([key]=value ...)`: the elements of an associative or sparse array are not modelled
                self.unknown_array(node.name, st, node.line)
                return
            items: list[Text] = []
            for word in node.array:
                items.extend(self.expand(word, st))
            if node.index is not None:
                self.unknown_array(node.name, st, node.line)
                return
            if node.append:  # `V+=(x)` of a scalar: its value is the first element
                start = [st.vars[node.name]] if node.name not in st.arrays and node.name in st.vars else []
                st.arrays.setdefault(node.name, start).extend(items)
            else:
                st.arrays[node.name] = items
            st.vars.pop(node.name, None)
            st.unset.discard(node.name)
            if export:
                st.exported.add(node.name)
            return
        name = node.name
        value = self.expand_one(node.value, st) if node.value is not None else ()
        if node.index is not None:  # A[i]=v
            if name in st.assoc or name in st.attributed:
                self.unknown_array(name, st, node.line)
                return
            index = self.arith(node.index.raw, st, node.line)
            arr = st.arrays.get(name)
            if arr is None:  # a scalar is element 0 of the array it becomes
                arr = st.arrays[name] = [st.vars[name]] if name in st.vars else []
                st.vars.pop(name, None)
                st.unset.discard(name)
            if index is not None and index < 0:  # counted from the end
                index += len(arr)
            if index is None or not 0 <= index <= len(arr) or any(not is_known(item) for item in arr[:index]):
                # an element the reader cannot place (a run-time index, a sparse array, after an
                # element that may stand for many): the array is not known from here on
                self.unknown_array(name, st, node.line)
            elif index == len(arr):
                arr.append(value)
            else:
                arr[index] = concat(arr[index], value) if node.append else value
            return
        if name in st.attributed and name not in st.arrays:
            value = self.attributed(name, value, node.append, st, node.line)
        elif name in st.attributed:  # an attributed array: not modelled
            self.unknown_array(name, st, node.line)
            return
        elif node.append:
            arr = st.arrays.get(name)
            if arr is not None:  # `A+=x` of an array appends to its first element
                if arr and not is_known(arr[0]):  # which element is first is not known
                    self.unknown_array(name, st, node.line)
                else:
                    arr[:1] = [concat(arr[0], value) if arr else value]
                return
            value = concat(self.lookup(name, st, node.line), value)
        elif name in st.arrays:  # `A=x` of an array sets its first element
            arr = st.arrays[name]
            if arr and not is_known(arr[0]):
                self.unknown_array(name, st, node.line)
            else:
                arr[:1] = [value]
            return
        st.vars[name] = value
        st.arrays.pop(name, None)
        st.unset.discard(name)
        st.unresolved.pop(name, None)
        if export:
            st.exported.add(name)

    def unknown_array(self, name: str, st: State, line: int | None, why: str = "undecided") -> None:
        """An array whose elements the reader does not model from here on."""
        st.arrays[name] = [(Seg(f"${{{name}[@]}}", st.file, line, False, why),)]
        st.vars.pop(name, None)
        st.unset.discard(name)

    def declare(self, name: str, args: list[Text], node: Simple, st: State) -> bool | None:
        """`export`, `declare`/`typeset`, `local`, `readonly` (verifier.shell.utilities.declaration)."""
        asked = utilities.declaration(name, [plain(a) if is_known(a) else None for a in args])
        why = unmodelled_declaration(asked, [a.name for a in node.assigns])
        if why is not None:
            self.unmodelled(st, node.line, why)
        if name == "local" and not self.frames:  # bash refuses `local` outside a function: nothing is assigned
            return False
        names = [var for var in (*(n for _, n in asked.names), *(o.name for o in asked.assigned),
                                 *(a.name for a in node.assigns)) if _NAME.match(var)]
        if self.frames and asked.local(True):
            for var in names:
                self.localize(var, st)
        if asked.refs:
            return self.declare_refs(args, node, st)
        if "A" in asked.flags:  # associative arrays: not modelled (their elements are unknown)
            for var in [*(n for _, n in asked.names), *(o.name for o in asked.assigned), *(a.name for a in node.assigns)]:
                st.assoc.add(var)
                self.unknown_array(var, st, node.line)
        export = asked.exports
        flags = "".join(flag for flag in "ilu" if flag in asked.flags)
        if flags:
            for var in names:
                st.attributed[var] = "".join(sorted(set(st.attributed.get(var, "") + flags)))
        for assign in node.assigns:
            if assign.array is not None:
                self.assign(assign, st, export)
            elif assign.index is None and assign.value is not None:
                self.declared(assign.name, self.expand_one(assign.value, st), assign.append, name, export, st)
            if asked.unexport:
                st.exported.discard(assign.name)
        for operand in asked.assigned:
            self.declared(operand.name, slice_text(args[operand.position], operand.offset), operand.append, name,
                          export, st)
            if asked.unexport:
                st.exported.discard(operand.name)
        for _, var in asked.names:
            if not _NAME.match(var):
                continue
            if asked.unexport:
                st.exported.discard(var)
            elif export:
                st.exported.add(var)
            elif name in ("local", "declare", "typeset"):
                self.reads.add(var)  # whether it is set decides what it holds
                if var not in st.vars and var not in st.arrays:
                    st.vars[var] = ()
                    st.unset.discard(var)
        return True

    def declared(self, var: str, value: Text, append: bool, command: str, export: bool, st: State) -> None:
        """A declaration's `NAME=VALUE` (`NAME+=VALUE`: `append`): the variable holds the value (a
        scalar, unless `export` of an array)."""
        if var in st.attributed:
            value = self.attributed(var, value, append, st, None)
        elif append and var in st.vars:
            value = concat(st.vars[var], value)
        if var in st.arrays and command != "export":
            st.arrays.pop(var, None)
        st.vars[var] = value
        st.unset.discard(var)
        st.unresolved.pop(var, None)
        if export:
            st.exported.add(var)

    def attributed(self, var: str, value: Text, append: bool, st: State, line: int | None) -> Text:
        """What an assignment stores in a variable declared with `-i` (the arithmetic value; `+=`
        adds), `-l` or `-u` (the value in lower or upper case); unknown when the reader does not
        know the value, or whether the attribute holds."""
        flags = st.attributed[var]
        text: str | None = plain(value) if is_known(value) and flags != "?" else None
        if text is not None and "i" in flags:
            old = st.vars.get(var, ())
            number = self.arith(f"({plain(old) or 0})+({text or 0})" if append else text or "0", st, line) \
                if is_known(old) or not append else None
            text = None if number is None else str(number)
        elif text is not None and append:
            old = st.vars.get(var, ())
            text = plain(old) + text if is_known(old) else None
        if text is not None and "l" in flags:
            text = text.lower()
        if text is not None and "u" in flags:
            text = text.upper()
        if text is None:
            return (Seg(f"${{{var}}}", st.file, line, False, "undecided"),)
        return text_of(text, st.file, line)

    def declare_refs(self, args: list[Text], node: Simple, st: State) -> bool | None:
        """`declare -n REF=NAME` / `local -n` / `typeset -n`: REF stands for NAME from now on."""
        for assign in node.assigns:
            value = plain(self.expand_one(assign.value, st)) if assign.value is not None else ""
            known = assign.value is None or is_known(self.expand_one(assign.value, st))
            if assign.array is not None or assign.index is not None or not known or \
                    (value and not _NAME.match(value)) or value == assign.name:
                self.unmodelled(st, node.line, f"declares the name reference `{assign.name}` to "
                                               f"`{value[:80]}`, which is not followed")
                continue
            st.refs[assign.name] = value
            st.vars.pop(assign.name, None)
        for arg in args:
            text = plain(arg)
            if text.startswith("-"):
                continue
            var, eq, value = text.partition("=")
            if eq and _NAME.match(var) and (not value or _NAME.match(value)) and is_known(arg) and value != var:
                st.refs[var] = value
                st.vars.pop(var, None)
            elif not eq and _NAME.match(text):
                st.refs.setdefault(text, "")
                st.vars.pop(text, None)
            else:
                self.unmodelled(st, node.line, f"declares the name reference `{text[:80]}`, which is not followed")
        return True

    def source(self, args: list[Text], node: Simple, st: State) -> bool | None:
        if not args:
            return True
        word = node.words[1] if len(node.words) > 1 else None
        if word is not None and any(part.kind == "proc" for part in word.parts):
            self.unmodelled(st, node.line, f"sources the output of a process substitution (`{word.raw[:100]}`)")
            return None
        gen = self.generated_file(args[0], st)
        if gen is not None:
            return self.source_generated(gen, args, node, st)
        # the file, or one of a directory cloned at run time (an empty word names the working directory)
        fetched = utilities.fetched_at(self.fetched, posixpath.normpath(plain(args[0])))
        if fetched is not None:
            self.unmodelled(st, node.line, f"sources {plain(args[0])[:100]}, which the script fetches or writes at "
                                           f"run time (line {fetched})")
            return None
        loaded = self.load(args[0], st) if self.load is not None else None
        if loaded is None:
            self.problems.append((st.file, node.line, f"sources {plain(args[0])}, which is not followed"))
            return None
        path, text = loaded
        self.files.append(path)
        saved_file, saved_pos, saved_source = st.file, st.positional, st.source_text
        st.file, st.source_text = path, plain(args[0])
        if len(args) > 1:
            st.positional = list(args[1:])
        try:
            with self.deeper():
                return self.body(_parse(text, path), st)
        except ShellSyntaxError as exc:
            self.problems.append((path, exc.line, f"cannot be read statically: {exc.message}"))
            return None
        except _Return as ret:
            return ret.status
        finally:
            st.file, st.positional, st.source_text = saved_file, saved_pos, saved_source

    def source_generated(self, gen: Generated, args: list[Text], node: Simple, st: State) -> bool | None:
        """`source F` of a file the script generated (`note_written`): its text is read as shell code
        like the text of `eval`, every word keeping the origin its characters came from (the snippet's
        line, or the YAML line a value was read from); a run-time value in it stays unknown."""
        source, owners = self.shell_text(gen.text)
        try:
            body = _parse(source, st.file)
        except ShellSyntaxError as exc:
            self.unmodelled(st, node.line, f"sources {plain(args[0])[:100]}, which the script writes (line "
                                           f"{gen.line}) with text that does not parse ({exc.message})")
            return None

        saved, saved_line = self.origin_at, self.event_line
        saved_pos, saved_source = st.positional, st.source_text
        self.origin_at = _origins(source, owners, st.file, gen.line)
        self.event_line = node.line if saved_line is None else saved_line
        st.source_text = plain(args[0])
        if len(args) > 1:
            st.positional = list(args[1:])
        try:
            with self.deeper():
                return self.body(body, st)
        except _Return as ret:
            return ret.status
        finally:
            self.origin_at, self.event_line = saved, saved_line
            st.positional, st.source_text = saved_pos, saved_source

    def eval_(self, args: list[Text], node: Simple, st: State) -> bool | None:
        code = join_fields(args)
        # the text to run is itself a command's output (`eval "$(python3 ...)"`): nothing it does is known;
        # a run-time value inside known text (`eval "$CMD"` with a host IP in it) is only data
        lead = next((seg for seg in code if seg.text.strip()), None)
        opaque = lead if lead is not None and not lead.known and lead.text.startswith(("$(", "`")) else None
        if opaque is not None:
            self.unmodelled(st, node.line, f"evaluates the output of `{opaque.text[:120]}`")
            return None
        source, owners = self.shell_text(code)
        try:
            body = _parse(source, st.file)
        except ShellSyntaxError as exc:
            self.unmodelled(st, node.line, f"evaluates text that does not parse ({exc.message})")
            return None

        saved, saved_line = self.origin_at, self.event_line
        self.origin_at = _origins(source, owners, st.file, node.line)
        self.event_line = node.line if saved_line is None else saved_line
        try:
            return self.body(body, st)
        finally:
            self.origin_at, self.event_line = saved, saved_line

    def call(self, name: str, args: list[Text], st: State, node: Simple) -> bool | None:
        """A function of the script: its body with the arguments as positional parameters; its
        local variables (`localize`) are given back what they hid when it returns."""
        with self.deeper():
            saved, saved_file, saved_flag = st.positional, st.file, self.return_unknown
            body, st.file = st.funcs[name]
            st.positional = list(args)
            self.return_unknown = False
            self.frames.append(({}, len(self.guards)))
            try:
                status = self.command(body, st)
                return None if self.return_unknown else status
            except _Return as ret:
                return None if self.return_unknown else ret.status
            finally:
                hidden, _depth = self.frames.pop()
                for var, was in hidden.items():
                    was.restore(var, st, node.line)
                st.positional, st.file = saved, saved_file
                self.return_unknown = saved_flag

    @contextlib.contextmanager
    def prefixed(self, prefix: Mapping[str, Text], st: State) -> Iterator[None]:
        """`X=v f` (a function, `eval`): X holds v, exported, while it runs, and what it held after."""
        saved = {var: _Hidden.of(var, st) for var in prefix}
        for var, value in prefix.items():
            st.vars[var] = value
            st.exported.add(var)
            st.unset.discard(var)
        try:
            yield
        finally:
            for var, was in saved.items():
                was.restore(var, st, 0)

    def localize(self, var: str, st: State) -> None:
        """`local VAR` (or `declare` in a function): what VAR held is hidden until the function returns
        (once per call); declared on a branch the reader could not decide, it is not known afterwards
        whether the function's writes to VAR were local."""
        hidden, depth = self.frames[-1]
        if var not in hidden:
            hidden[var] = _Hidden.of(var, st, len(self.guards) > depth)
            st.attributed.pop(var, None)  # a local variable starts without the attributes it hides

    @contextlib.contextmanager
    def deeper(self) -> Iterator[None]:
        """One more function call or sourced file; past MAX_CALL_DEPTH the reading ends (a budget)."""
        if self.depth >= MAX_CALL_DEPTH:
            raise _Budget(f"functions and sourced files nest more than {MAX_CALL_DEPTH} deep")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def read(self, args: list[Text], prefix: Mapping[str, Text], fed: Text | None, st: State) -> bool | None:
        """`read` (verifier.shell.utilities.read_line, read_fields) of known input; of any other
        (standard input, a here-string holding a run-time value), or a call the walkers do not model,
        run-time values: how it splits is not known either."""
        call = utilities.read_operands([plain(a) if is_known(a) else None for a in args])
        ifs: Text | str = prefix["IFS"] if "IFS" in prefix else self.ifs(st)
        got = utilities.read_line(call, plain(fed)) if fed is not None and is_known(fed) else None
        if got is None or not is_known(ifs if isinstance(ifs, tuple) else ()):
            why = _why_unknown(fed)
            for n in call.names:
                st.vars[n] = (Seg(f"${{{n}}}", st.file, None, False, why),)
                st.arrays.pop(n, None)
            if call.array is not None:
                self.unknown_array(call.array, st, None, why)
            return None
        line, found = got
        seps = plain(ifs) if isinstance(ifs, tuple) else ifs
        if call.array is not None:
            st.arrays[call.array] = [text_of(p, st.file, None) for p in utilities.read_fields(line, seps, None)] \
                if line or found else []
            st.vars.pop(call.array, None)
            st.unset.discard(call.array)
            return found
        for n, piece in zip(call.names, utilities.read_fields(line, seps, len(call.names)), strict=True):
            st.vars[n] = text_of(piece, st.file, None)
            st.arrays.pop(n, None)
            st.unset.discard(n)
        return found

    def mapfile(self, args: list[Text], fed: Text | None, st: State, line: int) -> bool | None:
        """`mapfile`/`readarray [-t] [NAME]` (verifier.shell.utilities.mapfile_lines) of a known
        here-document or here-string; of any other input (a process substitution, a pipe), or with
        other options, an array the reader does not know (never the array as it was, nor an empty one)."""
        self.decide(*args)
        call = utilities.mapfile_operands([plain(a) if is_known(a) else None for a in args])
        name = call.name
        if not call.modelled or fed is None or not is_known(fed):
            self.unknown_array(name, st, line, _why_unknown(fed))
            return None
        self.decide(fed)
        st.arrays[name] = [text_of(piece, st.file, line) for piece in utilities.mapfile_lines(plain(fed), call.strip)]
        st.vars.pop(name, None)
        st.unset.discard(name)
        return True

    def snippet(self, args: list[Text], node: Simple, st: State, stdin: str | None) -> Text | None:
        """The output of an inline `python3 -c CODE` / `python3 - <<PY` data snippet (None: not followed)."""
        from verifier.shell.pysnippet import SnippetUnreadable, run_snippet

        words = [plain(a) for a in args]
        code: str | None = None
        if words[:1] == ["-c"] and len(args) > 1 and is_known(args[1]):
            code = plain(args[1])
        elif (not words or words[:1] == ["-"]) and stdin is not None:
            fed = self.stdin_text(node, st)
            if fed is not None and not is_known(fed):
                return None  # a run-time value inside the code: its source text is not what Python reads
            code = stdin
        if code is None or self.load is None:
            return None
        load = self.load
        loads: list[tuple[str, tuple[str, str] | None]] = []

        def load_yaml(path: str) -> tuple[object, dict[tuple[object, ...], int], str] | None:
            found = load(text_of(path, st.file, node.line), st)
            loads.append((path, found))
            if found is None:
                return None
            rel, text = found
            self.files.append(rel)
            parsed = _yaml_doc(rel, text)
            return None if parsed is None else (parsed[0], dict(parsed[1]), rel)

        values = {k: plain(v) for k, v in st.vars.items() if k in st.exported and is_known(v)}
        key = (code, st.file, node.line)
        ran = self.snippet_again(key, values, st, node.line)
        if ran is None:
            env = _Observed(values, st.exported)
            out: Text | None = None
            error: str | None = None
            try:
                out = run_snippet(code, load_yaml, env, st.file, node.line)
            except SnippetUnreadable as exc:
                error = str(exc)
            finally:
                self.reads |= env.seen
                # what the snippet printed depends on the characters of the variables it looked up
                # (or listed): their stand-ins decide it (module docstring, Stand-ins)
                self.decide(*(st.vars.get(name) for name in env.seen))
            ran = _SnippetRun(tuple(env.asked.items()), env.listing_key() if env.listed else None,
                              tuple(loads), frozenset(env.seen), out, error)
            runs = _SNIPPET_RUNS.setdefault(key, [])
            _SNIPPET_RUNS.move_to_end(key)
            runs.append(ran)
            if len(runs) > MAX_SNIPPET_RUNS:
                del runs[0]
            if len(_SNIPPET_RUNS) > MAX_SNIPPETS:
                _SNIPPET_RUNS.popitem(last=False)
        if ran.error is not None:
            self.problems.append((st.file, node.line, f"runs a python3 snippet that is not read statically ({ran.error})"))
        return ran.out

    def snippet_again(self, key: tuple[str, str, int], values: dict[str, str], st: State,
                      line: int) -> _SnippetRun | None:
        """An earlier run of the same snippet (code, file and line) that holds here (None: none): one
        whose every environment lookup (or listing) has the same answer and whose every YAML load,
        asked again in order, gives the same file and text. The snippet is a function of these
        alone (verifier.shell.pysnippet), so it prints the same; asking the loads again and recording
        the variables read make the reading's files, tree questions and decisions those of a run."""
        for ran in _SNIPPET_RUNS.get(key, ()) if not _AFRESH else ():
            if any(values.get(name) != value for name, value in ran.env):
                continue
            if ran.listed is not None and not _same_listing(ran.listed, values):
                continue
            assert self.load is not None
            mark = len(self.files)
            for path, expected in ran.loads:
                found = self.load(text_of(path, st.file, line), st)
                if found != expected:
                    break
                if found is not None:
                    self.files.append(found[0])
            else:
                self.reads |= ran.seen
                self.decide(*(st.vars.get(name) for name in ran.seen))
                return ran
            del self.files[mark:]  # a file holds other text here (the other tree): not this run
        return None

    def echo(self, name: str, args: list[Text]) -> Text | None:
        """What `echo` or `printf` prints (verifier.shell.utilities), exactly: its final newline
        included; text printed by `%s` keeps its origin (None: a printf whose output the reader does
        not know)."""
        if name == "printf":
            if args and is_known(args[0]) and plain(args[0]) == "--":  # the end of printf's options
                args = args[1:]
            if not args:
                return ()
            fmt = plain(args[0]) if is_known(args[0]) else None
            if fmt == "%s" and len(args) > 1:
                return concat(*args[1:])
            if fmt in ("%s\n", "%s\\n") and len(args) > 1:
                ending = text_of("\n", *origin(args[0]))
                return concat(*[piece for arg in args[1:] for piece in (arg, ending)])
            if fmt is None or not all(is_known(a) for a in args):
                return None
            pieces = utilities.printf_pieces(fmt, [plain(a) for a in args[1:]])
            return None if pieces is None else text_of("".join(pieces), *origin(args[0]))
        count, newline, escapes = utilities.echo_options([plain(a) if is_known(a) else None for a in args])
        words = args[count:]
        if escapes:
            words = [text_of(utilities.unescape(plain(w)), *origin(w)) if is_known(w) and "\\" in plain(w) else w
                     for w in words]
        body = join_fields(words)
        return concat(body, text_of("\n", *origin(body))) if newline else body

    def printf_to(self, target: Text, args: list[Text], st: State, line: int) -> bool:
        """`printf -v NAME FORMAT ARGS`: NAME holds what printf would print (all of it: no capture
        strips a newline here); a value the reader does not know when an argument is not known."""
        self.decide(target)
        name = plain(target)
        if not is_known(target) or not _NAME.fullmatch(name):
            self.unmodelled(st, line, f"printf -v assigns `{name[:80]}`, which is not followed")
            return True
        if args and is_known(args[0]) and plain(args[0]) == "--" and len(args) > 1:  # the end of printf's options
            args = args[1:]
        fmt = plain(args[0])
        if not all(is_known(a) for a in args):
            value: Text = (Seg(f"$(printf {fmt[:80]})", st.file, line, False, "runtime"),)
        elif fmt == "%s" and len(args) > 1:
            value = join_fields(args[1:], "")
        else:
            pieces = utilities.printf_pieces(fmt, [plain(a) for a in args[1:]])
            value = (Seg(f"$(printf {fmt[:80]})", st.file, line, False, "runtime"),) if pieces is None else \
                text_of("".join(pieces), *origin(args[0]))
        st.vars[name] = value
        st.arrays.pop(name, None)
        st.unset.discard(name)
        st.unresolved.pop(name, None)
        return True

    def builtin_output(self, name: str, args: list[Text], st: State) -> Text | None:
        """What `seq`, `dirname`, `basename` and `pwd` print (verifier.shell.utilities), a line each
        (None: an argument the reader does not know, or output it does not model)."""
        if any(not is_known(a) for a in args):
            return None
        words = [plain(a) for a in args]
        file, line = origin(args[0]) if args else (st.file, None)
        if name == "seq":
            numbers = utilities.seq_numbers(words)
            return None if numbers is None else text_of("".join(f"{i}\n" for i in numbers), file, line)
        if name == "dirname" and words:
            return text_of("".join(utilities.dirname(w) + "\n" for w in words if w != "--"), file, line)
        if name == "basename" and words:
            paths, suffix = utilities.basename_operands(words)
            return text_of("".join(utilities.basename(p, suffix) + "\n" for p in paths), file, line)
        if name == "pwd" and st.cwd and is_known(st.cwd):
            return concat(st.cwd, text_of("\n", file, line))
        return None

    # ------------------------------------------------------------------ expansion

    def word_origin(self, word: Word, st: State) -> tuple[str, int]:
        if self.origin_at is not None:
            found = self.origin_at(word)
            if found is not None:
                return found
        return st.file, word.line

    def expand_one(self, word: Word, st: State, split: bool = False) -> Text:
        """A word expanded without field splitting (assignment values, [[ ]] operands, case subjects):
        the words of `"$@"` or `"${A[@]}"` there are one, joined by spaces."""
        fields = self.expand(word, st, split=split)
        return join_fields(fields) if len(fields) > 1 else (fields[0] if fields else ())

    def expand(self, word: Word, st: State, split: bool = True) -> list[Text]:
        """Bash word expansion into fields (parameter, command and arithmetic expansion; splitting);
        where fields split, a field that is a pathname pattern bash makes from unquoted text is a
        run-time value (the file names it matches, which may be any number of words:
        `expansion.may_glob`)."""
        if (split and word.braced and len(word.parts) > 1) or word.old_arithmetic:  # not modelled
            file, line = self.word_origin(word, st) if self.origin_at is not None else (st.file, word.line)
            return [(Seg(word.raw, file, line, False, "undecided", split),)]
        fields = self.expanded(word, st, split)
        if word.tilde and fields:  # a home directory: the run's
            first = fields[0]
            return [(Seg(plain(first), *origin(first), False, "runtime", split),), *fields[1:]]
        if not split or not word.may_make_pattern:
            return fields
        return [(Seg(plain(f), *origin(f), False, "runtime", True),) if is_known(f) and self.globs(f) else f
                for f in fields]

    def globs(self, field: Text) -> bool:
        """Whether a known field of an unquoted expansion is a pathname pattern (`expansion.may_glob`),
        which only the run expands. With a stand-in in it, that is what the field with the values is:
        a check (`check`) for other values."""
        text = plain(field)
        if not self.marks or "\x00" not in text:
            return expansion.may_glob(text)
        globbed = _makes_pattern((self.with_values(field),))
        self.check((field,), _makes_pattern, globbed)
        return globbed

    def expanded(self, word: Word, st: State, split: bool) -> list[Text]:
        file, line = self.word_origin(word, st) if self.origin_at is not None else (st.file, word.line)
        parts = word.parts
        for part in parts:
            if part.kind != "lit":
                break
        else:  # no expansion: one field (or none)
            text = parts[0].text if len(parts) == 1 else "".join([part.text for part in parts])
            if split and len(parts) == 1 and word.braced:
                words = expansion.brace_expand(text)
                if words is None:
                    return [(Seg(text, file, line, False, "undecided", True),)]
                return [(known_seg(t, file, line),) for t in words if t]
            if text:
                return [(known_seg(text, file, line),)]
            return [()] if any(part.quoted for part in parts) else []
        if len(parts) == 1 and parts[0].kind == "param":  # `"$X"`, `$X`, `"${A[@]}"`: the loop below, unrolled
            quoted = parts[0].quoted
            value = self.param(parts[0].text, st, line, quoted)
            if isinstance(value, list):
                if not value:
                    return []
                if quoted:
                    return [concat(item) for item in value]
                if split:  # each element is split on its own
                    ifs = self.ifs(st)
                    return [concat(piece) for item in value for piece in self.split(item, ifs)]
                value = join_fields(value, self.separator(st) if expansion.joins(parts[0].text) else " ")
            if quoted or not split:
                one = concat(value)
                return [one] if one or quoted else []
            return [concat(piece) for piece in self.split(value, self.ifs(st))]
        fields: list[list[Text]] = [[]]
        empty: set[int] = set()  # fields a delimiter encloses empty
        any_quoted = False
        for part in word.parts:
            kind, payload, quoted = part.kind, part.text, part.quoted
            any_quoted = any_quoted or quoted
            if kind == "lit":
                fields[-1].append(text_of(payload, file, line))
                continue
            if kind == "param":
                value = self.param(payload, st, line, quoted)
            elif kind in ("cmd", "proc"):  # a process substitution is read as the command it runs
                value = self.command_substitution(payload, st, line)
            else:
                number = self.arith(payload, st, line)
                value = text_of(str(number), file, line) if number is not None else \
                    (Seg(f"$(({payload}))", file, line, False, "runtime"),)
            if isinstance(value, list):  # "${A[@]}" / "$@"
                if not value:
                    if len(word.parts) == 1:
                        return []  # "${EMPTY[@]}" alone is no word at all
                    continue
                if quoted:
                    fields[-1].append(value[0])
                    for item in value[1:]:
                        fields.append([item])
                    continue
                if split:  # each element is split on its own, and ends a field
                    for k, item in enumerate(value):
                        if k:
                            fields.append([])
                        self.split_into(fields, empty, item, st)
                    continue
                value = join_fields(value, self.separator(st) if kind == "param" and expansion.joins(payload) else " ")
            if quoted or not split:
                fields[-1].append(value)
                continue
            self.split_into(fields, empty, value, st)
        out = [concat(*f) for f in fields]
        if any_quoted:
            return [f for i, f in enumerate(out) if f or i == 0 or fields[i]] or [()]
        return [f for i, f in enumerate(out) if f or i in empty]

    def split_into(self, fields: list[list[Text]], empty: set[int], value: Text, st: State) -> None:
        """An unquoted expansion's value split into the word's fields (verifier.shell.expansion.field_spans):
        a delimiter first ends the field before it, one last starts the next; `empty` gets the
        fields a delimiter that is not white space encloses empty (`a,,b` with IFS=,)."""
        ifs = self.ifs(st)
        text = plain(value)
        pieces = self.split(value, ifs)
        if text[:1] and text[:1] in ifs and fields[-1]:
            fields.append([])
            if pieces and not pieces[0]:
                pieces = pieces[1:]
        for k, piece in enumerate(pieces):
            if k:
                fields.append([])
            fields[-1].append(piece)
            if not piece:
                empty.add(len(fields) - 1)
        if text[-1:] and text[-1:] in ifs and pieces:
            fields.append([])

    def split(self, value: Text, ifs: str) -> list[Text]:
        """An unquoted expansion's value split on IFS (verifier.shell.text.split_fields). A stand-in
        holds no blank, nor any other character: with a script's IFS that holds others (`IFS=,`),
        whether the value holds one of them is a check (`check`) of the value, which decides when it
        does (the value is then split where the stand-in is not)."""
        if self.marks:
            chars = "".join(c for c in ifs if not c.isspace())
            text = plain(value) if chars else ""
            for m in _MARK.finditer(text):  # `check` decides when the value holds one
                self.check(((Seg(m.group(0), "", None, True),),), partial(_holds_any, chars=chars), False)
        return split_fields(value, ifs)

    def script_ifs(self, st: State) -> str | None:
        """IFS as the script set it (its characters decide how words split); None: unset, or a value
        the reader does not know."""
        ifs = st.vars.get("IFS")
        if ifs is None:
            return None
        self.decide(ifs)
        return plain(ifs) if is_known(ifs) else None

    def ifs(self, st: State) -> str:
        """What splits unquoted expansions: the script's IFS, else space, tab and newline."""
        ifs = self.script_ifs(st)
        return expansion.DEFAULT_IFS if ifs is None else ifs

    def lookup(self, name: str, st: State, line: int | None) -> Text:
        if name.startswith("__v") and is_number(name[3:]) and int(name[3:]) < len(self.sentinels):
            return (self.sentinels[int(name[3:])],)
        if st.refs and name in st.refs:
            name = self.deref(name, st, line)
            if not name:
                return ()
        self.reads.add(name)
        if name == "PWD" and st.cwd:  # the working directory the reader follows (`cd`, `pushd`)
            return st.cwd
        # one look through the layers of a branch's variables (a Text is never None)
        value = st.vars.get(name)
        if value is not None:
            return value  # type: ignore[no-any-return]
        if name in st.arrays:
            arr = st.arrays[name]
            return arr[0] if arr else ()
        if name in st.unset:
            return ()
        if name == "IFS":
            return text_of(expansion.DEFAULT_IFS, st.file, line)
        if name == "LINENO" and line is not None:
            return text_of(str(line), st.file, line)
        if not self.unknown(name) and name not in expansion.SHELL_SET:
            return ()
        return (Seg(f"${{{name}}}", st.file, line, False, "runtime"),)

    def deref(self, name: str, st: State, line: int | None) -> str:
        """The variable a `declare -n` reference stands for ("" when it is not pointed yet); one the
        reader cannot follow (a cycle, an array element, a run-time name) is a problem and taints
        what follows (fails closed)."""
        try:
            return follow_ref(st.refs, name, self.reads)
        except RefNotFollowed as exc:
            self.unmodelled(st, line or 0, f"reads or writes through the name reference `{exc.name}` (declare -n), "
                                           "which is not followed")
            return ""

    def unmodelled(self, st: State, line: int, what: str) -> None:
        """A construct the reader does not model: every command after it carries it (`Event.taint`:
        a server it starts is not resolved) and it is a problem of the reading ("cannot be read
        statically"), so a launch that needs this script fails closed."""
        if st.taint is None:
            st.taint = (st.file, line, what)
        self.problems.append((st.file, line, f"{what}, so the script cannot be read statically"))

    def is_set(self, name: str, st: State) -> bool | None:
        if st.refs and name in st.refs:
            name = self.deref(name, st, None)
            if not name:
                return None
        self.reads.add(name)
        if name in st.vars or name in st.arrays:
            return True
        if name in st.unset:
            return False
        if name in ("IFS", "LINENO"):
            return True
        if name in expansion.SHELL_SET or self.unknown(name):
            return None
        return False

    def param(self, inner: str, st: State, line: int, quoted: bool) -> Text | list[Text]:
        if inner.startswith("#") and len(inner) > 1:  # length
            target = inner[1:]
            if target in ("@", "*"):  # `${#@}`: how many positional parameters, as `$#`
                return self.param("#", st, line, quoted)
            if "[" in target and not target.endswith(("[@]", "[*]")):  # `${#A[i]}`: an element's length
                element = self.param(target, st, line, quoted)
                if isinstance(element, list):
                    return (Seg(f"${{{inner}}}", st.file, line, False, "runtime"),)
                self.decide(element)
                return text_of(str(len(plain(element))), st.file, line) if is_known(element) else \
                    (Seg(f"${{{inner}}}", st.file, line, False, "runtime"),)
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]$", target)
            if m:
                arr = st.arrays.get(m.group(1))
                if arr is not None and all(is_known(item) for item in arr):
                    self.decide(*arr)
                    return text_of(str(len(arr)), st.file, line)
                if arr is not None:  # an element the reader does not know may stand for any number of them
                    bad = next((seg for item in arr for seg in item if not seg.known), None)
                    assert bad is not None
                    return (Seg(f"${{{inner}}}", bad.file, bad.line, False, bad.why or "runtime"),)
                return (Seg(f"${{{inner}}}", st.file, line, False, "runtime"),)
            value = self.lookup(target, st, line)
            self.decide(value)  # its length
            return text_of(str(len(plain(value))), st.file, line) if is_known(value) else \
                (Seg(f"${{{inner}}}", st.file, line, False, "runtime"),)
        if inner.startswith("!"):  # indirect: ${!NAME} is the variable NAME names
            ref = expansion.parse_param(inner[1:])
            if not ref.kind and ref.subscript is None and not ref.rest and ref.name in st.refs:
                self.reads.add(ref.name)  # `${!REF}` of a name reference: the name it refers to
                return text_of(st.refs[ref.name], st.file, line)
            if not ref.kind and ref.subscript is None:
                target = self.lookup(ref.name, st, line)
                self.decide(target)  # the name of the variable read
                if is_known(target) and _NAME.match(plain(target)):
                    return self.param(plain(target) + ref.rest, st, line, quoted)
            return (Seg(f"${{{inner}}}", st.file, line, False, "runtime"),)
        parsed = expansion.parse_param(inner)
        if parsed.kind not in ("", "special"):
            return (Seg(f"${{{inner}}}", st.file, line, False, "runtime"),)
        name, index, rest = parsed.name, parsed.subscript, parsed.rest
        if st.refs and name in st.refs:
            name = self.deref(name, st, line) or "__unset_reference__"
        if name in ("@", "*") and index is None:  # the positional parameters (`${@:2}`: from $2 on)
            items = self.elements(list(st.positional), rest, st, line, text_of(st.zero, st.file, line))
            if name == "@" or not quoted:  # unquoted, `$*` is a word per parameter as `$@` is
                return items
            return join_fields(items, self.separator(st))
        if name == "#":
            if _positional_unknown(st):
                return st.positional[0]
            if any(shape_unknown(p) for p in st.positional):  # a word that may be any number of them
                return (Seg("$#", st.file, line, False, "runtime"),)
            return text_of(str(len(st.positional)), st.file, line)
        if is_number(name):
            n = int(name)
            if n == 0:
                value: Text = text_of(st.zero, st.file, line)
            elif any(shape_unknown(p) for p in st.positional[:n]):  # at or after a word that may be many
                return (Seg(f"${name}", st.file, line, False, "runtime"),)
            else:
                value = st.positional[n - 1] if n - 1 < len(st.positional) else ()
            present: bool | None = n == 0 or n - 1 < len(st.positional)
        elif name in "?$!-":
            return (Seg(f"${name}", st.file, line, False, "runtime"),)
        elif index is not None:
            if name != "BASH_SOURCE":
                self.reads.add(name)  # `${X[@]}` / `${X[0]}` of a scalar is its value
            if name == "BASH_SOURCE":
                value, present = text_of(st.source_text or st.file, st.file, line), True
            elif index in ("@", "*"):
                if name in st.arrays:
                    items = self.elements(list(st.arrays[name]), rest, st, line)
                    return items if index == "@" or not quoted else join_fields(items, self.separator(st))
                if name in st.vars:
                    return [st.vars[name]]
                if self.is_set(name, st) is False:
                    return []
                return [(Seg(f"${{{inner}}}", st.file, line, False, "runtime"),)]
            else:
                idx = self.arith(index, st, line)
                arr = st.arrays.get(name)
                if arr is None and name in st.vars and idx == 0:
                    value, present = st.vars[name], True
                elif arr is not None and idx is not None:
                    # an element the reader does not know may stand for any number of them: where
                    # the ones from there on are is not known
                    first = next((i for i, item in enumerate(arr) if not is_known(item)), None)
                    if first is not None and (idx < 0 or idx >= first):
                        seg = next(seg for seg in arr[first] if not seg.known)
                        return (Seg(f"${{{inner}}}", seg.file, seg.line, False, seg.why or "runtime"),)
                    if idx < 0:  # `${A[-1]}`: counted from the end
                        idx += len(arr)
                    value = arr[idx] if 0 <= idx < len(arr) else ()
                    present = 0 <= idx < len(arr)
                elif arr is None and self.is_set(name, st) is False:
                    value, present = (), False
                else:
                    return (Seg(f"${{{inner}}}", st.file, line, False, "runtime"),)
        else:
            if name == "BASH_SOURCE":
                value, present = text_of(st.source_text or st.file, st.file, line), True
            else:
                value = self.lookup(name, st, line)
                # whether it is set matters only to an operator (`lookup` recorded the read; a name
                # reference is followed again as before)
                present = self.is_set(name, st) if rest or st.refs else None
        if not rest:
            return value
        return self.operate(value, rest, st, line, present, name=name)

    def elements(self, items: list[Text], rest: str, st: State, line: int, zero: Text | None = None) -> list[Text]:
        """`${A[@]<op>}` / `${@<op>}`: a slice of the list (`zero`: $0, where `${@:0}` starts), a
        default for an empty one, else the operator on each element (verifier.shell.expansion)."""
        if not rest:
            return items
        op = expansion.operator(rest)
        if op.kind == "slice":
            start = self.arith(op.operand.strip() or "0", st, line)
            length = self.arith(op.other, st, line) if op.other is not None else None
            if start is None or (op.other is not None and length is None):
                return [(Seg(f"${{@{rest}}}", st.file, line, False, "runtime"),)]
            pool = [zero, *items] if zero is not None else items
            bad = next((seg for item in pool for seg in item if not seg.known), None)
            if bad is not None:  # an element not known may stand for any number of them
                return [(Seg(f"${{@{rest}}}", bad.file, bad.line, False, bad.why or "runtime"),)]
            bounds = expansion.slice_bounds(len(pool), start, length)
            return pool[bounds[0]:bounds[1]] if bounds else []
        if op.kind == "default" and op.op != "?":
            if op.op == "+":
                return [self.expand_one(_operand(op.operand, line), st)] if items else []
            return items or [self.expand_one(_operand(op.operand, line), st)]
        return [self.operate(item, rest, st, line, True) for item in items]

    def separator(self, st: State) -> str:
        """What joins `"$*"` and `"${A[*]}"` (verifier.shell.expansion.separator)."""
        return expansion.separator(self.script_ifs(st))

    def operate(self, value: Text, rest: str, st: State, line: int, present: bool | None,
                name: str = "") -> Text:
        """`${NAME<op><operand>}` for the operators the reader knows (verifier.shell.expansion)."""
        file = st.file  # where an operator it cannot apply is (`_unknown_op`), as the expansion began
        op = expansion.operator(rest)
        if op.kind == "default":
            operand = self.expand_one(_operand(op.operand, line), st)
            if present is None or (op.colon and not is_known(value) and present is not False):
                if op.op in ("-", "=") and is_known(value) and value:
                    return value
                return _unknown_op(value, name, rest, file, line)
            empty = expansion.defaulted(op, present, plain(value))
            if op.op == "-":
                return operand if empty else value
            if op.op == "=":
                if empty and name and _NAME.match(name):
                    st.vars[name] = operand
                    st.unset.discard(name)
                return operand if empty else value
            if op.op == "+":
                return () if empty else operand
            return value
        if not is_known(value):
            return _unknown_op(value, name, rest, file, line)
        text = plain(value)
        if op.kind == "strip":
            pattern = self.pattern(_operand(op.operand, line), st)
            if pattern is None:
                return _unknown_op(value, name, rest, file, line)
            derived = self.derive(value, partial(_strip, pattern=pattern, op=op.op))
            if derived is not None:
                return derived
            self.decide(value)
            kept = strip_pattern(text, pattern, op.op)
            if op.op.startswith("#"):
                return slice_text(value, len(text) - len(kept))
            return slice_text(value, 0, len(kept))
        if op.kind == "replace":
            pattern = self.pattern(_operand(op.operand, line), st)
            if pattern is None:
                return _unknown_op(value, name, rest, file, line)
            replacement = plain(self.expand_one(_operand(op.other, line), st)) if op.other else ""
            self.decide(value, replacement)
            file, ln = origin(value)
            return text_of(replace_pattern(text, pattern, replacement, op.op), file, ln)
        if op.kind == "slice":
            self.decide(value)
            start = self.arith(op.operand.strip() or "0", st, line)
            length = self.arith(op.other, st, line) if op.other is not None else None
            if start is None or (op.other is not None and length is None):
                return _unknown_op(value, name, rest, file, line)
            bounds = expansion.slice_bounds(len(text), start, length)
            return slice_text(value, *bounds) if bounds else ()
        if op.kind in ("case", "transform"):
            done = expansion.convert_case(text, op.op) if op.kind == "case" else expansion.transform(text, op.op)
            if done is None:
                return _unknown_op(value, name, rest, file, line)
            self.decide(value)
            file, ln = origin(value)
            return text_of(done, file, ln)
        return _unknown_op(value, name, rest, file, line)

    def command_substitution(self, code: str, st: State, line: int) -> Text:
        unknown = (Seg(f"$({code.strip()[:200]})", st.file, line, False, "runtime"),)
        try:
            body = _parse(code, st.file, max(1, line))
        except ShellSyntaxError:
            return unknown
        sub = st.copy()
        saved_capture, saved_external = self.capture, self.external_in_capture
        self.capture = [*(saved_capture or []), []] if saved_capture is not None else [[]]
        self.external_in_capture = False
        saved_origin = self.origin_at
        if saved_origin is not None:
            base_file, base_line = st.file, line

            def inner_origin(_word: Word) -> tuple[str, int]:
                return base_file, base_line

            self.origin_at = inner_origin
        try:
            self.body(body, sub)
            out = self.capture[-1]
            external = self.external_in_capture
        except Stop:
            out, external = self.capture[-1], self.external_in_capture
        except _Return:
            out, external = self.capture[-1], self.external_in_capture
        finally:
            self.capture, self.external_in_capture = saved_capture, saved_external
            self.origin_at = saved_origin
        if external:
            return unknown
        text = concat(*out)  # each command's output, exactly as printed
        while text and text[-1].text.endswith("\n"):
            last = text[-1]
            stripped = last.text.rstrip("\n")
            text = text[:-1] + ((Seg(stripped, last.file, last.line, last.known),) if stripped else ())
        return text

    def arith(self, expr: str, st: State, line: int | None) -> int | None:
        """The value of a bash arithmetic expression (verifier.shell.arith; None: it reads a value the
        reader does not know, or bash would fail). Assignments in it (`i++`, `n=2`) are followed."""
        if "$" in expr or "`" in expr:  # expansions first (`${#A[@]}`, `$(cmd)`), then bare names
            expanded = self.expand_one(_heredoc(expr, line or 0), st)
            self.decide(expanded)
            if not is_known(expanded):
                return None
            expr = plain(expanded)

        def lookup(name: str) -> str:
            value = self.lookup(name, st, line)
            self.decide(value)
            if not is_known(value):
                raise arith.ArithUnknown(name)
            return plain(value)

        def assign(name: str, value: int) -> None:
            st.vars[name] = text_of(str(value), st.file, line)
            st.arrays.pop(name, None)
            st.unset.discard(name)
            st.unresolved.pop(name, None)

        try:
            return arith.evaluate(expr, lookup, assign)
        except (arith.ArithUnknown, arith.ArithError, ValueError, ZeroDivisionError, RecursionError, OverflowError):
            return None

    # ------------------------------------------------------------------ tests

    def double_test(self, words: Sequence[Word], st: State, line: int) -> bool | None:
        """`[[ ... ]]` (verifier.shell.conditions; None: undecidable, `cond_why` says why).

        With stand-ins its outcome is only a branch taken: when its operands hold stand-ins it is a
        check (`check`), evaluated again with the values by `_replay_double` from the operands,
        patterns and tree answers recorded here (which `[[ ]]` asks in an order its words alone set;
        a stand-in read as a number or a variable name decides instead)."""
        if not self.marks:
            return eval_double(_Operands(self, st, line), words)
        ops = _Operands(self, st, line, record=True)
        outcome = eval_double(ops, words)
        values = tuple(ops.seen)
        if any("\x00" in seg.text for value in values for seg in value):
            self.check(values, partial(_replay_double, words=tuple(words), patterns=tuple(ops.patterns),
                                       answers=tuple(ops.answers)), outcome)
        return outcome

    def single_test(self, name: str, args: Sequence[Text], st: State, line: int) -> bool | None:
        """`[ ... ]` / `test ...` on expanded words (verifier.shell.conditions)."""
        ops = _Operands(self, st, line)
        return eval_bracket(ops, args) if name == "[" else eval_single(ops, args)

    def pattern(self, word: Word, st: State) -> Pattern | None:
        """The glob pattern a word stands for (`[[ x == <word> ]]`, a `case` pattern, the operand of
        `${X#<word>}`): quoted parts match literally (None: it holds a value the reader does not know)."""
        out: list[tuple[str, bool]] = []
        for part in word.parts:
            if part.kind == "lit":
                out.append((part.text, part.quoted))
                continue
            value = self.expand_one(Word((part,), word.line, word.raw, word.start), st)
            self.decide(value)
            if not is_known(value):
                return None
            out.append((plain(value), part.quoted))
        return tuple(out)

    # ------------------------------------------------------------------ stand-ins

    def stand_in(self, name: str, value: str) -> str:
        """A placeholder for the variable `name` of the starting environment, whose value is `value`
        (module docstring, Stand-ins): known text no script writes, holding no blank."""
        self.marks.append((name, None, None))
        self.actual.append(value)
        return f"\x00{len(self.marks) - 1}\x00"

    def with_values(self, text: Text) -> Text:
        """A Text with the values in place of its stand-ins."""
        if not any("\x00" in seg.text for seg in text):
            return text
        return tuple(Seg(_MARK.sub(lambda m: self.actual[int(m.group(1))], seg.text), seg.file, seg.line, seg.known,
                         seg.why, seg.many) for seg in text)

    def decide(self, *texts: Text | str | None) -> None:
        """Record the stand-ins in values whose characters decide something (`decided`)."""
        if not self.marks:
            return
        names: set[str] = set()
        for value in texts:
            text = value if isinstance(value, str) else plain(value) if value else ""
            if "\x00" not in text:
                continue
            found = [int(m.group(1)) for m in _MARK.finditer(text)]
            if text.count("\x00") != 2 * len(found) or any(i >= len(self.marks) for i in found):
                self.undecidable()  # a cut stand-in: which variable it was is not known
            names.update(self.marks[i][0] for i in found)
        if names:
            self.decided |= names
            # the run goes on no further: from here it may differ from the run with the values, and
            # it must ask its loader nothing that run would not
            raise Decided(names)

    def undecidable(self) -> None:
        """A stand-in may decide something, and which is not known: every stand-in counts as decided."""
        self.decided_all = True
        raise Decided(set())

    def derive(self, value: Text, how: Callable[[str], str]) -> Text | None:
        """A derived stand-in for `how` applied to a value that is one whole stand-in (None: it is not)."""
        if not self.marks or len(value) != 1:
            return None
        m = _MARK.fullmatch(value[0].text)
        if m is None or int(m.group(1)) >= len(self.marks):
            return None
        base = int(m.group(1))
        derived = how(self.actual[base])
        if not may_stand_in(derived):
            self.decide(value)  # this value's result could not take a stand-in's place
        self.marks.append((self.marks[base][0], base, how))
        self.actual.append(derived)
        seg = value[0]
        return (Seg(f"\x00{len(self.marks) - 1}\x00", seg.file, seg.line, seg.known, seg.why, seg.many),)

    def decide_command(self, name: str | None, argv: list[Text], prefix: Mapping[str, Text], stdin: str | None,
                       node: Simple, st: State) -> None:
        """The stand-ins a simple command's course depends on (module docstring, Stand-ins)."""
        self.decide(argv[0])  # which command it is
        generated = st.generated  # files the script wrote with known text
        if name in ("source", "."):
            # the file's path is compared with the files written before (`fetched`, `written`)
            self.decide(*self.fetched, *(part for key in self.written for part in key if isinstance(part, str)))
        if generated and _writes_file(node):
            self.decide_targets(node, st)  # where it writes is compared with the generated files
        if name in _DECLARERS:
            if any(plain(a).startswith("-") and "n" in plain(a) for a in argv[1:]):
                self.undecidable()  # a name reference's target: not traced to a variable
            for a in argv[1:]:
                self.decide(plain(a).split("=", 1)[0])  # the names and options it declares
            return
        if name in ("source", "."):
            self.decide(*argv[1:2])  # the file read (its other words are only positional values)
            for gen in generated.values():
                self.decide(gen.text, gen.path)  # a generated file sourced: its text is parsed
            return
        builtin = name in _FOLLOWED or \
            (name in ("echo", "printf") and (self.capture is not None or _writes_file(node))) or \
            (name in ("seq", "dirname", "basename", "pwd") and self.capture is not None)
        if name in ("python3", "python") and (self.capture is not None and not self.redirected(node) or
                                              _writes_file(node)):
            # a data snippet the reader runs (its output kept or written to a file, `simple` and
            # `note_written`): its code and arguments decide it, and so does every variable of the
            # environment it reads (`snippet`); any other python3 is only recorded
            builtin = True
        if builtin and name not in st.funcs or name in _FOLLOWED:
            self.decide(*argv, *prefix.values(), stdin)
        elif name not in st.funcs:
            if self.stop_at is not None and (name not in _QUIET or self.capture is not None and
                                             name in ("ulimit", "umask", "type", "hash", "alias")):
                self.decide(*argv[:3])  # a recorded command: `stop_at` reads them (its name is decided above)
            if _too_many_to_name(generated, argv):
                self.undecidable()  # every generated file counts as named (`note_written`)
            for gen in generated.values():  # a command naming a generated file may have changed it
                self.decide(gen.path)
                for arg in argv[1:]:
                    if "\x00" in plain(arg):
                        self.check((arg,), partial(_names_file_of, path=gen.path))

    def decide_targets(self, node: Simple, st: State) -> None:
        """A command writing a file while the script holds generated files: whether its target is one
        of them (or a path the reader cannot tell apart from any) decides which stay known, so it is
        a test the caller re-checks with its values (`check`). The target is expanded again only when
        that cannot change anything (no command substitution, no assignment, no indirection); else
        every stand-in counts as decided."""
        generated = frozenset(st.generated)
        for r in node.redirects:
            raw = r.target.raw if r.target is not None else ""
            if r.target is None or r.op not in (">", ">>", ">|", "&>", "&>>", ">&") or is_number(raw) or raw == "-":
                continue
            if "$(" in raw or "`" in raw or "=" in raw or "${!" in raw:
                self.undecidable()
            target = self.expand_one(r.target, st)
            if "\x00" in plain(target):
                self.decide(st.cwd)
                self.check((target,), partial(_names_none, cwd=st.cwd))
                self.check((target,), partial(_names_one_of, cwd=st.cwd, keys=generated))

    def check(self, values: tuple[Text, ...], test: Callable[[tuple[Text, ...]], object],
              outcome: object = ...) -> None:
        """A test of values holding stand-ins whose outcome only steers the walk or what it keeps,
        kept with its outcome (`checks`; computed here unless given): a caller that puts values in
        place of the stand-ins re-checks it with them (the reading holds only if every outcome stays)."""
        outcome = test(values) if outcome is ... else outcome
        if test(tuple(self.with_values(v) for v in values)) != outcome:
            self.decide(*values)  # with the values it comes out otherwise: the walk would not go this way
        self.checks.append((values, test, outcome))

    def unknown_operand(self, *texts: Text) -> None:
        for text in texts:
            bad = blocking(text)
            if bad is not None:
                self.note(bad.why)
                return
        self.note("runtime")


class _Operands:
    """The trace's values (`Text`) as verifier.shell.conditions sees them; an operand that is not
    known notes why the condition is undecidable (`Reader.cond_why`)."""

    __slots__ = ("r", "st", "line", "record", "seen", "patterns", "answers")

    def __init__(self, reader: Reader, st: State, line: int, record: bool = False) -> None:
        self.r, self.st, self.line = reader, st, line
        # `[[ ]]` with stand-ins (Reader.double_test): the operands, patterns and answers, in order
        self.record = record
        self.seen: list[Text] = []
        self.patterns: list[Pattern | None] = []
        self.answers: list[object] = []

    def expand(self, word: Word, emptiness: bool) -> Text:
        value = self.r.expand_one(word, self.st)
        if self.record:
            self.seen.append(value)
        return value

    def pattern(self, word: Word) -> Pattern | None:
        found = self.r.pattern(word, self.st)
        if self.record:
            self.patterns.append(found)
        return found

    def lift(self, text: str) -> Text:
        return text_of(text)

    def known(self, value: Text) -> str | None:
        if not self.record:
            self.r.decide(value)  # `[`/`test` read operators from it: its characters decide
        return plain(value) if is_known(value) else None

    def nonempty(self, value: Text) -> bool | None:
        if any(seg.known and seg.text for seg in value):
            return True  # known characters: not empty, whatever the run-time part holds
        return plain(value) != "" if is_known(value) else None

    def unknown(self, *values: Text) -> None:
        self.r.unknown_operand(*values)

    def file_test(self, op: str, value: Text) -> bool | None:
        found = self.ask_file(op, value)
        self.answers.append(found)  # every file test has an answer: `_Replayed` takes them in order
        return found

    def ask_file(self, op: str, value: Text) -> bool | None:
        r = self.r  # a path it asks the loader about is the loader's to check (a stand-in in it)
        if op in _FILE_TESTS and r.file_test is not None and is_known(value):
            found = r.file_test(op, value, self.st)
            if found is None:
                r.note("runtime")
            return found
        if not is_known(value):
            r.unknown_operand(value)
        else:
            r.note("runtime")
        return None

    def is_set(self, name: str) -> bool | None:
        self.r.decide(name)  # the name of the variable asked about
        found = self.r.is_set(name, self.st)
        self.answers.append(found)
        return found

    def arith(self, text: str) -> int | None:
        self.r.decide(text)  # read as a number
        if "$" in text or "`" in text:  # an operand is not expanded again
            return None
        found = self.r.arith(text, self.st, self.line)
        self.answers.append(found)
        return found


class _Replayed:
    """The operands of a `[[ ]]` recorded with stand-ins, with values put in (`_replay_double`): the
    same expansions and patterns in the same order, the same answers of the tree and the state."""

    def __init__(self, values: tuple[Text, ...], patterns: tuple[Pattern | None, ...],
                 answers: tuple[object, ...]) -> None:
        self.values, self.patterns, self.answers = iter(values), iter(patterns), iter(answers)

    def expand(self, word: Word, emptiness: bool) -> Text:
        return next(self.values)

    def pattern(self, word: Word) -> Pattern | None:
        return next(self.patterns)

    def lift(self, text: str) -> Text:
        return text_of(text)

    def known(self, value: Text) -> str | None:
        return plain(value) if is_known(value) else None

    def nonempty(self, value: Text) -> bool | None:
        if any(seg.known and seg.text for seg in value):
            return True
        return plain(value) != "" if is_known(value) else None

    def unknown(self, *values: Text) -> None:
        return None

    def file_test(self, op: str, value: Text) -> bool | None:
        return next(self.answers)  # type: ignore[return-value]

    def is_set(self, name: str) -> bool | None:
        return next(self.answers)  # type: ignore[return-value]

    def arith(self, text: str) -> int | None:
        return next(self.answers)  # type: ignore[return-value]


# commands that read a file they are given (or only set variables): naming a generated file does not change it
_READS_FILES = frozenset({"source", ".", "cat", "echo", "printf", "[", "test", "head", "tail", "grep", "wc",
                          "ls", "stat", "diff", "cmp"}) | _DECLARERS


def _origins(source: str, owners: Sequence[Seg], file: str, line: int) -> Callable[[Word], tuple[str, int] | None]:
    """Where each word of a text read as code (`eval`, a sourced generated file) came from: the file
    and line of its first character (past a quote), else the given file and line."""
    def where(word: Word) -> tuple[str, int] | None:
        i = word.start
        while i < len(source) - 1 and source[i] in "\"'":  # a quoted value: its first character
            i += 1
        if 0 <= i < len(owners):
            seg = owners[i]
            return seg.file or file, seg.line or line
        return file, line

    return where


def _file_key(path: Text, cwd: Text) -> tuple[object, ...] | None:
    """What identifies the file a path names, for generated files (`Reader.note_written`): a known
    path is its normal absolute form (None when it is relative to an unknown directory); a path that
    holds run-time values (`$(mktemp)`) is identified by those very values (the segments, by
    identity, that one `$(...)` or unset variable produced, wherever a variable copied them) with its
    known text and, unless it starts with a known `/`, the directory it is relative to. Two paths with
    equal keys name the same file; different run-time values are never taken to be equal."""
    text = plain(path)
    if not text:
        return None
    if is_known(path):
        if not text.startswith("/"):
            if not cwd or not is_known(cwd) or not plain(cwd).startswith("/"):
                return None
            text = posixpath.join(plain(cwd), text)
        return ("path", posixpath.normpath(text))

    def values(value: Text) -> tuple[object, ...]:
        out: list[object] = []
        for seg in value:
            if not seg.known:
                out.append(id(seg))  # the generated entry keeps the segment alive: the id stays its own
            elif out and isinstance(out[-1], str):
                out[-1] = out[-1] + seg.text
            else:
                out.append(seg.text)
        return tuple(out)

    base = () if path[0].known and text.startswith("/") else ("cwd", *values(cwd))
    return ("value", *base, "path", *values(path))


def _too_many_to_name(generated: Mapping[tuple[object, ...], Generated], argv: Sequence[Text]) -> bool:
    """Whether a command has more (generated file, argument) pairs than `_names_file` is asked of one
    by one (MAX_NAMING_PAIRS): every generated file then counts as named by it."""
    return len(generated) * (len(argv) - 1) > MAX_NAMING_PAIRS


def _names_file(arg: Text, path: Text) -> bool:
    """Whether a command argument may name the file at `path` (a generated file): it holds one of the
    run-time values the path was built from, or the path's last component."""
    unknown = [seg for seg in path if not seg.known]
    if unknown:
        return any(seg is u for seg in arg for u in unknown)
    base = posixpath.basename(plain(path).rstrip("/"))
    return bool(base) and base in plain(arg)


def _strip(text: str, pattern: Pattern, op: str) -> str:
    """`${X<op>pattern}` of a text (a derived stand-in's value, `Reader.derive`)."""
    return strip_pattern(text, pattern, op)


def _names_none(paths: tuple[Text, ...], cwd: Text) -> bool:
    """Whether a written path is one the reader cannot tell apart from any other (`_file_key`)."""
    return _file_key(paths[0], cwd) is None


def _names_one_of(paths: tuple[Text, ...], cwd: Text, keys: frozenset[tuple[object, ...]]) -> bool:
    """Whether a written path names one of these generated files (`_file_key`)."""
    return _file_key(paths[0], cwd) in keys


def _names_file_of(args: tuple[Text, ...], path: Text) -> bool:
    """`_names_file` of one argument (a check, `Reader.check`)."""
    return _names_file(args[0], path)


def _holds_any(values: tuple[Text, ...], chars: str) -> bool:
    """Whether a value holds any of these characters (`Reader.split`)."""
    text = plain(values[0])
    return any(c in text for c in chars)


def _makes_pattern(values: tuple[Text, ...]) -> bool:
    """Whether a field of an unquoted expansion is a pathname pattern (`Reader.globs`)."""
    return expansion.may_glob(plain(values[0]))


def _replay_double(values: tuple[Text, ...], words: tuple[Word, ...], patterns: tuple[Pattern | None, ...],
                   answers: tuple[object, ...]) -> bool | None:
    """A `[[ ]]` evaluated again with other operand values (`Reader.double_test`)."""
    return eval_double(_Replayed(values, patterns, answers), words)


_ASSIGNING = frozenset({"read", "readarray", "mapfile", "printf", "declare", "typeset", "local", "export", "readonly",
                        "let", "unset", "getopts"})
_ARITH_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _why_unknown(text: Text | None) -> str:
    """Why a value is not known: its first unknown segment's reason (`runtime` for none: standard
    input, a pipe)."""
    return next((seg.why for seg in text or () if not seg.known), "runtime")


def _left_by_subshell(st: State, sub: State) -> None:
    """What a subshell (`sub`, a copy of `st`) leaves behind: the files it wrote stay written, and
    text it evaluated without reading taints what follows; what it assigned stays in it."""
    st.generated = sub.generated
    st.taint = st.taint or sub.taint


def _positional_unknown(st: State) -> bool:
    """Whether the positional parameters are the one unknown value `Reader.loop_not_run` leaves."""
    return len(st.positional) == 1 and len(st.positional[0]) == 1 and not st.positional[0][0].known \
        and st.positional[0][0].text == "$@"


def _loop_assigned(node: While | ArithFor | For, funcs: Names[tuple[Command, str]]) -> tuple[set[str], bool, bool]:
    """The names a loop may assign when it runs, whether it may change directory, and whether it
    may change the positional parameters (`shift`, `set --`): an over-approximation from its text
    (assignments, loop variables, names an assigning builtin or arithmetic names) and from the
    text of the functions it calls, transitively."""
    names: set[str] = set()
    moves = shifts = False
    called: set[str] = set()
    todo: list[object] = [node]
    while todo:
        for item in iter_nodes(todo.pop()):
            if isinstance(item, Simple):
                names.update(a.name for a in item.assigns)
                head = item.words[0].unquoted_literal if item.words else None
                if head in _ASSIGNING:
                    for word in item.words[1:]:
                        text = (word.unquoted_literal or "").split("=", 1)[0].removesuffix("+")
                        if _NAME.fullmatch(text):
                            names.add(text)
                elif head in ("cd", "pushd", "popd"):
                    moves = True
                elif head == "shift" or (head == "set" and any(
                        not (w.unquoted_literal or "-").startswith(("-", "+")) or w.unquoted_literal == "--"
                        for w in item.words[1:])):
                    shifts = True
                elif head is not None and head in funcs and head not in called:
                    called.add(head)
                    todo.append(funcs[head][0])
            elif isinstance(item, For):
                names.add(item.name)
            elif isinstance(item, ArithFor):
                names.update(_ARITH_NAME.findall(f"{item.init};{item.cond};{item.step}"))
            elif isinstance(item, Arith):
                names.update(_ARITH_NAME.findall(item.expr))
    return names, moves, shifts


def _writes_file(node: Simple) -> bool:
    """Whether a command writes its output to a file (not only to another descriptor, `>&2`)."""
    return any(r.op in (">", ">>", ">|", "&>", "&>>") or (r.op == ">&" and r.target is not None and
                                                        not is_number(r.target.raw) and r.target.raw != "-")
               for r in node.redirects)


class _Observed(Mapping[str, str]):
    """The environment a python3 snippet sees (`os.environ`): every variable it looks up is recorded
    as read (`seen`) with the answer it got (`asked`: its value, None when absent), and listing it
    (`items()`) reads every exported variable (`listed`).

    What a listing gave is followed further for reusing the run (`Reader.snippet_again`): the
    snippet reads a listed value's characters (`looked`: its value) or only whether it is an
    integer (`shapes`: `int()` of it, whose number it never reads); it depends on the listed names
    and on those answers alone (verifier.shell.pysnippet `_EnvStr`)."""

    def __init__(self, env: dict[str, str], exported: set[str]) -> None:
        self._env, self._exported = env, exported
        self.seen: set[str] = set()
        self.asked: dict[str, str | None] = {}
        self.listed = False
        self.looked: dict[str, str | None] = {}
        self.shapes: dict[str, bool] = {}

    def listing(self) -> list[tuple[str, str]]:
        """`os.environ.items()` (pysnippet `Interp.environ_items`): the names and values, every
        exported variable read as by a listing, the values followed (`full`, `shape`)."""
        self._list()
        return list(self._env.items())

    def full(self, name: str) -> None:
        """The snippet read the characters of a listed value."""
        self.looked.setdefault(name, self._env.get(name))

    def shape(self, name: str, is_int: bool) -> None:
        """The snippet asked whether a listed value is an integer."""
        self.shapes.setdefault(name, is_int)

    def listing_key(self) -> tuple[tuple[str, ...], tuple[tuple[str, str | None], ...], tuple[tuple[str, bool], ...]]:
        """What a run that listed the environment depends on from the listing (`_SnippetRun.listed`)."""
        return tuple(self._env), tuple(self.looked.items()), tuple(self.shapes.items())

    def __getitem__(self, key: str) -> str:
        self.seen.add(key)
        self.asked.setdefault(key, self._env.get(key))
        return self._env[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.seen.add(key)
            self.asked.setdefault(key, self._env.get(key))
        return key in self._env

    def __iter__(self) -> Iterator[str]:
        self._list()
        return iter(self._env)

    def __len__(self) -> int:
        self._list()
        return len(self._env)

    def _list(self) -> None:
        """The snippet lists the environment: every exported variable is read."""
        self.seen.update(self._exported)
        self.listed = True


@dataclass(frozen=True)
class _SnippetRun:
    """One run of a python3 data snippet (`Reader.snippet`): the answers it got (each environment
    variable it looked up, the whole environment when it listed it, each YAML file it loaded: path and
    what the loader returned) and what it printed (or why it is not read)."""

    env: tuple[tuple[str, str | None], ...]
    # a listing's names, the listed values whose characters it read, and those it only asked
    # whether they are integers (`_Observed.listing_key`)
    listed: tuple[tuple[str, ...], tuple[tuple[str, str | None], ...], tuple[tuple[str, bool], ...]] | None
    loads: tuple[tuple[str, tuple[str, str] | None], ...]
    seen: frozenset[str]
    out: Text | None
    error: str | None


def _same_listing(listed: tuple[tuple[str, ...], tuple[tuple[str, str | None], ...], tuple[tuple[str, bool], ...]],
                  values: Mapping[str, str]) -> bool:
    """Whether listing `values` answers a snippet run's listing alike (`_Observed.listing_key`): the
    same names in the same order, the same values where it read them, the same integers-or-not
    where it asked only that."""
    names, looked, shapes = listed
    if len(names) != len(values) or tuple(values) != names:
        return False
    if any(values.get(name) != value for name, value in looked):
        return False
    return all(_is_int(values[name]) == is_int for name, is_int in shapes)


def _is_int(value: str) -> bool:
    """Whether Python's `int()` takes the text (what a snippet's `int(v)` of a listed value asks)."""
    try:
        int(value)
    except ValueError:
        return False
    return True


# runs of data snippets by code, file and line (`Reader.snippet_again`): every point of a launch
# chain runs the same snippets, mostly with the same answers
_SNIPPET_RUNS: OrderedDict[tuple[str, str, int], list[_SnippetRun]] = OrderedDict()
MAX_SNIPPETS = 128
MAX_SNIPPET_RUNS = 64
processcache.register("shell.snippet-runs", _SNIPPET_RUNS.clear)
_AFRESH: list[bool] = []  # `snippets_afresh` is open


@contextlib.contextmanager
def snippets_afresh() -> Iterator[None]:
    """Every python3 snippet read while open is run, none reused from an earlier run
    (verifier.launch.sharing makes a reading the long way)."""
    _AFRESH.append(True)
    try:
        yield
    finally:
        _AFRESH.pop()


@lru_cache(maxsize=64)
def _yaml_doc(path: str, text: str) -> tuple[object, dict[tuple[object, ...], int]] | None:
    """(data, lines) of a YAML file a snippet loads (None: unreadable), parsed once per path and text
    (the snippet reader copies the data it is given, so the parsed document is never changed)."""
    from verifier.core.yaml11 import parse_yaml11

    try:
        doc = parse_yaml11(text, path)
    except Exception:  # an unreadable YAML file: the snippet is not followed
        return None
    return doc.data, dict(doc.lines)


def _parse(text: str, path: str, first_line: int = 1) -> Body:
    """The statements of a script (verifier.shell.parser); too deep a nesting is a syntax error."""
    try:
        return parse(text, path, first_line).body
    except RecursionError:
        raise ShellSyntaxError("the script nests too deeply to read", None) from None


def _unknown_op(value: Text, name: str, rest: str, file: str, line: int) -> Text:
    """What `Reader.operate` gives for an operator it cannot apply: the expansion's source text, at the
    value's first segment the reader could not establish (else at the expansion); made only when given."""
    bad = blocking(value)
    return (Seg(f"${{{name}{rest}}}", bad.file if bad else file, bad.line if bad else line, False,
                bad.why if bad else "runtime"),)


def _common_prefix(values: list[Text], tail: Text) -> Text:
    """What branches agree on: the longest common known prefix, then `tail` (the unknown rest)."""
    def known_lead(value: Text) -> Text:
        out: list[Seg] = []
        for seg in value:
            if not seg.known:
                break
            out.append(seg)
        return tuple(out)

    values = [known_lead(v) for v in values]
    texts = [plain(v) for v in values]
    if not texts:
        return tail
    n = 0
    shortest = min(len(t) for t in texts)
    while n < shortest and all(t[n] == texts[0][n] for t in texts):
        n += 1
    if n == 0:
        return tail
    return concat(slice_text(values[0], 0, n), tail)
