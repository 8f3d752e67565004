"""Server logs of the PR's measured run, per point (exp-name), for checks that read effective settings.

The run is the one Check 1 accepts (`verifier.facts.ci.sweep_run`), else the run the reuse command pins,
else the newest run on the pinned head. Each point's artifact is `bmk_agentic_<exp-name>` (or
`bmk_<exp-name>`), holding `server.log` (cases README conventions); it is parsed with
`verifier.documents.serverlog.parse_server_log`.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.core.context import CheckContext
from verifier.core.model import Run
from verifier.core.results import RunEvidence
from verifier.documents.serverlog import ServerLog, parse_server_log
from verifier.facts import ci

PREFIXES = ("bmk_agentic_", "bmk_")
LOG_NAMES = ("server.log", "server_0.log", "agg_0.log")


@dataclass(frozen=True, eq=False, repr=False)
class PointLog:
    """One point's server log in one run."""

    run_id: int
    artifact: str
    file: str
    log: ServerLog

    def evidence(self, ctx: CheckContext) -> RunEvidence:
        """RunEvidence naming the run and the artifact."""
        return ci.run_evidence(ctx, self.run_id, artifact=self.artifact)


def log_run(ctx: CheckContext) -> Run | None:
    """The run whose server logs describe the assessed head (see module docstring)."""
    bundle = ctx.bundle
    _, run = ci.sweep_run(ctx)
    if run is not None:
        return run
    pinned = ci.reuse_command(ctx).run_id
    if pinned is not None and pinned in bundle.runs:
        return bundle.runs[pinned]
    mine = [r for r in bundle.runs.values()
            if r.head_sha == bundle.pr.head_sha and any(a.name.startswith(PREFIXES) for a in r.artifacts)]
    return max(mine, key=lambda r: (r.created_at is not None, r.created_at, r.id), default=None)


def _exp(name: str) -> str:
    for prefix in PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _compute(ctx: CheckContext) -> dict[str, PointLog]:
    run = log_run(ctx)
    out: dict[str, PointLog] = {}
    if run is None:
        return out
    for artifact in run.artifacts:
        if artifact.expired or not artifact.name.startswith(PREFIXES):
            continue
        for name in LOG_NAMES:
            raw = artifact.files.get(name)
            if raw is not None:
                out[_exp(artifact.name)] = PointLog(run.id, artifact.name, name, parse_server_log(raw))
                break
    return out


def point_logs(ctx: CheckContext) -> dict[str, PointLog]:
    """exp-name -> the point's server log in the measured run ({} without one). Memoized."""
    return ctx.memo("runlogs.point_logs", lambda: _compute(ctx))
