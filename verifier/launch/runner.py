"""Runner scripts of a multi-node point, read statically with the workflow's environment.

The multi-node workflow (`.github/workflows/benchmark-multinode-tmpl.yml`) runs
`bash ./runners/launch_${RUNNER_NAME%%_*}.sh` on a machine of the row's runner label, with the
point in its environment (policy `multinode.workflow.env`) and the prefill and decode
`additional-settings` exported. `read_runner(job, script, env)` reads that script with
verifier.shell.trace (never executed) and returns every command it would run; `fetch_plan` turns
those commands into what an srt-slurm launch fetches: the repository it clones, the ref it checks
out, the InferenceX folders it copies over the clone (`cp -rT "$GITHUB_WORKSPACE/..." recipes/...`),
and the `srtctl apply -f "$CONFIG_FILE"` that starts it.

A label whose machines use different runner scripts is read once per script; the scripts must agree
on what they fetch. A runner is read once for all the points that differ only in values that reach
the words of its commands (a point's CONFIG_FILE): `runner_probe` reads it with stand-ins for them
(verifier.shell.trace, Stand-ins) and plans each point's probe from that reading with its values. A clone or checkout that sits under a condition the reader cannot decide is
reported with that condition's line.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from verifier.configs.points import Point
from verifier.configs.runners import runners
from verifier.launch.job import KeyJob
from verifier.launch.sharing import active_audit, long_way, point_of
from verifier.shell.text import (
    Mark,
    Seg,
    Text,
    concat,
    is_known,
    may_stand_in,
    plain,
    stand_in_values,
    text_of,
)

if TYPE_CHECKING:
    from verifier.shell.launchers import Commands
    from verifier.shell.trace import Event, Reader, ReadResult, State

_MARK = re.compile("\x00([0-9]+)\x00")  # a stand-in of verifier.shell.trace (Reader.stand_in)

_GITHUB = re.compile(r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
                     r"([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*?)(?:\.git)?/?$")


@dataclass(frozen=True)
class Problem:
    """Why a launch cannot be followed: file, line and what."""

    file: str
    line: int | None
    message: str


@dataclass(frozen=True)
class Overlay:
    """An InferenceX file or folder a runner copies into the clone (`cp [-rT] SRC DST`)."""

    source: str  # repository path in the InferenceX tree
    target: str  # path in the clone
    line: int
    folder: bool


@dataclass(frozen=True)
class FetchPlan:
    """What an srt-slurm launch clones and runs, read from one runner script."""

    runner: str
    repo: str  # owner/name
    ref: str  # as the runner names it; HEAD = the default branch of a plain clone
    clone_line: int
    ref_line: int
    overlays: tuple[Overlay, ...] = ()
    apply_line: int | None = None
    config: str | None = None  # the `srtctl apply -f` argument as the runner passes it

    def overlay(self, path: str) -> Overlay | None:
        """The copy that puts an InferenceX file at this clone path (the last one covering it wins)."""
        for overlay in reversed(self.overlays):
            if overlay.folder and path.startswith(overlay.target.rstrip("/") + "/"):
                return overlay
            if not overlay.folder and path == overlay.target:
                return overlay
        return None

    def tree_source(self, path: str) -> str | None:
        """The InferenceX path a clone path was copied from (None: the clone's own file)."""
        overlay = self.overlay(path)
        if overlay is None:
            return None
        if not overlay.folder:
            return overlay.source
        return overlay.source.rstrip("/") + "/" + path[len(overlay.target.rstrip("/")) + 1:]

    @property
    def label(self) -> str:
        """`owner/name@ref` as the runner names it."""
        return f"{self.repo}@{self.ref}"


@dataclass
class RunnerReading:
    """One runner script read for one point."""

    script: str
    result: ReadResult | None
    problems: list[Problem] = field(default_factory=list)


def _policy(job: KeyJob) -> Mapping[str, Any]:
    return job.ctx.policy("multinode")


def _field(point: Point, name: str) -> Any:
    if name.startswith(("prefill.", "decode.")):
        role, _, key = name.partition(".")
        worker = getattr(point, role)
        return worker.get(key) if isinstance(worker, Mapping) else None
    value = getattr(point, name, None)
    if name == "is_agentic":
        return "1" if point.is_agentic else "0"
    if name == "conc_list":
        return " ".join(str(c) for c in point.conc_list)
    if isinstance(value, Mapping):
        return value.get("name")
    return value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def launcher_env(job: KeyJob, point: Point) -> dict[str, str]:
    """The runner's environment for a point: the workflow env, then the exported additional-settings."""
    conf = _policy(job)["workflow"]
    env: dict[str, str] = {"GITHUB_WORKSPACE": str(conf["workspace"])}
    for name, spec in conf["env"].items():
        if point.is_agentic and "agentic" in spec:
            env[name] = str(spec["agentic"])
        else:
            env[name] = str(spec["value"]) if "value" in spec else _text(_field(point, str(spec["field"])))
    for role in ("prefill", "decode"):
        worker = getattr(point, role)
        settings = worker.get("additional-settings") if isinstance(worker, Mapping) else None
        for item in settings if isinstance(settings, list) else ():
            if isinstance(item, str) and "=" in item:
                name, _, value = item.partition("=")
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
                    env[name.strip()] = value
    return env


def runner_scripts(job: KeyJob, point: Point) -> tuple[list[str], Problem | None]:
    """The runner scripts a point's label runs (one per machine prefix), or why none is known."""
    table = runners(job.ctx, job.side)
    label = point.runner or ""
    machines = table.labels.get(label) or ([label.removeprefix("cluster:")] if label else [])
    pattern = str(_policy(job)["workflow"]["runner-script"])
    prefixes = sorted({m.split("_", 1)[0] for m in machines if m})
    if not prefixes:
        return [], Problem(table.file, None, f"runner label {label!r} names no machine")
    return [pattern.replace("{machine}", p) for p in prefixes], None


def repo_path(job: KeyJob, text: Text, cwd: Text, mounts: Mapping[str, str] | None = None) -> str | None:
    """The InferenceX repository path a script path stands for (None: outside the checkout or unknown).

    `mounts` maps container folders to repository folders (`docker run -v`, pyxis `--container-mounts`).
    """
    if not is_known(text):
        return None
    raw = plain(text)
    if not raw.startswith("/"):
        if not is_known(cwd):
            return None
        raw = posixpath.join(plain(cwd) or str(_policy(job)["workflow"]["workspace"]), raw)
    norm = posixpath.normpath(raw)
    for target, source in sorted((mounts or {}).items(), key=lambda kv: -len(kv[0])):
        if norm == target or norm.startswith(target.rstrip("/") + "/"):
            rest = norm[len(target.rstrip("/")):].lstrip("/")
            return posixpath.normpath(posixpath.join(source, rest)) if rest else source
    for root in _policy(job)["repo-roots"]:
        root = str(root).rstrip("/")
        if norm.startswith(root + "/"):
            return norm[len(root) + 1:]
    return None


@lru_cache(maxsize=8)
def _machine_env(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(p).removesuffix(r"\Z").replace("(?s:", "(?:") for p in patterns))


