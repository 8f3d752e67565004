"""Clickable, safe evidence links for rendered rows."""

from __future__ import annotations

import bisect
import posixpath
import re
from functools import lru_cache
from urllib.parse import quote, urlsplit

from verifier.core.model import Bundle
from verifier.core.results import (
    CommentEvidence,
    Evidence,
    FileEvidence,
    MissingEvidence,
    RunEvidence,
    UrlEvidence,
)
from verifier.render.text import code_span

_RUN_URL = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/actions/runs/\d+(?:/job/\d+)?$")
_SAFE_URL_CHARS = "/:?#[]@!$&'*+,;=%-._~"


def safe_url(url: str) -> str | None:
    """An http(s) URL with every character that could break Markdown link syntax percent-encoded."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    encoded = quote(url.strip(), safe=_SAFE_URL_CHARS)
    return encoded.replace("(", "%28").replace(")", "%29").replace("[", "%5B").replace("]", "%5D")


@lru_cache(maxsize=4)
def _ordered(listing: frozenset[str]) -> tuple[str, ...]:
    """A commit's listing in order, sorted once per listing (a row may link several absent files)."""
    return tuple(sorted(listing))


def _nearest_folder(listing: frozenset[str], path: str) -> str:
    """The deepest folder above `path` that holds a file of `listing` ("" for the root)."""
    ordered = _ordered(listing)
    folder = posixpath.dirname(path)
    while folder:
        at = bisect.bisect_left(ordered, folder + "/")
        if at < len(ordered) and ordered[at].startswith(folder + "/"):
            return folder
        folder = posixpath.dirname(folder)
    return ""


def evidence_url(item: Evidence, bundle: Bundle) -> str | None:
    """The web address a piece of evidence points at, built from trusted parts where possible."""
    repo = bundle.pr.repo
    if isinstance(item, FileEvidence):
        if item.path.startswith("checkpoints/"):
            # Checkpoint metadata comes from the Hugging Face repo, not from InferenceX.
            parts = item.path.split("/")
            if len(parts) >= 4:
                return f"https://huggingface.co/{quote('/'.join(parts[1:3]))}/blob/main/{quote('/'.join(parts[3:]))}"
            return None
        if item.path.startswith(("pages/", "runs/")):
            return None  # bundle-only copies; the page or run is linked by its own evidence
        sha = bundle.pr.head_sha if item.side == "head" else bundle.pr.base_sha
        tree = bundle.head if item.side == "head" else bundle.base
        if tree.absent(item.path):
            # a file the commit does not have (a runner script a label would need, say): a blob link
            # would not exist, so the row links the nearest folder the commit has
            folder = _nearest_folder(tree.listing or frozenset(), item.path)
            return f"https://github.com/{repo}/tree/{sha}" + (f"/{quote(folder)}" if folder else "")
        anchor = f"#L{item.line}" if item.line else ""
        return f"https://github.com/{repo}/blob/{sha}/{quote(item.path)}{anchor}"
    if isinstance(item, RunEvidence):
        return item.url if _RUN_URL.match(item.url) else f"https://github.com/{repo}/actions/runs/{item.run_id}"
    if isinstance(item, CommentEvidence):
        return f"{bundle.pr.url}#issuecomment-{item.id}" if not item.url else safe_url(item.url)
    if isinstance(item, UrlEvidence):
        return safe_url(item.url)
    return None


def evidence_label(item: Evidence) -> str:
    """A short, sanitized label for a piece of evidence (Markdown)."""
    if isinstance(item, FileEvidence):
        where = f"{item.path}:{item.line}" if item.line else item.path
        label = code_span(where)
        return f"{label} {code_span(item.text)}" if item.text else label
    if isinstance(item, RunEvidence):
        if item.path:  # a file inside an artifact: run, artifact, path, line
            where = f"{item.artifact}/{item.path}" if item.artifact else item.path
            where += f":{item.line}" if item.line else ""
            label = f"run {item.run_id} artifact {code_span(where)}"
            return f"{label} {code_span(item.text)}" if item.text else label
        extra = f" {code_span(item.job or item.artifact or '')}" if (item.job or item.artifact) else ""
        return f"run {item.run_id}{extra}"
    if isinstance(item, CommentEvidence):
        return f"comment {item.id}" + (f" by {code_span(item.author)}" if item.author else "")
    if isinstance(item, UrlEvidence):
        return code_span(item.text or item.url)
    if isinstance(item, MissingEvidence):
        return f"missing: {code_span(item.what)}"
    return code_span(str(item))


def evidence_markdown(item: Evidence, bundle: Bundle) -> str:
    """A Markdown link (or plain label) for a piece of evidence."""
    label = evidence_label(item)
    url = evidence_url(item, bundle)
    if url is None:
        return label
    if isinstance(item, FileEvidence) and item.text:
        head, _, rest = label.partition(" ")
        return f"[{head}]({url}) {rest}"
    return f"[{label}]({url})"
