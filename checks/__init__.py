"""The checks, ids 0 to 18: an explicit, ordered tuple of modules, and `judge` to run them.

Each module `cNN_<slug>.py` is one rule: its docstring states the rule, `ID` is its row, and
`check(ctx)` enforces it. Everything else about a check is its row in the registry,
policies/checks.yaml: its name, whether it blocks or advises, and the ids of the rules it enforces
(policies/rules.yaml says which checklist item states each).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

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
from verifier.core.model import Bundle
from verifier.core.runner import Report, run_checks
from verifier.documents.in_force import check_gate

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


def judge(
    bundle: Bundle, policies: Mapping[str, Mapping[str, Any]], selected: Sequence[ModuleType] = ALL_CHECKS,
) -> Report:
    """Judge a bundle with the selected checks, each gated by whether its rules are in force."""
    return run_checks(bundle, policies, selected, gate=check_gate)
