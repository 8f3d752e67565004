"""Check 7: Deprecated models.

Rule: Verified against the current MODELS.md that this PR does not submit a deprecated model,
    scenario, or model-scenario combination.
Why: Deprecated models and scenarios consume cluster time the project has chosen to spend elsewhere;
    a PR must not add, change or re-enable them.
Evidence: the affected config key and its master-config line (model-prefix, scenario), and the
    MODELS.md line (support-matrix row, Scenarios row or dated deprecation notice) that deprecates it.
N/A when: the PR adds or changes no config or recipe (no affected master-config key on the head), or
    MODELS.md is absent from the trusted base tree: the rule's governing document did not exist yet,
    so the rule was not in force for this PR (the row names the document).
Unverifiable when: the affected model prefix is not in the model support matrix, or the affected
    master entry cannot be read.
Policy: models (fixed-sequence ISL/OSL names)

Notices: a dated notice (`### <Weekday, Month D, YYYY>`) deprecates through its `| Model | Deprecated |
Remains |` table or through its prose ("**<date>** is the last day for the **<scenario>** scenario on
**<model>** (`prefix`)"); both are read.
Dates: a dated notice names the LAST day a scenario runs, so it applies after that date; a Scenarios
row `Deprecated since D` applies from D. Both are judged against the bundle's review date.
Deprecations are taken from both trees, so a PR cannot lift one by editing MODELS.md; a model's
support-matrix row is taken from the head (a new model is added in the same PR), else the base.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from verifier.configs import submitted_entries
from verifier.context import CheckContext
from verifier.models_md import SCENARIO_NAMES, Deprecation, ModelRow, ModelsDoc, models_doc
from verifier.results import (
    CheckResult,
    FileEvidence,
    Finding,
    failed,
    finding,
    not_applicable,
    passed,
)

ID = 7
NAME = "Deprecated models"


def _entry_scenarios(entry: Any, names: dict[str, str]) -> list[tuple[str, int | None]]:
    """Scenario ids an entry runs (agentic-coding, 8k1k, ...) with the master-config line of each."""
    out: list[tuple[str, int | None]] = []
    for scenario, blocks in entry.scenarios.items():
        if scenario == "agentic-coding":
            out.append(("agentic-coding", entry.field_line("scenarios", scenario)))
        elif scenario == "fixed-seq-len" and isinstance(blocks, list):
            for i, block in enumerate(blocks):
                if isinstance(block, dict):
                    seq = f"{block.get('isl')}/{block.get('osl')}"
                    out.append((names.get(seq, seq), entry.field_line("scenarios", scenario, i)))
        else:
            out.append((str(scenario), entry.field_line("scenarios", scenario)))
    return list(dict.fromkeys(out))


def _applies(dep: Deprecation, prefix: str, scenario: str, precision: str | None, ctx: CheckContext) -> bool:
    if dep.effective > ctx.review_date:
        return False
    if dep.prefix is not None and dep.prefix != prefix:
        return False
    if dep.scenario is not None and dep.scenario != scenario:
        return False
    return dep.precision is None or (precision or "").lower() == dep.precision


def _judge_key(
    ctx: CheckContext, key: str, entry: Any, docs: list[ModelsDoc], names: dict[str, str]
) -> tuple[list[Finding], list[Finding]]:
    """Failures and passes for one affected key."""
    prefix = str(entry.model_prefix or "")
    precision = entry.precision
    entry_ev = FileEvidence(path=entry.file, line=entry.field_line("model-prefix") or entry.line,
                            text=f"{key}: model-prefix {prefix}")
    row: ModelRow | None = None
    row_doc: ModelsDoc | None = None
    for doc in docs:
        if doc.model(prefix) is not None:
            row, row_doc = doc.model(prefix), doc
            break
    if row is None or row_doc is None:
        return [finding("model-not-listed", entry_ev, key=key, prefix=prefix,
                        models_md=docs[0].path if docs else "MODELS.md")], []
    side = "head" if row_doc is docs[0] and len(docs) > 1 else "base"
    row_ev = FileEvidence(path=row_doc.path, line=row.line, text=f"{row.name} | {row.active}", side=side)
    failures: list[Finding] = []
    if row.retired:
        failures.append(finding("model-retired", entry_ev, row_ev, key=key, prefix=prefix, active=row.active))
        return failures, []
    scenarios = _entry_scenarios(entry, names)
    for scenario, line in scenarios:
        scen_ev = FileEvidence(path=entry.file, line=line or entry.line, text=f"{key}: {scenario}")
        # One finding per scenario: the earliest deprecation in force (a notice's prose and its
        # table, or the base and head copies of MODELS.md, say the same thing).
        applying = [(dep, doc) for doc in docs for dep in doc.deprecations
                    if _applies(dep, prefix, scenario, precision, ctx)]
        if applying:
            dep, doc = min(applying, key=lambda item: (item[0].effective, item[0].notice is None, item[0].line))
            failures.append(finding(
                "scenario-deprecated", scen_ev,
                FileEvidence(path=doc.path, line=dep.line, text=dep.text[:160], side="base"),
                key=key, prefix=prefix, scenario=scenario, scenario_name=SCENARIO_NAMES.get(scenario, scenario),
                since=dep.effective.isoformat(), precision=dep.precision, notice=dep.notice,
                last_day=(dep.effective - dt.timedelta(days=1)).isoformat() if dep.notice else None,
                models_md=doc.path.rsplit("/", 1)[-1], line=dep.line,
            ))
        if scenario not in row.active_scenarios() and not any(f.params.get("scenario") == scenario for f in failures):
            failures.append(finding("scenario-not-active", scen_ev, row_ev, key=key, prefix=prefix,
                                    scenario=scenario, active=row.active))
    passes = [finding("model-active", row_ev, key=key, prefix=prefix,
                      scenarios=[s for s, _ in scenarios], added=row.date_added.isoformat() if row.date_added else "")]
    return failures, passes


def check(ctx: CheckContext) -> CheckResult:
    """Each affected config's model, scenario and precision is active in MODELS.md on the review date."""
    submitted = submitted_entries(ctx)
    if not submitted:
        return not_applicable(finding("no-config-affected"))
    base = models_doc(ctx, "base")
    if base is None:
        return not_applicable(finding("models-md-not-in-force", document=ctx.bundle.path("models_md")))
    docs = [d for d in (models_doc(ctx, "head"), base) if d is not None]
    names = dict(ctx.policy("models")["fixed_seq_scenarios"])
    failures: list[Finding] = []
    passes: list[Finding] = []
    for key, entry in submitted.items():
        f, p = _judge_key(ctx, key, entry, docs, names)
        failures.extend(f)
        passes.extend(p)
    if failures:
        return failed(*failures)
    return passed(*passes)
