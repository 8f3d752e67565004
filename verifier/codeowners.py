"""GitHub CODEOWNERS: parsing and gitignore-style matching where the last matching rule wins."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
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


def _glob_to_regex(glob: str) -> str:
    out = []
    i = 0
    while i < len(glob):
        ch = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(ch))
                i += 1
            else:
                body = glob[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return "".join(out)


def _compile(pattern: str) -> re.Pattern[str]:
    directory_only = pattern.endswith("/")
    body = pattern.rstrip("/")
    anchored = body.startswith("/") or "/" in body
    body = body.lstrip("/")
    regex = _glob_to_regex(body) if body else ".*"
    prefix = "" if anchored else "(?:.*/)?"
    # A pattern naming a directory owns everything below it; a directory-only pattern owns nothing else.
    suffix = "/.*" if directory_only else "(?:/.*)?"
    return re.compile(f"^{prefix}{regex}{suffix}$")


def parse_codeowners(text: str) -> list[Rule]:
    """Rules in file order; comments, blank lines and malformed lines are skipped."""
    rules = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        parts = line.split()
        pattern, owners = parts[0], tuple(p for p in parts[1:] if p.startswith("@") or "@" in p)
        if pattern.startswith("!"):
            continue  # negation is not supported by GitHub CODEOWNERS
        rules.append(Rule(pattern=pattern.replace("\\ ", " "), owners=owners, line=number))
    return rules


def owning_rule(rules: list[Rule], path: str) -> Rule | None:
    """The last rule that matches the path, or None if no rule does."""
    for rule in reversed(rules):
        if rule.matches(path):
            return rule
    return None
