"""Follow a runner's commands down to the servers it starts (statically; nothing runs).

A multi-node launch is a chain of scripts: the runner runs a per-config script
(`bash benchmarks/multi_node/<name>.sh`), which runs a submit script, which `sbatch`es a job
script, whose `srun` starts a container (`docker run -e ... -v ... IMAGE bash -lc '...'` or pyxis
`--container-image/--container-mounts`), which runs the server script, which starts the servers
(`vllm serve`, `python3 -m sglang.launch_server`, ...). `follow` walks these commands with the
shell reader (verifier.shell.trace): each script is read with the environment its caller passes
(a container sees only its `-e` variables), container paths are mapped back to the repository
through the mounts and the repository roots (policy `multinode.repo-roots`), and every server
command found becomes a `ServerStart` with its argv, environment and the chain of files that led
to it. Server processes of every node are found at once: a script that branches on the node's rank
(unknown until run time) is read down every branch, and each server's own command line tells its
role (policy `multinode.roles`).

Every point of a key walks the same chain with its own environment (its concurrencies, node
counts, parallelism), and `srun` reads its command once per rank. A script reading is shared
between the environments it holds for (`_Template`): it is made with stand-ins for the starting
environment and positional arguments (verifier.shell.trace, Stand-ins), the variables whose values
decide something are read with their values, and the reading is reused, with each environment's
values put in place of the stand-ins, for every environment that agrees on those and gives every
test the reader left to its caller the same outcome; every tree question it asked is asked again
of the tree it is used on (so a reading made on the other tree of the bundle holds only when this
tree answers alike, verifier.launch.treeshare).
"""

from __future__ import annotations

import posixpath
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from verifier.launch.commands import WRAPPERS, wrapper
from verifier.launch.job import KeyJob
from verifier.launch.runner import (
    Problem,
    _file_test,
    _put,
    make_reader,
    reader_commands,
    repo_path,
    stand_in_clash,
)
from verifier.launch.sharing import active_audit, long_way, point_of
from verifier.shell.launchers import match_python_code, match_shell, plain_command, trusted_download
from verifier.shell.text import (
    Mark,
    Seg,
    Text,
    as_vals,
    is_known,
    may_stand_in,
    plain,
    slice_text,
    stand_in_values,
    text_of,
)
from verifier.shell.unmodelled import unknown_unset, unread_code, unread_script

if TYPE_CHECKING:
    from verifier.shell.trace import Event, Reader, ReadResult

MAX_DEPTH = 12
MAX_READINGS = 48
MAX_CACHED_READINGS = 256  # script readings kept per tree for equal inputs (`_Walker.read`)
MAX_TEMPLATES = 64  # stand-in readings kept per script and inputs other than the environment (`_Walker.templated`)
_MARK = re.compile("\x00([0-9]+)\x00")  # a stand-in of verifier.shell.trace (Reader.stand_in)
# the wrapper commands and their option grammar (verifier.launch.commands, the table the shell
# reader is given too): `follow` says how this walk passes each one
_STEPPED = {w.name: w for w in WRAPPERS if w.follow == "step"}
_SLURM_VALUED = frozenset().union(*(w.valued for w in WRAPPERS if w.follow in ("ranks", "submit")))
_CONTAINER_VALUED = frozenset().union(*(w.valued for w in WRAPPERS if w.follow == "container"))
_CONTAINER_TOOL = re.compile("|".join(re.escape(w.name) for w in WRAPPERS if w.follow == "container"), re.I)


@dataclass(frozen=True)
class ServerStart:
    """One server command a launch runs."""

    event: Event
    argv: tuple[Text, ...]  # from the server program on (wrappers removed)
    env: Mapping[str, Text]
    engine: str
    module: str
    model_positional: bool
    role: str  # prefill | decode | agg
    chain: tuple[str, ...]  # the scripts that led to it, outermost first
    image: Text | None = None  # the container image when started inside one
    program: int = 1  # how many argv words name the program (`vllm serve`: 2, `python3 -m x`: 3)


@dataclass(frozen=True)
class _Reading:
    """What one script reading of a chain leaves: its commands, where it stops, its problems, the
    files it read and the tree questions it asked (`KeyJob.logging_accesses`)."""

    events: list[Event]
    stopped: tuple[str, int] | None
    problems: tuple[tuple[str, int | None, str], ...]
    files: tuple[str, ...]
    accesses: tuple[tuple[tuple[str, str], Any], ...]