def reader_commands(job: KeyJob) -> Commands:
    """The command table the runner and chain readers and the follower read with: the engines' and
    wrappers' (verifier.launch.commands) and this side's trusted downloads (policy
    `launcher.trusted-downloads`)."""
    from verifier.launch.commands import shell_commands, trusted_downloads

    return shell_commands(downloads=trusted_downloads(job.policy))


def make_reader(job: KeyJob, mounts: Mapping[str, str] | None = None,
                on_load: Callable[[str, str], None] | None = None,
                file_checks: list[tuple[str, Text, Text, bool | None]] | None = None) -> Reader:
    """A shell reader that sources files of this side's tree and knows which variables are run-time
    (`on_load(path, text)` is told of every file it reads). With stand-ins (verifier.shell.trace),
    a file name holding one is never asked of the tree: a file it would load is decided by it, and
    a file test is answered as for a file the tree lacks and kept in `file_checks` (op, path, cwd,
    answer) for the caller to ask again with the values."""
    patterns = tuple(str(p) for p in _policy(job)["workflow"]["machine-env"])
    rx = _machine_env(patterns)

    def unknown(name: str) -> bool:
        return rx.fullmatch(name) is not None

    def load(path: Text, state: State) -> tuple[str, str] | None:
        reader.decide(path, state.cwd)  # which file is read
        rel = repo_path(job, path, state.cwd, mounts)
        if rel is None:
            return None
        data = job.read(rel)
        if data is None:
            return None
        text = data.decode("utf-8", "replace")
        if on_load is not None:
            on_load(rel, text)
        return rel, text

    def file_test(op: str, path: Text, state: State) -> bool | None:
        if op == "cd":  # whether `cd` succeeds: the directory's path decides it
            if _marked(path) or _marked(state.cwd):
                reader.decide(path, state.cwd)
            return _file_test(job, op, path, state.cwd, mounts)
        if _marked(path) or _marked(state.cwd):
            # asked with the values (the question the reading with them asks): the same answer as
            # the stand-in's, a file the tree lacks, or the stand-ins decide
            if file_checks is None or _file_test(job, op, reader.with_values(path), reader.with_values(state.cwd),
                                                 mounts) is not None:
                reader.decide(path, state.cwd)
            assert file_checks is not None
            file_checks.append((op, path, state.cwd, None))
            return None
        return _file_test(job, op, path, state.cwd, mounts)

    from verifier.shell.trace import Reader  # loaded when a multi-node launch is read, not at import

    reader = Reader(load=load, unknown=unknown, file_test=file_test, commands=reader_commands(job))
    return reader


