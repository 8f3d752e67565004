"""Static evaluation of the bash scripts InferenceX launches servers with (never executes anything).

`evaluate(text, path, env, options)` parses a script (verifier.shell.parser) and walks it over
*worlds* (verifier.shell.evaluator: one world per way through the script that the evaluator
cannot rule out statically) from a starting environment. It returns one `WorldResult` per distinct
outcome: the assumptions that lead there and what the world started (`ServerStart` in `server`
mode, the benchmark script a runner starts in `child` mode). Each server argument and environment
variable keeps the file and line that wrote it; run-time values (command output the evaluator does
not model) stay opaque, values it lost track of are `Unknown` naming the construct and its line.

Rule for undecidable conditions: a condition on something the harness fixes for the point (a
variable the workflow, the matrix or the runner sets) is decided with the real value. A condition
on something only the machine knows (a file on the node, a command's exit status, a machine
variable) splits the world; if every world starts the same server, the launch is resolved; if the
worlds differ, each distinct server start is a launch of its own, labelled with the branches that
lead to it. At most `Options.max_worlds` worlds are followed at once (equal worlds merge first).

Nothing is dropped: a construct the reader does not model raises `ShellLimit` naming its file, line
and construct, which the launch layer turns into an unresolved launch (a process-substituted
`source <(...)`, a file the script fetches (`curl -o`, `wget`, `git clone`) or writes at run time and
then sources, `eval` of a command's output or of text it lost track of, a name reference it cannot
follow). `declare -n` / `local -n` / `typeset -n` name references are followed (reads and writes go
to the variable they name). Limits fail closed the same way: call depth (`MAX_CALL_DEPTH`), source
depth, steps (`MAX_STEPS`) and worlds. Cost is linear in the script (tests/shell/test_growth.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from verifier.core import processcache
from verifier.shell.derived import TOKEN, TOKEN_PREFIX, Derivation, compared_names
from verifier.shell.evaluator import Evaluator, KeepEverything
from verifier.shell.launchers import Commands, Program, Wrapper
from verifier.shell.lexer import ShellSyntaxError
from verifier.shell.nodes import Script
from verifier.shell.options import Options, ShellLimit
from verifier.shell.parser import parse
from verifier.shell.unmodelled import startup_file
from verifier.shell.values import Loc, Opaque, Pattern, Unknown, Val, shown
from verifier.shell.world import Assumption, Binding, Found, GenFile, Placed, World

__all__ = [
    "Assumption", "ChildStart", "Commands", "Evaluation", "GenFile", "Loc", "Opaque", "Options", "Program",
    "ServerStart", "ShellLimit", "ShellSyntaxError", "Unknown", "Val", "WorldResult", "Wrapper", "evaluate", "parse",
]


@dataclass(frozen=True)
class ServerStart:
    """A server command a world runs: launcher words, arguments and environment with origins."""

    engine: str
    module: str
    launcher: tuple[str, ...]  # the wrapper and launcher words before the server's arguments
    argv: tuple[Val, ...]
    argv_locs: tuple[Loc, ...]
    env: tuple[tuple[str, Val, Loc], ...]
    loc: Loc
    files: Mapping[str, GenFile] = field(default_factory=dict)
    # arguments that are a starting variable's number with literal text around it (`Placed.field`:
    # the index in argv): the evaluation holds for any number there (verifier.shell.memo)
    templated: tuple[Placed, ...] = ()
    # lines of generated files (`files`) that hold derived numbers (verifier.shell.derived, written by
    # `cat <<EOF > FILE`): (path, line index, the line's text and derivations in order), the number of
    # each put in for another environment (verifier.shell.memo)
    file_templated: tuple[tuple[str, int, tuple[str | Derivation, ...]], ...] = ()

    def signature(self) -> tuple[object, ...]:
        """What makes two server starts the same (values, not origins)."""
        return (self.engine, self.module, self.launcher, self.argv, tuple((n, v) for n, v, _ in self.env),
                tuple(sorted((p, f.lines) for p, f in self.files.items())))


@dataclass(frozen=True)
class ChildStart:
    """A repository script a runner starts, with the environment it passes and the working directory."""

    path: Val
    args: tuple[Val, ...]
    env: tuple[tuple[str, Val, Loc], ...]
    cwd: str
    loc: Loc


@dataclass(frozen=True)
class WorldResult:
    """One distinct outcome: its assumptions and what it started (None: it started nothing)."""

    assumptions: tuple[Assumption, ...]
    server: ServerStart | None
    child: ChildStart | None
    exit_loc: Loc | None


@dataclass
class Evaluation:
    """All outcomes of one script, and what the evaluation read."""

    results: list[WorldResult]
    reads: set[str]
    read_all: bool
    sourced: list[str]
    unread: dict[str, Loc]
    children: list[str]
    weak_reads: set[str] = field(default_factory=set)  # variables only tested for emptiness
    downloads: dict[str, str] = field(default_factory=dict)  # `hf download REPO --local-dir DIR`: DIR -> REPO
    # variables read only through prefix or suffix removals of literal patterns (`${X%%_*}`), not in
    # `reads`: name -> {(operator, pattern)} (verifier.shell.memo keys them by what the removals leave)
    derived_reads: dict[str, frozenset[tuple[str, Pattern]]] = field(default_factory=dict)
    # variables only placed as a server's argument words (`ServerStart.templated`), not in `reads`
    templated: frozenset[str] = frozenset()
    # `[[ $X op N ]]` / `[ $X op N ]` comparisons of variables not in `reads`: (X, its word's
    # index, op, N) (verifier.shell.conditions.compared_number gives another environment's outcome)
    compared: frozenset[tuple[str | Derivation, int, str, str]] = frozenset()


def _server(found: Found, ev: Evaluator) -> ServerStart:
    extra = dict(found.extra)
    start, argv_start = int(extra["start"]), int(extra["argv_start"])
    words = found.words
    files, file_templated = _placed_files(found.files, ev)
    return ServerStart(
        engine=str(extra["engine"]), module=str(extra["module"]),
        launcher=tuple(shown(v) for v, _ in words[:argv_start]),
        argv=tuple(v for v, _ in words[argv_start:]), argv_locs=tuple(lc for _, lc in words[argv_start:]),
        env=found.env, loc=found.loc, files=files, templated=extra.get("templated", ()),
        file_templated=file_templated,
    ) if start >= 0 else ServerStart("", "", (), (), (), (), found.loc)


def _placed_files(files: tuple[tuple[str, GenFile], ...], ev: Evaluator
                  ) -> tuple[dict[str, GenFile], tuple[tuple[str, int, tuple[str | Derivation, ...]], ...]]:
    """The generated files a server is handed, with the numbers in place of the tokens their lines
    hold, and where each token was (`ServerStart.file_templated`)."""
    out = dict(files)
    if not ev.derived:
        return out, ()
    placed: list[tuple[str, int, tuple[str | Derivation, ...]]] = []
    for path, gen in files:
        if gen.lines is None or not any(TOKEN_PREFIX in line for line, _ in gen.lines):
            continue
        lines = list(gen.lines)
        for k, (line, lc) in enumerate(lines):
            if TOKEN_PREFIX not in line:
                continue
            pieces: list[str | Derivation] = []
            text: list[str] = []  # the line with this evaluation's numbers
            at = 0
            for m in TOKEN.finditer(line):
                derivation, number = ev.derived[m.group(0)]
                pieces += [line[at:m.start()], derivation]
                text += [line[at:m.start()], number]
                at = m.end()
            pieces.append(line[at:])
            text.append(line[at:])
            placed.append((path, k, tuple(pieces)))
            lines[k] = ("".join(text), lc)
        out[path] = GenFile(tuple(lines), gen.loc)
    return out, tuple(placed)


def _child(found: Found) -> ChildStart:
    k = int(dict(found.extra)["script"])
    return ChildStart(found.words[k][0], tuple(v for v, _ in found.words[k + 1:]), found.env, found.cwd, found.loc)


def _result(w: World, mode: str, ev: Evaluator) -> WorldResult:
    if mode == "server":
        _one_server(w)
    server = child = None
    for f in reversed(w.found):
        if f.kind == "server" and mode == "server":
            server = _server(f, ev)
            break
        if f.kind == "child" and mode == "child":
            child = _child(f)
            break
    exit_loc = w.exit_loc if w.flow is not None and w.flow[0] == "exit" else None
    return WorldResult(w.assume, server, child, exit_loc)


def _one_server(w: World) -> None:
    """A run that starts two different servers (a `bash -c` in the background, then the server line)
    is not one launch: the outcome keeps one server start, so which one serves the benchmark would be
    a guess. The same start made again (a retry loop) is one."""
    starts = list(dict.fromkeys((f.loc, tuple(v for v, _ in f.words)) for f in w.found if f.kind == "server"))
    if len(starts) > 1:
        first, second = starts[:2]
        raise ShellLimit(f"the run starts more than one server ({first[0][0]}:{first[0][1]} and "
                         f"{second[0][0]}:{second[0][1]}): which one serves the benchmark is not known statically",
                         second[0])


def _no_token(results: list[WorldResult]) -> None:
    """Fail closed should a derived token (verifier.shell.derived) reach an outcome: every use of a
    variable puts its number back, so one that reached a server or child start is a use the
    evaluator missed, and the outcome would hold a placeholder."""
    for result in results:
        for start in (result.server, result.child):
            if start is None:
                continue
            values = [*(start.argv if isinstance(start, ServerStart) else (start.path, *start.args)),
                      *(v for _, v, _ in start.env)]
            if isinstance(start, ServerStart):
                values += [line for gen in start.files.values() for line, _ in gen.lines or ()]
            if any(isinstance(v, str) and TOKEN_PREFIX in v for v in values):
                raise ShellLimit("a number the evaluator held symbolic reached a started command unread "
                                 "(an evaluator defect: the launch is not resolved)", start.loc)


_PARSED: dict[tuple[str, str], Script | ShellSyntaxError] = {}
_PARSED_MAX = 128
_PARSED_TEXT_MAX = 1 << 20
processcache.register("shell.main-scripts", _PARSED.clear)


def _parsed(text: str, path: str) -> Script:
    """The syntax tree of a main script, parsed once per (text, path).

    Points of a config evaluate the same script many times; sharing one tree makes every
    evaluation of it see the same nodes, as a single evaluation does (checkpoint resumes included),
    and lets the evaluator's per-tree caches (liveness, "can still launch") hit across evaluations.
    Trees are immutable (frozen dataclasses)."""
    key = (text, path)
    got = _PARSED.get(key)
    if got is None:
        try:
            got = parse(text, path)
        except RecursionError:
            got = ShellSyntaxError("the script nests too deeply to read", None)
        except ShellSyntaxError as exc:
            got = exc
        if len(text) <= _PARSED_TEXT_MAX:  # a huge (hostile) text is not kept
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.pop(next(iter(_PARSED)))
            _PARSED[key] = got
    if isinstance(got, ShellSyntaxError):
        raise ShellSyntaxError(got.message, got.line)
    return got


def evaluate(text: str, path: str, env: Mapping[str, Binding | str], options: Options | None = None,
             arg0: str | None = None, args: tuple[str, ...] = ()) -> Evaluation:
    """Evaluate a script statically (see the module docstring). Raises `ShellSyntaxError` when the
    script is outside the bash subset and `ShellLimit` when it is too large or branchy to follow."""
    options = options or Options()
    script = _parsed(text, path)
    start: dict[str, Binding] = {name: (value, ("", 0)) if isinstance(value, str) else value
                                 for name, value in env.items()}
    startup = start.get("BASH_ENV")
    if startup is not None:
        why = startup_file(startup[0] if isinstance(startup[0], str) else None)
        if why is not None:
            raise ShellLimit(why, startup[1] if startup[1][0] else (path, 0))
    accesses = None if options.accesses is None else list(options.accesses)
    ev = Evaluator(options)
    try:
        try:
            worlds = ev.run(script, start, arg0 if arg0 is not None else path, args)
        except KeepEverything:
            # text the first run had not seen read a variable it forgot: again, forgetting nothing,
            # from the start (no checkpoint: those kept worlds are the ones that forgot it)
            options.checkpoints = None
            options.accesses = accesses
            ev = Evaluator(options)
            ev.drops = False
            worlds = ev.run(script, start, arg0 if arg0 is not None else path, args)
    except RecursionError as exc:
        raise ShellLimit("the script nests too deeply to follow", (path, 0)) from exc
    results = [_result(w, options.mode, ev) for w in worlds]
    if ev.derived:
        _no_token(results)
    return Evaluation(results, ev.reads, ev.read_all, ev.sourced, ev.unread,
                      ev.children, ev.weak_reads - ev.reads, dict(ev.downloads),
                      {name: frozenset(specs) for name, specs in ev.derived_reads.items() if name not in ev.reads},
                      frozenset(ev.placed_words - ev.reads),
                      frozenset(c for c in ev.compared if not ev.reads.issuperset(compared_names(c))))
