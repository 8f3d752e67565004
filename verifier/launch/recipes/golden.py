"""Golden acceptance-length curves (`golden_al_distribution/*.yaml`, FORMATS.md §6).

Each curve file has one top-level key (the measured checkpoint name) with `thinking_on` /
`thinking_off` maps from an integer draft length to the golden AL. There is no interpolation: a
missing file, thinking mode or draft length is a "missing cell", and the launcher fails before
submission. The file is chosen from (model prefix, method, draft model, sample method) by the rules
in policies/launch.yaml `golden-curves`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verifier.configs.points import launch_policy
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.yaml11 import Doc, parse_yaml11
from verifier.core.yamlio import decode_text
from verifier.documents.rules import rule_document
from verifier.engines.common import format_al

MTP_FAMILY = frozenset({"mtp", "eagle", "eagle3", "nextn"})


@dataclass(frozen=True, eq=False, repr=False)
class GoldenAL:
    """A golden-curve lookup: the value with its file and line, or why the cell is missing."""

    model_prefix: str
    method: str
    draft_length: int | None
    thinking_mode: str
    curve: str | None  # file stem chosen by the rules
    file: str | None  # repository path of the curve file
    line: int | None  # line of the draft-length key holding the value
    value: float | None
    missing: str | None = None  # reason when there is no value

    @property
    def ok(self) -> bool:
        """True when the cell exists."""
        return self.value is not None and self.missing is None

    @property
    def text(self) -> str:
        """The AL as the connector writes it (`:g`: 4.04 -> '4.04', 3.0 -> '3')."""
        return format_al(self.value) if self.value is not None else ""


def curve_name(
    rules: Mapping[str, Any], model_prefix: str, method: str, draft_model: str | None, sample_method: str | None
) -> str | None:
    """The curve file stem for a spec, per policy rules then defaults (None when no rule fits)."""
    method = method.lower()
    for rule in rules.get("rules", ()):
        if rule.get("prefix") not in (None, model_prefix) or method not in rule["methods"]:
            continue
        needle = rule.get("draft-model-contains")
        if needle and (not draft_model or needle.lower() not in draft_model.lower()):
            continue
        wanted = rule.get("sample-method")
        if wanted and (sample_method or "").lower() != wanted.lower():
            continue
        return str(rule["file"]).format(prefix=model_prefix)
    for rule in rules.get("defaults", ()):
        if method in rule["methods"]:
            return str(rule["file"]).format(prefix=model_prefix)
    return None


def curve_doc(ctx: CheckContext, side: str, stem: str) -> Doc | None:
    """The parsed curve file `<golden dir>/<stem>.yaml` of one side (None when absent). Memoized."""

    def compute() -> Doc | None:
        doc = rule_document(ctx, "golden_al_dir", f"{stem}.yaml")
        path = doc.path
        raw = doc.base if side == "base" else doc.head
        if raw is None:
            return None
        return parse_yaml11(decode_text(raw, path), path)

    return ctx.memo(f"recipes.golden.{side}.{stem}", compute)


def golden_al(
    ctx: CheckContext,
    side: str,
    model_prefix: str,
    method: str,
    draft_length: int | None,
    thinking_mode: str | None = None,
    draft_model: str | None = None,
    sample_method: str | None = None,
) -> GoldenAL:
    """Look up the golden AL for a spec; `.ok` False with `.missing` naming the missing cell."""
    policy = launch_policy(ctx)
    mode = thinking_mode or str(policy["spec"]["default-thinking-mode"])
    method = (method or "").lower()

    def miss(reason: str, stem: str | None = None, file: str | None = None, line: int | None = None) -> GoldenAL:
        return GoldenAL(model_prefix, method, draft_length, mode, stem, file, line, None, reason)

    stem = curve_name(policy["golden-curves"], model_prefix, method, draft_model, sample_method)
    if stem is None:
        return miss(f"no golden curve rule for method {method!r}")
    path = ctx.bundle.path("golden_al_dir") + f"{stem}.yaml"
    try:
        doc = curve_doc(ctx, side, stem)
    except InputError as exc:
        return miss(f"curve file unreadable: {exc.reason}", stem, path)
    if doc is None:
        return miss(f"no curve file {stem}.yaml", stem, path)
    data = doc.data
    if not isinstance(data, dict) or len(data) != 1:
        return miss("curve file must have exactly one top-level key", stem, path, 1)
    (model_name, modes), = data.items()
    if not isinstance(modes, dict) or not isinstance(modes.get(mode), dict):
        return miss(f"curve has no {mode} section", stem, path, doc.line(model_name))
    if not isinstance(draft_length, int) or isinstance(draft_length, bool):
        return miss("draft length unknown", stem, path, doc.line(model_name, mode))
    cells = modes[mode]
    if draft_length not in cells:
        return miss(f"draft length {draft_length} not measured under {mode}", stem, path, doc.line(model_name, mode))
    value = cells[draft_length]
    line = doc.line(model_name, mode, draft_length)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return miss(f"AL {value!r} is not a finite number", stem, path, line)
    if not 1 <= value <= draft_length + 1:
        return miss(f"AL {value} is outside [1, {draft_length + 1}]", stem, path, line)
    return GoldenAL(model_prefix, method, draft_length, mode, stem, path, line, float(value))


@dataclass(frozen=True, eq=False, repr=False)
class GoldenRule:
    """The golden AL a launch is judged by (the base curve's cell) and how the PR changes that cell."""

    golden: GoldenAL
    change: str | None  # None | "modified" (judged by the base) | "added" (a cell for something new)
    head: GoldenAL

    @property
    def detail(self) -> str:
        """The changed cell, `<stem> <mode>[<length>]: base X, head Y` or `... = Y` for an addition."""
        cell = f"{self.head.curve} {self.head.thinking_mode}[{self.head.draft_length}]"
        if self.change == "modified":
            return f"{cell}: base {self.golden.text}, head {self.head.text}"
        return f"{cell} = {self.head.text}"


def golden_rule(ctx: CheckContext, head: GoldenAL, draft_model: str | None = None,
                sample_method: str | None = None) -> GoldenRule:
    """Judge a head-side golden lookup (what the launcher injects) by the base curve.

    The base cell is the rule; a head cell that differs is a change the row reports. A cell the
    base lacks and the head has is a rule for something new (a curve for a new model, a newly
    measured draft length) and is taken from the head, named as the PR's addition. A cell missing
    on the head stays missing: the launcher would refuse that launch.
    """
    if not head.ok:
        return GoldenRule(head, None, head)
    base = golden_al(ctx, "base", head.model_prefix, head.method, head.draft_length, head.thinking_mode,
                     draft_model, sample_method)
    if not base.ok:
        return GoldenRule(head, "added", head)
    return GoldenRule(base, "modified" if base.value != head.value else None, head)
