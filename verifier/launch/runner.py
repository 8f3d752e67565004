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
on what they fetch. A clone or checkout that sits under a condition the reader cannot decide is
reported with that condition's line.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from verifier.configs.points import Point
from verifier.configs.runners import runners
from verifier.launch.job import KeyJob
from verifier.shell.text import Text, is_known, plain

if TYPE_CHECKING:
    from verifier.shell.trace import Event, Reader, ReadResult, State

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


def make_reader(job: KeyJob, mounts: Mapping[str, str] | None = None) -> Reader:
    """A shell reader that sources files of this side's tree and knows which variables are run-time."""
    patterns = tuple(str(p) for p in _policy(job)["workflow"]["machine-env"])
    rx = _machine_env(patterns)

    def unknown(name: str) -> bool:
        return rx.fullmatch(name) is not None

    def load(path: Text, state: State) -> tuple[str, str] | None:
        rel = repo_path(job, path, state.cwd, mounts)
        if rel is None:
            return None
        data = job.read(rel)
        return None if data is None else (rel, data.decode("utf-8", "replace"))

    def file_test(op: str, path: Text, state: State) -> bool | None:
        rel = repo_path(job, path, state.cwd, mounts)
        if rel is not None and op in ("-f", "-e", "-s", "-r") and job.has(rel):
            return True
        return None

    from verifier.launch.commands import shell_commands
    from verifier.shell.trace import Reader  # loaded when a multi-node launch is read, not at import

    return Reader(load=load, unknown=unknown, file_test=file_test, commands=shell_commands())


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


def runner_probe(job: KeyJob, script: str, env: Mapping[str, str]) -> Probe:
    """`Probe` of one runner script for an environment, cached by the variables the reading used.

    A runner read for one point is reused for every point whose environment agrees on each variable
    that reading expanded or tested (the reading is a function of those alone), so a key with many
    points reads its runner once or twice; a reading made on the other tree of the bundle is reused
    when the other tree answers every question it asked the same way (verifier.launch.treeshare).
    """
    from verifier.launch.treeshare import tree_share

    cache: list[tuple[dict[str, str | None], Probe]] = job.ctx.memo(f"launch.runner.probes.{job.side}.{script}",
                                                                     list)
    for deps, probe in cache:
        if all(env.get(name) == value for name, value in deps.items()):
            return probe
    share = tree_share(job)
    found, shared = share.find(job, ("runner-probe", script),
                               lambda have: all(env.get(name) == value for name, value in have.items()))
    if found:
        cache.append(shared)
        return shared[1]  # type: ignore[no-any-return]
    with job.logging_accesses() as log:
        deps, probe = _probe(job, script, env)
    cache.append((deps, probe))
    share.add(job, ("runner-probe", script), tuple(log.items()), (deps, probe), extra=deps)
    return probe


def _probe(job: KeyJob, script: str, env: Mapping[str, str]) -> tuple[dict[str, str | None], Probe]:
    """A runner read for an environment: (the values of the variables it used, its `Probe`)."""
    data = job.read(script)
    if data is None:
        return {}, Probe(False, None, Problem(script, None, "runner script is not in the tree"))
    workspace = str(_policy(job)["workflow"]["workspace"])
    reader = make_reader(job)
    reader.stop_at = lambda words: words[:2] == ["srtctl", "apply"]  # what follows it is the run's results
    result = reader.run(script, data.decode("utf-8", "replace"), env, cwd=workspace)
    problems = [Problem(f, ln, m) for f, ln, m in result.problems if "cannot be read" in m or "too long" in m]
    starts = any(e.words()[:2] == ["srtctl", "apply"] for e in result.events)
    if problems:
        probe = Probe(starts, None, problems[0])
    else:
        plan, problem = _plan(job, script, result)
        probe = Probe(starts, plan, problem)
    return {name: env.get(name) for name in reader.reads}, probe


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


def _plan(job: KeyJob, script: str, result: ReadResult) -> tuple[FetchPlan | None, Problem | None]:
    events = result.events
    apply_at = next((i for i, e in enumerate(events) if e.words()[:2] == ["srtctl", "apply"]), None)
    if apply_at is None:
        where = result.stopped
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
            args = [a for a, w in zip(later.argv[1:], words[1:], strict=True) if not w.startswith("-")]
            if len(args) != 2:
                continue
            source = repo_path(job, args[0], later.cwd)
            if source is None or not is_known(args[1]):
                continue
            dest = _resolve(later.cwd, plain(args[1]))
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
