"""Rules in force: a rule binds a PR only when the checklist template on the PR's base states it.

The checklist template (PR_REVIEW_CHECKLIST.md, its `## Template` block) is what the CODEOWNER
attests to, and InferenceX added its items over time (engine patches and golden AL on 2026-07-10,
the MODELS.md deprecation item on 2026-08-03, append-only on 2026-08-14, ...). A PR is judged by
the rules its base template states: a rule whose item the base template lacks was not in force
for that PR, so its check is N/A (or, for one rule of a check with several, that rule is skipped),
with a finding that names the document and the missing item.

policies/rules.yaml maps each rule to the template item that states it, by the item's canonical
wording; items are paired with the base template's items by meaning, one to one, the way Check 5
pairs sign-off items with the template (verifier.documents.checklist.match_items), so that rewording between
template versions does not matter. A rule stated inside a broader item also names words that item
must contain (`mentions`).

The template is a rule document (verifier.documents.rules): it is read from the base tree only, so a PR that
adds or removes an item changes nothing for itself (the row names the edit). When the base
template cannot be read (not held by the bundle, no `## Template` section, too large or not
UTF-8), every rule is in force: fail closed. When the base commit is known to have no template at
all (its recorded tree listing lacks it: InferenceX before 2026-06-22), no rule of it was in force:
every check with rules, and the always-judged checks whose governing document is the template
(policies/rules.yaml `template_governed`), are N/A naming the document.

API: `rule_in_force(ctx, rule_id) -> Ruling`, `check_gate(ctx, check_id) -> CheckResult | None`
(the runner's gate: the N/A result of a check none of whose rules is in force), and
`part_skipped(ctx, rule_id) -> Finding | None` (a check's note for one skipped rule).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    base_tree_evidence,
    finding,
    not_applicable,
)
from verifier.core.yamlio import decode_text
from verifier.documents.checklist import Item, checkboxes, match_items, normalize, template_block
from verifier.documents.rules import RuleDocument, change_finding, rule_document

POLICY = "rules"
REGISTRY = "checks"  # policies/checks.yaml: one row per check, listing the rules it enforces


@dataclass(frozen=True, eq=False, repr=False)
class StatedItems:
    """The base template's reading: which canonical items it states, and the template item of each."""

    path: str
    readable: bool  # False: the template could not be read, so every rule is in force
    stated: dict[str, Item]  # canonical item id -> the base template's item that states it
    reason: str = ""  # why the template could not be read
    absent: bool = False  # the base commit has no template at all: none of its rules was in force


@dataclass(frozen=True, eq=False, repr=False)
class Ruling:
    """Whether one rule is in force for this PR, and where that was decided."""

    rule: str
    check: int
    item: str
    in_force: bool
    path: str
    template_item: Item | None  # the base template's item that states the rule (None: not stated / unread)
    readable: bool


def _read(ctx: CheckContext) -> StatedItems:
    doc: RuleDocument = rule_document(ctx, ctx.policy(POLICY)["document"])
    if doc.rule is None:
        if doc.base_absent:
            return StatedItems(doc.path, True, {}, absent=True)
        return StatedItems(doc.path, False, {}, "absent from the base tree")
    policy = ctx.policy(POLICY)
    canonical = tuple((str(k), " ".join(str(v).split())) for k, v in policy["items"].items())
    try:
        stated = _pair(doc.rule, doc.path, canonical, float(policy["match_threshold"]),
                       float(policy["reworded_threshold"]))
    except InputError as exc:
        return StatedItems(doc.path, False, {}, str(exc.reason))
    if isinstance(stated, str):
        return StatedItems(doc.path, False, {}, stated)
    return StatedItems(doc.path, True, dict(stated))


@lru_cache(maxsize=32)
def _pair(raw: bytes, path: str, canonical: tuple[tuple[str, str], ...], threshold: float,
          reworded: float) -> tuple[tuple[str, Item], ...] | str:
    """The canonical items (id, wording) the template `raw` states, each with its template item; or
    why the template cannot be read. Cached: a replay meets the same few template versions again
    and again. Identical items (after normalization) pair at once; only the rest are scored."""
    block = template_block(decode_text(raw, path))
    if block is None:
        return "no ## Template section"
    text, first_line = block
    items = checkboxes(text, first_line=first_line, what=path)
    if not items:
        return "no checklist items"
    by_words: dict[tuple[str, ...], list[int]] = {}
    for index, item in enumerate(items):
        by_words.setdefault(tuple(item.words), []).append(index)
    stated: dict[str, Item] = {}
    left: list[tuple[str, Item]] = []
    taken: set[int] = set()
    for cid, wording in canonical:
        same = [i for i in by_words.get(tuple(normalize(wording)), []) if i not in taken]
        if same:
            taken.add(same[0])
            stated[cid] = items[same[0]]
        else:
            left.append((cid, Item(wording, False, 0, 0)))
    rest = [item for index, item in enumerate(items) if index not in taken]
    if left and rest:
        pairs = match_items([c for _, c in left], rest, threshold, reworded)
        for (cid, _), match in zip(left, pairs, strict=True):
            if match.signoff is not None:
                stated[cid] = match.signoff
    order = {cid: n for n, (cid, _) in enumerate(canonical)}
    return tuple(sorted(stated.items(), key=lambda kv: order[kv[0]]))


