"""PR_REVIEW_CHECKLIST.md templates and sign-off checkboxes, matched by meaning rather than bytes.

Sign-offs are parsed as CommonMark (markdown-it-py, block level only), the way GitHub renders them:
a `[x]` counts only at the start of a list item's paragraph, so one inside an HTML comment, a fenced
or indented code block or a blockquote (a quote of another comment) is not a checkbox, and an
ordered-list item (`1. [x] ...`) is one.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from typing import TYPE_CHECKING

from verifier.core.errors import InputError
from verifier.core.textscan import link_labels

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

# GitHub stores at most 65,536 characters per comment body; a longer text is not a real sign-off.
MAX_MARKDOWN_CHARS = 65_536
# A template has about twenty items; matching is quadratic in the item counts, so cap them.
MAX_CHECKBOXES = 400
_TASK = re.compile(r"\[(?P<mark>[ xX])\][ \t]+(?P<text>\S.*)", re.DOTALL)
_TEMPLATE_HEADING = re.compile(r"^##\s+(Template|模板)")
_WORD = re.compile(r"[a-z0-9_./-]+")
TRIGGER = "As a PR reviewer and CODEOWNER"
_LIST_OPEN = frozenset({"bullet_list_open", "ordered_list_open"})
_LIST_CLOSE = frozenset({"bullet_list_close", "ordered_list_close"})


class ChecklistTooLarge(InputError):
    """A Markdown text or its checkbox count is beyond what a real sign-off or template holds."""


@cache
def _markdown() -> MarkdownIt:
    """Block-level CommonMark only: inline rules (emphasis, links) are not needed to find
    checkboxes and are where hostile input costs most. maxNesting bounds nested lists and quotes.
    Imported on first use so that loading the checks stays cheap."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"maxNesting": 40}).disable("inline")


def parse_markdown(text: str, *, what: str = "sign-off") -> list[Token]:
    """Block-level CommonMark tokens of a text; refuses a text over MAX_MARKDOWN_CHARS."""
    if len(text) > MAX_MARKDOWN_CHARS:
        raise ChecklistTooLarge(what, f"{len(text)} characters, over the {MAX_MARKDOWN_CHARS} GitHub allows")
    return _markdown().parse(text)


@dataclass(frozen=True, eq=False, repr=False)
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


# Words that turn an attestation into its opposite ("NOT verified", "did not check", "N/A - skipped").
# A sign-off item counts as attested only when it uses none of them more often than its template item:
# the template's own wording ("does not patch", "N/A if no curves are affected") stays neutral.
_NEGATION = re.compile(
    r"(?<![\w/])(?:not|no|never|none|nothing|cannot|neither|nor|without|unable|unverified|unchecked|"
    r"untested|skip|skipped|skipping|omitted|pending|todo|tbd|n/a|na)(?![\w/])"
    r"|(?<!\w)\w+n['’]t\b",  # from a word's start only (a match ends at a word's end): linear in a long word
    re.IGNORECASE,
)
# GitHub renders `~~text~~` (and `~text~`) struck through: a struck-out claim is withdrawn.
_STRUCK = re.compile(r"(?<!~)~~?(?=[^~\s])[^~]*?[^~\s]~~?(?!~)")


def negations(text: str) -> list[str]:
    """The negating words of an item's text (link targets dropped, case kept as written)."""
    return [m.group(0) for m in _NEGATION.finditer(link_labels(text).replace("`", " "))]


def negated(template: Item, signed: Item) -> str | None:
    """Why a checked sign-off item does not attest its template item, else None.

    A struck-through span, or a negating word used more often than in the template item (`NOT
    verified`, `not checked`, `did not`, `N/A - skipped`): the box is ticked but the text withdraws
    the claim.
    """
    struck = _STRUCK.search(signed.text)
    if struck is not None and _STRUCK.search(template.text) is None:
        return struck.group(0)
    # Word by word: dropping the template's "N/A if no curves" does not license adding "did not".
    base = Counter(w.lower() for w in negations(template.text))
    seen: Counter[str] = Counter()
    extra: list[str] = []
    for word in negations(signed.text):
        seen[word.lower()] += 1
        if seen[word.lower()] > base[word.lower()]:
            extra.append(word)
    return ", ".join(dict.fromkeys(extra)) if extra else None


def normalize(text: str) -> list[str]:
    """Lower-case words of a checklist item with link targets, Markdown markup and trailing
    punctuation removed (`evals.` and `evals;` are the same word)."""
    text = link_labels(text)
    text = re.sub(r"[`*_~]", " ", text).lower()
    return [w for w in (_stem(w) for w in _WORD.findall(text)) if w]


