"""What the sign-off and the PR thread point at: runs, reuse commands, upstream PRs and pages.

Only text is scanned here (no network). Upstream pull requests and pages are classified against
policies/upstream.yaml with `verifier.documents.upstream.classify_url`, so the collector fetches exactly the
links the checks can count, and nothing from a host outside that allowlist.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verifier.documents.reuse import last_command
from verifier.documents.upstream import classify_url

_URL = re.compile(r"https?://[^\s)\]>`'\"<]{1,2000}")
_SHORT_REF = re.compile(r"(?<![\w/.-])([A-Za-z0-9][\w.-]{0,99})/([A-Za-z0-9][\w.-]{0,99})#(\d{1,9})\b")
# FORMATS.md §12.1, applied per comment body in multiline mode
TRUSTED_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")


@dataclass(frozen=True)
class UpstreamRef:
    """An allowlisted upstream pull request: `owner/repo#N`."""

    repo: str
    number: int

    @property
    def key(self) -> str:
        """The github.yaml upstream_prs key."""
        return f"{self.repo}#{self.number}"


def urls(text: str) -> list[str]:
    """Every http(s) URL in a text, in order, trailing punctuation removed."""
    return [m.group(0).rstrip(".,;:!?*_") for m in _URL.finditer(text or "")]


def run_ids(text: str, repo: str) -> list[int]:
    """Workflow run ids linked as https://<host>/<repo>/actions/runs/<id>, in order, de-duplicated."""
    pattern = re.compile(rf"/{re.escape(repo)}/actions/runs/(\d{{1,20}})", re.IGNORECASE)
    seen: dict[int, None] = {}
    for m in pattern.finditer(text or ""):
        seen.setdefault(int(m.group(1)), None)
    return list(seen)


def reuse_run_id(comments: Sequence[Mapping[str, Any]]) -> int | None:
    """The run id of the newest whole-line `/use <id>` or `/reuse-sweep-run <id>` by a trusted author.

    `comments` are dicts with body, author_association and created_at (any sortable value). A bare
    `/reuse-sweep-run` wins as the newest command but names no run, so it yields None.
    """
    newest: tuple[Any, int | None] | None = None
    for comment in comments:
        if str(comment.get("author_association", "")) not in TRUSTED_ASSOCIATIONS:
            continue
        last = last_command(str(comment.get("body") or ""))  # as the verdict reads it (verifier.facts.ci)
        if last is None:
            continue
        run = last.group(1) or last.group(2)
        stamp = comment.get("created_at")
        if newest is None or stamp >= newest[0]:
            newest = (stamp, int(run) if run else None)
    return newest[1] if newest else None


def upstream_refs(texts: Iterable[str], policy: Mapping[str, Any], own_repo: str) -> list[UpstreamRef]:
    """Allowlisted upstream PRs linked (URL or `owner/repo#N`) in the texts, in first-seen order."""
    repos = {str(k).lower(): str(k) for k in policy.get("upstream_repos", {})}
    repos.update({str(r).lower(): str(r) for r in policy.get("legacy_repos", ())})
    found: dict[str, UpstreamRef] = {}
    for text in texts:
        for url in urls(text):
            m = re.match(r"https?://(?:www\.)?github\.com/([^/\s]+)/([^/\s]+)/pull/(\d{1,9})", url)
            if not m:
                continue
            repo = f"{m.group(1)}/{m.group(2)}"
            canonical = repos.get(repo.lower())
            if canonical and canonical.lower() != own_repo.lower():
                ref = UpstreamRef(canonical, int(m.group(3)))
                found.setdefault(ref.key, ref)
        for m in _SHORT_REF.finditer(text or ""):
            canonical = repos.get(f"{m.group(1)}/{m.group(2)}".lower())
            if canonical and canonical.lower() != own_repo.lower():
                ref = UpstreamRef(canonical, int(m.group(3)))
                found.setdefault(ref.key, ref)
    return list(found.values())


def page_urls(texts: Iterable[str], policy: Mapping[str, Any]) -> list[str]:
    """Allowlisted upstream page URLs linked in the texts (as written, fragment kept), first-seen order."""
    found: dict[str, None] = {}
    for text in texts:
        for url in urls(text):
            link = classify_url(url, policy)
            if link is not None and link.kind == "page":
                found.setdefault(link.url, None)
    return list(found)
