"""CI facts shared by Checks 1, 2, 4 and 14: job-name families, runs per commit, the reuse command,
and the one sweep run the other checks judge.

A check-run name is `<lane> / <matrix point>` (cases/README.md). `policies/ci.yaml` says which lanes
are benchmarks and which are evals; anything else (collect-evals, setup, a bare `lane /` placeholder
of a skipped reusable workflow) is never counted. Runs are grouped per (run id, commit), and for a
job re-run in a later attempt only its newest attempt counts.

Public API (each memoized on the context):
  * `run_jobs(ctx) -> tuple[RunJobs, ...]`: every run seen in checks.yaml, with its classified jobs.
  * `reuse_command(ctx) -> ReuseCommand`: the authorized /use or /reuse-sweep-run that wins (§12.1),
    the comments that were ignored, and the validation of its source run.
  * `sweep_selection(ctx) -> SweepSelection`: the passing in-PR run Check 1 accepts (the pinned run
    first, then the pinned head, then newer commits), with every candidate it looked at.
  * `run_url(ctx, run_id)`, `run_evidence(ctx, run_id, ...)`: evidence helpers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Literal

from verifier.core.context import CheckContext
from verifier.core.logins import is_login
from verifier.core.model import Bundle, Comment, Run
from verifier.core.results import RunEvidence
from verifier.documents.reuse import last_command

Family = Literal["benchmark", "eval"]

MAX_RUN_ID = 10**15


# --------------------------------------------------------------------------------------------
# Job names


@dataclass(frozen=True, eq=False, repr=False)
class Job:
    """One benchmark or eval job of a run (its newest attempt)."""

    name: str
    lane: str
    family: Family
    conclusion: str | None
    attempt: int


@cache
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


def classify_job(name: str, policy: Mapping[str, Any]) -> tuple[Family, str] | None:
    """(family, lane) of a check-run name, or None for aggregators, placeholders and other jobs.

    The lane is the text before the first ` / `; a name with nothing after the slash is the
    placeholder of a skipped reusable-workflow lane, not a job.
    """
    if name in policy["aggregator_jobs"]:
        return None
    lane, sep, point = name.partition(" /")
    if not sep or not point.startswith(" ") or not point.strip():
        return None
    lane = lane.strip()
    for pattern in _compiled(tuple(policy["eval_lanes"])):
        if pattern.search(lane):
            return "eval", f"{lane} /"
    for pattern in _compiled(tuple(policy["benchmark_lanes"])):
        if pattern.search(lane):
            return "benchmark", f"{lane} /"
    return None


@dataclass(frozen=True, eq=False, repr=False)
class LaneCount:
    """How many jobs of one lane passed."""

    lane: str
    family: Family
    passed: int
    executed: int
    skipped: int


@dataclass(frozen=True, eq=False, repr=False)
class RunJobs:
    """The classified jobs of one run on one commit, from checks.yaml."""

    run_id: int
    sha: str
    jobs: tuple[Job, ...]
    success: frozenset[str]
    not_executed: frozenset[str]

    def _of(self, family: Family) -> tuple[Job, ...]:
        return tuple(j for j in self.jobs if j.family == family)

    @property
    def benchmark_jobs(self) -> tuple[Job, ...]:
        """Benchmark matrix jobs."""
        return self._of("benchmark")

    @property
    def eval_jobs(self) -> tuple[Job, ...]:
        """Eval jobs."""
        return self._of("eval")

    def executed(self, family: Family | None = None) -> tuple[Job, ...]:
        """Jobs that ran (a skipped job did not)."""
        return tuple(
            j for j in self.jobs if (family is None or j.family == family) and j.conclusion not in self.not_executed
        )

    def passed(self, family: Family | None = None) -> tuple[Job, ...]:
        """Jobs that concluded with a success conclusion."""
        return tuple(j for j in self.executed(family) if j.conclusion in self.success)

    @property
    def not_passed(self) -> tuple[Job, ...]:
        """Executed jobs that did not succeed (failure, cancelled, timed_out, neutral, still running)."""
        return tuple(j for j in self.executed() if j.conclusion not in self.success)

    @property
    def skipped(self) -> tuple[Job, ...]:
        """Matrix jobs that were not executed."""
        return tuple(j for j in self.jobs if j.conclusion in self.not_executed)

    @property
    def is_passing(self) -> bool:
        """At least one benchmark and one eval job passed, and every executed one passed."""
        return bool(self.passed("benchmark")) and bool(self.passed("eval")) and not self.not_passed

    def lanes(self) -> tuple[LaneCount, ...]:
        """Per-lane counts, benchmark lanes first, in first-seen order."""
        order: list[tuple[Family, str]] = []
        for job in self.jobs:
            if (job.family, job.lane) not in order:
                order.append((job.family, job.lane))
        order.sort(key=lambda item: 0 if item[0] == "benchmark" else 1)
        out = []
        for family, lane in order:
            jobs = [j for j in self.jobs if j.lane == lane and j.family == family]
            executed = [j for j in jobs if j.conclusion not in self.not_executed]
            out.append(
                LaneCount(
                    lane=lane,
                    family=family,
                    passed=sum(1 for j in executed if j.conclusion in self.success),
                    executed=len(executed),
                    skipped=len(jobs) - len(executed),
                )
            )
        return tuple(out)


def _run_jobs(bundle: Bundle, policy: Mapping[str, Any]) -> tuple[RunJobs, ...]:
    newest: dict[tuple[int, str], dict[str, Job]] = {}
    order: list[tuple[int, str]] = []
    for cr in bundle.check_runs:
        if cr.run_id is None:
            continue
        kind = classify_job(cr.name, policy)
        key = (cr.run_id, cr.sha)
        if key not in newest:
            newest[key] = {}
            order.append(key)
        if kind is None:
            continue
        family, lane = kind
        prior = newest[key].get(cr.name)
        if prior is None or cr.run_attempt >= prior.attempt:
            newest[key][cr.name] = Job(cr.name, lane, family, cr.conclusion, cr.run_attempt)
    success = frozenset(policy["success_conclusions"])
    skipped = frozenset(policy["not_executed_conclusions"])
    return tuple(
        RunJobs(run_id=rid, sha=sha, jobs=tuple(newest[(rid, sha)].values()), success=success, not_executed=skipped)
        for rid, sha in order
    )


def run_jobs(ctx: CheckContext) -> tuple[RunJobs, ...]:
    """Every (run, commit) seen in checks.yaml with its classified jobs, in checks.yaml order."""
    return ctx.memo("ci.run_jobs", lambda: _run_jobs(ctx.bundle, ctx.policy("ci")))


# --------------------------------------------------------------------------------------------
# Evidence helpers


def run_url(ctx: CheckContext, run_id: int) -> str:
    """The run's web address (from run.yaml when the bundle has it)."""
    run = ctx.bundle.runs.get(run_id)
    if run is not None and run.url:
        return run.url
    return f"https://github.com/{ctx.bundle.pr.repo}/actions/runs/{run_id}"


