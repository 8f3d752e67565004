"""Upstream recipe evidence: links in the sign-off's detail section and launch commands on published pages.

Check 3 needs three facts: which upstream pull requests and published pages the sign-off links (only
allowlisted repositories and hosts count, policies/upstream.yaml), whether each linked pull request
is merged (github.yaml upstream_prs), and which launch commands the linked pages publish. Pages are
untrusted text: they are tokenized with shlex's grammar (`verifier.core.shellwords`, never executed), capped in size, and a command that
does not tokenize is recorded as a parse error instead of being guessed.
"""

from __future__ import annotations

import fnmatch
import functools
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from verifier.core import shellwords
from verifier.core.errors import InputError
from verifier.core.model import Bundle
from verifier.core.textscan import paired_spans
from verifier.core.yamlio import decode_text

MAX_PAGE_BYTES = 2 * 1024 * 1024
MAX_COMMAND_CHARS = 20_000

LinkKind = Literal["pr", "page", "legacy"]

# Matched against stripped lines of at most MAX_HEADING_CHARS: its adjacent optional blanks
# backtrack quadratically over a long whitespace run, so the pattern only ever sees short text.
_DETAIL_HEADING = re.compile(
    r"(?:#{1,6}\s*)?(?:\*\*)?\s*additional detail(?:s)? section\s*:?\s*(?:\*\*)?\s*:?", re.IGNORECASE
)
MAX_HEADING_CHARS = 200
_MD_LINK = re.compile(r"\[([^\]\n]{0,500})\]\((<?)(https?://[^\s)>]{1,2000})>?(?:\s+\"[^\"\n]*\")?\)")
_BARE_URL = re.compile(r"(?<![\w/])https?://[^\s)\]>`'\"]{1,2000}")
_SHORT_REF = re.compile(r"(?<![\w/.-])([A-Za-z0-9][\w.-]{0,99})/([A-Za-z0-9][\w.-]{0,99})#(\d{1,9})\b")
_GH_PR_PATH = re.compile(r"^/([^/]+)/([^/]+)/pull/(\d+)(?:/.*)?$")
_GH_REPO_PATH = re.compile(r"^/([^/]+)/([^/]+)(?:/.*)?$")
_ENV_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
# <pre> blocks are paired by verifier.core.textscan (linear); the former `<pre[^>]*>(.*?)</pre>` and
# `<[^>]+>` rescanned to the end of the page from every unclosed `<pre` or `<`.
_PRE_OPEN = re.compile(r"<pre(?:\s[^<>]*)?>", re.IGNORECASE)
_PRE_CLOSE = re.compile(r"</pre\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]+>")


@dataclass(frozen=True, eq=False, repr=False)
class DetailSection:
    """The sign-off's additional detail section and the 1-based body line it starts on."""

    text: str
    line: int


@dataclass(frozen=True, eq=False, repr=False)
class Link:
    """One link from the detail section, classified against the allowlist."""

    url: str
    kind: LinkKind
    engine: str | None = None
    repo: str | None = None
    number: int | None = None
    line: int | None = None

    @property
    def pr_key(self) -> str | None:
        """`owner/repo#N`, the key of github.yaml upstream_prs, for pull-request links."""
        return f"{self.repo}#{self.number}" if self.kind == "pr" and self.repo else None


@dataclass(frozen=True, eq=False, repr=False)
class PageCommand:
    """One serving launch command found in a fenced code block of a page."""

    engine: str
    launcher: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    line: int
    text: str


@dataclass(frozen=True, eq=False, repr=False)
class PageParse:
    """Everything extracted from one page: commands, page-wide `export`s, and untokenizable lines."""

    commands: tuple[PageCommand, ...] = ()
    exports: Mapping[str, str] = field(default_factory=dict)
    errors: tuple[tuple[int, str], ...] = ()


def detail_section(body: str) -> DetailSection | None:
    """The text after the `Additional detail section:` heading of a sign-off, or None when absent."""
    lines = body.splitlines()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if len(stripped) <= MAX_HEADING_CHARS and _DETAIL_HEADING.fullmatch(stripped):
            return DetailSection(text="\n".join(lines[index + 1 :]), line=index + 2)
    return None


