"""The check registry: an explicit, ordered tuple of check modules, ids 0 to 18."""

from __future__ import annotations

from types import ModuleType

from checks import (
    c00_codeowner,
    c01_sweep_evals,
    c02_eval_accuracy,
    c03_upstream_recipe,
    c04_reuse_command,
    c05_checklist_template,
    c06_upstream_image,
    c07_deprecated_models,
    c08_architecture_hacks,
    c09_chat_template,
    c10_engine_patches,
    c11_golden_al,
    c12_append_only,
    c13_draft_precision,
    c14_pareto_coverage,
    c15_pr_description,
    c16_vendor_overview,
    c17_metrics_publication,
    c18_consistency,
)

ALL_CHECKS: tuple[ModuleType, ...] = (
    c00_codeowner,
    c01_sweep_evals,
    c02_eval_accuracy,
    c03_upstream_recipe,
    c04_reuse_command,
    c05_checklist_template,
    c06_upstream_image,
    c07_deprecated_models,
    c08_architecture_hacks,
    c09_chat_template,
    c10_engine_patches,
    c11_golden_al,
    c12_append_only,
    c13_draft_precision,
    c14_pareto_coverage,
    c15_pr_description,
    c16_vendor_overview,
    c17_metrics_publication,
    c18_consistency,
)


def select(only: set[int] | None = None, skip: set[int] | None = None) -> tuple[ModuleType, ...]:
    """The registered checks filtered by --only / --skip ids."""
    return tuple(
        m for m in ALL_CHECKS if (only is None or m.ID in only) and (skip is None or m.ID not in skip)
    )