@dataclass(frozen=True)
class _EventPlan:
    """Where one event of a stand-in reading holds stand-ins (`_Template.instance` puts values there)."""

    index: int
    argv: frozenset[int]  # words holding a stand-in
    whole: tuple[tuple[str, str], ...]  # environment entries that are one variable's stand-in: (entry, variable)
    env: tuple[str, ...]  # other environment entries holding a stand-in
    cwd: bool
    stdin: bool


@dataclass
class _Template:
    """One script reading made with stand-ins for its starting environment (verifier.shell.trace,
    Stand-ins), and the environments it is the reading of.

    The environment has the same names in the same order; `fixed` variables (whose stand-ins decided
    something) have equal values; a `words` variable, whose stand-in the reading expanded, is one
    known segment written at the same place (`words`: its file, line and why; the stand-in carried
    that origin, so every segment it reached is the one the value would reach) with a text that may
    take a stand-in's place (`may_stand_in`); a variable the reading never expanded (not in `Reader.reads`;
    its stand-in is found only as a whole value of the recorded commands' environments, which is
    checked) may hold any value. Every test the reader left to its caller comes out as recorded with
    the values (`checks`, `file_checks`), and every tree question of the reading is asked again
    (`KeyJob.same_answers`, for the access logs and needs). The reading for the environment is then
    this one with the values put in place of the stand-ins (`instance`)."""

    keys: tuple[str, ...]
    fixed: dict[str, Text]
    words: dict[str, tuple[str, int | None, str]]
    marks: list[Mark]
    reading: _Reading
    plans: list[_EventPlan]
    checks: list[tuple[tuple[Text, ...], Callable[[tuple[Text, ...]], object], object]]
    file_checks: list[tuple[str, Text, Text, bool | None]]
    mounts: Mapping[str, str]

    def fits(self, env: Mapping[str, Text]) -> bool:
        """Whether the reading may hold for this environment (`instance` checks the rest)."""
        if tuple(env) != self.keys:
            return False
        if any(env[name] != value for name, value in self.fixed.items()):
            return False
        for name, shape in self.words.items():
            seg = _word_seg(env[name])
            if seg is None or (seg.file, seg.line, seg.why) != shape:
                return False
        return True

    def values(self, env: Mapping[str, Text]) -> list[str] | None:
        """The value of every stand-in for this environment (None: a derived one may not take its place)."""
        return stand_in_values(self.marks, lambda name: plain(env[name]))

    def instance(self, job: KeyJob, env: Mapping[str, Text]) -> _Reading | None:
        """The reading for an environment that `fits` (None: a test comes out otherwise with its values)."""
        values = self.values(env)
        if values is None:
            return None
        try:
            if any(test(tuple(_put(v, values) for v in texts)) != outcome for texts, test, outcome in self.checks):
                return None
        except StopIteration:  # a replayed `[[ ]]` asks more than was recorded: with these values it goes otherwise
            return None
        if any(_file_test(job, op, _put(path, values), _put(cwd, values), self.mounts) != outcome
               for op, path, cwd, outcome in self.file_checks):
            return None  # this environment's file exists in the tree: the reading took the other branch
        if not job.same_answers(self.reading.accesses):
            return None
        events = list(self.reading.events)
        for plan in self.plans:
            event = events[plan.index]
            argv = tuple(_put(a, values) if i in plan.argv else a for i, a in enumerate(event.argv)) \
                if plan.argv else event.argv
            child = event.env
            if plan.whole or plan.env:
                child = dict(child)
                for key, name in plan.whole:
                    child[key] = env[name]
                for key in plan.env:
                    child[key] = _put(child[key], values)
            cwd = _put(event.cwd, values) if plan.cwd else event.cwd
            stdin = _MARK.sub(lambda m: values[int(m.group(1))], event.stdin) \
                if plan.stdin and event.stdin is not None else event.stdin
            events[plan.index] = replace(event, argv=argv, env=child, cwd=cwd, stdin=stdin)
        return _Reading(events, self.reading.stopped, self.reading.problems, self.reading.files, ())


_Run = Callable[["Reader", dict[str, Text], list[Text]], "ReadResult"]  # one reading with an environment and arguments