def stand_in_clash() -> tuple[list[bool], Callable[[str, str], None]]:
    """A flag and an `on_load` for `make_reader` that sets it when a file read holds the stand-ins'
    character (verifier.shell.trace, Stand-ins): stand-ins are then not told apart from its text."""
    flag = [False]

    def loaded(rel: str, content: str) -> None:
        if "\x00" in content:
            flag[0] = True

    return flag, loaded


def _file_test(job: KeyJob, op: str, path: Text, cwd: Text, mounts: Mapping[str, str] | None) -> bool | None:
    """A `-f`/`-e`/`-s`/`-r` test of a runner: true for a file of this side's tree, else unknown; and
    whether `cd` into a directory succeeds (`cd`): it does into the repository checkout, as the
    single-node evaluator takes it, elsewhere only the run knows."""
    if op == "cd":  # a directory is in the checkout when what is in it is (the checkout's root too)
        return True if repo_path(job, concat(path, text_of("/_")), cwd, mounts) is not None else None
    rel = repo_path(job, path, cwd, mounts)
    if rel is not None and op in ("-f", "-e", "-s", "-r") and job.has(rel):
        return True
    return None


def _marked(text: Text) -> bool:
    """Whether a Text holds a stand-in (verifier.shell.trace, Stand-ins)."""
    return any("\x00" in seg.text for seg in text)


def read_runner(job: KeyJob, script: str, env: Mapping[str, str]) -> RunnerReading:
    """One runner script read with an environment (not memoized: every tree question goes through `job`)."""
    data = job.read(script)
    if data is None:
        return RunnerReading(script, None, [Problem(script, None, "runner script is not in the tree")])
    workspace = str(_policy(job)["workflow"]["workspace"])
    result = make_reader(job).run(script, data.decode("utf-8", "replace"), env, cwd=workspace)
    problems = [Problem(f, ln, m) for f, ln, m in result.problems if "cannot be read" in m or "too long" in m]
    return RunnerReading(script, result, problems)


