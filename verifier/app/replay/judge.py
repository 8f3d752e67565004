"""Judge one merged PR from a clone: record its bundle in memory, run every check, summarise the rows.

Runs in worker processes: each process opens the clone once (one `git cat-file --batch`) and keeps
the loaded policies; what one PR filled (caches keyed by its files, garbage in reference cycles) is
dropped before the next, so a long replay does not grow PR after PR. A PR that cannot be recorded or judged becomes a record with an `error`,
never a crash of the replay.
"""

from __future__ import annotations

import gc
import resource
import sys
import time
from collections.abc import Collection, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifier.app.replay.merged import MergedPR
from verifier.app.replay.proposals import RepoDocuments, load_proposed_policies
from verifier.core import processcache
from verifier.core.errors import VerifierError
from verifier.core.model import Bundle
from verifier.launch.sharing import auditing
from verifier.record.fetched import Completion, UpstreamSource, git_sources
from verifier.record.git.record import PrFacts, Side, _when, build_bundle, complete_launch_files
from verifier.record.git.repo import GitRepo

SIGNER = "replay-signer"


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to know, picklable."""

    repo_dir: str
    policies_dir: str | None = None
    documents: RepoDocuments | None = None
    upstream: tuple[tuple[str, str], ...] = ()  # (OWNER/NAME, clone path): repositories runners fetch from
    check_sharing: bool = False  # audit every shared launch reading (verifier.launch.sharing)


_STATE: dict[str, Any] = {}


def init_worker(job: Job) -> None:
    """Per-process set-up: open the clone, load the policies once."""
    from verifier.core.policy import load_policies

    _STATE["repo"] = GitRepo(job.repo_dir)
    _STATE["upstream"] = git_sources({repo: Path(path) for repo, path in job.upstream}) if job.upstream else None
    _STATE["current"] = load_policies()
    _STATE["proposed"] = load_proposed_policies(Path(job.policies_dir)) if job.policies_dir else None
    _STATE["documents"] = job.documents
    _STATE["check_sharing"] = job.check_sharing


def init_pool_worker(job: Job) -> None:
    """`init_worker` in a worker process of the replay's pool, which then freezes what lives on
    between PRs (`_freeze`)."""
    init_worker(job)
    _STATE["freeze"] = True
    _freeze()


def _freeze() -> None:
    """In a pool worker, what is alive once a PR's state is dropped (modules, policies, schemas, the
    engines' argument tables loaded for the PRs so far) lives as long as the process: moved out of
    the collector's generations (`gc.freeze`), it is not walked again by every collection of every
    later PR (`_verdicts` collects once per PR, and each PR's allocations trigger more). On 32 real
    PRs judged alternately with and without, 8-10% less CPU. Not done in a caller's own process
    (`--jobs 1`, tests), whose objects may still become garbage to collect."""
    if _STATE.get("freeze"):
        gc.collect()
        gc.freeze()


def row_records(report: Any) -> list[dict[str, Any]]:
    """One plain record per row: id, name, status, message ids, English text."""
    from verifier.render.text import render_summary

    return [
        {"id": row.id, "name": row.name, "status": row.status.value,
         "messages": [f.message_id for f in row.result.findings],
         "summary": render_summary(row.id, row.result, "en")}
        for row in report.rows
    ]


def _judge(bundle: Bundle, policies: Mapping[str, Any], resolved: Mapping[str, Any] | None = None,
           deferred: Collection[str] = (), asked: set[str] | None = None) -> dict[str, Any]:
    from checks import judge

    report = judge(bundle, policies, resolved=resolved, deferred=deferred, asked=asked)
    return {"verdict": report.verdict.value, "rows": row_records(report)}


def flips(current: Mapping[str, Any], proposed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows whose status or findings differ between two judgements of the same PR."""
    out = []
    before = {r["id"]: r for r in current["rows"]}
    for row in proposed["rows"]:
        old = before.get(row["id"])
        if old is None or old["status"] != row["status"] or old["messages"] != row["messages"]:
            out.append({"id": row["id"], "from": old["status"] if old else None, "to": row["status"],
                        "summary": row["summary"]})
    return out


def bundle_of(repo: GitRepo, pr: MergedPR, upstream: UpstreamSource | None = None,
              policies: Mapping[str, Any] | None = None, *, defer: Collection[str] = (),
              after: tuple[Bundle, Completion] | None = None) -> tuple[Bundle, Completion]:
    """The in-memory bundle of one merged PR (its merge commit against its first parent), with the
    files its launches read; other repositories the runners fetch from are read from `upstream` as
    of the merge commit's date. With it, what the recording did (verifier.record.fetched
    `Completion`): the launches it resolved that hold for the bundle, for its verdict under
    `policies`, and those of the sides in `defer`, which it left out. `after`: what an earlier call
    with `defer` gave, completed with the launches it left out."""
    commit = repo.commit(pr.head)
    base = Side(pr.base, repo.ls_tree(pr.base), links=repo.gitlinks(pr.base))
    head = Side(pr.head, repo.ls_tree(pr.head), links=repo.gitlinks(pr.head))
    when = _when(commit.committed_at)
    if after is not None:
        return complete_launch_files(repo, after[0], base, head, when=when, upstream=upstream, policies=policies,
                                     after=after[1])
    facts = PrFacts(number=pr.number, title=commit.subject, body=commit.body, author=commit.author,
                    state="merged")
    bundle = build_bundle(repo, base, head, repo.diff(pr.base, pr.head), facts, when=when, signer=SIGNER)
    return complete_launch_files(repo, bundle, base, head, when=when, upstream=upstream, policies=policies,
                                 defer=defer)


def _verdicts(repo: GitRepo, pr: MergedPR) -> tuple[Bundle, dict[str, Any], dict[str, Any] | None]:
    """The PR's bundle and its verdicts under the current rules and, when set, the proposed ones.

    The bundle is first recorded without its base launches, which most verdicts never read (only a
    run's executed closure, an append-only comparison and Check 18's baseline do, and a replayed
    bundle holds no runs). A verdict that asks for one of them is not the bundle's
    (verifier.core.context.CheckContext.defer): then they are recorded on top of that bundle, and
    both verdicts are judged again on the whole recording."""
    documents: RepoDocuments | None = _STATE["documents"]
    proposed_policies = _STATE["proposed"]
    bundle, completion = bundle_of(repo, pr, _STATE.get("upstream"), _STATE["current"], defer=("base",))
    while True:
        # The recording pass's own derived facts are garbage now, some of them in reference cycles
        # (a one-shot process collects rarely, verifier.app.cli): free them before the verdict
        # allocates its own, so that the two never add up.
        gc.collect()
        asked: set[str] = set()
        deferred = completion.deferred_facts()
        current = _judge(bundle, _STATE["current"], completion.launches, deferred, asked)
        proposed = None
        if not asked and (documents is not None or proposed_policies is not None):
            proposed_bundle = documents.apply(bundle) if documents is not None else bundle
            proposed = _judge(proposed_bundle, proposed_policies or _STATE["current"], None, deferred, asked)
        if not asked:
            return bundle, current, proposed
        bundle, completion = bundle_of(repo, pr, _STATE.get("upstream"), _STATE["current"],
                                       after=(bundle, completion))


def replay_one(pr: MergedPR) -> dict[str, Any]:
    """The JSON-line record of one PR (judged twice when proposed rules are set)."""
    start, cpu = time.perf_counter(), time.process_time()
    record: dict[str, Any] = {**pr.as_dict()}
    with auditing() if _STATE.get("check_sharing") else nullcontext() as audit:
        try:
            bundle, current, proposed = _verdicts(_STATE["repo"], pr)
            record["files"] = len(bundle.pr.files)
            record.update(current)
            if proposed is not None:
                record["proposed"] = proposed
                record["flips"] = flips(record, proposed)
        except VerifierError as exc:
            record["error"] = exc.one_line()
        except Exception as exc:  # one PR's failure must not stop the replay; it is reported, not hidden
            record["error"] = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        if audit is not None:
            record["sharing"] = audit.summary()
    record["seconds"] = round(time.perf_counter() - start, 3)
    record["cpu_seconds"] = round(time.process_time() - cpu, 3)
    # the worker's peak resident memory so far: a bound on this PR's (its caches only add to it)
    record["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    release_pr_state()
    _freeze()
    return record


def pr_caches() -> list[Any]:
    """The process-wide caches whose entries come from the PRs judged: every bounded `functools`
    cache of the verifier and the checks (parsed workflows, scripts, snippets, patterns, keyed by
    the texts a PR holds). The unbounded ones hold what no PR changes (engine specs, schemas,
    templates) and are kept. So is every cache of verifier.core.processcache (the YAML 1.1 loader's
    table of resolved scalar tags and shared parses, the shell reader's per-node and per-text caches)."""
    found: dict[int, Any] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name.startswith("verifier.") or name == "checks" or name.startswith("checks.")):
            continue
        for value in list(vars(module).values()):
            info = getattr(value, "cache_info", None)
            if callable(info) and callable(getattr(value, "cache_clear", None)) and info().maxsize is not None:
                found[id(value)] = value
    return [*found.values(), *processcache.registered()]


def release_pr_state() -> None:
    """Drop the caches one PR filled from its files (`pr_caches`): a long replay otherwise grows PR
    after PR, the caches being bounded by entries, not bytes. What its verdict left in reference
    cycles goes at the next PR's collection (`replay_one`)."""
    for cache in pr_caches():
        if isinstance(cache, dict | processcache.ByObject | processcache.Registered):
            cache.clear()
        else:
            cache.cache_clear()