def _inputs(env: Mapping[str, Text], args: list[Text]) -> dict[str, Text]:
    """A reading's environment and positional arguments as one mapping (`1`, `2`, ...: no variable's name)."""
    return {**env, **{str(i): arg for i, arg in enumerate(args, 1)}}


def _split(inputs: Mapping[str, Text]) -> tuple[dict[str, Text], list[Text]]:
    """`_inputs` back into the environment and the positional arguments."""
    return {k: v for k, v in inputs.items() if not k.isdigit()}, [v for k, v in inputs.items() if k.isdigit()]


def _word_seg(value: Text) -> Seg | None:
    """The one known segment of a value that may take a stand-in's place (None: it may not)."""
    if len(value) != 1:
        return None
    seg = value[0]
    return seg if seg.known and may_stand_in(seg.text) else None


def _has_nul(*texts: Text | str) -> bool:
    # looks at each segment in place: joining a Text's characters first cost more than the search
    for t in texts:
        if isinstance(t, str):
            if "\x00" in t:
                return True
        else:
            for seg in t:
                if "\x00" in seg.text:
                    return True
    return False


def _template(job: KeyJob, env: Mapping[str, Text], mounts: Mapping[str, str], run: _Run,
              learned: set[str] | None) -> _Template:
    """A reading of a script for `env` with stand-ins for every variable but those that decided
    something before (`learned`; None: no stand-ins, the inputs hold the stand-ins' character). A
    stand-in that decides something ends the reading (verifier.shell.trace.Decided) before it asks
    the tree anything the reading with the values would not; its variable is then read with its value
    and the script read again, and so is a variable whose value may not take a stand-in's place
    (`_word_seg`) but that the reading expanded, or whose stand-in is found anywhere but as a whole
    value of a recorded command's environment (`_misplaced`). Each round stands in for fewer
    variables: the last is a reading with the values themselves at worst."""
    from verifier.shell.trace import Decided

    # a positional argument (`_inputs`) is not among the variables the reader records as read: it
    # stands in only for a value that may take a stand-in's place, and is then a word
    standing = [] if learned is None else [name for name in env if name not in learned and
                                           (not name.isdigit() or _word_seg(env[name]) is not None)]
    while True:
        unsure, loaded = stand_in_clash()
        file_checks: list[tuple[str, Text, Text, bool | None]] = []
        reader = make_reader(job, mounts, on_load=loaded, file_checks=file_checks)
        run_env = dict(env)
        standins: dict[str, Text] = {}
        for name in standing:
            value = env[name]
            seg = _word_seg(value)
            mark = reader.stand_in(name, plain(value))
            # a word's stand-in carries the value's origin; another value's is only ever copied whole
            standins[name] = run_env[name] = (Seg(mark, seg.file, seg.line, True, seg.why),) if seg is not None \
                else (Seg(mark, "\x00", None, True, ""),)
        result: ReadResult | None = None
        with job.logging_accesses() as log:
            try:
                result = run(reader, *_split(run_env))
                if standing:  # a problem's message is the caller's to read
                    reader.decide(*(m for _f, _ln, m in result.problems))
            except Decided:
                pass
        decided = set(standing) if reader.decided_all or unsure[0] else reader.decided & set(standing)
        if not decided and standing:
            assert result is not None
            decided = _misplaced(reader, result, env, standins)
        if not decided:
            break
        if learned is not None:
            learned |= decided
        standing = [name for name in standing if name not in decided]
    assert result is not None
    reading = _Reading(result.events, result.stopped, tuple(result.problems), tuple(reader.files), tuple(log.items()))
    words = {name: (seg.file, seg.line, seg.why) for name in standing if name in reader.reads or name.isdigit()
             for seg in standins[name]}
    fixed = {name: value for name, value in env.items() if name not in standins}
    return _Template(tuple(env), fixed, words, list(reader.marks), reading,
                     _plans(result.events, standins) if standing else [], list(reader.checks), file_checks,
                     dict(mounts))