@dataclass(frozen=True)
class Probe:
    """What a runner does for a point, as far as choosing the launch kind and the clone goes."""

    starts_srtctl: bool
    plan: FetchPlan | None
    problem: Problem | None


@dataclass
class _Template:
    """One reading of a runner, made with stand-ins for the variables that only reach words.

    `fixed` holds the values of the variables the reading read with their values (those whose
    stand-ins decided something, or that could not take one); `words` the variables it read with
    stand-ins. The reading holds for every environment with those fixed values, word values that
    may take a stand-in's place (`may_stand_in`, also for derived stand-ins such as `${X%%:*}`), and the
    same outcome of every test the reader left to its caller (`checks`: a `[[ ]]` comparison,
    whether a command names or writes a generated file; `file_checks`: a file test, asked of the
    tree). A point's probe is `_plan` of
    the recorded commands with the stand-ins replaced by the point's values, in their argv and
    working directory, which is all `_plan` reads (their environments keep the stand-ins)."""

    fixed: dict[str, str | None]
    words: tuple[str, ...]
    marks: list[Mark]
    events: list[Event]
    stopped: tuple[str, int] | None
    problems: list[Problem]
    marked: list[int] = field(default_factory=list)  # events whose argv or cwd holds a stand-in
    checks: list[tuple[tuple[Text, ...], Callable[[tuple[Text, ...]], object], object]] = \
        field(default_factory=list)
    file_checks: list[tuple[str, Text, Text, bool | None]] = field(default_factory=list)
    probes: dict[tuple[str, ...], Probe] = field(default_factory=dict)  # by side and word values
    # what holds on either tree, by word values: the stand-ins' values once the tests the reader
    # left to its caller came out as recorded, and the probe planned from the commands (a reading
    # shared with the bundle's other tree, verifier.launch.treeshare, serves both sides' points)
    word_values: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    word_probes: dict[tuple[str, ...], Probe] = field(default_factory=dict)

    def fits(self, env: Mapping[str, str]) -> bool:
        """Whether the reading may hold for this environment (`probe` checks the rest)."""
        return all(env.get(name) == value for name, value in self.fixed.items()) and \
            all(may_stand_in(env.get(name)) for name in self.words)

    def values(self, env: Mapping[str, str]) -> list[str] | None:
        """The value of every stand-in for this environment (None: a derived one may not take its place)."""
        return stand_in_values(self.marks, lambda name: env.get(name, ""))

    def probe(self, job: KeyJob, script: str, env: Mapping[str, str]) -> Probe | None:
        """This environment's probe (None: the reading does not hold for it).

        Only the file tests ask the tree (`_file_test`, of this side): the stand-ins' values, the
        other tests and the probe planned from the commands (`_probe_of`, which reads the
        context's policy, not the tree) follow from the word values alone, as `probes` already
        assumes for one side, so they are kept by word values for the other side's points too."""
        key = (job.side, *(env.get(name) or "" for name in self.words))
        known = self.probes.get(key)
        if known is not None:
            return known
        words = key[1:]
        values = self.word_values.get(words)
        if values is None:
            values = self.values(env)
            if values is None or any(test(tuple(_put(v, values) for v in texts)) != outcome
                                     for texts, test, outcome in self.checks):
                return None
            self.word_values[words] = values
        if any(_file_test(job, op, _put(path, values), _put(cwd, values), None) != outcome
               for op, path, cwd, outcome in self.file_checks):
            return None  # this point's file exists in this tree: the reading took the other branch
        probe = self.word_probes.get(words)
        if probe is None:
            events = list(self.events)
            for i in self.marked:
                event = events[i]
                events[i] = dataclasses.replace(event, argv=tuple(_put(a, values) for a in event.argv),
                                                cwd=_put(event.cwd, values))
            probe = self.word_probes[words] = _probe_of(job, script, events, self.stopped, self.problems)
        self.probes[key] = probe
        return probe


