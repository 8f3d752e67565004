"""GitHub CODEOWNERS: parsing and matching with GitHub's documented semantics.

What GitHub documents (docs "About code owners", "CODEOWNERS syntax") and this module follows:
* the last matching line wins and owners do not accumulate; a matching line with no owners wins
  too and leaves the path without code owners;
* a pattern with a `/` at the start or in the middle is anchored to the repository root, one
  without (`*.js`, `MODELS.md`, `apps/`) matches at any depth;
* `*` never crosses a `/` (`docs/*` owns `docs/x.md` but not `docs/a/b.md`), `?` is one character
  other than `/`, `**` crosses directories (`**/logs`, `docs/**`);
* a pattern naming a directory (a literal last segment, or a trailing `/`) owns everything below;
* `\\ ` escapes a space inside a pattern (`/docs/space\\ name.txt`); matching is case-sensitive;
* `!` negation and `[ ]` character ranges are not supported (a `!` line is skipped, brackets are
  literal characters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

# GitHub ignores a CODEOWNERS file over 3 MB; lines beyond that cannot own anything.
MAX_CODEOWNERS_CHARS = 3 * 1024 * 1024


@dataclass(frozen=True, eq=False, repr=False)
class Rule:
    """One CODEOWNERS line: a pattern and its owners (owners do not accumulate across lines)."""

    pattern: str
    owners: tuple[str, ...]
    line: int

    @property
    def is_catch_all(self) -> bool:
        """True for the `*` rule that owns every path."""
        return self.pattern in ("*", "/*", "**", "/**")

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """The compiled matcher for repository paths."""
        return _compile(self.pattern)

    def matches(self, path: str) -> bool:
        """True when the rule's pattern matches the repository path (or a directory above it)."""
        return bool(self.regex.match(path.lstrip("/")))


def glob_to_regex(glob: str) -> str:
    """A repository-path glob as regex source: `**/` any directories, `**` anything, `*` and `?` within a segment."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def _compile(pattern: str) -> re.Pattern[str]:
    directory_only = pattern.endswith("/")
    body = pattern.rstrip("/")
    anchored = body.startswith("/") or "/" in body
    body = body.lstrip("/")
    regex = glob_to_regex(body) if body else ".*"
    prefix = "" if anchored else "(?:.*/)?"
    last = body.rsplit("/", 1)[-1]
    if directory_only:
        suffix = "/.*"
    elif last != "**" and ("*" in last or "?" in last):
        # A wildcard last segment names entries at that depth only: `docs/*` is not `docs/a/b.md`.
        suffix = ""
    else:
        # A literal last segment may name a directory, which owns everything below it.
        suffix = "(?:/.*)?"
    return re.compile(f"^{prefix}{regex}{suffix}$")


def _fields(line: str) -> list[str]:
    """Whitespace-separated fields, where a backslash escapes the next character (`\\ ` a space)."""
    fields: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            current.append(line[i + 1])
            i += 2
            continue
        if ch.isspace():
            if current:
                fields.append("".join(current))
                current = []
        else:
            current.append(ch)
        i += 1
    if current:
        fields.append("".join(current))
    return fields


def _strip_comment(raw: str) -> str:
    """The line without a `#` comment: one at the start, or one after whitespace."""
    if raw.lstrip().startswith("#"):
        return ""
    m = re.search(r"\s#", raw)
    return raw[: m.start()] if m else raw


def parse_codeowners(text: str) -> list[Rule]:
    """Rules in file order; comments, blank lines and `!` negations are skipped. A line with a
    pattern and no owners is kept: it wins for its paths and leaves them unowned."""
    rules = []
    for number, raw in enumerate(text[:MAX_CODEOWNERS_CHARS].splitlines(), start=1):
        parts = _fields(_strip_comment(raw))
        if not parts or parts[0].startswith("!"):
            continue
        owners = tuple(p for p in parts[1:] if p.startswith("@") or "@" in p)
        rules.append(Rule(pattern=parts[0], owners=owners, line=number))
    return rules


def owning_rule(rules: list[Rule], path: str) -> Rule | None:
    """The last rule that matches the path, or None if no rule does. A winning rule with no owners
    means the path has no code owners."""
    for rule in reversed(rules):
        if rule.matches(path):
            return rule
    return None


def owners_of(rules: list[Rule], path: str) -> tuple[str, ...]:
    """The code owners of a path under GitHub's semantics (empty when unowned)."""
    rule = owning_rule(rules, path)
    return rule.owners if rule else ()