def _misplaced(reader: Reader, result: ReadResult, env: Mapping[str, Text], standins: dict[str, Text]) -> set[str]:
    """Variables whose stand-in does not stand for their value in this reading: a value that may not
    take a stand-in's place (`_word_seg`) that was expanded, or a variable never expanded whose
    stand-in is found elsewhere than as a whole value of a recorded command's environment (and any
    stand-in in a problem, a file read or a recorded command's taint)."""
    reads = {*reader.reads, *(name for name in standins if name.isdigit())}  # positional arguments: words
    bad = {name for name in standins if name in reads and _word_seg(env[name]) is None}
    copied = {name for name in standins if name not in reads}
    marks = reader.marks

    def scan(text: str, only: set[str] | None) -> None:
        for m in _MARK.finditer(text):
            index = int(m.group(1))
            name = marks[index][0] if index < len(marks) else None
            if name is None:
                bad.update(standins)  # not a stand-in of this reading: none is told apart
            elif only is None or name in only:
                bad.add(name)
        if text.count("\x00") != 2 * len(_MARK.findall(text)):
            bad.update(standins)

    whole = {text: name for name, text in standins.items() if name in copied}
    whole_ids = {id(text) for text in whole}  # the stand-ins themselves, copied by reference
    for event in result.events:
        if copied:
            for text in (*event.argv, event.cwd):
                if _has_nul(text):
                    scan(plain(text), copied)
            for value in event.env.values():
                if id(value) not in whole_ids and _has_nul(value) and value not in whole:
                    scan(plain(value), copied)
            if event.stdin is not None and "\x00" in event.stdin:
                scan(event.stdin, copied)
        if event.taint is not None and "\x00" in event.taint[2]:
            scan(event.taint[2], None)
    for said in (*(m for _f, _ln, m in result.problems), *reader.files):
        if "\x00" in said:
            scan(said, None)
    return bad


def _plans(events: list[Event], standins: dict[str, Text]) -> list[_EventPlan]:
    """Where the events of a stand-in reading hold stand-ins."""
    whole_of = {text: name for name, text in standins.items()}
    by_id = {id(text): name for name, text in standins.items()}  # the stand-ins themselves, copied by reference
    plans: list[_EventPlan] = []
    for i, event in enumerate(events):
        argv = frozenset(j for j, a in enumerate(event.argv) if _has_nul(a))
        whole: list[tuple[str, str]] = []
        marked: list[str] = []
        for key, value in event.env.items():
            name = by_id.get(id(value))
            if name is None and _has_nul(value):
                name = whole_of.get(value)
                if name is None:
                    marked.append(key)
                    continue
            if name is not None:
                whole.append((key, name))
        cwd = _has_nul(event.cwd)
        stdin = event.stdin is not None and "\x00" in event.stdin
        if argv or whole or marked or cwd or stdin:
            plans.append(_EventPlan(i, argv, tuple(whole), tuple(marked), cwd, stdin))
    return plans


@dataclass
class Followed:
    """Every server a runner's commands start, the files read on the way and what could not be followed."""

    servers: list[ServerStart] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    readings: int = 0
    exits: list[tuple[str, int]] = field(default_factory=list)  # where a followed script stops (`exit`)
    # commands whose program is known only at run time: where the chain may go on unseen
    opaque: list[tuple[str, int | None, str]] = field(default_factory=list)
    # shells and scripts started on code the walk cannot read (a pipe from a download, a file the
    # run makes, a path or code only the run knows): what they start is unseen, so the launch fails
    # closed whatever servers were found (verifier.shell.unmodelled.unread_code, unread_script)
    unread: list[Problem] = field(default_factory=list)


_Servers = tuple[int, tuple[tuple[Mapping[str, Any], list[str]], ...]]  # `_servers`


def _servers(servers: list[Mapping[str, Any]]) -> _Servers:
    """Policy `multinode.servers` as `_server_kind` compares it: the words a prefix can reach, and
    each spec with its prefix as strings (made once per walk: every command of a chain is compared)."""
    return (max((len(spec["prefix"]) for spec in servers), default=0),
            tuple((spec, [str(p) for p in spec["prefix"]]) for spec in servers))


def _server_kind(words: list[str], servers: _Servers) -> tuple[Mapping[str, Any], int] | None:
    # only the words a prefix can reach are compared (every command of a chain is looked at here)
    reach, specs = servers
    norm = ["python3" if w == "python" or w.endswith("/python") or w.endswith("/python3") else w
            for w in words[:max(reach, 3)]]
    if len(norm) > 2 and norm[1] == "-m":  # `<interpreter> -m <module>`: the interpreter may be a run-time choice
        norm[0] = "python3"
    for spec, prefix in specs:
        if norm[:len(prefix)] == prefix:
            return spec, len(prefix)
    return None


