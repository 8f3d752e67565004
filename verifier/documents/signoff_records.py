"""Statements and records the sign-off's additional detail section makes (policies/signoff_records.yaml).

Checks accept a few sign-off statements as evidence, and only narrowly: ONE block of the
`### Additional detail section:` (a top-level bullet with its nested lines, `verifier.documents.checklist.detail_blocks`)
must carry every part the policy lists. Nothing here decides a verdict; checks do.

* `golden_source_statement`: where the acceptance length of a draft length without a committed
  golden cell comes from: a link to a run or PR of the repository plus golden / AL / source words
  (Check 11).
* `precision_record_required` / `draft_precision_record`: whether the base checklist template asks
  the sign-off to record the shipped and effective draft precision, and the block that does (Check 13).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.yamlio import decode_text
from verifier.documents.checklist import Item, checkboxes, detail_blocks, normalize, template_block

MAX_QUOTE = 200


@dataclass(frozen=True, eq=False, repr=False)
class Statement:
    """A detail-section block that makes a statement, and the link it gives (if any)."""

    block: str
    link: str | None = None

    @property
    def quote(self) -> str:
        """The block, cut for a report row."""
        return self.block if len(self.block) <= MAX_QUOTE else self.block[: MAX_QUOTE - 1] + "…"


def _all_groups(block: str, groups: Sequence[Sequence[str]]) -> bool:
    return all(any(re.search(rx, block, re.IGNORECASE) for rx in group) for group in groups)


def _blocks(ctx: CheckContext) -> list[str]:
    return ctx.memo("signoff_records.blocks", lambda: detail_blocks(ctx.bundle.signoff.body))


def golden_source_statement(ctx: CheckContext, policy: Mapping[str, Any]) -> Statement | None:
    """The detail block stating where a missing golden cell's AL comes from, else None.

    `policy`: the `golden_source` section (links, required word groups).
    """
    links = [re.compile(rx) for rx in policy["links"]]
    for block in _blocks(ctx):
        link = next((m.group(0) for rx in links for m in [rx.search(block)] if m), None)
        if link is not None and _all_groups(block, policy["required"]):
            return Statement(block, link)
    return None


def precision_record_item(ctx: CheckContext, policy: Mapping[str, Any]) -> Item | None:
    """The base checklist template's item that asks for the draft-precision record, else None.

    None also when the base has no readable template: Check 5 reports a missing template; a
    template that predates the item does not require the record.
    """
    def compute() -> Item | None:
        path = ctx.bundle.path("checklist")
        raw = ctx.bundle.base.read(path)
        if raw is None:
            return None
        try:
            block = template_block(decode_text(raw, path))
        except InputError:
            return None
        if block is None:
            return None
        text, first_line = block
        phrase = normalize(policy["template_phrase"])
        for item in checkboxes(text, first_line=first_line):
            words = item.words
            if any(words[i:i + len(phrase)] == phrase for i in range(len(words) - len(phrase) + 1)):
                return item
        return None

    return ctx.memo("signoff_records.precision_item", compute)


def draft_precision_record(ctx: CheckContext, policy: Mapping[str, Any]) -> Statement | None:
    """The detail block labelled as the draft-precision record that states shipped and effective precision."""
    label = re.compile(policy["label"], re.IGNORECASE)
    for block in _blocks(ctx):
        if label.search(block[:80]) and _all_groups(block, policy["required"]):
            return Statement(block)
    return None