def checkboxes(text: str, *, first_line: int = 1, what: str = "sign-off") -> list[Item]:
    """Every task-list item of a Markdown text as GitHub renders it, with its nesting depth (0 = a
    top-level list) and 1-based line. Items inside blockquotes, HTML blocks and code are not
    checkboxes. Raises ChecklistTooLarge beyond MAX_MARKDOWN_CHARS or MAX_CHECKBOXES."""
    items: list[Item] = []
    depth = -1
    quoted = 0
    tokens = parse_markdown(text, what=what)
    for index, token in enumerate(tokens):
        if token.type == "blockquote_open":
            quoted += 1
        elif token.type == "blockquote_close":
            quoted -= 1
        elif token.type in _LIST_OPEN:
            depth += 1
        elif token.type in _LIST_CLOSE:
            depth -= 1
        elif token.type == "list_item_open" and not quoted:
            item = _task(tokens, index, depth, first_line)
            if item is not None:
                items.append(item)
                if len(items) > MAX_CHECKBOXES:
                    raise ChecklistTooLarge(what, f"more than {MAX_CHECKBOXES} checkboxes")
    return items


def _task(tokens: list[Token], index: int, depth: int, first_line: int) -> Item | None:
    """The checkbox a list item opens with: its first child is a paragraph starting `[ ]` or `[x]`."""
    if index + 2 >= len(tokens) or tokens[index + 1].type != "paragraph_open":
        return None
    m = _TASK.match(tokens[index + 2].content)
    if m is None:
        return None
    line_map = tokens[index].map
    line = first_line + (line_map[0] if line_map else 0)
    return Item(" ".join(m.group("text").split()), m.group("mark") in "xX", max(depth, 0), line)


def template_block(markdown: str) -> tuple[str, int] | None:
    """The template after the `## Template` (or `## 模板`) heading, and its first line.

    The template is the fenced block under the heading (the layout since July 2026). The first
    versions of PR_REVIEW_CHECKLIST.md wrote it unfenced: then the section itself, up to the next
    `## ` heading, is the template, provided it holds a checklist line.
    """
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
                    return _unfenced(lines, i + 1, j)
            return _unfenced(lines, i + 1, len(lines))
    return None


_CHECKLIST_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[ xX]\]\s")


def _unfenced(lines: list[str], start: int, end: int) -> tuple[str, int] | None:
    """An unfenced template section (lines start..end-1) with its first line, if it holds a checklist."""
    if not any(_CHECKLIST_LINE.match(line) for line in lines[start:end]):
        return None
    return "\n".join(lines[start:end]), start + 1


def similarity(a: list[str], b: list[str], matcher: SequenceMatcher[str] | None = None) -> float:
    """How alike two items are: the better of word-sequence similarity and word containment.

    `matcher`, when given, already holds `b` as its second sequence (its index of `b` is reused)."""
    if not a or not b:
        return 0.0
    if matcher is None:
        matcher = SequenceMatcher(None, a, b, autojunk=False)
    else:
        matcher.set_seq1(a)
    sa, sb = set(a), set(b)
    common = len(sa & sb)
    containment = common / len(sa)
    # An abbreviated item (the first words of the template item) is still that item, provided it
    # keeps enough words to be distinctive.
    smaller = min(len(sa), len(sb))
    abbreviated = (common / smaller) * min(1.0, smaller / 10)
    other = max(containment * 0.95, abbreviated * 0.9)
    # ratio() <= quick_ratio() <= real_quick_ratio() (same denominator): when a bound cannot beat
    # the containment scores, the sequence similarity is not needed to know the maximum.
    if matcher.real_quick_ratio() <= other or matcher.quick_ratio() <= other:
        return other
    return max(matcher.ratio(), other)


@dataclass(frozen=True, eq=False, repr=False)
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
    template_words = [t.words for t in template]
    scores: dict[tuple[int, int], float] = {}
    for si, s in enumerate(signed):
        words = s.words
        matcher: SequenceMatcher[str] = SequenceMatcher(None, None, words, autojunk=False)
        for ti, tw in enumerate(template_words):
            scores[(ti, si)] = similarity(tw, words, matcher)
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


# a line that opens the additional detail section, and the signature line (matched line by line;
# `verify-pr local` writes its record after the first, or before the second)
DETAIL_HEADING = re.compile(r"^\s*+#*+\s*+\**+\s*+additional detail section\b", re.IGNORECASE)
SIGNED = re.compile(r"^\s*signed\s*:", re.IGNORECASE)
_BULLET = re.compile(r"^(?P<indent>\s*)(?:[-*+•]|\d+[.)])\s+")


