"""srt-slurm recipes: loading, variant expansion, binding, golden AL and argv materialization.

Public API:
* `recipe_doc(ctx, side, path)` / `shared_block(ctx, side, scenario, lane)`: parsed recipe files.
* `expand(doc, selector)` -> `[Variant]`, `deep_merge`, `zip_slices`, `RecipeError`, `Origin`.
* `golden_al(ctx, side, model_prefix, method, draft_length, thinking_mode, draft_model, sample_method)`
  -> `GoldenAL` (`.value`, `.file`, `.line`, `.ok`, `.missing`).
* `spec_parameters(role, args, engine)` -> `SpecParams`.
"""

from __future__ import annotations

from verifier.configs.points import launch_policy
from verifier.configs.yaml11 import Doc, parse_yaml11
from verifier.context import CheckContext
from verifier.layout import repo_relative
from verifier.recipes.golden import GoldenAL, curve_name, format_al, golden_al
from verifier.recipes.spec import SpecParams, spec_parameters
from verifier.recipes.variants import Origin, RecipeError, Variant, deep_merge, expand, zip_slices
from verifier.yamlio import decode_text

__all__ = [
    "Doc",
    "GoldenAL",
    "Origin",
    "RecipeError",
    "SpecParams",
    "Variant",
    "curve_name",
    "deep_merge",
    "expand",
    "format_al",
    "golden_al",
    "recipe_doc",
    "shared_block",
    "shared_block_path",
    "spec_parameters",
    "zip_slices",
]


def recipe_doc(ctx: CheckContext, side: str, path: str) -> Doc | None:
    """A recipe (or any YAML) file of one side's tree, parsed YAML 1.1; None when absent. Memoized.

    Raises InputError (cached) when the file is not valid YAML.
    """

    def compute() -> Doc | None:
        tree = ctx.bundle.base if side == "base" else ctx.bundle.head
        raw = tree.read(path)
        if raw is None:
            return None
        return parse_yaml11(decode_text(raw, path), path)

    return ctx.memo(f"recipes.doc.{side}.{path}", compute)


def shared_block_path(ctx: CheckContext, scenario: str, lane: str) -> str | None:
    """Repository path of the lane's shared block (configs/srt-recipes/...), per policy."""
    blocks = launch_policy(ctx)["shared-blocks"].get(scenario)
    if not blocks or lane not in blocks:
        return None
    return repo_relative(str(blocks[lane]), ctx.bundle.layout)


def shared_block(ctx: CheckContext, side: str, scenario: str, lane: str) -> Doc | None:
    """The parsed shared block for a lane (None when the tree has none)."""
    path = shared_block_path(ctx, scenario, lane)
    return None if path is None else recipe_doc(ctx, side, path)
