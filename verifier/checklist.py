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


def _stem(word: str) -> str:
    word = word.strip("./-")
    # A light plural stem: "evals" and "eval", "patches" and "patch" are the same word.
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def normalize(text: str) -> list[str]:
    """Lower-case words of a checklist item with link targets, Markdown markup and trailing
    punctuation removed (`evals.` and `evals;` are the same word)."""
    text = _LINK.sub(r"\1", text)
    text = re.sub(r"[`*_~]", " ", text).lower()
    return [w for w in (_stem(w) for w in _WORD.findall(text)) if w]


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


def match_items(template: list[Item], signed: list[Item], threshold: float,
                reworded_threshold: float | None = None) -> list[Match]:
    """Pair each template item with a distinct sign-off item, best pairs first.

    Pairs at or above `threshold` are taken greedily, best first. Then, when `reworded_threshold`
    is given, a template item and a sign-off item that are both still unpaired are paired if each
    is the other's best remaining candidate and they reach that lower bar: a reworded item whose
    only possible counterpart is left over, never an item another template item already took.
    """
    scores = {(ti, si): similarity(t.words, s.words) for ti, t in enumerate(template) for si, s in enumerate(signed)}
    pairs = sorted(((score, ti, si) for (ti, si), score in scores.items()), key=lambda x: (-x[0], x[1], x[2]))
    taken_t: dict[int, tuple[int, float]] = {}
    taken_s: set[int] = set()
    for score, ti, si in pairs:
        if score < threshold:
            break
        if ti in taken_t or si in taken_s:
            continue
        taken_t[ti] = (si, score)
        taken_s.add(si)
    if reworded_threshold is not None:
        free_t = [ti for ti in range(len(template)) if ti not in taken_t]
        free_s = [si for si in range(len(signed)) if si not in taken_s]
        for ti in free_t:
            if not free_s:
                break
            si = max(free_s, key=lambda k: scores[(ti, k)])
            best_t = max((t for t in free_t if t not in taken_t), key=lambda t: scores[(t, si)])
            if best_t == ti and scores[(ti, si)] >= reworded_threshold:
                taken_t[ti] = (si, scores[(ti, si)])
                free_s.remove(si)
    out = []
    for ti, t in enumerate(template):
        if ti in taken_t:
            si, score = taken_t[ti]
            out.append(Match(t, signed[si], score))
        else:
            out.append(Match(t, None, 0.0))
    return out


_DETAIL_HEADING = re.compile(r"^\s*#*\s*\**\s*additional detail section\b", re.IGNORECASE)
_SIGNED = re.compile(r"^\s*signed\s*:", re.IGNORECASE)
_BULLET = re.compile(r"^(?P<indent>\s*)(?:[-*+•]|\d+[.)])\s+")


def detail_blocks(body: str) -> list[str]:
    """The sign-off's additional detail section as blocks: each top-level bullet with its nested
    lines (or each paragraph when the section has no bullets). Empty when there is no section."""
    lines = body.splitlines()
    start = next((i for i, line in enumerate(lines) if _DETAIL_HEADING.match(line)), None)
    if start is None:
        return []
    blocks: list[list[str]] = []
    for line in lines[start + 1:]:
        if _SIGNED.match(line):
            break
        if not line.strip():
            if blocks and blocks[-1]:
                blocks.append([])
            continue
        bullet = _BULLET.match(line)
        if (bullet and not bullet.group("indent")) or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return [" ".join(b) for b in blocks if b]


_LABEL = re.compile(r"^\s*(?:[-*+•]|\d+[.)])?\s*(?:\*\*(?P<bold>[^*]+?)\*\*|(?P<plain>[^:.]{1,60}):)")


def _label_words(block: str, stopwords: frozenset[str]) -> set[str]:
    m = _LABEL.match(block)
    if m is None:
        return set()
    label = (m.group("bold") or m.group("plain") or "").rstrip(":")
    return {w for w in normalize(label) if w not in stopwords}


def explained_items(template: list[Item], blocks: list[str], markers: list[re.Pattern[str]],
                    stopwords: frozenset[str], min_shared: int) -> dict[int, str]:
    """Template items (by index) that a detail block explains, with that block.

    A block explains an item when it says why something does not apply or cannot be satisfied
    (one of `markers`, e.g. N/A) and names the item's subject: every distinctive word of its label
    (`**append-only:** N/A ...`) occurs in the item, or, for a block without a label, the item is the
    one template item sharing the most distinctive words with it (at least `min_shared`).
    """
    subjects = [{w for w in t.words if w not in stopwords and len(w) > 2} for t in template]
    out: dict[int, str] = {}
    for block in blocks:
        if not any(m.search(block) for m in markers):
            continue
        label = _label_words(block, stopwords)
        if label:
            for index, subject in enumerate(subjects):
                if label <= subject:
                    out.setdefault(index, block)
            continue
        words = {w for w in normalize(block) if w not in stopwords}
        counts = sorted(((len(words & subject), index) for index, subject in enumerate(subjects)), reverse=True)
        if counts and counts[0][0] >= min_shared and (len(counts) == 1 or counts[1][0] < counts[0][0]):
            out.setdefault(counts[0][1], block)
    return out
