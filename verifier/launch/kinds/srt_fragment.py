"""srt-slurm recipe fragment (new layout, `inferencex-e2e/`): composed over the lane's shared block.

A master row names `srt-recipe: <path>[:<selector>]`. The launcher composes the fragment over the
lane's shared block (`configs/srt-recipes/*.yaml`), expands the variants of the row's selector,
keeps those that fit the point (CONC, KV_OFFLOADING, SPEC_DECODING, TP/EP/DP-attention, GPU count,
...) and requires exactly one ("Expected exactly one matching single-node SRT recipe"); a multi-node
row must select exactly one variant. The chosen variant is bound to the point and materialized
(verifier.launch.materialize). A fragment that sets a key the launcher binds is reported.
"""

from __future__ import annotations

from verifier.configs.points import Point, launch_policy
from verifier.core.context import CheckContext
from verifier.launch.job import KeyJob
from verifier.launch.materialize import materialize
from verifier.launch.recipes import recipe_doc, shared_block, shared_block_path
from verifier.launch.recipes.bind import RecipeProblem, compose, fragment_problems, lane, mismatches
from verifier.launch.recipes.variants import RecipeError, Variant, expand

NAME = "srt-fragment"
EXACTLY_ONE = "Expected exactly one matching single-node SRT recipe"


def claims(job: KeyJob, point: Point) -> bool:
    """A row that names an srt-recipe (a complete old-layout recipe is claimed earlier)."""
    return point.srt_recipe is not None


def _variants(ctx: CheckContext, side: str, path: str, selector: str | None, scenario: str,
              lane_name: str) -> list[Variant]:
    def compute() -> list[Variant]:
        doc = recipe_doc(ctx, side, path)
        if doc is None:
            raise RecipeError("recipe file is not in the tree", path)
        base, base_origins = compose(doc, shared_block(ctx, side, scenario, lane_name))
        return expand(doc, selector, base_block=base, base_origins=base_origins)

    return ctx.memo(f"recipes.variants.{side}.{path}.{selector}.{scenario}.{lane_name}", compute)


def _problems(ctx: CheckContext, side: str, path: str, scenario: str) -> list[RecipeProblem]:
    def compute() -> list[RecipeProblem]:
        doc = recipe_doc(ctx, side, path)
        return [] if doc is None else fragment_problems(doc, scenario, launch_policy(ctx))

    return ctx.memo(f"recipes.problems.{side}.{path}.{scenario}", compute)


def resolve(job: KeyJob, point: Point) -> None:
    """Bind the point to exactly one variant of its recipe and materialize it."""
    ref = point.srt_recipe
    assert ref is not None
    ctx, side = job.ctx, job.side
    for problem in _problems(ctx, side, ref.path, point.scenario):
        job.problem_once(problem.file, problem.line, problem.message, problem.kind, problem.fatal)
    lane_name = lane(point)
    variants = _variants(ctx, side, ref.path, ref.selector, point.scenario, lane_name)
    expected = job.policy["engines"].get(point.framework or "")
    per_node = job.cluster.gpus_per_node if job.cluster else None
    if point.multinode:
        if len(variants) != 1:
            names = ", ".join(v.key for v in variants) or "none"
            raise RecipeError(f"multinode row must select exactly one variant (selector {ref.selector!r} "
                              f"gives {names})", ref.path)
        chosen, rejected = variants[0], {}
    else:
        rejected: dict[str, tuple[str, ...]] = {}
        matched = []
        for variant in variants:
            reasons = mismatches(variant.data, point, expected, job.policy, per_node)
            if reasons:
                rejected[variant.key or "recipe"] = tuple(reasons)
            else:
                matched.append(variant)
        if len(matched) != 1:
            target = ref.path + (f":{ref.selector}" if ref.selector else "")
            if matched:
                detail = f"{len(matched)} variants match ({', '.join(v.key for v in matched)})"
            else:
                shown = "; ".join(f"{k}: {r[0]}" for k, r in list(rejected.items())[:3])
                detail = f"no variant matches ({shown})" if shown else "the selector names no variant"
            doc = recipe_doc(ctx, side, ref.path)
            line = doc.line(matched[1].key) if doc and len(matched) > 1 and doc.line(matched[1].key) else None
            raise RecipeError(f"{EXACTLY_ONE} in {target} for {point.exp_name}: {detail}", ref.path, line)
        chosen = matched[0]
    block = shared_block_path(ctx, point.scenario, lane_name)
    files = tuple(dict.fromkeys([p for p in (block, ref.path) if p and job.tree.has(p)]))
    materialize(job, point, chosen, rejected, kind=NAME, files=files)
