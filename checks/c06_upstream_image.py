"""Check 6: Upstream image/order/provenance.

Rule: If a company claims that they support vLLM/SGLang as first class LLM inference engines on
    their hardware, the respective vLLM submission is made using the upstream vllm docker repo and
    the SGLang submission using the upstream lmsysorg docker repo (exceptions: new hardware, and new
    model architectures the engines cannot serve yet); established models use upstream engine
    images built from master, new models transitioning within a reasonable time (MODELS.md); and the
    vLLM/SGLang submission is made before additional frameworks (TRT-LLM, ATOM, ...).
Why: InferenceX publishes what customers can run with the upstream engines; a fork, a stale
    model-enablement image or a vendor engine submitted first misrepresents the open engines.
Evidence: the master-config `image:` line of each affected entry (repository, tag, digest; `#`
    counts as `/`), its runner's SKU (runner -> SKU: drop `cluster:`, text before the first `-`),
    the MODELS.md support-matrix row (Date added) for a model-enablement image (an upstream image the
    engine maintainers publish for the entry's model, as MODELS.md defines it: a `dev-<model>` tag or a
    day-0 model tag such as `lmsysorg/sglang:minimax-m3`, recognised by the model's prefix, MODELS.md
    name or HF repository name once build qualifiers are dropped), and for a new
    vendor-framework entry an open-source entry of the same model (model-prefix, or another prefix of
    its MODELS.md row) on the same hardware (SKU).
An affected entry whose image the PR neither chooses (adds the entry, changes its image) nor re-runs
    (an appended perf-changelog entry names it) submits nothing with that image: its image is not
    judged, named in the row.
N/A when: no master-config entry is added, changed or affected by the PR, or the base's checklist
    template states none of the three rules. Each rule (upstream images, images built from the
    default branch, engine order) is judged only while the base template has its item
    (verifier.documents.in_force); a rule not in force is skipped, named in the row.
Unverifiable when: a master config cannot be read, an affected entry has no image or framework,
    or a model-enablement image's model has no Date added in MODELS.md.
Policy: images (established_skus, engines, open_source_frameworks, vendor_frameworks,
    vendor_image_prefixes, engine_first_requires_base, default_branch_tags, enablement_tag,
    enablement_tag_qualifiers, enablement_window_days, exceptions),
    launch (the affected configs and their launches, via verifier.configs / verifier.launch),
    models (MODELS.md model identities, via verifier.documents.models_md)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from verifier.configs import ConfigEntry, candidate_entries, master_entries
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
    unverifiable,
)
from verifier.documents.in_force import part_skipped
from verifier.documents.models_md import models_doc
from verifier.documents.rules import addition_finding
from verifier.engines.argspec.parsing import UnknownEngineVersion
from verifier.engines.images import ImageRef, enablement_model, parse_image
from verifier.launch.affected import affected_keys, submitted_entries

ID = 6
# The check's rules (policies/rules.yaml): each is judged only while the base template states it.
RULE_IMAGES = "c06.upstream-images"
RULE_DEFAULT_BRANCH = "c06.default-branch-images"
RULE_ORDER = "c06.engine-order"


def _repo(ref: ImageRef) -> str:
    return ref.repository.lower().removeprefix("docker.io/").removeprefix("index.docker.io/")


def _short(ref: ImageRef) -> str:
    out = ref.repository + (f":{ref.tag}" if ref.tag else "")
    return out + (f"@{ref.digest[:15]}…" if ref.digest else "")


def _sku(entry: ConfigEntry) -> str:
    return (entry.sku or "").lower()


def _exception(policy: Mapping[str, Any], key: str, rule: str) -> Mapping[str, Any] | None:
    return next((e for e in policy["exceptions"] if e["config_key"] == key and e["rule"] == rule), None)


def _image_evidence(entry: ConfigEntry) -> FileEvidence:
    return FileEvidence(path=entry.file, line=entry.field_line("image") or entry.line,
                        text=f"image: {entry.image}")


def _model_identities(ctx: CheckContext, entry: ConfigEntry) -> list[str]:
    """What an enablement tag may name for this entry's model: its model-prefix, the MODELS.md
    support-matrix row of that prefix (its name, each `A / B` alternative, its prefixes; the base row,
    else the head row of a model the base lacks) and the name of its HF repository (`model:`)."""
    prefix = entry.model_prefix or ""
    out = [prefix]
    for side in ("base", "head"):
        doc = models_doc(ctx, side)
        row = doc.model(prefix) if doc is not None and prefix else None
        if row is not None:
            out += [*row.prefixes, row.name, *(p.strip() for p in row.name.split(" / "))]
            break
    if entry.model:
        out.append(entry.model.rsplit("/", 1)[-1])
    return [i for i in dict.fromkeys(out) if i]


def _tag_kind(ctx: CheckContext, ref: ImageRef, entry: ConfigEntry, policy: Mapping[str, Any]) -> str:
    """'enablement' (a tag the engine maintainers publish for this model: `dev-<model>`, a day-0
    model tag; policy enablement_tag_qualifiers), 'default-branch' (release / nightly / dev build)
    or 'unknown'."""
    tag = ref.tag or ""
    if enablement_model(tag, _model_identities(ctx, entry), policy["enablement_tag"],
                        policy["enablement_tag_qualifiers"]) is not None:
        return "enablement"
    if any(re.search(p, tag, re.I) for p in policy["default_branch_tags"]):
        return "default-branch"
    if not tag and ref.digest:
        return "default-branch-digest"
    return "unknown"


def _enablement(ctx: CheckContext, entry: ConfigEntry, ref: ImageRef, policy: Mapping[str, Any],
                ev: FileEvidence) -> tuple[str, Finding] | tuple[str, Finding, Finding]:
    """('ok'|'fail'|'unverifiable', finding[, note of the PR's own MODELS.md addition]) for an enablement image."""
    prefix = entry.model_prefix or ""
    row = None
    row_side = "base"
    for side in ("base", "head"):  # the base row is the rule; a head row only for a model the base lacks
        doc = models_doc(ctx, side)
        if doc is not None and doc.model(prefix) is not None:
            row, row_side = doc.model(prefix), side
            break
    image = _short(ref)
    if row is None or row.date_added is None:
        path = ctx.bundle.path("models_md")
        return "unverifiable", finding("enablement-date-unknown", ev, MissingEvidence(what=f"{path}: {prefix} Date added"),
                                       key=entry.key, image=image, prefix=prefix, missing=f"{prefix} Date added")
    days = int(policy["enablement_window_days"])
    end = row.date_added + dt.timedelta(days=days)
    md = FileEvidence(path=ctx.bundle.path("models_md"), line=row.line, text=f"{row.name} | {row.date_added}")
    params = {"key": entry.key, "image": image, "model": row.name, "date_added": row.date_added.isoformat(),
              "window_end": end.isoformat(), "days": days}
    if ctx.review_date <= end:
        item = finding("enablement-image-in-window", ev, md, **params)
        if row_side == "head":  # the window runs from a Date added the PR itself writes: named in the row
            return "ok", item, addition_finding(md.path, f"MODELS.md row {row.name} ({prefix}), Date added "
                                                f"{row.date_added.isoformat()}", row.line)
        return "ok", item
    exc = _exception(policy, entry.key, "enablement-window")
    if exc is not None:
        return "ok", finding("documented-exception", ev, key=entry.key, rule="enablement-window", reason=exc["reason"])
    return "fail", finding("enablement-window-expired", ev, md, review_date=ctx.review_date.isoformat(), **params)


def _model_family(ctx: CheckContext, prefix: str, policy: Mapping[str, Any]) -> set[str]:
    """The model prefixes that are one model for engine-first ordering: the prefixes of the base
    MODELS.md support-matrix row that lists `prefix` (`GLM-5 / GLM-5.1`: `glm5`, `glm5.1`), else a
    policy `model_families` group (for trees that predate MODELS.md), else the prefix alone."""
    doc = models_doc(ctx, "base")
    row = doc.model(prefix) if doc is not None else None
    if row is not None:
        return {prefix, *row.prefixes}
    for group in policy.get("model_families") or ():
        if prefix in group:
            return set(group)
    return {prefix}


def _open_source_entry(ctx: CheckContext, entry: ConfigEntry, policy: Mapping[str, Any]) -> list[tuple[str, ConfigEntry]]:
    """(side, entry) of open-source entries of the same model on the same hardware: a model prefix of
    the same model family (`_model_family`) and the same SKU (the runner label's hardware: a
    single-node `b200` and a multi-node `b200-multinode` runner are the same hardware)."""
    sides = ("base",) if policy["engine_first_requires_base"] else ("base", "head")
    family = _model_family(ctx, entry.model_prefix or "", policy)
    found: list[tuple[str, ConfigEntry]] = []
    needles = [entry.model_prefix] if entry.model_prefix else None  # entries of other models are not parsed
    for side in sides:
        for other in candidate_entries(ctx, side, needles):
            try:
                fw = other.framework
                same = other.model_prefix in family and _sku(other) == _sku(entry)
            except InputError:
                continue
            if (same and fw in policy["open_source_frameworks"] and other.key != entry.key
                    and not any(o.key == other.key for _, o in found)):
                found.append((side, other))
    return found


def _submits_image(ctx: CheckContext, key: str, entry: ConfigEntry, added: bool) -> bool:
    """Whether the PR submits results with the entry's image: it adds the entry, changes its image,
    or an appended perf-changelog entry names the key (InferenceX benchmarks a config only then).
    An entry the PR edits otherwise (a field renamed, a scenario removed) keeps the base's image
    and re-runs nothing."""
    if added:
        return True
    affected = affected_keys(ctx)
    if key in affected.changelog_keys:
        return True
    old = master_entries(ctx, "base").get(key)
    return old is None or old.image != entry.image


def _judge(ctx: CheckContext, key: str, entry: ConfigEntry, added: bool, policy: Mapping[str, Any],
           skipped: dict[str, Finding]) -> tuple[str, list[Finding]]:
    """('pass'|'fail'|'unverifiable', findings) for one affected entry.

    `skipped`: the rules of this check not in force for the PR (verifier.documents.in_force), with their note;
    a rule that is skipped is not judged here, and its note is returned as a finding."""
    established = {s.lower() for s in policy["established_skus"]}
    sku = _sku(entry)
    framework = entry.framework
    image = entry.image
    if not image or not framework:
        what = "image" if not image else "framework"
        return "unverifiable", [finding("entry-field-missing", FileEvidence(path=entry.file, line=entry.line),
                                        MissingEvidence(what=f"{key}.{what}"), key=key, field=what,
                                        missing=f"{key}.{what}")]
    try:
        ref = parse_image(image)
    except UnknownEngineVersion:
        return "fail", [finding("image-unparsable", _image_evidence(entry), key=key, image=image)]
    ev = _image_evidence(entry)
    engine = policy["open_source_frameworks"].get(framework)
    vendor_image = any(_repo(ref).startswith(p.lower()) for p in policy["vendor_image_prefixes"])
    if engine is not None and not _submits_image(ctx, key, entry, added):
        # the base's image, not re-run: the PR submits nothing with it (it is judged when chosen or re-run)
        return "pass", [finding("image-not-resubmitted", ev, key=key, image=_short(ref))]
    if engine is not None:
        allowed = [r.lower() for r in policy["engines"][engine]["images"]]
        if _repo(ref) not in allowed:
            if RULE_IMAGES in skipped:
                return "pass", [skipped[RULE_IMAGES]]
            if sku not in established:
                return "pass", [finding("new-hardware-image", ev, key=key, image=_short(ref), sku=sku)]
            exc = _exception(policy, key, "fork-image")
            if exc is not None:
                return "pass", [finding("documented-exception", ev, key=key, rule="fork-image", reason=exc["reason"])]
            return "fail", [finding("image-not-upstream", ev, key=key, image=_short(ref), framework=framework,
                                    sku=sku, allowed=allowed)]
        found = [finding("image-upstream", ev, key=key, image=_short(ref), framework=framework, sku=sku)]
        kind = _tag_kind(ctx, ref, entry, policy)
        if kind in ("enablement", "unknown") and RULE_DEFAULT_BRANCH in skipped:
            return "pass", [*found, skipped[RULE_DEFAULT_BRANCH]]
        if kind == "enablement":
            state, item, *notes = _enablement(ctx, entry, ref, policy, ev)
            return ("pass" if state == "ok" else state), [*found, item, *notes] if state == "ok" else [item]
        if kind == "unknown":
            exc = _exception(policy, key, "enablement-window")
            if exc is not None:
                return "pass", [*found, finding("documented-exception", ev, key=key, rule="enablement-window",
                                                reason=exc["reason"])]
            return "fail", [finding("image-not-default-branch", ev, key=key, image=_short(ref), tag=ref.tag or "")]
        return "pass", found
    if framework in policy["vendor_frameworks"] or vendor_image:
        if not added:
            return "pass", [finding("vendor-entry-existing", ev, key=key, framework=framework)]
        if RULE_ORDER in skipped:
            return "pass", [skipped[RULE_ORDER]]
        partners = _open_source_entry(ctx, entry, policy)
        if partners:
            side, other = partners[0]
            return "pass", [finding("engine-order-ok", ev, FileEvidence(path=other.file, line=other.line, side=side),
                                    key=key, framework=framework, open_key=other.key,
                                    open_framework=other.framework or "")]
        if sku not in established:
            return "pass", [finding("new-hardware-engine-order", ev, key=key, framework=framework, sku=sku)]
        exc = _exception(policy, key, "engine-order")
        if exc is not None:
            return "pass", [finding("documented-exception", ev, key=key, rule="engine-order", reason=exc["reason"])]
        return "fail", [finding("vendor-before-open-source", FileEvidence(path=entry.file, line=entry.line), key=key,
                                framework=framework, prefix=entry.model_prefix or "", runner=entry.runner or "",
                                sku=sku)]
    return "unverifiable", [finding("framework-unclassified", FileEvidence(path=entry.file,
                                    line=entry.field_line("framework") or entry.line),
                                    MissingEvidence(what=f"policies/images.yaml: framework {framework}"),
                                    key=key, framework=framework, missing=f"framework {framework}")]


def check(ctx: CheckContext) -> CheckResult:
    """FAIL on a fork image on an established SKU, an expired enablement image or a vendor engine first."""
    policy = ctx.policy("images")
    affected = affected_keys(ctx)
    try:
        submitted = submitted_entries(ctx)
        master_entries(ctx, "base")
    except InputError as exc:
        return unverifiable("master-config-unreadable", missing=exc.path if hasattr(exc, "path") else "master config",
                            error=str(exc)[:200])
    if not submitted:
        return not_applicable(finding("no-affected-entries", removed=len(affected.removed)))
    fails: list[Finding] = []
    unknown: list[Finding] = []
    passes: list[Finding] = []
    frameworks: set[str] = set()
    skipped = {rule: note for rule in (RULE_IMAGES, RULE_DEFAULT_BRANCH, RULE_ORDER)
               if (note := part_skipped(ctx, rule)) is not None}
    for key, entry in submitted.items():
        try:
            state, items = _judge(ctx, key, entry, key in affected.added, policy, skipped)
            frameworks.add(entry.framework or "")
        except InputError as exc:
            state, items = "unverifiable", [finding("entry-unreadable", FileEvidence(path=entry.file, line=entry.line),
                                                    MissingEvidence(what=entry.file), key=key, error=str(exc)[:200],
                                                    missing=entry.file)]
        {"fail": fails, "unverifiable": unknown, "pass": passes}[state].extend(items)
    notes = [n for n in skipped.values() if n in passes]
    passes = [p for p in passes if p not in notes]
    if fails:
        return failed(*fails, *unknown, *notes)
    if unknown:
        return failed(*unknown, *notes)
    added_vendor = any(f.message_id in ("engine-order-ok", "new-hardware-engine-order") for f in passes)
    if not added_vendor:
        passes.append(finding("no-new-vendor-entries", frameworks=sorted(f for f in frameworks if f)))
    return passed(*passes, *notes)
