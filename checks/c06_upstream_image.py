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
    the MODELS.md support-matrix row (Date added) for a model-enablement image, and for a new
    vendor-framework entry the open-source entry with the same model-prefix and runner.
N/A when: no master-config entry is added, changed or affected by the PR.
Unverifiable when: a master config cannot be read, an affected entry has no image or framework,
    or a model-enablement image's model has no Date added in MODELS.md.
Policy: images (established_skus, engines, open_source_frameworks, vendor_frameworks,
    vendor_image_prefixes, engine_first_requires_base, default_branch_tags, enablement_tag,
    enablement_window_days, exceptions)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from verifier.configs import ConfigEntry, affected_keys, candidate_entries, master_entries, submitted_entries
from verifier.context import CheckContext
from verifier.errors import InputError
from verifier.models_md import models_doc
from verifier.results import (
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
from verifier.rules import addition_finding
from verifier.sglang.parsing import UnknownSGLangVersion
from verifier.sglang.versions import ImageRef, parse_image

ID = 6
NAME = "Upstream image/order/provenance"


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


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


def _tag_kind(ref: ImageRef, entry: ConfigEntry, policy: Mapping[str, Any]) -> str:
    """'enablement' (dev-<model>), 'default-branch' (release / nightly / dev build) or 'unknown'."""
    tag = ref.tag or ""
    prefix = _alnum(entry.model_prefix or "")
    if re.search(policy["enablement_tag"], tag, re.I) and prefix and prefix in _alnum(tag):
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


def _open_source_entry(ctx: CheckContext, entry: ConfigEntry, policy: Mapping[str, Any]) -> list[tuple[str, ConfigEntry]]:
    """(side, entry) of open-source entries with the same model-prefix and runner."""
    sides = ("base",) if policy["engine_first_requires_base"] else ("base", "head")
    found: list[tuple[str, ConfigEntry]] = []
    needles = [entry.model_prefix] if entry.model_prefix else None  # entries of other models are not parsed
    for side in sides:
        for other in candidate_entries(ctx, side, needles):
            try:
                fw = other.framework
                same = other.model_prefix == entry.model_prefix and other.runner == entry.runner
            except InputError:
                continue
            if (same and fw in policy["open_source_frameworks"] and other.key != entry.key
                    and not any(o.key == other.key for _, o in found)):
                found.append((side, other))
    return found


def _judge(ctx: CheckContext, key: str, entry: ConfigEntry, added: bool, policy: Mapping[str, Any]
           ) -> tuple[str, list[Finding]]:
    """('pass'|'fail'|'unverifiable', findings) for one affected entry."""
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
    except UnknownSGLangVersion:
        return "fail", [finding("image-unparsable", _image_evidence(entry), key=key, image=image)]
    ev = _image_evidence(entry)
    engine = policy["open_source_frameworks"].get(framework)
    vendor_image = any(_repo(ref).startswith(p.lower()) for p in policy["vendor_image_prefixes"])
    if engine is not None:
        allowed = [r.lower() for r in policy["engines"][engine]["images"]]
        if _repo(ref) not in allowed:
            if sku not in established:
                return "pass", [finding("new-hardware-image", ev, key=key, image=_short(ref), sku=sku)]
            exc = _exception(policy, key, "fork-image")
            if exc is not None:
                return "pass", [finding("documented-exception", ev, key=key, rule="fork-image", reason=exc["reason"])]
            return "fail", [finding("image-not-upstream", ev, key=key, image=_short(ref), framework=framework,
                                    sku=sku, allowed=allowed)]
        found = [finding("image-upstream", ev, key=key, image=_short(ref), framework=framework, sku=sku)]
        kind = _tag_kind(ref, entry, policy)
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
                                framework=framework, prefix=entry.model_prefix or "", runner=entry.runner or "")]
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
    for key, entry in submitted.items():
        try:
            state, items = _judge(ctx, key, entry, key in affected.added, policy)
            frameworks.add(entry.framework or "")
        except InputError as exc:
            state, items = "unverifiable", [finding("entry-unreadable", FileEvidence(path=entry.file, line=entry.line),
                                                    MissingEvidence(what=entry.file), key=key, error=str(exc)[:200],
                                                    missing=entry.file)]
        {"fail": fails, "unverifiable": unknown, "pass": passes}[state].extend(items)
    if fails:
        return failed(*fails, *unknown)
    if unknown:
        return failed(*unknown)
    added_vendor = any(f.message_id in ("engine-order-ok", "new-hardware-engine-order") for f in passes)
    if not added_vendor:
        passes.append(finding("no-new-vendor-entries", frameworks=sorted(f for f in frameworks if f)))
    return passed(*passes)