def detail_blocks(body: str) -> list[str]:
    """The sign-off's additional detail section as blocks: each top-level list item with its nested
    items, or each paragraph (split at bullet-looking lines such as `•`), up to the `Signed:` line.
    Quotes, HTML comments and code are not the reviewer's explanation and are skipped. Empty when
    there is no section."""
    tokens = parse_markdown(body)
    start = next((i for i, t in enumerate(tokens)
                  if t.type == "inline" and any(DETAIL_HEADING.match(x) for x in t.content.splitlines())), None)
    if start is None:
        return []
    level = tokens[start].level - 1
    heading_lines = tokens[start].content.splitlines()
    after = next(k for k, x in enumerate(heading_lines) if DETAIL_HEADING.match(x)) + 1
    blocks: list[list[str]] = []
    signed = _add_paragraph(blocks, heading_lines[after:])
    quoted = 0
    in_item = False
    for token in tokens[start + 2:]:
        if signed or token.level < level:
            break
        if token.type == "blockquote_open":
            quoted += 1
        elif token.type == "blockquote_close":
            quoted -= 1
        elif token.type in ("list_item_open", "list_item_close") and token.level == level + 1:
            in_item = token.type == "list_item_open"
            if in_item:
                blocks.append([])
        elif token.type == "inline" and not quoted:
            lines = token.content.splitlines()
            if in_item:
                cut = _signed_at(lines)
                blocks[-1].extend(lines[:cut])
                signed = cut < len(lines)
            else:
                signed = _add_paragraph(blocks, lines)
    return [" ".join(b) for b in blocks if b]


def _signed_at(lines: list[str]) -> int:
    return next((k for k, line in enumerate(lines) if SIGNED.match(line)), len(lines))


def _add_paragraph(blocks: list[list[str]], lines: list[str]) -> bool:
    """Append a paragraph's lines as blocks (a new block at each bullet-looking line); True when
    the paragraph reaches the `Signed:` line."""
    cut = _signed_at(lines)
    first = True
    for line in lines[:cut]:
        if first or _BULLET.match(line):
            blocks.append([line])
        else:
            blocks[-1].append(line)
        first = False
    return cut < len(lines)


# possessive blanks: the two runs of blanks around the bullet are not split every way against the
# label (the square of a blank run's length); a label made of blanks has no words either way
_LABEL = re.compile(r"^\s*+(?:[-*+•]|\d+[.)])?\s*+(?:\*\*(?P<bold>[^*]+?)\*\*|(?P<plain>[^:.]{1,60}):)")
# A phrase quoted from an item names it: "If any of the above criteria ...", “...”.
_QUOTED = re.compile(r'"([^"\n]{3,300})"|“([^”\n]{3,300})”')


def _distinctive(words: list[str], stopwords: frozenset[str]) -> set[str]:
    return {w for w in words if w not in stopwords and len(w) > 2}


def _label_words(block: str, stopwords: frozenset[str]) -> set[str]:
    m = _LABEL.match(block)
    if m is None:
        return set()
    label = (m.group("bold") or m.group("plain") or "").rstrip(":")
    return _distinctive(normalize(label), stopwords)


def _named_items(names: list[set[str]], subjects: list[set[str]]) -> list[int]:
    """Items whose subject holds every distinctive word of one of the names."""
    return [index for index, subject in enumerate(subjects) if any(name and name <= subject for name in names)]


def explained_items(template: list[Item], blocks: list[str], markers: list[re.Pattern[str]],
                    stopwords: frozenset[str], min_shared: int) -> dict[int, str]:
    """Template items (by index) that a detail block explains, with that block.

    A block explains an item when it says why something does not apply or cannot be satisfied
    (one of `markers`, e.g. N/A) and names the item: every distinctive word of its label
    (`**append-only:** N/A ...`, `**If any of the above criteria ...:** not applicable`) or of a
    phrase it quotes from the item occurs in the item; or, for a block naming nothing, the item is
    the one template item sharing the most distinctive words with it (at least `min_shared`).
    """
    subjects = [_distinctive(t.words, stopwords) for t in template]
    out: dict[int, str] = {}
    for block in blocks:
        if not any(m.search(block) for m in markers):
            continue
        names = [_label_words(block, stopwords)]
        names += [_distinctive(normalize(a or b), stopwords) for a, b in _QUOTED.findall(block)]
        named = _named_items([n for n in names if n], subjects)
        if any(names):
            for index in named:
                out.setdefault(index, block)
            if named:
                continue
        words = {w for w in normalize(block) if w not in stopwords}
        counts = sorted(((len(words & subject), index) for index, subject in enumerate(subjects)), reverse=True)
        if counts and counts[0][0] >= min_shared and (len(counts) == 1 or counts[1][0] < counts[0][0]):
            out.setdefault(counts[0][1], block)
    return out
