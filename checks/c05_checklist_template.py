"""Check 5: Checklist template.

Rule: Verified that as of the moment of typing this, this is the latest version of
    PR_REVIEW_CHECKLIST.md. The sign-off must carry every item of the current template (the
    `## Template` block of PR_REVIEW_CHECKLIST.md on the PR's base), nested items included, each
    checked. Minor wording drift is fine; a missing item is not, and neither is an unchecked item
    unless the additional detail section explains it. A ticked item whose text withdraws the claim
    (`NOT verified`, `not checked`, `did not`, `N/A - skipped`, a struck-through ~~span~~: more
    negating words than the template item holds) is not attested: it counts as unchecked (a detail bullet on the item's subject that
    says it does not apply or cannot be satisfied and names the item, e.g. `**append-only:** N/A. ...`).
    The template's escape hatch ("If any of the above criteria cannot reasonably be satisfied, I
    have provided additional reasoning below") left unchecked passes when nothing above it needed
    reasoning: every item above it is checked or explained (a clean sign-off leaves it unchecked).
    Checkboxes are read as GitHub renders the comment: not inside HTML comments, code or quotes.
Why: Reviewers who paste a stale checklist skip the newest rules; the template is how policy changes
    reach every sign-off.
Evidence: the missing or unchecked template items (template file and line), the sign-off comment.
N/A when: never; every sign-off must follow the template.
Unverifiable when: the checklist file or its `## Template` block is missing from the base tree; the
    sign-off or template is larger than GitHub stores a comment (or holds hundreds of checkboxes).
Policy: checklist.match_threshold, checklist.reworded_threshold, checklist.unchecked_explanation,
    checklist.escape_hatch_items, checklist.quote_words
"""

from __future__ import annotations

import re

from verifier.core.context import CheckContext
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    failed,
    finding,
    passed,
    unverifiable,
)
from verifier.core.yamlio import decode_text
from verifier.documents.checklist import (
    TRIGGER,
    ChecklistTooLarge,
    checkboxes,
    detail_blocks,
    explained_items,
    match_items,
    negated,
    normalize,
    template_block,
)
from verifier.documents.rules import rule_changes, rule_document

ID = 5


def _quote(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def check(ctx: CheckContext) -> CheckResult:
    """Every current template item is present in the sign-off and checked."""
    bundle = ctx.bundle
    policy = ctx.policy("checklist")
    signoff = bundle.signoff
    sign_ev = CommentEvidence(id=signoff.id, url=signoff.url, author=signoff.author)
    doc = rule_document(ctx, "checklist")
    path, raw = doc.path, doc.rule
    notes = rule_changes(doc)  # a PR that edits the template is still judged by the base template
    if raw is None:
        return unverifiable("checklist-missing", sign_ev, missing=path)
    block = template_block(decode_text(raw, path))
    if block is None:
        return unverifiable("template-block-missing", FileEvidence(path=path, side="base"), missing=f"{path} ## Template")
    text, first_line = block
    try:
        template = checkboxes(text, first_line=first_line, what=path)
        signed = checkboxes(signoff.body)
        blocks = detail_blocks(signoff.body)
    except ChecklistTooLarge as exc:
        return unverifiable("markdown-too-large", sign_ev, FileEvidence(path=path, side="base"),
                            missing=exc.path, reason=exc.reason)
    if not template:
        return unverifiable("template-block-missing", FileEvidence(path=path, side="base"), missing=f"{path} ## Template")
    words = int(policy["quote_words"])
    findings = []
    if TRIGGER not in signoff.body:
        findings.append(finding("trigger-phrase-missing", sign_ev, phrase=TRIGGER))
    matches = match_items(template, signed, float(policy["match_threshold"]), float(policy["reworded_threshold"]))
    missing = [m for m in matches if m.signoff is None]
    explain = policy["unchecked_explanation"]
    markers = [re.compile(m) for m in explain["markers"]]
    stopwords = frozenset(w for word in explain["stopwords"] for w in normalize(word))
    reasons = explained_items(template, blocks, markers, stopwords, int(explain["min_shared_words"]))
    hatches = [re.compile(h) for h in policy["escape_hatch_items"]]
    # A ticked box whose text negates or strikes out the claim attests nothing: judged as unchecked.
    withdrawn = {index: why for index, m in enumerate(matches)
                 if m.signoff is not None and m.signoff.checked
                 for why in [negated(m.template, m.signoff)] if why is not None}
    unchecked, explained, not_needed = [], [], []
    for index, m in enumerate(matches):
        if m.signoff is None or (m.signoff.checked and index not in withdrawn):
            continue
        reason = reasons.get(index)
        if reason is not None:
            explained.append((m, reason))
        elif any(h.search(m.template.text) for h in hatches):
            not_needed.append((index, m))
        else:
            unchecked.append(m)
    # The escape hatch promises reasoning for items above it that cannot be satisfied; unchecked,
    # it is fine while every item above it is present and checked or explained.
    failing = {id(m) for m in unchecked + missing}
    still_needed = [(i, m) for i, m in not_needed if any(id(above) in failing for above in matches[:i])]
    unchecked += [m for _, m in still_needed]
    not_needed = [pair for pair in not_needed if pair not in still_needed]
    unchecked.sort(key=lambda m: m.template.line)
    negated_at = {id(matches[i]): why for i, why in withdrawn.items()}
    for m in missing:
        findings.append(
            finding(
                "item-missing",
                FileEvidence(path=path, line=m.template.line, text=_quote(m.template.text, words), side="base"),
                sign_ev,
                item=_quote(m.template.text, words),
                nested=m.template.depth > 0,
            )
        )
    for m in unchecked:
        why = negated_at.get(id(m))
        if why is not None and m.signoff is not None:
            findings.append(
                finding(
                    "item-negated",
                    FileEvidence(path=path, line=m.template.line, text=_quote(m.template.text, words), side="base"),
                    sign_ev,
                    item=_quote(m.template.text, words),
                    signed=_quote(m.signoff.text, words * 2),
                    words=why,
                    signed_line=m.signoff.line,
                    nested=m.template.depth > 0,
                )
            )
            continue
        findings.append(
            finding(
                "item-unchecked",
                FileEvidence(path=path, line=m.template.line, text=_quote(m.template.text, words), side="base"),
                sign_ev,
                item=_quote(m.template.text, words),
                nested=m.template.depth > 0,
            )
        )
    if findings:
        return failed(
            finding("template-items-short", sign_ev, total=len(template), missing=len(missing),
                    unchecked=len(unchecked)),
            *findings,
        )
    nested = sum(1 for t in template if t.depth > 0)
    if explained or not_needed:
        return passed(
            finding("all-items-present", total=len(template), top=len(template) - nested, nested=nested,
                    explained=len(explained), not_needed=len(not_needed)),
            *(
                finding("item-unchecked-explained", sign_ev, item=_quote(m.template.text, words),
                        reason=_quote(reason, words * 2), nested=m.template.depth > 0)
                for m, reason in explained
            ),
            *(
                finding("escape-hatch-not-needed", sign_ev, item=_quote(m.template.text, words),
                        above=index)
                for index, m in not_needed
            ),
            *notes,
        )
    return passed(finding("all-items-checked", total=len(template), top=len(template) - nested, nested=nested),
                  *notes)
