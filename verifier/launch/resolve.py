"""Resolve the points of config keys into launches through the launch-kind registry."""

from __future__ import annotations

from collections.abc import Iterable

from verifier.configs import master_entries, points
from verifier.configs.points import Point
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.launch.affected import affected_keys
from verifier.launch.job import KeyJob
from verifier.launch.kinds import KINDS
from verifier.launch.model import LaunchSet
from verifier.launch.recipes.variants import RecipeError


def _resolve_point(job: KeyJob, point: Point) -> None:
    if point.errors:
        for message in point.errors:
            job.error(point, point.file, point.line, message, "point")
        return
    for kind in KINDS:
        if kind.claims(job, point):
            before = (len(job.result.launches), job.reasons)
            kind.resolve(job, point)
            if (len(job.result.launches), job.reasons) == before:
                job.error(point, point.file, point.line, f"the {kind.NAME} launch kind gave this point no launch "
                          "and said why not", "no-launch")
            return
    job.error(point, point.file, point.line, "no launch kind handles this row", "no-launch-kind")


def _resolve_key(job: KeyJob) -> LaunchSet:
    generated = points(job.ctx, job.side, job.entry.key)
    entry = job.entry
    if not generated and not entry.declares_scenarios:
        # nothing to judge is not a pass: a schema the reader does not know (a third way of writing the
        # blocks, say) would otherwise be judged on no launch at all, as the first schema once was; an
        # entry that declares its scenarios empty generates nothing on purpose, as the generator reads it
        job.error(None, entry.file, entry.line, "the entry generates no point: it has neither `scenarios` nor "
                  "the first schema's `seq-len-configs`, so its blocks are written in a way the reader does not know",
                  "no-points")
    for point in generated:
        try:
            _resolve_point(job, point)
        except RecipeError as exc:
            job.error(point, exc.file, exc.line, exc.message, "recipe")
        except InputError as exc:
            job.error(point, exc.path, None, exc.reason, "input")
    return job.result


KEY_MEMO = "launch.key."  # memo keys of the launches of one config key on one side


def launches_for_key(ctx: CheckContext, side: str, key: str) -> LaunchSet:
    """The launches of one config key on one side (empty when the side lacks the key). Memoized."""

    def compute() -> LaunchSet:
        entry = master_entries(ctx, side).get(key)
        if entry is None:
            return LaunchSet(side=side, keys=(key,))
        return _resolve_key(KeyJob(ctx, side, entry))

    return ctx.memo(f"{KEY_MEMO}{side}.{key}", compute)


def launches(ctx: CheckContext, side: str = "head", keys: Iterable[str] | None = None) -> LaunchSet:
    """Launches of the given config keys (default: the keys the PR affects that exist on this side)."""
    if keys is None:
        present = master_entries(ctx, side)
        keys = [k for k in affected_keys(ctx).keys if k in present]
    ordered = tuple(dict.fromkeys(keys))
    result = LaunchSet(side=side, keys=ordered)
    for key in ordered:
        part = launches_for_key(ctx, side, key)
        result.launches.extend(part.launches)
        result.errors.extend(part.errors)
        result.needs |= part.needs
    return result
