"""Sign-offs: the URL forms that name one, how one is recognised, and our verdict marker.

FORMATS.md §2.5: a sign-off is a conversation comment, a review summary or an inline review comment
whose body contains "As a PR reviewer and CODEOWNER", that is not one of our own verdict comments
(`<!-- codeowner-signoff-verify`), and whose author is not a bot. It is named by a key
`issuecomment-<id>`, `pullrequestreview-<id>` or `discussion_r<id>`, which a URL carries as its
fragment.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Literal

from verifier.core.errors import UsageError

SIGNOFF_PHRASE = "As a PR reviewer and CODEOWNER"
MARKER_PREFIX = "<!-- codeowner-signoff-verify"

Kind = Literal["conversation comment", "review summary", "inline review comment"]
KEY_PREFIX: dict[str, Kind] = {
    "issuecomment-": "conversation comment",
    "pullrequestreview-": "review summary",
    "discussion_r": "inline review comment",
}
_KEY = re.compile(r"^(issuecomment-|pullrequestreview-|discussion_r)([1-9][0-9]{0,19})$")
# A sign-off URL names a comment on github.com; any other host is not where sign-offs live
# (InferenceX signoff_resolve rejects `https://evil.example/<repo>/pull/N#issuecomment-M`).
SIGNOFF_HOSTS = frozenset({"github.com", "www.github.com"})
_PULL_PATH = re.compile(r"^/([^/]+)/([^/]+)/pull/([1-9][0-9]{0,9})(?:/[^#]*)?$")


@dataclass(frozen=True)
class SignoffRef:
    """A sign-off named by URL: its kind, id, and (when the URL says) repo and PR number."""

    kind: Kind
    id: int
    repo: str | None = None
    number: int | None = None

    @property
    def key(self) -> str:
        """issuecomment-N, pullrequestreview-N or discussion_rN."""
        prefix = next(p for p, k in KEY_PREFIX.items() if k == self.kind)
        return f"{prefix}{self.id}"


def parse_signoff_url(url: str) -> SignoffRef:
    """Parse a sign-off URL (or a bare key); raises UsageError for anything else."""
    text = url.strip()
    fragment = text
    repo = number = None
    if "#" in text:
        parts = urllib.parse.urlsplit(text)
        fragment = parts.fragment
        if parts.scheme:
            if parts.scheme not in ("http", "https"):
                raise UsageError(f"usage error: sign-off URL {text!r} is not an http(s) URL")
            try:
                port = parts.port
            except ValueError:
                port = -1
            if (parts.hostname or "").lower() not in SIGNOFF_HOSTS or port is not None or parts.username:
                raise UsageError(f"usage error: sign-off URL {text!r} is not on github.com")
            m = _PULL_PATH.match(parts.path)
            if m is None:
                raise UsageError(f"usage error: sign-off URL {text!r} is not a pull request URL")
            repo, number = f"{m.group(1)}/{m.group(2)}", int(m.group(3))
    m = _KEY.match(fragment)
    if m is None:
        raise UsageError(
            f"usage error: sign-off URL {text!r} must end in #issuecomment-<id>, #pullrequestreview-<id> "
            "or #discussion_r<id>"
        )
    return SignoffRef(KEY_PREFIX[m.group(1)], int(m.group(2)), repo, number)


def is_bot(login: str, user_type: str | None = None) -> bool:
    """True for bot accounts (GitHub user type Bot, or a `[bot]` login)."""
    return (user_type or "").lower() == "bot" or login.lower().endswith("[bot]")


def looks_like_signoff(body: str | None, phrase: str = SIGNOFF_PHRASE, marker: str = MARKER_PREFIX) -> bool:
    """True when a body contains the sign-off phrase and is not one of our verdict comments."""
    text = body or ""
    return phrase in text and marker not in text


def marker_regex(key: str, marker: str = MARKER_PREFIX) -> re.Pattern[str]:
    """Matches the start of our verdict comment for one sign-off key (any later attributes)."""
    return re.compile(rf"\A{re.escape(marker)} signoff={re.escape(key)}(?=[\s-])[^\n]*-->")