def run_evidence(ctx: CheckContext, run_id: int, job: str | None = None, artifact: str | None = None) -> RunEvidence:
    """RunEvidence for a run, optionally naming one job or artifact."""
    return RunEvidence(run_id=run_id, url=run_url(ctx, run_id), job=job, artifact=artifact)


# --------------------------------------------------------------------------------------------
# Reuse commands (FORMATS §12.1)


@dataclass(frozen=True, eq=False, repr=False)
class CommandHit:
    """One reuse command found in a comment: the last one of that comment."""

    comment: Comment
    command: Literal["/use", "/reuse-sweep-run"]
    run_id: int | None
    text: str
    # "bot" | "association" | "permission" | "permission-unread" | None (counted)
    ignored_because: str | None = None


@dataclass(frozen=True, eq=False, repr=False)
class ReuseCommand:
    """The winning reuse command and what is known about its source run.

    `status`: "absent" (no authorized command), "valid", "invalid" (`problems` are (kind, value)
    pairs naming the §12.1 rule broken: event, status, workflow, commit, artifact, conclusion,
    label) or "unverifiable" (the source run is not in the bundle; `missing` names it).
    `run_id` is the pinned id, or for a bare /reuse-sweep-run the latest eligible run in the bundle.
    """

    status: Literal["absent", "valid", "invalid", "unverifiable"]
    hit: CommandHit | None = None
    run_id: int | None = None
    pinned: bool = False
    problems: tuple[Problem, ...] = ()
    missing: str | None = None
    ignored: tuple[CommandHit, ...] = ()

    @property
    def pinned_run_id(self) -> int | None:
        """The run a valid command designates (what Check 1 judges first), else None."""
        return self.run_id if self.status == "valid" else None


