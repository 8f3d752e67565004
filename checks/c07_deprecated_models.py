"""Check 7: Deprecated models.

Rule: Verified against the current MODELS.md that this PR does not submit a deprecated model,
    scenario, or model-scenario combination.
Why: Deprecated models and scenarios consume cluster time the project has chosen to spend elsewhere;
    a PR must not add, change or re-enable them.
Evidence: the affected config key and its master-config line (model-prefix, scenario), and the
    MODELS.md line (support-matrix row, Scenarios row or dated deprecation notice) that deprecates it.
    Arms: where MODELS.md deprecates an arm of a model's scenario (the `| Model | Deprecated arm |
    Published arm |` table or the support matrix, e.g. Kimi-K3 agentic coding "non-DSpark (deprecated
    from day 0)"), each point of an affected config is judged on its own resolved launch: a point that
    does not speculate with the published arm's method (no speculative config, another method, or
    `spec-decoding: none` with no launch) is on the deprecated arm and FAILs, named; valid arms of
    the same config stay valid.
N/A when: the PR adds or changes no config or recipe (no affected master-config key on the head; a
    key the PR touches only by deleting files it ran, named by no appended changelog entry, is not
    submitted and is named in the row), or
    MODELS.md is absent from the trusted base tree: the rule's governing document did not exist yet,
    so the rule was not in force for this PR (the row names the document).
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
Unverifiable when: the affected model prefix is not in the model support matrix, the affected
    master entry cannot be read, or a point under an arm rule declares speculation and its resolved
    launch does not say which method it runs. A point under an arm rule whose launch does not
    resolve is Check 18's (named in the row, "Not judged here").
Policy: models (fixed-sequence ISL/OSL names, arm_rules),
    launch (the affected configs and their launches, via verifier.configs / verifier.launch)
Notices: a dated notice (`### <Weekday, Month D, YYYY>`) deprecates through its `| Model | Deprecated |
Remains |` table or through its prose ("**<date>** is the last day for the **<scenario>** scenario on
**<model>** (`prefix`)"); both are read.
Dates: a dated notice names the LAST day a scenario runs, so it applies after that date; a Scenarios
row `Deprecated since D` applies from D. Both are judged against the bundle's review date.
Deprecations are taken from both trees, so a PR cannot lift one by editing MODELS.md; a model's
support-matrix row is taken from the base (a PR that edits it is judged by the base row, the edit
reported), and from the head only for a model the base does not list (a new model added in the
same PR, named in the row as the PR's own addition). A prefix the PR adds is not a new model when
the base already knows its checkpoint: a base master entry serves the same `model` under a prefix
the base MODELS.md lists, or a base row has the same model name. Such a key is judged by that base
row (a retired or deprecated checkpoint cannot pass by a new name), the alias named in the row.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from verifier.configs import candidate_entries, points
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    MissingEvidence,
    failed,
    finding,
    not_applicable,
    passed,
)
from verifier.documents.models_md import (
    SCENARIO_NAMES,
    ArmDeprecation,
    Deprecation,
    ModelRow,
    ModelsDoc,
    models_doc,
)
from verifier.documents.rules import addition_finding, rule_changes, rule_document
from verifier.launch import launches
from verifier.launch.affected import affected_keys, submitted_entries
from verifier.launch.reported import is_scoping_note, reported_by_check18

ID = 7
MAX_NAMED = 8


def _entry_scenarios(entry: Any, names: dict[str, str]) -> list[tuple[str, int | None]]:
    """Scenario ids an entry runs (agentic-coding, 8k1k, ...) with the master-config line of each."""
    out: list[tuple[str, int | None]] = []
    for scenario, blocks in entry.scenarios.items():
        if scenario == "agentic-coding":
            out.append(("agentic-coding", entry.scenario_line(scenario)))
        elif scenario == "fixed-seq-len" and isinstance(blocks, list):
            for i, block in enumerate(blocks):
                if isinstance(block, dict):
                    seq = f"{block.get('isl')}/{block.get('osl')}"
                    out.append((names.get(seq, seq), entry.scenario_line(scenario, i)))
        else:
            out.append((str(scenario), entry.scenario_line(scenario)))
    return list(dict.fromkeys(out))


def _applies(dep: Deprecation, prefixes: set[str], scenario: str, precision: str | None, ctx: CheckContext) -> bool:
    if dep.effective > ctx.review_date:
        return False
    if dep.prefix is not None and dep.prefix not in prefixes:
        return False
    if dep.scenario is not None and dep.scenario != scenario:
        return False
    return dep.precision is None or (precision or "").lower() == dep.precision


def _judge_key(
    ctx: CheckContext, key: str, entry: Any, docs: list[ModelsDoc], names: dict[str, str],
    head_doc: ModelsDoc | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """Failures and passes for one affected key; `docs` is [base, head], the base row wins."""
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
    side = "head" if row_doc is head_doc and not any(d.model(prefix) for d in docs if d is not head_doc) else "base"
    alias: Finding | None = None
    if side == "head":
        known = _known_in_base(ctx, entry, row, [d for d in docs if d is not head_doc])
        if known is not None:
            # Rules come from the base: the checkpoint is an existing model, so its base row governs.
            base_prefix, row, row_doc, alias = known
            side = "base"
            prefix_rows = {prefix, base_prefix}
        else:
            prefix_rows = {prefix}
    else:
        prefix_rows = {prefix}
    row_ev = FileEvidence(path=row_doc.path, line=row.line, text=f"{row.name} | {row.active}", side=side)
    # the prefixes the row's rules name: the entry's own, and the row's when the row covers the
    # entry's prefix as another version of its model without listing it (models_md.version_aliases)
    match = prefix_rows if prefix in row.prefixes else {*prefix_rows, *row.prefixes}
    failures: list[Finding] = [alias] if alias is not None else []
    if row.retired:
        failures.append(finding("model-retired", entry_ev, row_ev, key=key, prefix=prefix, active=row.active))
        return failures, []
    scenarios = _entry_scenarios(entry, names)
    for scenario, line in scenarios:
        scen_ev = FileEvidence(path=entry.file, line=line or entry.line, text=f"{key}: {scenario}")
        # One finding per scenario: the earliest deprecation in force (a notice's prose and its
        # table, or the base and head copies of MODELS.md, say the same thing).
        applying = [(dep, doc) for doc in docs for dep in doc.deprecations
                    if _applies(dep, match, scenario, precision, ctx)]
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
        if (scenario not in row.active_scenarios()
                and not any(f.params.get("scenario") == scenario for f in failures if f is not alias)):
            failures.append(finding("scenario-not-active", scen_ev, row_ev, key=key, prefix=prefix,
                                    scenario=scenario, active=row.active))
    arms = _judge_arms(ctx, key, entry, docs, match, [s for s, _ in scenarios])
    failures.extend(f for f in arms if not is_scoping_note(f))
    scoped = [f for f in arms if is_scoping_note(f)]
    passes = [finding("model-active", row_ev, key=key, prefix=prefix,
                      scenarios=[s for s, _ in scenarios], added=row.date_added.isoformat() if row.date_added else "")]
    if side == "head":  # a row for a new model, taken from the PR's own addition
        note = addition_finding(row_doc.path, f"MODELS.md row {row.name} ({prefix})", row.line)
        failures.extend([note] if failures else [])
        passes.append(note)
    if alias is not None:
        if failures == [alias]:
            failures = []
        passes.append(alias)
    return failures, passes + scoped


def _name(text: str) -> str:
    return "".join(text.lower().split())


def _known_in_base(ctx: CheckContext, entry: Any, head_row: ModelRow, base_docs: list[ModelsDoc],
                   ) -> tuple[str, ModelRow, ModelsDoc, Finding] | None:
    """The base prefix, row and document of a checkpoint the PR lists under a new prefix, with the
    note naming the alias; None for a model the base does not know.

    Known means: a base master entry serves the same `model` (HF checkpoint) under a prefix the
    base MODELS.md lists, or a base support-matrix row has the same model name."""
    model = str(entry.model or "")
    for doc in base_docs:
        if model:
            for base_entry in candidate_entries(ctx, "base", [model]):
                try:
                    same = str(base_entry.model or "") == model
                    base_prefix = str(base_entry.model_prefix or "")
                except InputError:
                    continue
                row = doc.model(base_prefix) if same else None
                if row is not None:
                    return base_prefix, row, doc, finding(
                        "checkpoint-known-in-base",
                        FileEvidence(path=base_entry.file, line=base_entry.field_line("model") or base_entry.line,
                                     text=f"{base_entry.key}: model {model}", side="base"),
                        FileEvidence(path=doc.path, line=row.line, text=row.name, side="base"),
                        key=entry.key, prefix=str(entry.model_prefix or ""), base_prefix=base_prefix,
                        model=model, via=base_entry.key, name=row.name)
        for row in doc.models.values():
            if _name(row.name) == _name(head_row.name):
                base_prefix = row.prefixes[0] if row.prefixes else ""
                return base_prefix, row, doc, finding(
                    "checkpoint-known-in-base", FileEvidence(path=doc.path, line=row.line, text=row.name, side="base"),
                    key=entry.key, prefix=str(entry.model_prefix or ""), base_prefix=base_prefix,
                    model=model, via=None, name=row.name)
    return None


def _arm_rules(ctx: CheckContext, docs: list[ModelsDoc], prefixes: set[str], scenarios: list[str],
               ) -> list[tuple[ArmDeprecation, ModelsDoc]]:
    """Arm deprecations in force for this model's scenarios, one per (scenario, method), from either tree."""
    seen: dict[tuple[str, str], tuple[ArmDeprecation, ModelsDoc]] = {}
    for doc in docs:
        for arm in doc.arm_deprecations:
            if arm.prefix in prefixes and arm.scenario in scenarios and arm.effective <= ctx.review_date:
                seen.setdefault((arm.scenario, arm.method), (arm, doc))
    return list(seen.values())