def _put(text: Text, values: list[str]) -> Text:
    """A Text with its stand-ins replaced by their values (each segment keeps its origin)."""
    if not _marked(text):
        return text
    return tuple(Seg(_MARK.sub(lambda m: values[int(m.group(1))], seg.text), seg.file, seg.line, seg.known, seg.why,
                     seg.many)
                 if "\x00" in seg.text else seg for seg in text)


def runner_probe(job: KeyJob, script: str, env: Mapping[str, str]) -> Probe:
    """`Probe` of one runner script for an environment, from a reading shared by many points.

    A runner is read with stand-ins for its environment (`_template`): the variables whose values
    decide something are read with their values, the others (a point's CONFIG_FILE, which only
    reaches the words of `srtctl apply -f` and of copies) with stand-ins. The reading is reused for
    every point that agrees on the deciding variables (`_Template` says for which values of the
    others), and each point's probe is planned from the reading's commands with its own values put
    in: the probe a reading with the point's values gives. A reading made on the other tree of the
    bundle is reused when the other tree answers every question it asked the same way
    (verifier.launch.treeshare).
    """
    probe = _shared_probe(job, script, env)
    audit = active_audit()
    if audit is not None:  # the probe of a reading with this point's values
        with long_way(job):
            template, _log = _template(job, script, env, set(env))
            fresh = template.probe(job, script, env)
        audit.compare("runner probe", f"{script} ({point_of(env)})", fresh == probe)
    return probe


def _shared_probe(job: KeyJob, script: str, env: Mapping[str, str]) -> Probe:
    from verifier.launch.treeshare import tree_share

    templates: list[_Template] = job.ctx.memo(f"launch.runner.templates.{job.side}.{script}", list)
    for template in templates:
        if template.fits(env):
            probe = template.probe(job, script, env)
            if probe is not None:
                return probe
    share = tree_share(job)
    found, shared = share.find(job, ("runner-template", script), lambda have: have.fits(env))
    if found:
        probe = shared.probe(job, script, env)
        if probe is not None:
            templates.append(shared)
            return probe
    learned: set[str] = job.ctx.memo(f"launch.runner.decides.{script}", set)
    template, log = _template(job, script, env, learned)
    probe = template.probe(job, script, env)
    if probe is None:  # a derived value or a test comes out otherwise for this point: its own values
        template, log = _template(job, script, env, set(env))
        probe = template.probe(job, script, env)
    assert probe is not None  # a reading without stand-ins holds for the environment it was made with
    templates.append(template)
    share.add(job, ("runner-template", script), tuple(log.items()), template, extra=template)
    return probe


def _template(job: KeyJob, script: str, env: Mapping[str, str],
              learned: set[str]) -> tuple[_Template, dict[tuple[str, str], Any]]:
    """A reading of the runner for `env`, with the tree questions it asked: stand-ins for every
    variable whose value may take one but those that decided something here before (`learned`).
    A stand-in that decides something ends the reading (verifier.shell.trace.Decided) before it
    can ask the tree anything the reading with the values would not; its variable is then read with
    its value and the runner read again, until no stand-in decides anything (each round stands in
    for fewer variables: the last is a reading with the values themselves at worst)."""
    from verifier.shell.trace import Decided

    with job.logging_accesses() as first:
        data = job.read(script)
    if data is None:
        return _Template({}, (), [], [], None, [Problem(script, None, "runner script is not in the tree")]), first
    text = data.decode("utf-8", "replace")
    standing = {name for name, value in env.items() if may_stand_in(value) and name not in learned}
    workspace = str(_policy(job)["workflow"]["workspace"])
    while True:
        unsure, loaded = stand_in_clash()
        file_checks: list[tuple[str, Text, Text, bool | None]] = []
        reader = make_reader(job, on_load=loaded, file_checks=file_checks)
        reader.stop_at = lambda words: words[:2] == ["srtctl", "apply"]  # what follows it is the run's results
        run_env = {name: (reader.stand_in(name, value) if name in standing else value) for name, value in env.items()}
        with job.logging_accesses() as log:
            try:
                result = reader.run(script, text, run_env, cwd=workspace)
                if standing:  # a problem's message is the caller's to check
                    reader.decide(*(m for _f, _ln, m in result.problems))
            except Decided:
                pass
        decided = set(standing) if reader.decided_all or unsure[0] or "\x00" in text else reader.decided & standing
        if not decided:
            break
        learned |= decided
        standing -= decided
    problems = [Problem(f, ln, m) for f, ln, m in result.problems if "cannot be read" in m or "too long" in m]
    words = tuple(sorted(reader.reads & standing))
    fixed = {name: env.get(name) for name in sorted(reader.reads - standing)}
    marked = [i for i, e in enumerate(result.events) if _marked(e.cwd) or any(_marked(a) for a in e.argv)]
    # the questions of the last round: the earlier rounds asked only questions it asked too
    return _Template(fixed, words, list(reader.marks), result.events, result.stopped, problems, marked,
                     list(reader.checks), file_checks), {**first, **log}


