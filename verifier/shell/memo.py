"""Reusing an evaluation for another starting environment that agrees on everything it read.

Points of one config key differ in a few variables (CONC, TP, ...). An evaluation records which
variables of its starting environment it read (`Evaluation.reads`); another environment that
gives those variables the same values yields the same outcomes, except for variables the script
merely passes through to a command's environment, which are taken from the new environment. A
variable whose place (where the environment set it) the outcomes name, a server word's origin, is
compared with its place too (`_origins`).

With `Memo.verify` (tests; the replay of history) every evaluation a caller gets is compared with
one made from the start (verifier.launch.harness.shared_evaluate).

A variable whose number a server start takes in an argument word of the variable and literal text
(`--max-num-seqs $CONC`, `--tp=$TP`), and that nothing else reads (`Evaluation.templated`,
verifier.shell.builtins.placed_word), is compared only by whether it holds a number: the reused
evaluation gets the new environment's number in those words (`ServerStart.templated`), as the
evaluation from the new environment would have it. One that a test only compared with a literal
(`[[ $CONC -ge 16 ]]`, `Evaluation.compared`) is compared by the outcome of that comparison.

A number the script computes from such numbers alone (`BS=$CONC`, `MAX=$((2 * CONC / TP))`) is
held as a derived number (verifier.shell.derived): a server word of it places the numbers it came
from, which are then compared by whether they are numbers and whether the derivation gives a number
for them (`_numbers`), and the reused evaluation gets the derivation's number in the word; a
comparison of it with a literal is compared by its outcome, as above.

A variable read only to test whether it is empty (`weak_reads`) is compared by that alone, and one
read only through removals of literal patterns (`derived_reads`: a runner's
`${EXP_NAME%%_*}`, the model prefix of an experiment name that differs for every point) by what
the removals leave of it (`derived_value`), with the place it was set.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from verifier.shell import ChildStart, Evaluation, ServerStart, WorldResult
from verifier.shell.builtins import UNCAPTURED, placeable
from verifier.shell.conditions import compared_number
from verifier.shell.derived import Derivation, compared_names
from verifier.shell.nodes import Script
from verifier.shell.values import Loc, Opaque, Pattern, Unknown, Val, strip_pattern
from verifier.shell.world import NO_LOC, GenFile, World, bindings_held

Binding = tuple[Val, Loc]
_Frozen = TypeVar("_Frozen")  # a frozen dataclass without slots
# Entries kept per script key. On the largest real PRs (#2263, #2096) 32 judge in the same CPU time
# as 256 (within noise), while 256 kept ~90 MB more worlds and environments alive until the verdict
# ended (peak RSS 437 -> 282 MiB with the rest of the memory work; 16 saves another ~16 MiB for ~5% CPU).
MAX_ENTRIES = 32
# What the checkpoints of one verdict hold at most, in bindings and names (`_weight`): past it, the
# point resumed or made longest ago is forgotten, whatever its script (a later evaluation then
# resumes earlier, with the same outcome). The largest real PR holds 213,846 (#2263; #1571 145,266),
# while a PR of many large scripts grew without bound: 20 configs each started by its own 100 KiB
# script peaked at 529 MiB, 368 MiB with this bound (benchmarks/many_scripts.py).
MAX_WEIGHT = 500_000
# The characters of the syntax trees the remembered points hold (their states' scripts, each counted
# once: `Checkpoints._hold`): past it, points are forgotten as past MAX_WEIGHT. The largest real PRs
# hold 566,497 (#2263) and 536,632 (#1571); a PR that brings many large scripts held every script's
# tree (the process caches, emptied past verifier.shell.parser.MAX_PARSED_TEXT, then kept none).
MAX_TREE_CHARS = 1_000_000
WARMUP = 2  # evaluations of a script that keep the worlds before every statement
EVICT_GROUP = 4  # Checkpoints: the deepest of this many least recently used points is forgotten first


class _Rebinder:
    """Started commands' environments from one starting environment (`old`) as seen from another
    (`new`): an entry still equal to `old`'s binding was passed through unchanged and becomes
    `new`'s (dropped when `new` lacks it), and `new`'s variables absent from `old` are added.

    Only the names `old` and `new` bind differently (`changed`) can change an entry (where they
    agree, the replacement is the entry itself): they are found once per evaluation, not once per
    environment of each of its results."""

    def __init__(self, old: Mapping[str, Binding], new: Mapping[str, Binding]) -> None:
        self.old, self.new = old, new
        self.changed = {name for name, binding in old.items() if new.get(name) != binding}
        # points of a config bind the same names: then nothing is extra (a key test at C speed)
        self.extra = [] if new.keys() <= old.keys() else [(name, binding) for name, binding in new.items()
                                                          if name not in old]

    def env(self, env_items: tuple[tuple[str, Val, Loc], ...]) -> tuple[tuple[str, Val, Loc], ...]:
        if not self.changed and not self.extra:
            return env_items
        old, new, changed = self.old, self.new, self.changed
        out: list[tuple[str, Val, Loc]] = []
        for item in env_items:
            name = item[0]
            if name in changed:
                before = old[name]
                if before[0] == item[1] and before[1] == item[2]:  # passed through unchanged
                    now = new.get(name)
                    if now is not None:
                        out.append((name, now[0], now[1]))
                    continue
            out.append(item)
        if self.extra:  # passed through, but absent from the first environment
            have = {item[0] for item in env_items}
            out.extend((name, binding[0], binding[1]) for name, binding in self.extra if name not in have)
        return tuple(out)

    def result(self, result: WorldResult) -> WorldResult:
        server: ServerStart | None = result.server
        child: ChildStart | None = result.child
        if server is not None:
            env = self.env(server.env)
            if env is not server.env:
                server = _copy_with(server, env=env)
        if child is not None:
            env = self.env(child.env)
            if env is not child.env:
                child = _copy_with(child, env=env)
        if server is result.server and child is result.child:  # nothing passed through changed
            return result
        return _copy_with(result, server=server, child=child)


def _copy_with(obj: _Frozen, **changes: Any) -> _Frozen:
    """A copy of a frozen dataclass instance with some fields replaced, without `dataclasses.replace`'s
    walk over the class's fields and its call of `__init__` (these classes have no `__post_init__` and
    no slots): every field, however many the class gains, is copied from `obj`."""
    out = object.__new__(type(obj))
    out.__dict__.update(obj.__dict__)
    out.__dict__.update(changes)
    return out


Derived = tuple[tuple[str, tuple[tuple[str, Pattern], ...]], ...]  # (name, its removals), sorted


def _derived(reads: Mapping[str, frozenset[tuple[str, Pattern]] | set[tuple[str, Pattern]]],
             full: Container[str]) -> Derived:
    """The derived reads of an evaluation (`Evaluation.derived_reads`) but those of variables it also
    read whole (`full`), in a canonical order."""
    return tuple(sorted((name, tuple(sorted(specs))) for name, specs in reads.items() if name not in full))


def derived_value(binding: Binding | None, specs: tuple[tuple[str, Pattern], ...]) -> Any:
    """What an evaluation that read a variable only through these removals (`${X%%_*}`) saw of it:
    each removal's result and the place the value was set (the evaluator's result keeps it); a
    run-time or unknown value whole (the evaluator does not remove from it); None when unset."""
    if binding is None:
        return None
    value, where = binding
    if not isinstance(value, str):
        return value, where
    return tuple(strip_pattern(value, pattern, op) for op, pattern in specs), where


def _shape(result: Evaluation, env: Mapping[str, Binding]) -> tuple[Any, ...]:
    """What an evaluation read of its environment (`Memo._valuation`): the names read, the names only
    tested for emptiness, whether it read every variable, the names read only through removals, and
    the names read whose place (where `env` set them) its outcomes name (`_origins`)."""
    origins = _origins(result)
    return (tuple(sorted(result.reads)), tuple(sorted(result.weak_reads)), result.read_all,
            _derived(result.derived_reads, result.reads),
            tuple(sorted(n for n in result.reads if n in env and env[n][1] in origins)),
            tuple(sorted(result.templated)), tuple(sorted(result.compared, key=repr)), _numbers(result))


def _numbers(result: Evaluation) -> tuple[Derivation, ...]:
    """The derived numbers (verifier.shell.derived) the evaluation's server starts place: another
    environment shares the evaluation only where each is a number too."""
    found = {word.derivation for r in result.results if r.server is not None for word in r.server.templated
             if word.derivation is not None}
    found.update(piece for r in result.results if r.server is not None for _, _, pieces in r.server.file_templated
                 for piece in pieces if isinstance(piece, Derivation))
    return tuple(sorted(found))


def _origins(result: Evaluation) -> set[Loc]:
    """The places an evaluation's outcomes name as where a value was written: a server word's origin,
    the place a run-time value carries. (An environment entry's place is its variable's: a memo hit
    takes passed-through entries from the new environment, `_Rebinder`.)"""
    out: set[Loc] = set()
    for r in result.results:
        for start in (r.server, r.child):
            if start is None:
                continue
            if isinstance(start, ServerStart):
                out.update(start.argv_locs)
                values: tuple[Val, ...] = start.argv
            else:
                values = (start.path, *start.args)
            for value in (*values, *(item[1] for item in start.env)):
                if isinstance(value, (Opaque, Unknown)):
                    out.add(value.loc)
    return out


def same_outcomes(a: Evaluation, b: Evaluation) -> bool:
    """Whether two evaluations give their callers the same (what they read aside), but for where a
    started command's environment names a variable (a memo hit adds the variables the first
    environment lacked last, `_Rebinder`)."""
    def unordered(ev: Evaluation) -> list[WorldResult]:
        out = []
        for r in ev.results:
            server = r.server if r.server is None else _copy_with(r.server, env=tuple(sorted(r.server.env, key=_name)))
            child = r.child if r.child is None else _copy_with(r.child, env=tuple(sorted(r.child.env, key=_name)))
            out.append(_copy_with(r, server=server, child=child))
        return out

    return (unordered(a) == unordered(b) and a.sourced == b.sourced and a.unread == b.unread
            and a.children == b.children and a.downloads == b.downloads)


def _name(item: tuple[str, Val, Loc]) -> str:
    return item[0]


def _filled(binding: Binding | None) -> bool | None:
    """Whether a variable is set and non-empty (None: unset)."""
    if binding is None:
        return None
    value = binding[0]
    return value != "" if isinstance(value, str) else True


class Memo:
    """Evaluations by (script key, values of the variables they read)."""

    # a check for tests and replays, made by the caller (verifier.launch.harness.shared_evaluate):
    # every evaluation it gets (reused, shared with the other tree, resumed from a checkpoint) is
    # compared with one made from the start, and each that differs is listed in `mismatches`
    verify = False

    def __init__(self) -> None:
        # key -> (read names, emptiness-read names, read_all, ...) -> valuation -> (evaluation, first env)
        self._index: dict[Any, dict[tuple[Any, ...], dict[Any, tuple[Evaluation, dict[str, Binding]]]]] = {}
        self.hits = 0
        self.misses = 0
        self.mismatches: list[tuple[Any, dict[str, Binding]]] = []

    @staticmethod
    def _valuation(shape: tuple[Any, ...], env: Mapping[str, Binding]) -> Any:
        # a variable read whose place the outcomes name is compared with that place too (a server
        # word's origin: two runners that set MODEL alike on line 399 of each are two origins)
        names, weak, read_all, derived, placed, templated, compared, numbers = shape
        if read_all:
            return tuple(sorted(env.items()))
        return (tuple(env[n][0] if n in env else None for n in names), tuple(_filled(env.get(n)) for n in weak),
                tuple(derived_value(env.get(n), specs) for n, specs in derived),
                tuple(env[n][1] if n in env else None for n in placed),
                tuple(placeable(env.get(n)) for n in templated),
                tuple(compared_number(n.number(env) if isinstance(n, Derivation) else _value(env.get(n)), k, op, other)
                      for n, k, op, other in compared),
                tuple(d.number(env) is not None for d in numbers))

    def evaluate(self, key: Any, env: Mapping[str, Binding], compute: Callable[[], Evaluation]) -> Evaluation:
        """The evaluation for this environment (computed, or reused from an equivalent one)."""
        shapes = self._index.setdefault(key, {})
        for shape, table in shapes.items():
            found = table.get(self._valuation(shape, env))
            if found is None:
                continue
            result, env0 = found
            self.hits += 1
            return rebind_evaluation(result, env0, env)
        self.misses += 1
        result = compute()
        shape = _shape(result, env)
        table = shapes.setdefault(shape, {})
        if len(table) >= MAX_ENTRIES:
            table.pop(next(iter(table)))
        table[self._valuation(shape, env)] = (result, dict(env))
        return result


def rebind_evaluation(result: Evaluation, env0: Mapping[str, Binding], env: Mapping[str, Binding]) -> Evaluation:
    """An evaluation from `env0` as seen from `env`, which agrees on everything it read
    (pass-through variables of started commands come from `env`)."""
    if env0 is env:
        return result
    rebinder = _Rebinder(env0, env)
    results = [rebinder.result(r) for r in result.results]
    if result.templated:
        results = [_put_numbers(r, env) for r in results]
    return Evaluation(results, result.reads, result.read_all, result.sourced, result.unread, result.children,
                      result.weak_reads, result.downloads, result.derived_reads, result.templated, result.compared)


def _value(binding: Binding | None) -> Val | None:
    return None if binding is None else binding[0]


def _put_numbers(result: WorldResult, env: Mapping[str, Binding]) -> WorldResult:
    """A result with `env`'s numbers in its server's templated argument words, each at the place the
    evaluator gives a word that is one variable (the variable's, else the word's own)."""
    server = result.server
    if server is None or not (server.templated or server.file_templated):
        return result
    if server.file_templated:
        files = dict(server.files)
        for path, index, pieces in server.file_templated:
            gen = files[path]
            assert gen.lines is not None
            lines = list(gen.lines)
            text = "".join(piece if isinstance(piece, str) else piece.number(env) or "" for piece in pieces)
            lines[index] = (text, lines[index][1])
            files[path] = GenFile(tuple(lines), gen.loc)
        server = _copy_with(server, files=files)
    argv, locs = list(server.argv), list(server.argv_locs)
    for word in server.templated:
        if word.derivation is not None:  # a derived number: computed for `env`, where it was put
            number = word.derivation.number(env)
            assert number is not None  # the valuation held
            argv[word.field] = word.text(number)
            locs[word.field] = word.at
            continue
        value, where = env[word.name]
        assert isinstance(value, str)  # `placeable`: the valuation held
        argv[word.field] = word.text(value)
        # the place the evaluator gives a word that is one variable: the variable's (else the word's)
        alone = not word.prefix and not word.suffix
        locs[word.field] = where if alone and where not in (None, NO_LOC) else word.at
    return _copy_with(result, server=_copy_with(server, argv=tuple(argv), argv_locs=tuple(locs)))


class Shared:
    """Evaluations shared between the two trees of a bundle (base and head).

    Most scripts are the same text in both trees. An evaluation depends only on the script text,
    the starting environment and the outside facts it asked for (`Options.accesses`: the text of
    every file it read, the answer of every file test); another tree whose script text is the
    same, whose environment agrees on everything the evaluation read (as in `Memo`) and which
    answers every one of those questions the same way yields the same outcomes."""

    def __init__(self) -> None:
        # key -> [(tree, shape, valuation, evaluation, first env, accesses)]
        self._index: dict[Any, list[tuple[str, tuple[Any, ...], Any, Evaluation, dict[str, Binding],
                                          tuple[tuple[Any, ...], ...]]]] = {}
        self.hits = 0

    def find(self, key: Any, tree: str, env: Mapping[str, Binding],
             same_answers: Callable[[tuple[tuple[Any, ...], ...]], bool]) -> Evaluation | None:
        """An evaluation another tree made that holds for this tree and environment, or None."""
        seen: dict[tuple[Any, ...], Any] = {}  # shape -> this environment's valuation (entries share few shapes)
        for have_tree, shape, valuation, result, env0, accesses in self._index.get(key, ()):
            if have_tree == tree:
                continue
            mine = seen.get(shape, seen)
            if mine is seen:
                mine = seen[shape] = Memo._valuation(shape, env)
            if mine != valuation or not same_answers(accesses):
                continue
            self.hits += 1
            return rebind_evaluation(result, env0, env)
        return None

    def add(self, key: Any, tree: str, env: Mapping[str, Binding], result: Evaluation,
            accesses: tuple[tuple[Any, ...], ...]) -> None:
        """Remember an evaluation this tree made (with the outside facts it asked for)."""
        entries = self._index.setdefault(key, [])
        shape = _shape(result, env)
        entries.append((tree, shape, Memo._valuation(shape, env), result, dict(env), accesses))
        if len(entries) > MAX_ENTRIES:
            del entries[0]


def rebind_world(w: World, old: Mapping[str, Binding], new: Mapping[str, Binding],
                 rebinder: _Rebinder | None = None) -> World:
    """A copy of a world from another starting environment: bindings still equal to the first
    environment's are replaced by the new one's (the script has not read them: they are the same
    pass-through), and the new environment's extra variables are added.

    Only the names the two environments bind differently (`_Rebinder.changed`, found once for
    every world of a checkpoint) are looked at: where they agree, the new binding equals the one
    the world holds."""
    if rebinder is None:
        rebinder = _Rebinder(old, new)
    x = w.copy()
    for name in rebinder.changed:
        if x.vars.get(name) == old[name]:
            if name in new:
                x.vars[name] = new[name]
            else:
                del x.vars[name]
                x.exported.discard(name)
    for name, binding in rebinder.extra:
        if name not in x.vars:
            x.vars[name] = binding
            x.exported.add(name)
    if x.found:
        x.found = tuple(replace(f, env=rebinder.env(f.env)) for f in x.found)
    return x


def _weight(state: dict[str, Any], worlds: list[World]) -> int:
    """What a remembered point holds: the bindings of its worlds and the names its state read."""
    return bindings_held(worlds) + len(state["reads"]) + len(state["weak"]) + len(state["derived"])


def _point_key(state: dict[str, Any], env: Mapping[str, Binding]) -> tuple[tuple[Any, ...], Any]:
    """What tells `Checkpoints` points at one statement apart: the names read so far, the names only
    tested for emptiness and those read only through removals (the shape), and their values
    (emptiness, what the removals leave) in `env`; a name read, with the place `env` set it (the
    worlds kept may hold a value read with its origin: the element of `ARGS=(--model "$MODEL")` is
    MODEL's)."""
    # a file written from variables nobody has read back yet is still in the worlds: those count here.
    # What went to standard output while nothing captured it is in no world (it was printed, and
    # the commands that print under a sink do nothing else with what they read: builtins._sink_kind),
    # so those reads tell no two points apart: `echo "CONC: $CONC"` early in a script no longer makes
    # every later point of a config start before it.
    # a server start the worlds hold already has the numbers of the variables it placed (`placed`)
    sinks = state["sinks"]
    names = set(state["reads"]).union(*(v for k, v in sinks.items() if k != UNCAPTURED), state.get("placed", ()),
                                      *(compared_names(c) for c in state.get("compared", ())))
    read_names = tuple(sorted(names))
    weak_names = tuple(sorted(state["weak"] - state["reads"]))
    shape = (read_names, weak_names, _derived(state["derived"], names))
    return shape, _point_valuation(shape, env)


def _point_valuation(shape: tuple[Any, ...], env: Mapping[str, Binding]) -> Any:
    """The values of a checkpoint shape's names in `env` (a name read: its binding, None when unset)."""
    read_names, weak_names, derived = shape
    return (tuple(map(env.get, read_names)), tuple(map(_filled, map(env.get, weak_names))),
            tuple(derived_value(env.get(n), specs) for n, specs in derived))


@dataclass(frozen=True, eq=False)
class _Point:
    """A remembered point of an evaluation (see `Checkpoints`)."""

    seq: int  # the order it was remembered in
    index: int  # the statement it resumes before
    shape: tuple[Any, ...]  # the names read, tested for emptiness, read through removals (`_point_key`)
    valuation: Any  # their values, emptiness and what the removals leave, it was reached with
    state: dict[str, Any]
    worlds: list[World]
    env: dict[str, Binding]
    weight: int  # the bindings and names it holds (`_weight`)


class Checkpoints:
    """The worlds before the statement of a script where it first read more of its environment:
    another environment that agrees on everything read so far resumes from there.

    Bounded three times: MAX_ENTRIES points per script (`add` says which goes), and for the points
    of all scripts together MAX_WEIGHT (their worlds' bindings and names read) and MAX_TREE_CHARS
    (the syntax trees their states keep alive), the point resumed or made longest ago going first."""

    def __init__(self) -> None:
        # per script key: the remembered points, the least recently used first (`add` says which
        # is forgotten), and the same points indexed for `find`: statement index -> (names read, names
        # tested for emptiness, read through removals) -> (their values, ...) -> the point
        self._store: dict[Any, list[_Point]] = {}
        self._index: dict[Any, dict[int, dict[tuple[Any, ...], dict[Any, _Point]]]] = {}
        self._seq = 0
        self.resumed = 0
        # per script key: (how many statements it has, evaluations seen, statement indices where it
        # read more of its environment); see `wanted`. The key holds the text's digest, so one key is
        # one text and its statements are the same in every tree parsed from it: the count is kept,
        # not the statements (which would keep every script's syntax tree alive to the verdict's end)
        self._where: dict[Any, tuple[int, int, set[int]]] = {}
        # every point, resumed or made longest ago first, with its script key; and what they all hold
        self._recent: OrderedDict[_Point, Any] = OrderedDict()
        self.weight = 0
        # the syntax trees the points hold (their states' scripts), each counted once however many
        # points hold it: id -> (tree, the points holding it); `tree_chars`: their texts' length
        self._trees: dict[int, tuple[Script, int]] = {}
        self.tree_chars = 0

    def wanted(self, key: Any, body: Any, index: int) -> bool:
        """Whether the evaluator should keep the worlds before statement `index` of `body` (the
        main script's statements) in case the statement reads more of the environment.

        The first evaluations of a script keep them everywhere; later ones only before the
        statements where an evaluation read more of its environment (`want` adds one found
        later). Copying every world before every statement costs more than the rest of a resumed
        evaluation; a checkpoint not kept only makes a later evaluation resume earlier."""
        where = self._where.get(key)
        if where is None or where[0] != len(body):
            return True
        return where[1] < WARMUP or index in where[2]

    def want(self, key: Any, body: Any, index: int) -> None:
        """Statement `index` read more of the environment without its worlds kept: keep them next time."""
        where = self._where.get(key)
        if where is not None and where[0] == len(body):
            where[2].add(index)

    def begin(self, key: Any, body: Any) -> None:
        """An evaluation of `body` (the main script's statements) under `key` starts."""
        where = self._where.get(key)
        if where is None or where[0] != len(body):
            self._where[key] = (len(body), 0, set())

    def finished(self, key: Any, body: Any) -> None:
        """An evaluation of `body` under `key` ran to its end."""
        where = self._where.get(key)
        if where is not None and where[0] == len(body):
            self._where[key] = (where[0], where[1] + 1, where[2])

    def add(self, key: Any, index: int, state: dict[str, Any], worlds: list[World], env: Mapping[str, Binding]) -> None:
        """Remember the worlds before statement `index` (state: what the evaluation had read then)."""
        where = self._where.get(key)
        if where is not None:
            where[2].add(index)
        entries = self._store.setdefault(key, [])
        shape, valuation = _point_key(state, env)
        table = self._index.setdefault(key, {}).setdefault(index, {}).setdefault(shape, {})
        if valuation in table:  # the same point with the same values is remembered already
            return
        self._seq += 1
        point = _Point(self._seq, index, shape, valuation, state, worlds, dict(env), _weight(state, worlds))
        table[valuation] = point
        entries.append(point)
        self._recent[point] = key
        self.weight += point.weight
        self._hold(state["scripts"])
        if len(entries) > MAX_ENTRIES:
            # among the EVICT_GROUP points used longest ago, the deepest goes (among equally deep
            # ones, the one used longest ago; never the one just added). A deep point holds the
            # values of more variables, so fewer environments resume from it, while a shallow one
            # is where every later point of a config resumes (with plain oldest-first, four runner
            # clusters that each stage the model at their own path forgot each other's shallow
            # points before coming back to them). Only among the oldest few, not the whole store:
            # deepest-first everywhere kept the shallow points of every statement that first read
            # a script's own variables, which no environment resumes from once a deeper point of
            # its config exists, and forgot the deep point each config's points resume from
            # (#2531: 10 of 60 statements skipped per evaluation on average against 25)
            # (only the first group is looked at: no point past it can be chosen)
            k = max(range(min(EVICT_GROUP, len(entries) - 1)), key=lambda j: entries[j].index)
            self._forget(key, entries.pop(k))
        while (self.weight > MAX_WEIGHT or self.tree_chars > MAX_TREE_CHARS) and len(self._recent) > 1:
            oldest, oldest_key = next(iter(self._recent.items()))
            if oldest is point:
                break
            self._store[oldest_key].remove(oldest)
            self._forget(oldest_key, oldest)

    def _forget(self, key: Any, point: _Point) -> None:
        """A point no longer remembered (already out of its script's list)."""
        self._index[key][point.index][point.shape].pop(point.valuation, None)
        self._recent.pop(point, None)
        self.weight -= point.weight
        self._release(point.state["scripts"])

    def _hold(self, scripts: tuple[Script, ...]) -> None:
        """A new point holds these trees: the first to hold one adds its text's length to `tree_chars`."""
        trees = self._trees
        for script in scripts:
            held = trees.get(id(script))
            if held is None:
                trees[id(script)] = (script, 1)
                self.tree_chars += script.chars
            else:
                trees[id(script)] = (script, held[1] + 1)

    def _release(self, scripts: tuple[Script, ...]) -> None:
        """A forgotten point no longer holds these trees: the last to let one go takes its length off."""
        trees = self._trees
        for script in scripts:
            held = trees[id(script)]
            if held[1] == 1:
                del trees[id(script)]
                self.tree_chars -= script.chars
            else:
                trees[id(script)] = (script, held[1] - 1)

    def has(self, key: Any, index: int, state: dict[str, Any], env: Mapping[str, Binding]) -> bool:
        """Whether `add(key, index, state, ..., env)` would find its point remembered already (and
        so keep nothing): the evaluator then need not copy the worlds for it."""
        by_shape = self._index.get(key, {}).get(index)
        if not by_shape:
            return False
        shape, valuation = _point_key(state, env)
        table = by_shape.get(shape)
        return table is not None and valuation in table

    def find(self, key: Any, env: Mapping[str, Binding]) -> tuple[int, dict[str, Any], list[World]] | None:
        """The deepest remembered point this environment can resume from (among equally deep ones,
        the earliest remembered)."""
        best: _Point | None = None
        by_index = self._index.get(key)
        if not by_index:
            return None
        for index in sorted(by_index, reverse=True):
            for shape, table in by_index[index].items():
                if not table:
                    continue
                point = table.get(_point_valuation(shape, env))
                if point is None or point.state["read_all"]:
                    continue
                if best is None or point.seq < best.seq:
                    best = point
            if best is not None:
                break
        if best is None:
            return None
        index, state, worlds, env0 = best.index, best.state, best.worlds, best.env
        self.resumed += 1
        # a point resumed from is kept longest (the oldest-used is forgotten first): the shared
        # prefix of a config's points is resumed from by every point, while each point leaves
        # MAX_ENTRIES-worth of its own later points behind (which choice is kept is an
        # optimisation only: a point forgotten makes a later evaluation resume earlier)
        entries = self._store[key]
        if entries[-1] is not best:
            entries.remove(best)
            entries.append(best)
        self._recent.move_to_end(best)
        rebinder = _Rebinder(env0, env)
        return index, state, [rebind_world(w, env0, env, rebinder) for w in worlds]