def _role(words: list[str], roles: Mapping[str, Any]) -> str:
    joined = " ".join(words)
    for role in ("prefill", "decode"):
        if any(re.search(str(rx), joined) for rx in roles.get(role) or ()):
            return role
    return "agg"


class _Walker:
    def __init__(self, job: KeyJob) -> None:
        self.job = job
        self.policy = job.ctx.policy("multinode")
        self.commands = reader_commands(job)
        self.servers = _servers(self.policy["servers"])
        self.out = Followed()

    def visit(self, events: list[Event], chain: tuple[str, ...], mounts: Mapping[str, str],
              image: Text | None, depth: int) -> None:
        for event in events:
            self.command(list(event.argv), dict(event.env), event, chain, mounts, image, depth)

    def command(self, argv: list[Text], env: dict[str, Text], event: Event, chain: tuple[str, ...],
                mounts: Mapping[str, str], image: Text | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        words = [plain(a) for a in argv]
        while words and words[0] in _STEPPED:  # a wrapper: its options, NAME=VALUE words, positionals
            step = _STEPPED[words[0]]
            argv, words = argv[1:], words[1:]
            while words:
                if step.queried_by(words[0]):
                    return  # `command -v NAME`: a query, nothing runs
                if words[0] in step.clears:
                    env = {}  # `env -i`: only what it assigns reaches the command
                taken, named = step.unset_by(words[0])
                if taken and (named is not None or len(words) > 1):
                    gone = argv[0] if named is not None else argv[1]
                    if not is_known(gone):
                        self.out.unread.append(Problem(event.file, event.line, unknown_unset(plain(event.argv[0]))))
                        return
                    env.pop(named if named is not None else words[1], None)
                if words[0] in step.valued:
                    skip = 2
                elif words[0].startswith("-"):
                    skip = 1
                elif step.assigns and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                    env[words[0].split("=", 1)[0]] = _after_eq(argv[0])
                    skip = 1
                else:
                    break
                argv, words = argv[skip:], words[skip:]
            argv, words = argv[step.positionals:], words[step.positionals:]
        if not words:
            return
        if not is_known(argv[0]):
            self.out.opaque.append((event.file, event.line, words[0][:120]))
        found = _server_kind(words, self.servers)
        if found is not None:
            spec, program = found
            self.out.servers.append(ServerStart(
                event=event, argv=tuple(argv), env=env, engine=str(spec["engine"]), module=str(spec["module"]),
                model_positional=bool(spec.get("model-positional")), role=_role(words, self.policy["roles"]),
                chain=chain, image=image, program=program))
            return
        run_at = _docker_run(words)
        if run_at is not None:
            self.docker(argv[run_at + 1:], event, chain, mounts, depth)
            return
        row = wrapper(words[0])
        kind = row.follow if row is not None else ""
        if kind == "ranks":
            self.srun(argv[1:], env, event, chain, mounts, image, depth)
            return
        if kind == "submit":
            rest = _skip_options(argv[1:], _SLURM_VALUED)
            if rest:
                self.script(rest[0], rest[1:], env, event.cwd, event, chain, mounts, image, depth)
            return
        # a shell or Python is not a plain command (`plain_command`, decided once per word)
        vals = as_vals(argv, (event.file, event.line)) if not plain_command(words[0], self.commands) else []
        shell = match_shell(vals, self.commands)
        if shell is not None:
            at = shell.child.script
            if shell.source == "inline":
                if not any(seg.known and seg.text.strip() for seg in argv[at]):
                    self.out.unread.append(Problem(event.file, event.line, unread_code(words[0], "inline",
                                                                                       plain(argv[at]))))
                    return
                self.inline(argv[at], argv[shell.rest:], env, event, chain, mounts, image, depth)
            elif shell.source == "stdin":
                if event.stdin is None:  # a pipe or a file: what it reads is the run's (or a trusted download)
                    self.trusted(event, words[0])
                    return
                self.inline(text_of(event.stdin, event.file, event.line), argv[shell.rest:], env, event, chain,
                            mounts, image, depth)
            else:
                self.script(argv[at], argv[shell.rest:], env, event.cwd, event, chain, mounts, image, depth)
            return
        code = match_python_code(vals, self.commands)
        if code is not None and code.source == "stdin" and event.stdin is None:
            self.trusted(event, words[0])
        elif code is not None and code.source == "file" and not is_known(argv[code.index]):
            self.out.unread.append(Problem(event.file, event.line, unread_code(words[0], "file",
                                                                               plain(argv[code.index]))))
        if words[0].endswith((".sh", ".slurm", ".bash")):
            self.script(argv[0], argv[1:], env, event.cwd, event, chain, mounts, image, depth)

    def trusted(self, event: Event, program: str) -> bool:
        """Whether what a shell or Python reads from a pipe is a trusted download (policy
        `launcher.trusted-downloads`, the command piped into it, `Event.fed_by`); else the code is
        unread (`Followed.unread`)."""
        if event.fed_by is not None and trusted_download(event.fed_by, self.commands):
            return True
        self.out.unread.append(Problem(event.file, event.line, unread_code(
            program, "stdin", " ".join(event.fed_by) if event.fed_by is not None else "")))
        return False

    def srun(self, args: list[Text], env: dict[str, Text], event: Event, chain: tuple[str, ...],
             mounts: Mapping[str, str], image: Text | None, depth: int) -> None:
        """`srun` starts its command on every node of the step, each with its own rank
        (SLURM_PROCID / SLURM_NODEID): the command is followed once per rank, in rank order, until
        a prefill and a decode server are both found (policy `multinode.ranks`)."""
        mounts = dict(mounts)
        nodes: int | None = None
        i = 0
        while i < len(args):
            w = plain(args[i])
            if not w.startswith("-"):
                break
            name, eq, value = w.partition("=")
            if not eq and name in _SLURM_VALUED and i + 1 < len(args):
                value_text = args[i + 1]
                i += 2
            else:
                value_text = text_of(value)
                i += 1
            if name == "--container-image":
                image = value_text
            elif name == "--container-mounts":
                specs = [spec for spec in plain(value_text).split(",") if "${" not in spec and "$(" not in spec]
                mounts.update(self.mount_specs(specs, event))
            elif name == "--export":  # ALL|NONE[,NAME=value,...]
                items = plain(value_text).split(",")
                if items and items[0] == "NONE":
                    env = {}
                offset = 0
                whole = plain(value_text)
                for item in items:
                    start = whole.find(item, offset)
                    offset = start + len(item)
                    if "=" in item and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", item):
                        key, _, _rest = item.partition("=")
                        env = {**env, key: slice_text(value_text, start + len(key) + 1, offset)}
            elif name in ("-N", "--nodes", "-n", "--ntasks") and plain(value_text).isdigit():
                nodes = int(plain(value_text)) if nodes is None else min(nodes, int(plain(value_text)))
        if i >= len(args):
            return
        conf = self.policy["ranks"]
        if nodes is None:
            for name in conf["node-count-env"]:
                value = env.get(str(name))
                if value is not None and plain(value).isdigit():
                    nodes = int(plain(value))
                    break
        count = max(1, min(nodes or 1, int(conf["max-ranks"])))
        for rank in range(count):
            ranked = dict(env)
            for name in conf["rank-env"]:
                ranked[str(name)] = text_of(str(rank), event.file, event.line)
            before = {s.role for s in self.out.servers}
            self.command(list(args[i:]), ranked, event, chain, mounts, image, depth + 1)
            roles = {s.role for s in self.out.servers}
            if {"prefill", "decode"} <= roles or (roles and roles == before and "agg" in roles):
                break

    def docker(self, args: list[Text], event: Event, chain: tuple[str, ...], mounts: Mapping[str, str],
               depth: int) -> None:
        env: dict[str, Text] = {}
        own_mounts: dict[str, str] = {}
        i = 0
        while i < len(args):
            w = plain(args[i])
            if not is_known(args[i]) and not w.startswith("-"):
                i += 1  # options only the run knows (a list of mounts chosen on the node)
                continue
            if not w.startswith("-"):
                break
            name, eq, value = w.partition("=")
            if not eq and name in _CONTAINER_VALUED and i + 1 < len(args):
                value_text = args[i + 1]
                i += 2
            elif eq:
                value_text = _after_eq(args[i])
                i += 1
            else:
                i += 1
                continue
            if name in ("-e", "--env"):
                text = plain(value_text)
                if "=" in text:
                    env[text.split("=", 1)[0]] = _after_eq(value_text)
            elif name in ("-v", "--volume"):
                own_mounts.update(self.mount_specs([plain(value_text)], event))
        if i >= len(args):
            return
        image = args[i]
        self.command(list(args[i + 1:]), env, event, chain, {**mounts, **own_mounts}, image, depth + 1)

    def mount_specs(self, specs: list[str], event: Event) -> dict[str, str]:
        out: dict[str, str] = {}
        for spec in specs:
            parts = spec.split(":")
            if len(parts) < 2:
                continue
            source = repo_path(self.job, text_of(parts[0]), event.cwd)
            if source is not None and parts[1].startswith("/"):
                out[posixpath.normpath(parts[1])] = source
        return out

    def inline(self, code: Text, args: list[Text], env: dict[str, Text], event: Event, chain: tuple[str, ...],
               mounts: Mapping[str, str], image: Text | None, depth: int) -> None:
        if not self.budget():
            return
        cwd = plain(event.cwd) if is_known(event.cwd) else ""
        file = event.file

        def run(reader: Reader, run_env: dict[str, Text], run_args: list[Text]) -> ReadResult:
            return reader.run_inline(code, run_env, run_args, cwd=cwd, file=file)

        reading = self.templated(("inline", file, code, len(args), cwd, tuple(mounts.items())), f"inline:{file}",
                                 _inputs(env, args), mounts, run, _has_nul(code, cwd, file))
        self.out.files.extend(reading.files)
        for file_, line, message in reading.problems:
            if "cannot be read statically" in message or "too long" in message:
                self.out.problems.append(Problem(file_, line, message))
        self.visit(_tainted(reading.events, event), chain, mounts, image, depth + 1)

    def script(self, path: Text, args: list[Text], env: dict[str, Text], cwd: Text, event: Event,
               chain: tuple[str, ...], mounts: Mapping[str, str], image: Text | None, depth: int) -> None:
        rel = repo_path(self.job, path, cwd, mounts)
        if rel is None:
            self.out.unread.append(Problem(event.file, event.line, unread_script(plain(path), False) if is_known(path)
                                           else unread_code(plain(event.argv[0]) if event.argv else "bash", "file", plain(path))))
            return
        if rel in chain or not self.budget():
            return
        data = self.job.read(rel)
        if data is None:
            self.out.problems.append(Problem(event.file, event.line, f"runs {rel}, which is not in the tree"))
            return
        zero = plain(path)
        workdir = plain(cwd) if is_known(cwd) else ""
        reading = self.read(rel, data.decode("utf-8", "replace"), env, args, workdir, zero, mounts)
        self.out.files.append(rel)
        if reading.stopped is not None:
            self.out.exits.append(reading.stopped)
        self.out.files.extend(reading.files)
        for file, line, message in reading.problems:
            if "cannot be read statically" in message or "too long" in message:
                self.out.problems.append(Problem(file, line, message))
        self.visit(_tainted(reading.events, event), (*chain, rel), mounts, image, depth + 1)

    def read(self, rel: str, text: str, env: dict[str, Text], args: list[Text], workdir: str, zero: str,
             mounts: Mapping[str, str]) -> _Reading:
        """One script read with exactly these inputs: reused when this tree read the same text with
        equal inputs before (every tree question it asked is asked again: the needs and the access
        logs of the other tree see them)."""
        key = (rel, text, tuple(env.items()), tuple(args), workdir, zero, tuple(mounts.items()))
        cache: OrderedDict[Any, _Reading] = self.job.ctx.memo(f"launch.follow.readings.{self.job.side}", OrderedDict)
        found = cache.get(key)
        if found is not None and self.job.same_answers(found.accesses):
            cache.move_to_end(key)
            return found

        def run(reader: Reader, run_env: dict[str, Text], run_args: list[Text]) -> ReadResult:
            return reader.run(rel, text, run_env, run_args, cwd=workdir, zero=zero)

        reading = self.templated((rel, text, len(args), workdir, zero, tuple(mounts.items())), rel, _inputs(env, args),
                                 mounts, run, _has_nul(text, workdir, zero, *mounts, *mounts.values()))
        cache[key] = reading
        if len(cache) > MAX_CACHED_READINGS:
            cache.popitem(last=False)
        return reading

    def templated(self, ident: tuple[Any, ...], learn: str, env: dict[str, Text], mounts: Mapping[str, str],
                  run: _Run, marked: bool) -> _Reading:
        """The reading of a script (`run`) whose inputs but the environment and positional arguments
        (`env`, `_inputs`) are `ident`: an instance of a stand-in reading this tree made for equal
        inputs (`_Template`), else a new one (`marked`: the inputs hold the stand-ins' character, so
        the reading is made with the values)."""
        got = self._templated(ident, learn, env, mounts, run, marked)
        audit = active_audit()
        if audit is not None:  # the reading this environment's own would be, made with the values
            with long_way(self.job):
                fresh = _template(self.job, env, mounts, run, None).reading
            same = (got.events, got.stopped, got.problems, got.files) == \
                (fresh.events, fresh.stopped, fresh.problems, fresh.files)
            audit.compare("chain reading", f"{ident[0]} ({point_of(env)})", same)
        return got

    def _templated(self, ident: tuple[Any, ...], learn: str, env: dict[str, Text], mounts: Mapping[str, str],
                   run: _Run, marked: bool) -> _Reading:
        job = self.job
        # both trees' readings: one made on the other tree holds here when this tree answers its
        # questions alike (`_Template.instance` asks them again, verifier.launch.treeshare)
        store: OrderedDict[Any, list[_Template]] = job.ctx.memo("launch.follow.templates", OrderedDict)
        templates = store.get(ident)
        if templates is not None:
            store.move_to_end(ident)
            for template in reversed(templates):
                if template.fits(env):
                    with job.logging_accesses() as log:
                        found = template.instance(job, env)
                    if found is not None:
                        return replace(found, accesses=tuple(log.items()))
        marked = marked or _has_nul(*env.values())
        learned: set[str] | None = None if marked else job.ctx.memo(f"launch.follow.decides.{learn}", set)
        with job.logging_accesses() as log:
            template = _template(job, env, mounts, run, learned)
            found = template.instance(job, env)
        if found is None:  # cannot be (the reading checked every test with these values): read with them
            template = _template(job, env, mounts, run, None)
            return template.reading
        if templates is None:
            templates = store[ident] = []
            if len(store) > MAX_CACHED_READINGS:
                store.popitem(last=False)
        templates.append(template)
        if len(templates) > MAX_TEMPLATES:
            del templates[0]
        return replace(found, accesses=tuple(log.items()))

    def budget(self) -> bool:
        self.out.readings += 1
        return self.out.readings <= MAX_READINGS


def _tainted(events: list[Event], parent: Event) -> list[Event]:
    """A script started after a construct the reader does not model (`Event.taint`: an `eval` of a
    command's output, a process-substituted `source`) inherits it: what that construct set may reach
    the child's servers through the environment, so they fail closed too."""
    if parent.taint is None:
        return events
    return [e if e.taint is not None else replace(e, taint=parent.taint) for e in events]


def _after_eq(text: Text) -> Text:
    """The value part of a `NAME=value` Text."""
    whole = plain(text)
    cut = whole.find("=") + 1
    return slice_text(text, cut)


def _skip_options(args: list[Text], valued: frozenset[str]) -> list[Text]:
    i = 0
    while i < len(args):
        w = plain(args[i])
        if not w.startswith("-"):
            # a run-time word between options (`"${EXCLUDE_OPT[@]}"`, an array of options) is one of them
            if not is_known(args[i]) and i + 1 < len(args) and plain(args[i + 1]).startswith("-"):
                i += 1
                continue
            break
        i += 2 if (w in valued and "=" not in w) else 1
    return args[i:]


def _docker_run(words: list[str]) -> int | None:
    """Index of `run` in a `docker run` / `sudo docker run` / `$DOCKER_CMD run` command."""
    for i, w in enumerate(words[:4]):
        if w == "run" and i > 0 and any(_CONTAINER_TOOL.search(p) for p in words[:i]):
            return i
    return None


def follow(job: KeyJob, events: list[Event], chain: tuple[str, ...]) -> Followed:
    """Every server the given commands start (see module docstring)."""
    walker = _Walker(job)
    walker.visit(events, chain, {}, None, 0)
    return walker.out