def find_commands(comments: tuple[Comment, ...]) -> list[CommandHit]:
    """Every comment's last reuse command, oldest comment first (not yet filtered by author)."""
    hits = []
    ordered = sorted(enumerate(comments), key=lambda item: (item[1].created_at, item[0]))
    for _, comment in ordered:
        last = last_command(comment.body)
        if last is None:
            continue
        reuse_id, use_id = last.group(1), last.group(2)
        command: Literal["/use", "/reuse-sweep-run"] = "/use" if use_id is not None else "/reuse-sweep-run"
        digits = use_id if use_id is not None else reuse_id
        run_id = int(digits) if digits is not None and len(digits) <= 15 else None
        if digits is not None and run_id is None:
            continue  # not a run id GitHub could have issued
        hits.append(CommandHit(comment=comment, command=command, run_id=run_id, text=last.group(0).strip()))
    return hits


def _is_bot(comment: Comment) -> bool:
    return comment.is_bot or comment.author.lower().endswith("[bot]")


Problem = tuple[str, str]  # (kind, value): kinds event, status, workflow, commit, artifact, conclusion, label


def _source_problems(run: Run, bundle: Bundle, policy: Mapping[str, Any], pinned: bool) -> list[Problem]:
    problems: list[Problem] = []
    if run.event != policy["source_event"]:
        problems.append(("event", run.event or "none"))
    if run.status != policy["source_status"]:
        problems.append(("status", run.status or "none"))
    if run.path is not None and run.path != policy["source_workflow_path"]:
        problems.append(("workflow", run.path))
    if run.head_sha not in bundle.pr.commits:
        problems.append(("commit", run.head_sha[:9] or "none"))
    patterns = _compiled(tuple(policy["result_artifacts"]))
    if not any(not a.expired and any(p.search(a.name) for p in patterns) for a in run.artifacts):
        problems.append(("artifact", ""))
    allowed = policy["pinned_conclusions"] if pinned else policy["success_conclusions"]
    if run.conclusion not in allowed:
        problems.append(("conclusion", run.conclusion or "none"))
    return problems


def commander_role(bundle: Bundle, login: str, policy: Mapping[str, Any]) -> str | None:
    """The repository role GitHub records for a commenter (github.yaml permissions), or None.

    Authority is the permission GitHub reports (`role_name`, else `permission`), never the
    comment's `author_association`: MEMBER or COLLABORATOR says nothing about write access. A
    login that is not plain ASCII matches nobody (verifier.core.logins), and a permission that was not
    recorded is unread, so the command does not count.
    """
    if not is_login(login):
        return None
    key = login.lower()
    perm = next((p for name, p in bundle.github.permissions.items() if name.isascii() and name.lower() == key), None)
    if perm is None:
        return None
    return perm.role_name or perm.permission