def stated_items(ctx: CheckContext) -> StatedItems:
    """The base checklist template's items, paired with the canonical items of policies/rules.yaml (memoized)."""
    return ctx.memo("in_force.stated", lambda: _read(ctx))


def _mentions(item: Item, words: Any) -> bool:
    have = item.words
    for phrase in words:
        want = normalize(str(phrase))
        if not want or not any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1)):
            return False
    return True


def rule_in_force(ctx: CheckContext, rule_id: str) -> Ruling:
    """Whether the rule `rule_id` (policies/rules.yaml `rules`) is in force for this PR."""
    spec = ctx.policy(POLICY)["rules"][rule_id]
    read = stated_items(ctx)
    check, item = _owner(ctx, rule_id), str(spec["item"])
    if not read.readable:
        return Ruling(rule_id, check, item, True, read.path, None, False)
    found = read.stated.get(item)
    ok = found is not None and _mentions(found, spec.get("mentions", ()))
    return Ruling(rule_id, check, item, ok, read.path, found, True)


def check_rules(ctx: CheckContext, check_id: int) -> list[str]:
    """The rule ids of one check, in its registry row's order (policies/checks.yaml; [] when it has none)."""
    if REGISTRY not in ctx.policies:
        return []
    row = ctx.policy(REGISTRY)["checks"].get(str(check_id))
    return [str(rule) for rule in row.get("rules", ())] if row is not None else []


def _owner(ctx: CheckContext, rule_id: str) -> int:
    """The check whose registry row lists `rule_id` (-1 when no row does)."""
    rows = ctx.policy(REGISTRY)["checks"] if REGISTRY in ctx.policies else {}
    return next((int(cid) for cid, row in rows.items() if rule_id in row.get("rules", ())), -1)


def _quote(ctx: CheckContext, item: str) -> str:
    words = int(ctx.policy(POLICY)["quote_words"])
    parts = re.sub(r"[`*]", "", str(ctx.policy(POLICY)["items"][item])).split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def _missing_item(ctx: CheckContext, ruling: Ruling) -> str:
    """What the template lacks: the item, or the words a rule needs inside the item it found."""
    spec = ctx.policy(POLICY)["rules"][ruling.rule]
    if ruling.template_item is not None:  # the item is there, without the words stating this rule
        return ", ".join(str(w) for w in spec.get("mentions", ()))
    return _quote(ctx, ruling.item)


def _note(ctx: CheckContext, message_id: str, ruling: Ruling) -> Finding:
    spec = ctx.policy(POLICY)["rules"][ruling.rule]
    line = ruling.template_item.line if ruling.template_item is not None else None
    return finding(message_id, FileEvidence(path=ruling.path, line=line, side="base"), file=ruling.path,
                   rule=ruling.rule, item=_missing_item(ctx, ruling),
                   within=ruling.template_item is not None and bool(spec.get("mentions")))


def part_skipped(ctx: CheckContext, rule_id: str) -> Finding | None:
    """The note (`rule-part-not-in-force`) for one rule of a check that is not in force, else None."""
    ruling = rule_in_force(ctx, rule_id)
    return None if ruling.in_force else _note(ctx, "rule-part-not-in-force", ruling)


def check_gate(ctx: CheckContext, check_id: int) -> CheckResult | None:
    """The N/A result of a check none of whose rules the base template states, else None (judge it).

    Checks listed in policies/rules.yaml `always_in_force`, and checks with no rule there, are
    always judged.
    """
    if POLICY not in ctx.policies:
        return None
    policy = ctx.policy(POLICY)
    rules = check_rules(ctx, check_id)
    if (rules or check_id in policy.get("template_governed", ())) and stated_items(ctx).absent:
        return _template_absent(ctx)
    if str(check_id) in policy["always_in_force"] or not rules:
        return None
    rulings = [rule_in_force(ctx, r) for r in rules]
    if any(r.in_force for r in rulings):
        return None
    notes = [_note(ctx, "rule-not-in-force", r) for r in rulings]
    change = change_finding(rule_document(ctx, ctx.policy(POLICY)["document"]))
    return not_applicable(*notes, *([change] if change is not None else []))


def _template_absent(ctx: CheckContext) -> CheckResult:
    """N/A: the base commit has no checklist template, so the rules it states were not yet in force."""
    bundle = ctx.bundle
    path = stated_items(ctx).path
    return not_applicable(finding("template-absent", base_tree_evidence(bundle.pr.repo, bundle.base.sha), file=path,
                                  sha=bundle.base.sha[:12]))
