"""Linear-time scans of hostile text: delimited spans without regex backtracking.

`re.sub(r"<!--.*?-->", ...)` looks for the closing delimiter from every opening, so a body of
many openings and no closing costs time quadratic in its size. `paired_spans` finds the same
spans with one forward pass: each opening is searched once from where the last span ended,
and the closings are found once for the whole text.
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