def _probe_of(job: KeyJob, script: str, events: list[Event], stopped: tuple[str, int] | None,
              problems: list[Problem]) -> Probe:
    """The probe of a reading's commands."""
    starts = any(e.words()[:2] == ["srtctl", "apply"] for e in events)
    if problems:
        return Probe(starts, None, problems[0])
    plan, problem = _plan(job, script, events, stopped)
    return Probe(starts, plan, problem)


def _clone_args(words: list[str]) -> tuple[str | None, str | None, str | None]:
    """(url, directory, branch) of a `git clone` argv."""
    url = directory = branch = None
    rest = words[2:]
    i = 0
    positional: list[str] = []
    while i < len(rest):
        w = rest[i]
        if w in ("--branch", "-b") and i + 1 < len(rest):
            branch = rest[i + 1]
            i += 2
            continue
        if w.startswith("--branch="):
            branch = w.split("=", 1)[1]
        elif w in ("--depth", "--origin", "-o", "--reference", "--config", "-c", "--filter", "--jobs", "-j"):
            i += 2
            continue
        elif not w.startswith("-"):
            positional.append(w)
        i += 1
    if positional:
        url = positional[0]
    if len(positional) > 1:
        directory = positional[1]
    elif url:
        directory = posixpath.basename(url.rstrip("/")).removesuffix(".git")
    return url, directory, branch


def _resolve(cwd: Text, path: str) -> str:
    base = plain(cwd)
    return posixpath.normpath(path if path.startswith("/") or not base else posixpath.join(base, path))


def fetch_plan(job: KeyJob, point: Point) -> tuple[FetchPlan | None, Problem | None]:
    """What the point's runner clones and runs (`srtctl apply` in an srt-slurm clone), or the problem."""
    scripts, problem = runner_scripts(job, point)
    if problem is not None:
        return None, problem
    env = launcher_env(job, point)
    plans: list[FetchPlan] = []
    for script in scripts:
        probe = runner_probe(job, script, env)
        if probe.problem is not None or probe.plan is None:
            return None, probe.problem or Problem(script, None, "cannot be read")
        plans.append(probe.plan)
    first = plans[0]
    for other in plans[1:]:
        if (other.repo, other.ref) != (first.repo, first.ref):
            return None, Problem(other.runner, other.ref_line,
                                 f"runners of label {point.runner} fetch different srt-slurm revisions "
                                 f"({first.label} in {first.runner}, {other.label} in {other.runner})")
    return first, None