def _judge_arms(ctx: CheckContext, key: str, entry: Any, docs: list[ModelsDoc], prefixes: set[str],
                scenarios: list[str]) -> list[Finding]:
    """FAIL findings naming the points of one config that run a deprecated arm."""
    prefix = str(entry.model_prefix or "")
    rules = _arm_rules(ctx, docs, prefixes, scenarios)
    if not rules:
        return []
    methods = ctx.policy("models")["arm_rules"]["methods"]
    launch_set = launches(ctx, "head", keys=[key])
    out: list[Finding] = []
    for arm, doc in rules:
        allowed = {m.lower() for m in methods.get(arm.method, [arm.method])}
        on_arm: list[tuple[str, tuple[str | None, int | None]]] = []
        unknown: list[str] = []
        judged = 0
        for point in points(ctx, "head", key):
            if point.scenario != arm.scenario:
                continue
            judged += 1
            mine = [la for la in launch_set.by_exp_name(point.exp_name) if la.key == key]
            if not mine:
                if point.spec_decoding == "none":
                    on_arm.append((point.exp_name, (point.file, point.line)))
                else:
                    unknown.append(point.exp_name)
                continue
            if not any(la.spec is not None and la.spec.speculating and str(la.spec.method).lower() in allowed
                       for la in mine):
                on_arm.append((point.exp_name, (mine[0].recipe_path, None)))
        rule_ev = FileEvidence(path=doc.path, line=arm.line, text=arm.text[:160], side="base")
        if on_arm:
            places = list(dict.fromkeys(where for _, where in on_arm))
            out.append(finding("arm-deprecated", *[FileEvidence(path=p, line=ln) for p, ln in places[:4] if p],
                               rule_ev, key=key, prefix=prefix, arm=arm.arm, method=arm.method,
                               scenario_name=SCENARIO_NAMES.get(arm.scenario, arm.scenario),
                               points=[name for name, _ in on_arm][:MAX_NAMED], count=len(on_arm), total=judged,
                               models_md=doc.path.rsplit("/", 1)[-1], line=arm.line))
        # a point whose launch does not resolve is Check 18's (it names the construct); only a
        # resolved launch that says nothing of its method is this check's unknown
        unresolved = {e.exp_name: e for e in launch_set.fatal_errors if e.key == key}
        scoped = [unresolved[name] for name in unknown if name in unresolved]
        unknown = [name for name in unknown if name not in unresolved]
        out.extend(f for f in reported_by_check18(scoped) if f not in out)
        if unknown:
            out.append(finding("arm-unknown", rule_ev, MissingEvidence(what=f"the launch of {unknown[0]}"),
                               key=key, arm=arm.arm, points=unknown[:MAX_NAMED], count=len(unknown),
                               missing=f"the launch of {unknown[0]}"))
    return out


