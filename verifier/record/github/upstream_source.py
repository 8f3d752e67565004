"""Other repositories a runner fetches from, read through the GitHub REST API (the live collector's
`verifier.record.fetched.UpstreamSource`).

* a ref that is a commit is read as written (`GET /repos/{repo}/commits/{sha}`); a tag through
  `GET /repos/{repo}/git/ref/tags/{tag}` (an annotated tag is followed to its commit);
* a branch (and `HEAD`, the repository's default branch) is resolved as of the review: its tip
  (`GET /repos/{repo}/branches/{name}`), then first parents (`GET /repos/{repo}/commits/{sha}`) until a
  commit's committer date is no later than `when` (at most MAX_WALK steps);
* a file through `GET /repos/{repo}/contents/{path}?ref={commit}` (404: the file does not exist there;
  a symlink is followed inside the repository; content over the contents API limit comes from its blob).

Every call goes through the collector's client (retries, throttle, stats); an unreadable answer
(403, 5xx after retries) leaves the ref unresolved or the file unread, never guessed.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
import urllib.parse
from typing import Any

from github import GithubException

from verifier.record.github.client import Client, is_unreadable

MAX_WALK = 100
MAX_FILES = 64
_SHA = re.compile(r"^[0-9a-f]{40}$")
_REF = re.compile(r"^[\w./-]{1,200}$")


def _time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(dt.UTC)
    except ValueError:
        return None


class GitHubUpstream:
    """Reads other repositories through the API of one collection."""

    def __init__(self, client: Client, absent: list[str]) -> None:
        self.client = client
        self.absent = absent  # the collection's absences (what could not be read)
        self.files = 0

    def serves(self, repo: str) -> bool:
        return re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", repo) is not None

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any | None:
        try:
            return self.client.get_json(path, params)
        except GithubException as exc:
            if is_unreadable(exc):
                if exc.status != 404:
                    self.absent.append(f"{path} ({exc.status})")
                return None
            raise

    def resolve(self, repo: str, ref: str, when: dt.datetime) -> str | None:
        if not _REF.match(ref) or ".." in ref:
            return None
        if _SHA.match(ref):
            data = self._get(f"/repos/{repo}/commits/{ref}")
            return str(data["sha"]) if isinstance(data, dict) and _SHA.match(str(data.get("sha"))) else None
        if ref != "HEAD":
            tag = self._get(f"/repos/{repo}/git/ref/tags/{urllib.parse.quote(ref)}")
            if isinstance(tag, dict) and isinstance(tag.get("object"), dict):
                obj = tag["object"]
                for _ in range(4):
                    if obj.get("type") == "commit" and _SHA.match(str(obj.get("sha"))):
                        return str(obj["sha"])
                    if obj.get("type") != "tag":
                        return None
                    annotated = self._get(f"/repos/{repo}/git/tags/{obj.get('sha')}")
                    if not isinstance(annotated, dict) or not isinstance(annotated.get("object"), dict):
                        return None
                    obj = annotated["object"]
                return None
        branch = ref
        if ref == "HEAD":
            meta = self._get(f"/repos/{repo}")
            branch = str(meta.get("default_branch") or "") if isinstance(meta, dict) else ""
            if not branch:
                return None
        tip = self._get(f"/repos/{repo}/branches/{urllib.parse.quote(branch, safe='')}")
        sha = (tip.get("commit") or {}).get("sha") if isinstance(tip, dict) else None
        for _ in range(MAX_WALK):
            if not isinstance(sha, str) or not _SHA.match(sha):
                return None
            data = self._get(f"/repos/{repo}/commits/{sha}")
            if not isinstance(data, dict):
                return None
            committed = _time(((data.get("commit") or {}).get("committer") or {}).get("date"))
            if committed is not None and committed <= when:
                return sha
            parents = data.get("parents") or []
            sha = parents[0].get("sha") if parents and isinstance(parents[0], dict) else None
        self.absent.append(f"{repo}@{ref}: no commit within {MAX_WALK} first parents is older than {when:%Y-%m-%d}")
        return None

    def read(self, repo: str, commit: str, path: str) -> tuple[bytes, str] | None:
        if self.files >= MAX_FILES:
            self.absent.append(f"{repo}@{commit[:12]}:{path}: over the {MAX_FILES}-file limit of fetched files")
            return None
        self.files += 1
        for _ in range(4):
            data = self._get(f"/repos/{repo}/contents/{urllib.parse.quote(path)}", {"ref": commit})
            if not isinstance(data, dict):
                return None
            if data.get("type") == "symlink" and isinstance(data.get("target"), str):
                target = data["target"]
                base = path.rsplit("/", 1)[0] if "/" in path else ""
                parts: list[str] = []
                for part in (base + "/" + target if base else target).split("/"):
                    if part in ("", "."):
                        continue
                    if part == "..":
                        if not parts:
                            return None
                        parts.pop()
                    else:
                        parts.append(part)
                path = "/".join(parts)
                continue
            if data.get("type") != "file":
                return None
            blob = str(data.get("sha") or "")
            if data.get("encoding") == "base64" and data.get("content") is not None:
                return base64.b64decode(str(data["content"])), blob
            raw = self._get(f"/repos/{repo}/git/blobs/{blob}")
            if isinstance(raw, dict) and raw.get("encoding") == "base64":
                return base64.b64decode(str(raw.get("content") or "")), blob
            return None
        return None
