"""Rules stated in a prose document of the trusted base: a rule binds a PR only when the base copy of
the document that states it has a line stating it.

InferenceX writes some rules as sentences of a guide rather than as checklist items: AGENTS.md's
"Non-negotiable benchmark invariants" (since 2026-05-14: "For image bumps, `model.container` must
equal `image`"). Such a rule is in force for a PR whose base copy of the document has one line that
holds every word the policy lists for it (case and backticks set aside, so that the sentence may be
reworded around them). The document is a rule document (verifier.documents.rules): it is read from
the base tree only, and a PR that adds the sentence does not bind itself.

Fail closed: a document the bundle does not hold (and the base is not known to lack), or one that
is not readable text, leaves the rule in force. A base commit known not to have the document, or
whose copy states no such line, did not have the rule.

API: `stated(ctx, document, words) -> Statement`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.yamlio import decode_text
from verifier.documents.rules import rule_document

# a guide is a few tens of kilobytes; one larger is not read (and the rule stays in force)
MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Statement:
    """Whether a rule stated in the document at `path` binds the PR (also when the base copy cannot be
    read), and whether the base commit has no such document at all."""

    path: str
    in_force: bool
    absent: bool = False


def _words(text: str) -> str:
    return " ".join(text.replace("`", "").lower().split())


def stated(ctx: CheckContext, document: str, words: Sequence[str]) -> Statement:
    """Whether the base copy of the rule document `document` (a logical name, verifier.core.layout)
    has a line holding every one of `words`."""
    doc = rule_document(ctx, document)
    raw = doc.rule
    if raw is None:
        if doc.base_absent:
            return Statement(doc.path, False, absent=True)
        return Statement(doc.path, True)  # not held by the bundle: unread, so in force
    try:
        text = decode_text(raw, doc.path, limit=MAX_BYTES)
    except InputError:  # not UTF-8, too large: unread, so in force
        return Statement(doc.path, True)
    wanted = [_words(w) for w in words]
    held = any(all(w in line for w in wanted) for line in map(_words, text.splitlines()))
    return Statement(doc.path, held)
