"""PR_REVIEW_CHECKLIST.md templates and sign-off checkboxes, matched by meaning rather than bytes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

_CHECKBOX = re.compile(r"^(?P<indent>\s*)[-*+]\s+\[(?P<mark>[ xX])\]\s+(?P<text>.*\S)\s*$")
_TEMPLATE_HEADING = re.compile(r"^##\s+(Template|模板)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_WORD = re.compile(r"[a-z0-9_./-]+")
TRIGGER = "As a PR reviewer and CODEOWNER"


@dataclass(frozen=True)
class Item:
    """One checkbox: its text, whether it is checked, its nesting depth and its 1-based line."""

    text: str
    checked: bool
    depth: int
    line: int

    @property
    def words(self) -> list[str]:
        """The item's normalized words (links reduced to their text, markup dropped)."""
        return normalize(self.text)


def normalize(text: str) -> list[str]:
    """Lower-case words of a checklist item with link targets and Markdown markup removed."""
    text = _LINK.sub(r"\1", text)
    text = re.sub(r"[`*_~]", " ", text).lower()
    return _WORD.findall(text)


def checkboxes(text: str, *, first_line: int = 1) -> list[Item]:
    """Every checkbox line of a Markdown text, with nesting depth by indentation."""
    items = []
    for offset, raw in enumerate(text.splitlines()):
        m = _CHECKBOX.match(raw.replace("\t", "    "))
        if m:
            depth = len(m.group("indent")) // 2
            items.append(Item(m.group("text"), m.group("mark") in "xX", depth, first_line + offset))
    return items


def template_block(markdown: str) -> tuple[str, int] | None:
    """The fenced template block after the `## Template` (or `## 模板`) heading, and its first line."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if _TEMPLATE_HEADING.match(line.strip()):
            for j in range(i + 1, len(lines)):
                if lines[j].strip().startswith("```"):
                    for k in range(j + 1, len(lines)):
                        if lines[k].strip().startswith("```"):
                            return "\n".join(lines[j + 1 : k]), j + 2
                    return None
                if lines[j].startswith("## "):
                    return None
    return None


def similarity(a: list[str], b: list[str]) -> float:
    """How alike two items are: the better of word-sequence similarity and word containment."""
    if not a or not b:
        return 0.0
    seq = SequenceMatcher(None, a, b, autojunk=False).ratio()
    sa, sb = set(a), set(b)
    common = len(sa & sb)
    containment = common / len(sa)
    # An abbreviated item (the first words of the template item) is still that item, provided it
    # keeps enough words to be distinctive.
    smaller = min(len(sa), len(sb))
    abbreviated = (common / smaller) * min(1.0, smaller / 10)
    return max(seq, containment * 0.95, abbreviated * 0.9)


@dataclass(frozen=True)
class Match:
    """A template item and the sign-off item that corresponds to it (or None)."""

    template: Item
    signoff: Item | None
    score: float


def match_items(template: list[Item], signed: list[Item], threshold: float) -> list[Match]:
    """Pair each template item with a distinct sign-off item, best pairs first."""
    pairs = sorted(
        ((similarity(t.words, s.words), ti, si) for ti, t in enumerate(template) for si, s in enumerate(signed)),
        key=lambda x: (-x[0], x[1], x[2]),
    )
    taken_t: dict[int, tuple[int, float]] = {}
    taken_s: set[int] = set()
    for score, ti, si in pairs:
        if score < threshold:
            break
        if ti in taken_t or si in taken_s:
            continue
        taken_t[ti] = (si, score)
        taken_s.add(si)
    out = []
    for ti, t in enumerate(template):
        if ti in taken_t:
            si, score = taken_t[ti]
            out.append(Match(t, signed[si], score))
        else:
            out.append(Match(t, None, 0.0))
    return out