def check(ctx: CheckContext) -> CheckResult:
    """Each affected config's model, scenario and precision is active in MODELS.md on the review date."""
    submitted = submitted_entries(ctx)
    removal_only = [k for k in submitted if _removal_only(ctx, k)]
    submitted = {k: e for k, e in submitted.items() if k not in removal_only}
    if not submitted:
        return not_applicable(finding("no-config-affected"), *_removal_notes(removal_only))
    # The rule is in force only where the trusted base holds MODELS.md. The base sets the rules;
    # the head adds rows only for models the base does not list.
    base_doc = models_doc(ctx, "base")
    if base_doc is None:
        return not_applicable(finding("models-md-not-in-force", document=ctx.bundle.path("models_md")))
    head_doc = models_doc(ctx, "head")
    docs = [d for d in (base_doc, head_doc) if d is not None]
    names = dict(ctx.policy("models")["fixed_seq_scenarios"])
    failures: list[Finding] = []
    passes: list[Finding] = []
    for key, entry in submitted.items():
        f, p = _judge_key(ctx, key, entry, docs, names, head_doc)
        failures.extend(f)
        passes.extend(p)
    doc = rule_document(ctx, "models_md")
    notes = [n for n in rule_changes(doc) if n.params.get("change") != "added"] if doc.base is not None else []
    notes += _removal_notes(removal_only)
    # points whose launch does not resolve are Check 18's; they are named in the row either way
    scoped = [f for f in passes if is_scoping_note(f)]
    passes = [f for f in passes if not is_scoping_note(f)]
    if failures:
        return failed(*failures, *notes, *scoped)
    return passed(*passes, *notes, *scoped)


def _removal_only(ctx: CheckContext, key: str) -> bool:
    """True when the PR touches `key` only by deleting files it ran (e.g. moving a deprecated
    launcher script away) and no appended changelog entry names it: nothing of it is submitted."""
    affected = affected_keys(ctx)
    reasons = affected.why(key)
    if not reasons or key in affected.changelog_keys:
        return False
    return all(not r.kind.startswith("entry-") and not ctx.bundle.head.has(r.file) for r in reasons)


def _removal_notes(keys: list[str]) -> list[Finding]:
    if not keys:
        return []
    return [finding("config-files-removed-only", configs=keys[:MAX_NAMED], count=len(keys))]
