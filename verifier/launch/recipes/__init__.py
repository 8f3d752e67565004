"""srt-slurm recipes: loading, variant expansion, binding, golden AL and argv materialization.

Public API:
* `recipe_doc(ctx, side, path)` / `shared_block(ctx, side, scenario, lane)`: parsed recipe files.
* `expand(doc, selector)` -> `[Variant]`, `deep_merge`, `zip_slices`, `RecipeError`, `Origin`.
* `golden_al(ctx, side, model_prefix, method, draft_length, thinking_mode, draft_model, sample_method)`
  -> `GoldenAL` (`.value`, `.file`, `.line`, `.ok`, `.missing`).
* `spec_parameters(role, args, engine)` -> `SpecParams`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifier.core.lazy import lazy_exports

# Public names and the submodule that defines each, imported on first use (PEP 562), so that the
# pre-commit hook's `verifier.launch.recipes.variants` / `.argv` do not pull in the domain model.
_SUBMODULE = {
    "Doc": "variants",
    **dict.fromkeys(["GoldenAL", "curve_name", "golden_al"], "golden"),
    **dict.fromkeys(["SpecParams", "spec_parameters"], "spec"),
    **dict.fromkeys(["Origin", "RecipeError", "Variant", "deep_merge", "expand", "zip_slices"], "variants"),
    **dict.fromkeys(["recipe_doc", "shared_block", "shared_block_path"], "files"),
}

if TYPE_CHECKING:
    from verifier.core.yaml11 import Doc
    from verifier.launch.recipes.files import recipe_doc, shared_block, shared_block_path
    from verifier.launch.recipes.golden import GoldenAL, curve_name, golden_al
    from verifier.launch.recipes.spec import SpecParams, spec_parameters
    from verifier.launch.recipes.variants import Origin, RecipeError, Variant, deep_merge, expand, zip_slices

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
    "golden_al",
    "recipe_doc",
    "shared_block",
    "shared_block_path",
    "spec_parameters",
    "zip_slices",
]


__getattr__ = lazy_exports(__name__, _SUBMODULE, globals())