def _reuse_command(bundle: Bundle, policy: Mapping[str, Any]) -> ReuseCommand:
    counted: list[CommandHit] = []
    ignored: list[CommandHit] = []
    for hit in find_commands(bundle.comments):
        # NONE is also what the reader records when a bundle gives no association: it is left to the
        # permission test, which a real NONE fails anyway (an account with no association has no role).
        association = hit.comment.author_association
        if _is_bot(hit.comment):
            ignored.append(replace(hit, ignored_because="bot"))
        elif association not in ("NONE", *policy["authorized_associations"]):
            ignored.append(replace(hit, ignored_because="association"))
        elif (role := commander_role(bundle, hit.comment.author, policy)) is None:
            ignored.append(replace(hit, ignored_because="permission-unread"))
        elif role not in policy["authorized_roles"]:
            ignored.append(replace(hit, ignored_because="permission"))
        else:
            counted.append(hit)
    if not counted:
        return ReuseCommand(status="absent", ignored=tuple(ignored))
    hit = counted[-1]
    label_problems: list[Problem] = [("label", label) for label in policy["invalidating_labels"]
                                     if label in bundle.pr.labels]
    pinned = hit.run_id is not None
    if pinned:
        assert hit.run_id is not None
        run = bundle.runs.get(hit.run_id)
        if run is None:
            if label_problems:
                return ReuseCommand("invalid", hit, hit.run_id, True, tuple(label_problems), ignored=tuple(ignored))
            return ReuseCommand("unverifiable", hit, hit.run_id, True, missing=f"runs/{hit.run_id}/run.yaml",
                                ignored=tuple(ignored))
        problems = label_problems + _source_problems(run, bundle, policy, pinned=True)
        status: Literal["valid", "invalid"] = "invalid" if problems else "valid"
        return ReuseCommand(status, hit, hit.run_id, True, tuple(problems), ignored=tuple(ignored))
    # Bare /reuse-sweep-run: the latest eligible run among those the bundle holds.
    eligible = [r for r in bundle.runs.values() if not _source_problems(r, bundle, policy, pinned=False)]
    if label_problems:
        return ReuseCommand("invalid", hit, None, False, tuple(label_problems), ignored=tuple(ignored))
    if not eligible:
        return ReuseCommand("unverifiable", hit, None, False, missing="an eligible run-sweep.yml run of this PR",
                            ignored=tuple(ignored))
    latest = max(eligible, key=lambda r: (r.created_at is not None, r.created_at, r.id))
    return ReuseCommand("valid", hit, latest.id, False, ignored=tuple(ignored))


def reuse_command(ctx: CheckContext) -> ReuseCommand:
    """The reuse command that wins on this PR (newest authorized comment; last command in it)."""
    return ctx.memo("ci.reuse_command", lambda: _reuse_command(ctx.bundle, ctx.policy("ci")["reuse"]))


# --------------------------------------------------------------------------------------------
# Sweep selection (Check 1; the run Checks 2 and 14 read)


@dataclass(frozen=True, eq=False, repr=False)
class SweepSelection:
    """The run Check 1 accepts and everything it considered.

    `run`: the chosen passing run (None when no in-PR run passed). `candidates`: runs on commits
    the verdict may use, best first. `outside`: runs seen on commits not in the PR (check-runs or
    run.yaml), never counted. `later`: runs on commits pushed after the pinned head (head moved).
    """

    run: RunJobs | None
    pinned_run_id: int | None
    candidates: tuple[RunJobs, ...]
    outside: tuple[tuple[int, str], ...] = ()
    later: tuple[RunJobs, ...] = ()
    inconsistent: tuple[RunJobs, ...] = field(default=())
    command_run_id: int | None = None  # the run the winning reuse command names, valid or not
    stale: dict[int, tuple[str, ...]] = field(default_factory=dict)  # run id -> the keys it measured

    @property
    def chosen_is_pinned(self) -> bool:
        """True when the chosen run is the one the reuse command pins."""
        return self.run is not None and self.run.run_id == self.pinned_run_id