def _host_rule(host: str, path: str, hosts: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    for rule in hosts:
        if host == str(rule["host"]).lower():
            prefix = str(rule.get("path_prefix", "/")).rstrip("/")
            if not prefix or path.rstrip("/") == prefix or path.startswith(prefix + "/"):
                return rule
    return None


def classify_url(url: str, policy: Mapping[str, Any], line: int | None = None) -> Link | None:
    """Classify one URL: an allowlisted upstream PR, a published page, a legacy link, or None."""
    try:
        parts = urlsplit(url.strip().rstrip(".,;:"))
    except ValueError:
        return None
    if parts.scheme not in ("https", "http") or parts.username or parts.password or parts.port not in (None, 443):
        return None
    host = (parts.hostname or "").lower()
    path = parts.path or "/"
    clean = url.strip().rstrip(".,;:")
    if host in ("github.com", "www.github.com"):
        repos = policy.get("upstream_repos", {})
        match = _GH_PR_PATH.match(path)
        if match:
            repo = f"{match.group(1)}/{match.group(2)}"
            canonical = _canonical_repo(repo, repos)
            if canonical is not None:
                return Link(clean, "pr", str(repos[canonical]["engine"]), canonical, int(match.group(3)), line)
        repo_match = _GH_REPO_PATH.match(path)
        if repo_match:
            repo = f"{repo_match.group(1)}/{repo_match.group(2)}"
            legacy = {str(r).lower(): str(r) for r in policy.get("legacy_repos", ())}
            if repo.lower() in legacy:
                return Link(clean, "legacy", None, legacy[repo.lower()], None, line)
        return None
    rule = _host_rule(host, path, policy.get("page_hosts", ()))
    if rule is not None:
        return Link(clean, "page", str(rule["engine"]), None, None, line)
    return None


def _canonical_repo(repo: str, repos: Mapping[str, Any]) -> str | None:
    lowered = {str(k).lower(): str(k) for k in repos}
    return lowered.get(repo.lower())


def extract_links(section: DetailSection, policy: Mapping[str, Any]) -> list[Link]:
    """Allowlisted links of the detail section, in order, de-duplicated (PRs by key, pages by URL)."""
    found: list[Link] = []
    seen: set[str] = set()
    repos = policy.get("upstream_repos", {})
    for offset, line in enumerate(section.text.splitlines()):
        lineno = section.line + offset
        urls = [m.group(3) for m in _MD_LINK.finditer(line)]
        stripped = _MD_LINK.sub(" ", line)
        urls += [m.group(0) for m in _BARE_URL.finditer(stripped)]
        links = [link for url in urls if (link := classify_url(url, policy, lineno)) is not None]
        for m in _SHORT_REF.finditer(stripped):
            canonical = _canonical_repo(f"{m.group(1)}/{m.group(2)}", repos)
            if canonical is not None:
                number = int(m.group(3))
                links.append(
                    Link(f"https://github.com/{canonical}/pull/{number}", "pr", str(repos[canonical]["engine"]),
                         canonical, number, lineno)
                )
        for link in links:
            key = link.pr_key or link.url
            if key not in seen:
                seen.add(key)
                found.append(link)
    return found


def page_path(bundle: Bundle, url: str) -> str | None:
    """The bundle path (`pages/...`) of a linked page: exact URL first, then ignoring fragment and slash."""
    pages = bundle.github.pages
    if url in pages:
        return f"pages/{pages[url]}" if not pages[url].startswith("pages/") else pages[url]

    def norm(u: str) -> str:
        return u.split("#", 1)[0].rstrip("/")

    target = norm(url)
    for known, rel in pages.items():
        if norm(known) == target:
            return rel if rel.startswith("pages/") else f"pages/{rel}"
    return None


def page_text(bundle: Bundle, url: str) -> tuple[str | None, str | None]:
    """(bundle path, decoded text) of a linked page; text is None when the page is not in the bundle."""
    rel = page_path(bundle, url)
    if rel is None:
        return None, None
    data = bundle.pages.get(rel)
    if data is None:
        return rel, None
    try:
        return rel, decode_text(data, rel, limit=MAX_PAGE_BYTES)
    except InputError:
        return rel, None


def _code_blocks(text: str) -> list[tuple[int, list[str]]]:
    """Fenced (``` / ~~~) and HTML <pre> blocks: (1-based line of the first content line, lines)."""
    blocks: list[tuple[int, list[str]]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        fence = match.group(1)
        indent = len(lines[index]) - len(lines[index].lstrip())
        start = index + 1
        body: list[str] = []
        index += 1
        while index < len(lines):
            closing = lines[index].strip()
            if closing.startswith(fence[0] * len(fence)) and set(closing) <= {fence[0]}:
                break
            line = lines[index]
            body.append(line[indent:] if line[:indent].strip() == "" else line)
            index += 1
        blocks.append((start + 1, body))
        index += 1
    counted_to, start_line = 0, 1
    for span in paired_spans(text, _PRE_OPEN, _PRE_CLOSE):
        start_line += text.count("\n", counted_to, span.start)  # incremental: linear over all blocks
        counted_to = span.start
        content = html.unescape(_TAG.sub("", text[span.content_start : span.content_end]))
        blocks.append((start_line, content.splitlines()))
    return blocks


def _logical_lines(block: list[str], first_line: int) -> list[tuple[int, str]]:
    """Join backslash continuations; drop comments and blank lines. Returns (line, text)."""
    out: list[tuple[int, str]] = []
    current: list[str] = []
    start = first_line
    for offset, raw in enumerate(block):
        line = raw.rstrip()
        if not current:
            start = first_line + offset
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            line = re.sub(r"^\s*[$>]\s+", "", line)
        if line.endswith("\\"):
            current.append(line[:-1])
            continue
        current.append(line)
        out.append((start, " ".join(part.strip() for part in current)))
        current = []
    if current:
        out.append((start, " ".join(part.strip() for part in current)))
    return out


def _match_launcher(tokens: list[str], launchers: Mapping[str, Sequence[str]]) -> tuple[str, str, int] | None:
    """(engine, launcher text, index after it) of the first launcher anywhere in the token list."""
    best: tuple[int, str, str, int] | None = None
    for engine, forms in launchers.items():
        for form in forms:
            words = form.split()
            for i in range(len(tokens) - len(words) + 1):
                head = tokens[i]
                if head.rsplit("/", 1)[-1] != words[0] and head != words[0]:
                    continue
                if tokens[i + 1 : i + len(words)] == words[1:] and (best is None or i < best[0]):
                    best = (i, engine, form, i + len(words))
    return (best[1], best[2], best[3]) if best else None


def parse_page(text: str, launchers: Mapping[str, Sequence[str]]) -> PageParse:
    """Serving commands (with their inline env) and `export`ed env of every code block of a page."""
    commands: list[PageCommand] = []
    exports: dict[str, str] = {}
    errors: list[tuple[int, str]] = []
    for first, block in _code_blocks(text):
        for lineno, logical in _logical_lines(block, first):
            if len(logical) > MAX_COMMAND_CHARS:
                errors.append((lineno, "command longer than the size limit"))
                continue
            try:
                tokens = shellwords.split(logical, comments=True)
            except ValueError as exc:
                errors.append((lineno, str(exc)))
                continue
            if not tokens:
                continue
            if tokens[0] == "export":
                for token in tokens[1:]:
                    assign = _ENV_ASSIGN.match(token)
                    if assign:
                        exports[assign.group(1)] = assign.group(2)
                continue
            inline: dict[str, str] = {}
            position = 0
            while position < len(tokens) and (assign := _ENV_ASSIGN.match(tokens[position])):
                inline[assign.group(1)] = assign.group(2)
                position += 1
            if position == len(tokens) and inline:
                exports.update(inline)
                continue
            found = _match_launcher(tokens, launchers)
            if found is None:
                continue
            engine, launcher, after = found
            for token in tokens[:after]:
                # `docker run -e K=V ...` style environment before the launcher
                assign = _ENV_ASSIGN.match(token)
                if assign and token not in inline:
                    inline.setdefault(assign.group(1), assign.group(2))
            argv = tuple(tokens[after:])
            commands.append(PageCommand(engine, launcher, argv, inline, lineno, logical))
    return PageParse(tuple(commands), exports, tuple(errors))


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Case-sensitive shell-style match of a name against policy patterns."""
    key = patterns if isinstance(patterns, tuple) else tuple(str(p) for p in patterns)
    return bool(key) and _pattern_regex(key).match(name) is not None


@functools.lru_cache(maxsize=512)
def _pattern_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # One alternation per policy list instead of one fnmatch call per pattern and setting: Check 3
    # classifies every setting of every variant, which made millions of fnmatch calls on big PRs.
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


def classify_dest(dest: str, policy: Mapping[str, Any]) -> tuple[str, str]:
    """(category, mode) of a server setting: mode is `informational`, `presence` or `value`.

    `informational`: InferenceX-only harness settings (category `harness`), and uncategorized
    settings when the policy says so. `presence`: paths and per-point sizing the page must set but
    may set to another value. `value`: production-useful settings the page must set to the same
    resolved value.
    """
    settings = policy["settings"]
    if matches_any(dest, settings["harness_only"]):
        return "harness", "informational"
    if matches_any(dest, settings["paths"]):
        return "paths", "presence"
    if matches_any(dest, settings["per_point"]):
        return "per-point sizing", "presence"
    for category, patterns in settings["categories"].items():
        if matches_any(dest, patterns):
            return str(category), "value"
    return "uncategorized", str(settings["uncategorized"])


def classify_env(name: str, policy: Mapping[str, Any]) -> str:
    """`informational` for InferenceX-only environment variables, else `value`."""
    return "informational" if matches_any(name, policy["env"]["harness_only"]) else "value"
