"""Check 16: Vendor overview.

Rule: The vendor overview (`docs/overview/nvidia.md`, `amd.md`) lists every model the PR submits,
    by its Prefix column, with each affected config key in its engine's cell (SGLang = framework
    sglang, vLLM = vllm, TRT-LLM = trt, Dynamo = every dynamo-* key).
Why: the overview is the public index of which engine runs which model on which vendor; a config
    missing from it is invisible to readers comparing engines.
Evidence: the affected keys (`verifier.configs.affected_keys`) with their head master entries
    (vendor, model-prefix, framework); the overview table of the head tree, by file and line.
N/A when: no config key present in the head master configs is affected, or an affected vendor's
    overview file is absent from the trusted base tree: the governing document did not exist yet, so
    the rule was not in force for this PR (the row names the document).
Unverifiable when: a vendor's overview file is in the base tree but missing from the head tree, or
    has no data table.
Policy: overview,
    launch (the affected configs and their launches, via verifier.configs / verifier.launch)
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from verifier.configs import master_entries
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    failed,
    finding,
    not_applicable,
    passed,
    unverifiable,
)
from verifier.documents.overview import Overview, read_overview
from verifier.launch.affected import affected_keys, submitted_entries

ID = 16


def _column(framework: str | None, policy: Mapping[str, Any]) -> str | None:
    for rule in policy["columns"]:
        if framework is not None and fnmatch.fnmatchcase(framework, str(rule["framework"])):
            return str(rule["column"])
    return None


def _named(result: CheckResult, name: str) -> CheckResult:
    return result.model_copy(update={"name": name})


def _na_name(ctx: CheckContext, removed: list[str], policy: Mapping[str, Any]) -> str:
    """The row name when nothing is submitted: the vendor of removed keys or of a changed master file
    ("" when neither names one: the registry row's name stands)."""
    vendors: list[str] = []
    try:
        base = master_entries(ctx, "base")
        vendors = [base[k].vendor for k in removed if k in base]
    except InputError:
        pass
    changed = {f.path for f in ctx.bundle.pr.files}
    for vendor, logical in (("nvidia", "nvidia_master"), ("amd", "amd_master")):
        if ctx.bundle.path(logical) in changed:
            vendors.append(vendor)
    titles = [str(policy["vendors"][v]["title"]) for v in dict.fromkeys(vendors) if v in policy["vendors"]]
    return " and ".join(titles) + " overview" if titles else ""


def check(ctx: CheckContext) -> CheckResult:
    """Every affected key is listed in its engine's cell of its model's overview row."""
    policy = ctx.policy("overview")
    try:
        affected = affected_keys(ctx)
        head = submitted_entries(ctx)
    except InputError as exc:
        return unverifiable("affected-configs-unreadable", FileEvidence(path=exc.path), missing=exc.path)
    if not head:
        result = not_applicable(finding("no-submitted-keys", removed=list(affected.removed)))
        return _named(result, _na_name(ctx, affected.removed, policy))

    vendors = policy["vendors"]
    by_vendor: dict[str, list[str]] = {}
    for key, entry in head.items():
        by_vendor.setdefault(entry.vendor, []).append(key)
    titles = [str(vendors[v]["title"]) if v in vendors else v for v in by_vendor]
    name = " and ".join(titles) + " overview"

    header = [str(h) for h in policy["header"]]
    problems: list[Finding] = []
    oks: list[Finding] = []
    not_in_force: list[Finding] = []
    overview_dir = ctx.bundle.path("overview_dir")
    for vendor, vendor_keys in by_vendor.items():
        if vendor not in vendors:
            return _named(unverifiable("overview-vendor-unknown", missing=f"overview policy for {vendor}",
                                       vendor=vendor), name)
        path = overview_dir + str(vendors[vendor]["file"])
        if not ctx.bundle.base.has(path):
            not_in_force.append(finding("overview-not-in-force", document=path,
                                        title=str(vendors[vendor]["title"]), keys=vendor_keys))
            continue
        try:
            overview = read_overview(ctx.bundle.head, path, header)
        except InputError as exc:
            return _named(unverifiable("overview-unreadable", FileEvidence(path=path), missing=path,
                                       reason=exc.reason), name)
        if overview is None:
            return _named(unverifiable("overview-missing", missing=path, title=str(vendors[vendor]["title"]),
                                       keys=vendor_keys), name)
        if overview.header_line is None:
            return _named(unverifiable("overview-table-missing", FileEvidence(path=path), missing=f"{path} table",
                                       header=" | ".join(header)), name)
        for key in vendor_keys:
            problem, ok = _judge_key(key, head[key], overview, policy)
            if problem is not None:
                problems.append(problem)
            if ok is not None:
                oks.append(ok)
    if problems:
        return _named(failed(*problems), name)
    if not_in_force and not oks:
        return _named(not_applicable(*not_in_force), name)
    return _named(passed(*oks, *not_in_force), name)


def _judge_key(key: str, entry: Any, overview: Overview, policy: Mapping[str, Any]) -> tuple[
        Finding | None, Finding | None]:
    """(problem, confirmation) for one affected key."""
    prefix = entry.model_prefix or ""
    framework = entry.framework
    column = _column(framework, policy)
    row = overview.row(prefix)
    path = overview.path
    if row is None:
        return finding("overview-model-missing", FileEvidence(path=path, line=overview.header_line),
                       FileEvidence(path=entry.file, line=entry.field_line("model-prefix")),
                       key=key, prefix=prefix, model=str(entry.model or ""),
                       where=f"{path.rsplit('/', 1)[-1]}:{overview.header_line}"), None
    found = row.column_of(key)
    evidence = FileEvidence(path=path, line=row.line, text=row.text[:300])
    file = path.rsplit("/", 1)[-1]
    if column is None:
        if found is None:
            return finding("overview-key-missing-any", evidence, key=key, prefix=prefix, model=row.model,
                           framework=str(framework), where=f"{file}:{row.line}"), None
        return None, finding("overview-lists-key", evidence, key=key, prefix=prefix, model=row.model,
                             column=found, where=f"{file}:{row.line}")
    if found is None:
        return finding("overview-key-missing", evidence, key=key, prefix=prefix, model=row.model, column=column,
                       framework=str(framework), where=f"{file}:{row.line}"), None
    if found != column:
        return finding("overview-key-wrong-column", evidence, key=key, prefix=prefix, model=row.model,
                       column=column, found=found, framework=str(framework), where=f"{file}:{row.line}"), None
    return None, finding("overview-lists-key", evidence, key=key, prefix=prefix, model=row.model, column=column,
                         where=f"{file}:{row.line}")