def _sweep_selection(ctx: CheckContext) -> SweepSelection:
    bundle = ctx.bundle
    pr = bundle.pr
    commits = list(pr.commits)
    usable = set(commits)
    if pr.head_sha in usable:
        usable = set(commits[: commits.index(pr.head_sha) + 1])
    position = {sha: i for i, sha in enumerate(commits)}
    command = reuse_command(ctx)
    pinned = command.pinned_run_id

    candidates: list[RunJobs] = []
    later: list[RunJobs] = []
    outside: list[tuple[int, str]] = []
    inconsistent: list[RunJobs] = []
    for rj in run_jobs(ctx):
        if not rj.jobs:
            continue
        run = bundle.runs.get(rj.run_id)
        if rj.sha not in position:
            outside.append((rj.run_id, rj.sha))
        elif run is not None and run.head_sha and run.head_sha != rj.sha:
            inconsistent.append(rj)
        elif rj.sha not in usable:
            later.append(rj)
        else:
            candidates.append(rj)
    seen = {rid for rid, _ in outside} | {rj.run_id for rj in candidates + later + inconsistent}
    baselines = set(bundle.github.baseline_runs.values())
    for run in bundle.runs.values():
        if run.id not in seen and run.id not in baselines and run.head_sha and run.head_sha not in position:
            outside.append((run.id, run.head_sha))

    def rank(rj: RunJobs) -> tuple[int, int, int, int]:
        return (
            0 if rj.run_id == pinned else 1,
            0 if rj.sha == pr.head_sha else 1,
            -position[rj.sha],
            -rj.run_id,
        )

    candidates.sort(key=rank)
    stale = _stale_runs(ctx, candidates)
    chosen = next((rj for rj in candidates if rj.is_passing and rj.run_id not in stale), None)
    return SweepSelection(
        run=chosen,
        pinned_run_id=pinned,
        candidates=tuple(candidates),
        outside=tuple(outside),
        later=tuple(later),
        inconsistent=tuple(inconsistent),
        command_run_id=command.run_id,
        stale=stale,
    )


_JOB_KEY = re.compile(r"/\s*([a-z0-9][a-z0-9._]*(?:-[a-z0-9._]+){3,})(?:\s|$)")


def job_config_key(name: str) -> str | None:
    """The config key a matrix job names after its lane (`agentic / <key> tp2 conc32 ...`), if any."""
    m = _JOB_KEY.search(name)
    return m.group(1) if m else None


def _stale_runs(ctx: CheckContext, candidates: list[RunJobs]) -> dict[int, tuple[str, ...]]:
    """Runs whose benchmark jobs measured only config keys the PR no longer submits.

    A sweep on an earlier commit validates the PR only if it measured an affected configuration;
    one that ran a key since renamed or removed (e.g. a `...-tp2` key folded into another) does
    not. Runs whose job names carry no recognizable key are never treated as stale.
    """
    from verifier.configs import master_entries
    from verifier.launch.affected import submitted_entries

    submitted = set(submitted_entries(ctx)) or set(master_entries(ctx, "head"))
    stale: dict[int, tuple[str, ...]] = {}
    for rj in candidates:
        keys = {k for job in rj.executed("benchmark") if (k := job_config_key(job.name))}
        if keys and not keys & submitted:
            stale[rj.run_id] = tuple(sorted(keys))
    return stale


def sweep_selection(ctx: CheckContext) -> SweepSelection:
    """The in-PR run Check 1 accepts, and the runs it looked at."""
    return ctx.memo("ci.sweep_selection", lambda: _sweep_selection(ctx))


def sweep_run(ctx: CheckContext) -> tuple[RunJobs | None, Run | None]:
    """The accepted sweep run's jobs and its run.yaml record (None when the bundle lacks either)."""
    chosen = sweep_selection(ctx).run
    if chosen is None:
        return None, None
    return chosen, ctx.bundle.runs.get(chosen.run_id)


def measured_run(ctx: CheckContext) -> tuple[int | None, Literal["sweep", "pinned", "none"]]:
    """The run whose measured points are judged: Check 1's run, else the run a valid reuse command
    pins (its points are what will be published), else none."""
    chosen = sweep_selection(ctx).run
    if chosen is not None:
        return chosen.run_id, "sweep"
    pinned = reuse_command(ctx).pinned_run_id
    if pinned is not None:
        return pinned, "pinned"
    return None, "none"


# --------------------------------------------------------------------------------------------
# Per-point measurement (Checks 1 and 14): every point the PR adds or changes was measured


