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
"""

from __future__ import annotations

import posixpath
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from verifier.launch.commands import WRAPPERS, wrapper
from verifier.launch.job import KeyJob
from verifier.launch.runner import Problem, make_reader, repo_path
from verifier.shell.text import Text, is_known, plain, slice_text, text_of

if TYPE_CHECKING:
    from verifier.shell.trace import Event

MAX_DEPTH = 12
MAX_READINGS = 48
MAX_CACHED_READINGS = 256  # script readings kept per tree for equal inputs (`_Walker.read`)
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


def _server_kind(words: list[str], servers: list[Mapping[str, Any]]) -> tuple[Mapping[str, Any], int] | None:
    norm = ["python3" if w == "python" or w.endswith("/python") or w.endswith("/python3") else w for w in words]
    if len(norm) > 2 and norm[1] == "-m":  # `<interpreter> -m <module>`: the interpreter may be a run-time choice
        norm[0] = "python3"
    for spec in servers:
        prefix = [str(p) for p in spec["prefix"]]
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
        found = _server_kind(words, self.policy["servers"])
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
        if words[0] in ("bash", "sh", "/bin/bash", "/bin/sh", "/usr/bin/bash"):
            rest = argv[1:]
            inline = False
            while rest and plain(rest[0]).startswith("-") and plain(rest[0]) not in ("-", "--"):
                flag = plain(rest[0])
                if flag in ("-o", "+o"):
                    rest = rest[2:]
                    continue
                if "c" in flag.lstrip("-+"):
                    inline = True
                rest = rest[1:]
            if not rest:
                return
            if inline:
                self.inline(rest[0], rest[1:], env, event, chain, mounts, image, depth)
            else:
                self.script(rest[0], rest[1:], env, event.cwd, event, chain, mounts, image, depth)
            return
        if words[0].endswith((".sh", ".slurm", ".bash")):
            self.script(argv[0], argv[1:], env, event.cwd, event, chain, mounts, image, depth)

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
        reader = make_reader(self.job, mounts)
        result = reader.run_inline(code, env, args, cwd=plain(event.cwd) if is_known(event.cwd) else "",
                                   file=event.file)
        self.absorb(reader, result, event.file)
        self.visit(_tainted(result.events, event), chain, mounts, image, depth + 1)

    def script(self, path: Text, args: list[Text], env: dict[str, Text], cwd: Text, event: Event,
               chain: tuple[str, ...], mounts: Mapping[str, str], image: Text | None, depth: int) -> None:
        rel = repo_path(self.job, path, cwd, mounts)
        if rel is None:
            if is_known(path):
                self.out.problems.append(Problem(event.file, event.line, f"runs {plain(path)}, which is not a file "
                                                                         "of the repository"))
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
        with self.job.logging_accesses() as log:
            reader = make_reader(self.job, mounts)
            result = reader.run(rel, text, env, args, cwd=workdir, zero=zero)
        reading = _Reading(result.events, result.stopped, tuple(result.problems), tuple(reader.files),
                           tuple(log.items()))
        cache[key] = reading
        if len(cache) > MAX_CACHED_READINGS:
            cache.popitem(last=False)
        return reading

    def absorb(self, reader: Any, result: Any, name: str) -> None:
        self.out.files.extend(reader.files)
        for file, line, message in result.problems:
            if "cannot be read statically" in message or "too long" in message:
                self.out.problems.append(Problem(file, line, message))

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
