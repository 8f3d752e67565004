"""Linear-time scans of hostile text: delimited spans without regex backtracking.

`re.sub(r"<!--.*?-->", ...)` looks for the closing delimiter from every opening, so a body of
many openings and no closing costs time quadratic in its size. `paired_spans` finds the same
spans with one forward pass: each opening is searched once from where the last span ended,
and the closings are found once for the whole text. `replace_links` does the same for Markdown
links, whose expression is tried again from every `[` of a run without `]` (and, with a
target pattern of two parts, cubic: a waiver body of 8,000 characters took 28 s).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, eq=False, repr=False)
class Span:
    """One opening...closing pair: the whole span and its content (text offsets)."""

    start: int
    content_start: int
    content_end: int
    end: int


def paired_spans(text: str, opening: re.Pattern[str], closing: re.Pattern[str]) -> list[Span]:
    """The spans `re.finditer(opening + ".*?" + closing, text, re.DOTALL)` would find, in linear time.

    Both patterns must themselves match in time linear in what they scan (no nested quantifiers).
    An opening with no closing after it ends the scan: no later opening can have one either.
    """
    closes = [(m.start(), m.end()) for m in closing.finditer(text)]
    spans: list[Span] = []
    pos = 0
    index = 0
    while (match := opening.search(text, pos)) is not None:
        while index < len(closes) and closes[index][0] < match.end():
            index += 1
        if index == len(closes):
            break
        close_start, close_end = closes[index]
        spans.append(Span(match.start(), match.end(), close_start, close_end))
        pos = close_end
    return spans


def replace_spans(text: str, spans: list[Span], replacement: Callable[[str], str]) -> str:
    """text with every span replaced by replacement(span text), in one pass."""
    parts: list[str] = []
    last = 0
    for span in spans:
        parts.append(text[last : span.start])
        parts.append(replacement(text[span.start : span.end]))
        last = span.end
    parts.append(text[last:])
    return "".join(parts)


def blank_spans(text: str, opening: re.Pattern[str], closing: re.Pattern[str]) -> str:
    """text with every opening...closing span replaced by its newlines (line numbers survive)."""
    return replace_spans(text, paired_spans(text, opening, closing), lambda s: "\n" * s.count("\n"))


def replace_links(text: str, render: Callable[[str, str], str], *, images: bool = False) -> str:
    """text with each Markdown link `[label](target)` replaced by render(label, target): what
    `re.sub(r"\\[([^\\]]*)\\]\\(([^)]*)\\)", ...)` makes (`images`: `!?` before the `[`, so an
    image's `!` goes too), found by one forward scan.

    A label runs to the first `]` after its `[` and a target to the first `)` after its `(`, so every
    `[` before that `]` ends at the same `]`: when it is not followed by `(`, the scan goes on after
    it; and with no `]` (or no `)`) left, no later link can close either."""
    out: list[str] = []
    done = 0  # text[:done] is in out
    start = text.find("[")
    while start >= 0:
        close = text.find("]", start + 1)
        if close < 0:
            break
        if text.startswith("(", close + 1):
            end = text.find(")", close + 2)
            if end < 0:
                break
            cut = start - 1 if images and start > done and text[start - 1] == "!" else start
            out.append(text[done:cut])
            out.append(render(text[start + 1:close], text[close + 2:end]))
            done = end + 1
            start = text.find("[", done)
        else:
            start = text.find("[", close + 1)
    out.append(text[done:])
    return "".join(out)


def link_labels(text: str) -> str:
    """text with each Markdown link `[label](target)` replaced by its label (`replace_links`)."""
    return replace_links(text, lambda label, _target: label)