@dataclass(frozen=True, eq=False, repr=False)
class PointMeasure:
    """How one point the PR adds or changes stands in the measured run.

    `status`: "measured" (an executed, successful job and its unexpired bmk_* result.json naming
    this config key, point and the run's commit), "job-not-passed" (its job was skipped, cancelled
    or failed and left no result), "expired" (its artifact expired: nothing can be read),
    "foreign" (the only result.json for it names another config key or commit), "no-result" (its
    job passed but the bundle holds no result.json of it), or "absent" (the run has neither a job
    nor an artifact for it).
    """

    key: str
    exp_name: str
    file: str
    line: int | None
    status: Literal["measured", "job-not-passed", "expired", "foreign", "no-result", "absent"]
    job: str | None = None
    conclusion: str | None = None
    artifact: str | None = None
    detail: str | None = None


@dataclass(frozen=True, eq=False, repr=False)
class PointCoverage:
    """The points the PR adds or changes, judged against the measured run."""

    run_id: int | None
    points: tuple[PointMeasure, ...] = ()

    @property
    def missing(self) -> tuple[PointMeasure, ...]:
        """Points that were not measured in the run."""
        return tuple(p for p in self.points if p.status != "measured")


def _recipe_changed(ctx: CheckContext, path: str | None) -> bool:
    return path is not None and ctx.bundle.base.read(path) != ctx.bundle.head.read(path)


def _signature(point: Any) -> tuple[Any, ...]:
    recipe = point.srt_recipe.text if point.srt_recipe is not None else None
    eval_recipe = point.eval_srt_recipe.text if point.eval_srt_recipe is not None else None
    return (point.image, point.model, point.precision, point.framework, point.runner, point.scenario,
            repr(sorted(point.row.items(), key=str)), recipe, eval_recipe, point.isl, point.osl)


def changed_points(ctx: CheckContext) -> list[Any]:
    """The head points of the submitted configs that the PR adds or changes: a point the base does
    not have (by exp-name), whose master row or entry fields differ from the base point's, or whose
    recipe file the PR edits. Unchanged points of an append-only PR keep their earlier evidence."""

    def compute() -> list[Any]:
        from verifier.configs import points
        from verifier.launch.affected import submitted_entries

        out: list[Any] = []
        for key in submitted_entries(ctx):
            base = {p.exp_name: p for p in points(ctx, "base", key)}
            for point in points(ctx, "head", key):
                old = base.get(point.exp_name)
                recipes = [r.path for r in (point.srt_recipe, point.eval_srt_recipe) if r is not None]
                if old is None or _signature(old) != _signature(point) or any(_recipe_changed(ctx, r) for r in recipes):
                    out.append(point)
        return out

    return ctx.memo("ci.changed_points", compute)


def bmk_results(ctx: CheckContext, run: Run) -> list[tuple[str, bool, dict[str, Any] | None]]:
    """(artifact, expired, result.json object or None) of every bmk_* artifact of a run (memoized)."""
    return ctx.memo(f"ci.bmk_results.{run.id}", lambda: _results(ctx, run))


def foreign_results(ctx: CheckContext, run: Run) -> list[tuple[str, str]]:
    """(artifact, why) of the bmk_* results of a run that are not its own points: the result.json
    names another commit than the run's, or a config key the head master configs do not hold."""
    from verifier.configs import master_entries

    keys = master_entries(ctx, "head")
    out: list[tuple[str, str]] = []
    for artifact, _expired, data in bmk_results(ctx, run):
        if data is None:
            continue
        sha, key = data.get("head_sha"), data.get("config_key")
        if sha != run.head_sha:
            out.append((artifact, f"head_sha {str(sha)[:9]}, run {run.head_sha[:9]}"))
        elif isinstance(key, str) and key not in keys:
            out.append((artifact, f"config_key {key}"))
    return out


def _results(ctx: CheckContext, run: Run) -> list[tuple[str, bool, dict[str, Any] | None]]:
    from verifier.core.errors import InputError
    from verifier.core.yamlio import decode_text, load_json

    policy = ctx.policy("pareto")
    pattern = re.compile(policy["artifact_pattern"])
    out: list[tuple[str, bool, dict[str, Any] | None]] = []
    for artifact in run.artifacts:
        if not pattern.search(artifact.name):
            continue
        data: dict[str, Any] | None = None
        raw = None if artifact.expired else artifact.files.get(policy["result_file"])
        if raw is not None:
            try:
                loaded = load_json(decode_text(raw, f"{artifact.name}/{policy['result_file']}"), artifact.name)
            except InputError:
                loaded = None
            data = loaded if isinstance(loaded, dict) else None
        out.append((artifact.name, artifact.expired, data))
    return out