def _plan(job: KeyJob, script: str, events: list[Event],
          stopped: tuple[str, int] | None) -> tuple[FetchPlan | None, Problem | None]:
    apply_at = next((i for i, e in enumerate(events) if e.words()[:2] == ["srtctl", "apply"]), None)
    if apply_at is None:
        where = stopped
        detail = f" (the run ends at line {where[1]})" if where else ""
        return None, Problem(script, where[1] if where else None,
                             f"runner runs no `srtctl apply` for this point{detail}")
    apply = events[apply_at]
    if apply.guards:
        file, line = apply.guards[0]
        return None, Problem(file, line, "whether the runner runs `srtctl apply` depends on a condition "
                                         "that cannot be decided statically")
    # a clone directory may hold run-time parts (`srt-slurm-${GITHUB_RUN_ID}`): compared by their text
    workdir = _resolve(apply.cwd, ".")
    clone: tuple[Event, str, str, str | None] | None = None
    for event in events[:apply_at]:
        words = event.words()
        if words[:2] != ["git", "clone"]:
            continue
        url, directory, branch = _clone_args(words)
        if url is None or directory is None:
            continue
        target = _resolve(event.cwd, directory)
        if target != workdir:
            continue
        if event.guards:
            file, line = event.guards[0]
            return None, Problem(file, line, "which srt-slurm repository the runner clones depends on a "
                                             "condition that cannot be decided statically")
        if not any(is_known(a) and plain(a) == url for a in event.argv):
            return None, Problem(event.file, event.line, "the cloned repository is a run-time value")
        clone = (event, url, target, branch)
    if clone is None:
        return None, Problem(script, apply.line, "`srtctl apply` runs outside any clone the runner makes")
    event, url, target, branch = clone
    m = _GITHUB.match(url)
    if not m:
        return None, Problem(event.file, event.line, f"clones {url}, which is not a GitHub repository")
    repo = m.group(1)
    ref, ref_line = (branch or "HEAD"), event.line
    overlays: list[Overlay] = []
    made: set[str] = set()
    start = events.index(event)
    for later in events[start + 1:apply_at]:
        words = later.words()
        in_clone = _resolve(later.cwd, ".") == target
        if words[:2] == ["git", "checkout"] and in_clone:
            args = [w for w in words[2:] if not w.startswith("-")]
            if not args:
                continue
            if later.guards:
                file, line = later.guards[0]
                return None, Problem(file, line, "which srt-slurm revision the runner checks out depends on a "
                                                 "condition that cannot be decided statically")
            if not all(is_known(a) for a in later.argv):
                return None, Problem(later.file, later.line, "the checked-out revision is a run-time value")
            ref, ref_line = args[0], later.line
        elif words[:1] == ["git"] and in_clone and len(words) > 1 and words[1] in ("fetch", "pull", "reset", "apply",
                                                                                  "am", "cherry-pick", "merge"):
            return None, Problem(later.file, later.line, f"the runner changes the clone with `git {words[1]}`, "
                                                         "which is not followed statically")
        elif words[:1] == ["mkdir"] and in_clone:
            made.update(_resolve(later.cwd, w) for w in words[1:] if not w.startswith("-"))
        elif words[:1] == ["cp"] and in_clone:
            opts = "".join(w[1:] for w in words[1:] if w.startswith("-") and not w.startswith("--"))
            operands = [a for a, w in zip(later.argv[1:], words[1:], strict=True) if not w.startswith("-")]
            if len(operands) != 2:
                continue
            source = repo_path(job, operands[0], later.cwd)
            if source is None or not is_known(operands[1]):
                continue
            dest = _resolve(later.cwd, plain(operands[1]))
            if not dest.startswith(target + "/"):
                continue
            rel = dest[len(target) + 1:]
            folder = "r" in opts.lower() or "a" in opts
            if folder and "T" not in opts and dest in made:
                rel = rel + "/" + posixpath.basename(source.rstrip("/"))
            overlays.append(Overlay(source, rel, later.line, folder))
    config = None
    words = apply.words()
    for i, w in enumerate(words):
        if w in ("-f", "--file") and i + 1 < len(words):
            config = words[i + 1]
    return FetchPlan(script, repo, ref, event.line, ref_line, tuple(overlays), apply.line, config), None
