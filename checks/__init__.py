"""The checks, ids 0 to 18: an explicit, ordered tuple of modules, and `judge` to run them.

Each module `cNN_<slug>.py` is one rule: its docstring states the rule, `ID` is its row, and
`check(ctx)` enforces it. Everything else about a check is its row in the registry,
policies/checks.yaml: its name, whether it blocks or advises, and the ids of the rules it enforces
(policies/rules.yaml says which checklist item states each).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
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
from verifier.documents.policy_overrides import policies_for

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
    out = left_out_by(only, skip)
    return tuple(m for m in ALL_CHECKS if m.ID not in out)


def left_out_by(only: set[int] | None = None, skip: set[int] | None = None) -> dict[int, str]:
    """The registered check ids --only / --skip leave out, each with the option that leaves it out."""
    out = {}
    for m in ALL_CHECKS:
        if skip is not None and m.ID in skip:
            out[m.ID] = "--skip"
        elif only is not None and m.ID not in only:
            out[m.ID] = "--only"
    return out


def judge(
    bundle: Bundle, policies: Mapping[str, Mapping[str, Any]], selected: Sequence[ModuleType] = ALL_CHECKS,
    *, left_out: Mapping[int, str] | None = None, resolved: Mapping[str, Any] | None = None,
    deferred: Collection[str] = (), asked: set[str] | None = None,
) -> Report:
    """Judge a bundle with the selected checks, each gated by whether its rules are in force.

    `left_out` (as `left_out_by(only, skip)` gives it: check id -> the option that leaves it out)
    keeps a row for each check the selection leaves out: N/A, marked not run, and the report is
    partial. Without it the report holds the selected checks' rows only.

    Policy overrides InferenceX keeps in its base tree (`.github/infx-verifier/<topic>.yaml`) are laid
    over `policies` first; a refused one fails the verdict closed, and the report names what was
    applied (verifier.documents.policy_overrides).

    `resolved`: launches the recorder resolved on this bundle under `policies`
    (verifier.record.fetched `Completion.launches`); used only when no override changes the policies.
    `deferred`, `asked`: the launches that recording left out (`Completion.deferred`); a check that
    asks for one adds its key to `asked`, and the report is then not this bundle's verdict (the
    caller completes the bundle and judges again; verifier.core.context.CheckContext.defer).
    """
    judged, overrides = policies_for(bundle, policies)
    facts = resolved if resolved and judged is policies else None
    report = run_checks(bundle, judged, selected, gate=check_gate, not_run=left_out, facts=facts,
                        deferred=deferred, asked=asked)
    return overrides.settle(report)