def _job_suffix(name: str, key: str) -> str | None:
    """`tp2_conc32_kvdram-hicache_spec-draft_model` of `agentic / <key> tp2 conc32 kvdram-hicache
    spec-draft_model` (the point part of a matrix job's name, as the exp-name spells it)."""
    lane, sep, rest = name.partition(" / ")
    words = rest.split()
    if not sep or not words or words[0] != key:
        return None
    return "_".join(words[1:])


def _point_coverage(ctx: CheckContext) -> PointCoverage:
    run_id, _source = measured_run(ctx)
    wanted = changed_points(ctx)
    if run_id is None or not wanted:
        return PointCoverage(run_id=run_id)
    run = ctx.bundle.runs.get(run_id)
    jobs = next((rj for rj in run_jobs(ctx) if rj.run_id == run_id), None)
    results = bmk_results(ctx, run) if run is not None else []
    sha = run.head_sha if run is not None else None
    bench = list(jobs.benchmark_jobs) if jobs is not None else []
    success = set(ctx.policy("ci")["success_conclusions"])
    out: list[PointMeasure] = []
    for point in wanted:
        base: dict[str, Any] = {"key": point.key, "exp_name": point.exp_name, "file": point.file, "line": point.line}
        named = [j for j in bench if (s := _job_suffix(j.name, point.key)) and point.exp_name.endswith("_" + s)]
        mine = [(a, d) for a, expired, d in results if d is not None and not expired
                and d.get("exp_name", a.removeprefix("bmk_agentic_").removeprefix("bmk_")) == point.exp_name
                and d.get("config_key") in (point.key, None)]
        own = [(a, d) for a, d in mine if d.get("config_key") == point.key and d.get("head_sha") == sha]
        passed_jobs = [j for j in named if j.conclusion in success]
        if own and (passed_jobs or not named):
            out.append(PointMeasure(**base, status="measured", artifact=own[0][0],
                                    job=passed_jobs[0].name if passed_jobs else None))
            continue
        if own:  # a result exists, but the job that should have produced it did not pass
            job = named[0]
            out.append(PointMeasure(**base, status="job-not-passed", job=job.name, conclusion=job.conclusion,
                                    artifact=own[0][0]))
            continue
        expired = [a for a, gone, _ in results if gone and a.endswith("_" + point.exp_name)]
        if expired:
            out.append(PointMeasure(**base, status="expired", artifact=expired[0]))
            continue
        # The artifact named for this point (artifact names are unique in a run) whose result.json
        # names another config key or commit: not this run's measurement of the point.
        foreign = [(a, d) for a, gone, d in results if d is not None and not gone and a.endswith("_" + point.exp_name)]
        if foreign:
            a, d = foreign[0]
            detail = (f"config_key {d.get('config_key')}" if d.get("config_key") != point.key
                      else f"head_sha {str(d.get('head_sha'))[:9]}")
            out.append(PointMeasure(**base, status="foreign", artifact=a, detail=detail))
            continue
        if named and not passed_jobs:
            job = named[0]
            out.append(PointMeasure(**base, status="job-not-passed", job=job.name, conclusion=job.conclusion))
            continue
        if passed_jobs:  # the job passed, but the run holds no result of it (artifacts not recorded)
            out.append(PointMeasure(**base, status="no-result", job=passed_jobs[0].name,
                                    detail=f"runs/{run_id}/bmk_*_{point.exp_name}/result.json"))
            continue
        out.append(PointMeasure(**base, status="absent"))
    return PointCoverage(run_id=run_id, points=tuple(out))


def point_coverage(ctx: CheckContext) -> PointCoverage:
    """Each point the PR adds or changes against the measured run (memoized)."""
    return ctx.memo("ci.point_coverage", lambda: _point_coverage(ctx))
