"""Check 5: Checklist template.

Rule: Verified that as of the moment of typing this, this is the latest version of
    PR_REVIEW_CHECKLIST.md. The sign-off must carry every item of the current template (the
    `## Template` block of PR_REVIEW_CHECKLIST.md on the PR's base), nested items included, each
    checked. Minor wording drift is fine; a missing item is not, and neither is an unchecked item
    unless the additional detail section explains it (a detail bullet on the item's subject that
    says it does not apply or cannot be satisfied, e.g. `**append-only:** N/A. ...`).
Why: Reviewers who paste a stale checklist skip the newest rules; the template is how policy changes
    reach every sign-off.
Evidence: the missing or unchecked template items (template file and line), the sign-off comment.
N/A when: never; every sign-off must follow the template.
Unverifiable when: the checklist file or its `## Template` block is missing from the base tree.
Policy: checklist.match_threshold, checklist.reworded_threshold, checklist.unchecked_explanation,
    checklist.quote_words
"""

from __future__ import annotations

import re

from verifier.checklist import (
    TRIGGER,
    checkboxes,
    detail_blocks,
    explained_items,
    match_items,
    normalize,
    template_block,
)
from verifier.context import CheckContext
from verifier.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    failed,
    finding,
    passed,
    unverifiable,
)
from verifier.rules import rule_changes, rule_document
from verifier.yamlio import decode_text

ID = 5
NAME = "Checklist template"


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
    template = checkboxes(text, first_line=first_line)
    if not template:
        return unverifiable("template-block-missing", FileEvidence(path=path, side="base"), missing=f"{path} ## Template")
    signed = checkboxes(signoff.body)
    words = int(policy["quote_words"])
    findings = []
    if TRIGGER not in signoff.body:
        findings.append(finding("trigger-phrase-missing", sign_ev, phrase=TRIGGER))
    matches = match_items(template, signed, float(policy["match_threshold"]), float(policy["reworded_threshold"]))
    missing = [m for m in matches if m.signoff is None]
    explain = policy["unchecked_explanation"]
    markers = [re.compile(m) for m in explain["markers"]]
    stopwords = frozenset(w for word in explain["stopwords"] for w in normalize(word))
    reasons = explained_items(template, detail_blocks(signoff.body), markers, stopwords,
                              int(explain["min_shared_words"]))
    unchecked, explained = [], []
    for index, m in enumerate(matches):
        if m.signoff is None or m.signoff.checked:
            continue
        reason = reasons.get(index)
        if reason is None:
            unchecked.append(m)
        else:
            explained.append((m, reason))
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
    if explained:
        return passed(
            finding("all-items-present", total=len(template), top=len(template) - nested, nested=nested,
                    explained=len(explained)),
            *(
                finding("item-unchecked-explained", sign_ev, item=_quote(m.template.text, words),
                        reason=_quote(reason, words * 2), nested=m.template.depth > 0)
                for m, reason in explained
            ),
            *notes,
        )
    return passed(finding("all-items-checked", total=len(template), top=len(template) - nested, nested=nested),
                  *notes)
