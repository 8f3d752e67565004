"""A GitHub REST (and minimal GraphQL) stand-in that serves one PR bundle, for tests.

stdlib http.server on 127.0.0.1, an ephemeral port, one daemon thread. It answers with the JSON
shapes PyGithub expects (Link-header pagination included), under the GitHub Enterprise prefix
/api/v3 (GraphQL at /api/graphql), and also plays the artifact blob store (reached by a 302 to
`localhost`, a different host, so tests can check the token is not forwarded), a docs proxy
(`/docs-proxy?url=`), and a Hugging Face endpoint (`/hf/<repo>/resolve/<rev>/<file>`).

Writes (comments, review comments, statuses) are recorded and change what later reads return, so an
Action run can be repeated against the same server. `push()` models a push to the PR branch (a new
head commit, as a `synchronize` event follows); the compare endpoint answers between any two commits
it holds, and the PR's file listing carries each file's `patch`, as GitHub's does. Faults (status, headers, body, how many times) can be injected
per path pattern to exercise retries and error handling. Every request is logged.
"""

from __future__ import annotations

import base64
import datetime as dt
import difflib
import hashlib
import io
import json
import re
import threading
import urllib.parse
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from verifier.core.bundle import read_bundle
from verifier.core.layout import policy_path
from verifier.core.model import Bundle
from verifier.core.yamlio import decode_text, load_yaml, plain

TOKEN = "standin-token"
API = "/api/v3"


def git_blob_sha(data: bytes) -> str:
    """The git object id of a blob."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def _iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Fault:
    """Answer `status` (with headers and JSON body) to requests matching method and path regex, `times` times."""

    path: str
    status: int
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    times: int = 1
    raw: bytes | None = None  # a raw body instead of JSON (a truncated answer, ...)

    def matches(self, method: str, path: str) -> bool:
        return self.times > 0 and method == self.method and re.search(self.path, path) is not None


@dataclass
class FakeRepo:
    """Another repository the stand-in serves (what a runner clones): commits with dates, parents and
    files, branches and tags pointing at commits."""

    default_branch: str = "main"
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    # sha -> (committer date ISO, parent shas, files)
    commits: dict[str, tuple[str, list[str], dict[str, bytes]]] = field(default_factory=dict)


@dataclass
class Logged:
    """One request the stand-in saw."""

    method: str
    path: str
    query: dict[str, list[str]]
    authorization: str | None
    host: str
    body: Any = None


class StandIn:
    """Serves one bundle as GitHub. Use as a context manager."""

    def __init__(
        self,
        bundle: Bundle | str | Path,
        *,
        token: str = TOKEN,
        login: str = "github-actions[bot]",
        user_readable: bool = False,
        graphql: bool = True,
        page_size: int = 100,
        upstream_repos: dict[str, FakeRepo] | None = None,
    ) -> None:
        self.bundle = bundle if isinstance(bundle, Bundle) else read_bundle(bundle)
        self.token = token
        self.login = login
        self.user_readable = user_readable
        self.graphql_enabled = graphql
        self.page_size = page_size
        self.upstream_repos = {k.lower(): v for k, v in (upstream_repos or {}).items()}
        self.faults: list[Fault] = []
        self.log: list[Logged] = []
        self.statuses: list[dict[str, Any]] = []
        self.extra_reviews: list[dict[str, Any]] = []
        self.extra_review_comments: list[dict[str, Any]] = []
        # fields of the PR answer to override (draft, state, merged, changed_files, head sha ...)
        self.pull_overrides: dict[str, Any] = {}
        # login -> (status, body) for the permission endpoint, over what the bundle says
        self.permission_answers: dict[str, tuple[int, Any]] = {}
        # path -> patch text served by the PR's file listing instead of the one computed from the trees
        # (None: no patch, as GitHub answers for large or binary files)
        self.patch_overrides: dict[str, str | None] = {}
        # pushes after the recorded head (push()): commits appended to the PR, parent links, and the
        # files a push brought into the PR's diff (the tip's file listing has them, older diffs do not)
        self.extra_commits: list[str] = []
        self.parents: dict[str, str] = {}
        self.tip_files: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._next_id = 9_000_000_000
        self._build()

    # -- lifecycle -----------------------------------------------------------------------------------

    def __enter__(self) -> StandIn:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        handler = _handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="github-standin", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return self.base_url + API

    @property
    def docs_proxy(self) -> str:
        return self.base_url + "/docs-proxy"

    @property
    def hf_endpoint(self) -> str:
        return self.base_url + "/hf"

    def api_requests(self) -> list[Logged]:
        """Requests to the API (GitHub REST and GraphQL), not artifact downloads, docs proxy or HF."""
        return [r for r in self.log if (r.path.startswith(API) and not r.path.endswith("/zip"))
                or r.path == "/api/graphql"]

    # -- data ------------------------------------------------------------------------------------------

    def new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def _build(self) -> None:
        b = self.bundle
        self.repo = b.pr.repo
        self.owner, self.name = self.repo.split("/")
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, dict[str, str]] = {}
        for tree in (b.base, b.head):
            listing = {}
            for path, data in tree.files.items():
                oid = git_blob_sha(data)
                self.blobs[oid] = data
                listing[path] = oid
            self.trees[tree.sha] = listing
        if b.pr.head_ref_oid not in self.trees:
            self.trees[b.pr.head_ref_oid] = self.trees[b.pr.head_sha]
        when = b.signoff.updated_at or b.signoff.created_at
        pinned = b.pr.commits.index(b.pr.head_sha) if b.pr.head_sha in b.pr.commits else len(b.pr.commits) - 1
        self.commit_dates = {
            sha: when + dt.timedelta(minutes=(i - pinned) if i > pinned else -(pinned - i + 1))
            for i, sha in enumerate(b.pr.commits)
        }
        # When GitHub saw each commit pushed (its check suites' created_at); tests move these to
        # model pushes, independently of the committer dates a pusher chooses.
        self.push_times: dict[str, dt.datetime] = dict(self.commit_dates)
        commits = list(b.pr.commits)
        self.parents = {child: parent for parent, child in zip(commits, commits[1:], strict=False)}
        self.comments: list[dict[str, Any]] = []
        for c in b.comments:
            self.comments.append({"id": c.id, "login": c.author, "bot": c.is_bot, "association": c.author_association,
                                  "created_at": c.created_at, "updated_at": c.updated_at or c.created_at,
                                  "body": c.body})
        so = b.signoff
        if so.kind == "conversation comment" and not any(c["id"] == so.id for c in self.comments):
            self.comments.append({"id": so.id, "login": so.author, "bot": False, "association": so.author_association,
                                  "created_at": so.created_at, "updated_at": so.updated_at or so.created_at,
                                  "body": so.body})
        self.artifacts: dict[int, tuple[int, str, bool, dict[str, bytes]]] = {}
        self.run_artifacts: dict[int, list[int]] = {}
        for run in b.runs.values():
            ids = []
            for art in run.artifacts:
                aid = self.new_id()
                self.artifacts[aid] = (run.id, art.name, art.expired, dict(art.files))
                ids.append(aid)
            self.run_artifacts[run.id] = ids
        self.pulls_extra: dict[int, dict[str, Any]] = {}
        self._baseline_prs()
        self.job_ids: dict[tuple[str, str, int | None], int] = {}

    def _baseline_prs(self) -> None:
        """Serve the PR behind each baseline run: its changelog entry's PR, merged at the run's head sha."""
        b = self.bundle
        path = policy_path("changelog", b.layout)
        data = b.base.read(path)
        if data is None:
            return
        try:
            doc = plain(load_yaml(decode_text(data, path), path))
        except Exception:
            return
        for key, run_id in b.github.baseline_runs.items():
            run = b.runs.get(run_id)
            if run is None or not isinstance(doc, list):
                continue
            number = None
            for item in doc:
                m = re.search(r"/pull/(\d+)", str(item.get("pr-link") or "")) if isinstance(item, dict) else None
                if m and key in (item.get("config-keys") or []) and int(m.group(1)) != b.pr.number:
                    number = int(m.group(1))
            if number is not None:
                self.pulls_extra[number] = {"merge_commit_sha": run.head_sha, "run": run_id}

    # -- JSON shapes --------------------------------------------------------------------------------------

    def user(self, login: str, bot: bool = False) -> dict[str, Any]:
        return {"login": login, "id": int(hashlib.sha1(login.encode()).hexdigest()[:8], 16),
                "type": "Bot" if bot or login.endswith("[bot]") else "User",
                "url": f"{self.api_url}/users/{urllib.parse.quote(login)}",
                "html_url": f"https://github.com/{login}", "site_admin": False}

    def repo_json(self) -> dict[str, Any]:
        return {"id": 1, "name": self.name, "full_name": self.repo, "private": False,
                "url": f"{self.api_url}/repos/{self.repo}", "html_url": f"https://github.com/{self.repo}",
                "owner": self.user(self.owner)}

    def pull_json(self) -> dict[str, Any]:
        pr = self.bundle.pr
        url = f"{self.api_url}/repos/{self.repo}/pulls/{pr.number}"
        return {
            "url": url, "id": pr.number * 10, "number": pr.number, "html_url": f"https://github.com/{self.repo}/pull/{pr.number}",
            "issue_url": f"{self.api_url}/repos/{self.repo}/issues/{pr.number}",
            "state": "open" if pr.state == "open" else "closed", "title": pr.title, "body": pr.body,
            "user": self.user(pr.author), "labels": [{"id": i, "name": n, "url": f"{self.api_url}/labels/{i}", "color": "ededed"}
                                                     for i, n in enumerate(pr.labels)],
            "draft": pr.draft, "merged": pr.state == "merged", "merged_at": None, "merge_commit_sha": None,
            "created_at": _iso(pr.created_at) or "2026-01-01T00:00:00Z", "updated_at": _iso(pr.created_at),
            "base": {"ref": pr.base_ref, "sha": pr.base_sha, "label": f"{self.owner}:{pr.base_ref}", "repo": self.repo_json()},
            "head": {"ref": pr.head_ref, "sha": pr.head_ref_oid, "label": f"{self.owner}:{pr.head_ref}", "repo": self.repo_json()},
            "changed_files": len(pr.files),
            **self.pull_overrides,
        }

    def comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        n = self.bundle.pr.number
        return {"id": c["id"], "url": f"{self.api_url}/repos/{self.repo}/issues/comments/{c['id']}",
                "html_url": f"https://github.com/{self.repo}/pull/{n}#issuecomment-{c['id']}",
                "issue_url": f"{self.api_url}/repos/{self.repo}/issues/{n}",
                "body": c["body"], "user": self.user(c["login"], c["bot"]), "author_association": c["association"],
                "created_at": _iso(c["created_at"]), "updated_at": _iso(c["updated_at"]),
                "performed_via_github_app": ({"slug": c["login"].removesuffix("[bot]"), "id": 15368}
                                             if c["login"].endswith("[bot]") else None)}

    def reviews(self) -> list[dict[str, Any]]:
        so, n = self.bundle.signoff, self.bundle.pr.number
        items = list(self.extra_reviews)
        if so.kind == "review summary":
            items.append({"id": so.id, "login": so.author, "body": so.body, "state": "COMMENTED",
                          "association": so.author_association, "submitted_at": so.updated_at or so.created_at,
                          "commit_id": self.bundle.pr.head_sha})
        return [{"id": r["id"], "user": self.user(r["login"]), "body": r["body"], "state": r["state"],
                 "html_url": f"https://github.com/{self.repo}/pull/{n}#pullrequestreview-{r['id']}",
                 "pull_request_url": f"{self.api_url}/repos/{self.repo}/pulls/{n}",
                 "author_association": r["association"], "submitted_at": _iso(r["submitted_at"]),
                 "commit_id": r["commit_id"]} for r in items]

    def review_comments(self) -> list[dict[str, Any]]:
        so, n = self.bundle.signoff, self.bundle.pr.number
        items = list(self.extra_review_comments)
        if so.kind == "inline review comment":
            items.append({"id": so.id, "login": so.author, "body": so.body, "association": so.author_association,
                          "created_at": so.created_at, "updated_at": so.updated_at or so.created_at,
                          "commit_id": self.bundle.pr.head_sha})
        return [{"id": r["id"], "user": self.user(r["login"]), "body": r["body"],
                 "url": f"{self.api_url}/repos/{self.repo}/pulls/comments/{r['id']}",
                 "html_url": f"https://github.com/{self.repo}/pull/{n}#discussion_r{r['id']}",
                 "pull_request_url": f"{self.api_url}/repos/{self.repo}/pulls/{n}",
                 "author_association": r["association"], "created_at": _iso(r["created_at"]),
                 "updated_at": _iso(r["updated_at"]), "commit_id": r["commit_id"],
                 "original_commit_id": r["commit_id"], "path": r.get("path", "x"), "diff_hunk": "@@",
                 "position": 1, "line": r.get("line"), "side": r.get("side")}
                for r in items]

    def run_json(self, run_id: int) -> dict[str, Any] | None:
        run = self.bundle.runs.get(run_id)
        if run is None:
            return None
        return {"id": run.id, "name": run.workflow, "path": run.path, "event": run.event, "status": run.status,
                "conclusion": run.conclusion, "head_sha": run.head_sha, "head_branch": run.head_branch,
                "run_attempt": run.attempt, "created_at": _iso(run.created_at), "updated_at": _iso(run.updated_at),
                "html_url": run.url, "url": f"{self.api_url}/repos/{self.repo}/actions/runs/{run.id}",
                "pull_requests": [{"number": p, "id": p, "url": f"{self.api_url}/repos/{self.repo}/pulls/{p}"}
                                  for p in run.pull_requests]}

    def artifact_json(self, aid: int) -> dict[str, Any]:
        run_id, name, expired, _files = self.artifacts[aid]
        return {"id": aid, "name": name, "expired": expired, "size_in_bytes": 1,
                "url": f"{self.api_url}/repos/{self.repo}/actions/artifacts/{aid}",
                "archive_download_url": f"{self.api_url}/repos/{self.repo}/actions/artifacts/{aid}/zip",
                "workflow_run": {"id": run_id}}

    def artifact_zip(self, aid: int) -> bytes:
        _run, _name, _expired, files = self.artifacts[aid]
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for rel, data in sorted(files.items()):
                zf.writestr(rel, data)
            zf.writestr("telemetry/trace.jsonl", b'{"dropped": true}\n')
        return buffer.getvalue()

    def check_runs(self, sha: str) -> list[dict[str, Any]]:
        out = []
        for r in self.bundle.check_runs:
            if r.sha != sha:
                continue
            key = (r.sha, r.name, r.run_id)
            job = self.job_ids.setdefault(key, len(self.job_ids) + 70_000_000_000)
            link = f"https://github.com/{self.repo}/actions/runs/{r.run_id}/job/{job}" if r.run_id else None
            out.append({"id": job, "name": r.name, "head_sha": r.sha,
                        "status": "completed" if r.conclusion else "in_progress", "conclusion": r.conclusion,
                        "details_url": link, "html_url": link, "url": f"{self.api_url}/repos/{self.repo}/check-runs/{job}"})
        return out

    def upstream_pr(self, repo: str, number: int) -> dict[str, Any] | None:
        for key, pr in self.bundle.github.upstream_prs.items():
            if key.lower() == f"{repo}#{number}".lower():
                return {"key": key, "pr": pr}
        return None

    def collaborator(self, login: str) -> dict[str, Any] | None:
        perm = self.bundle.github.permissions.get(login)
        if perm is None:
            return None
        level = perm.permission
        role = perm.role_name or level
        perms = {"admin": level == "admin", "maintain": role in ("maintain", "admin"),
                 "push": level in ("admin", "write"), "triage": level in ("admin", "write", "triage"),
                 "pull": level in ("admin", "write", "read", "triage")}
        return {**self.user(login), "permissions": perms, "role_name": perm.role_name}

    def page(self, url: str) -> bytes | None:
        pages = self.bundle.github.pages
        for known, rel in pages.items():
            if known.split("#", 1)[0].rstrip("/") == url.split("#", 1)[0].rstrip("/"):
                key = rel if rel.startswith("pages/") else f"pages/{rel}"
                return self.bundle.pages.get(key)
        return None

    def graphql(self, query: str) -> dict[str, Any]:
        data: dict[str, Any] = {}
        errors: list[dict[str, Any]] = []
        repo_block = re.search(r"(\w+): repository\(owner: \"([^\"]+)\", name: \"([^\"]+)\"\) \{\s*\n", query)
        if repo_block:
            blobs: dict[str, Any] = {}
            for alias, oid in re.findall(r"(\w+): object\(oid: \"([0-9a-f]{40})\"\)", query):
                body = self.blobs.get(oid)
                if body is None:
                    blobs[alias] = None
                    errors.append({"type": "NOT_FOUND", "path": [repo_block.group(1), alias]})
                    continue
                try:
                    text: str | None = body.decode("utf-8")
                except UnicodeDecodeError:
                    text = None
                blobs[alias] = {"oid": oid, "byteSize": len(body), "isBinary": text is None,
                                "isTruncated": False, "text": text}
            data[repo_block.group(1)] = blobs
        for alias, repo, name, number in re.findall(
            r"(\w+): repository\(owner: \"([^\"]+)\", name: \"([^\"]+)\"\) \{ pullRequest\(number: (\d+)\)", query
        ):
            found = self.upstream_pr(f"{repo}/{name}", int(number))
            if found is None:
                data[alias] = {"pullRequest": None}
                errors.append({"type": "NOT_FOUND", "path": [alias, "pullRequest"]})
                continue
            pr = found["pr"]
            data[alias] = {"pullRequest": {
                "state": pr.state, "mergedAt": _iso(pr.merged_at), "url": pr.url, "title": pr.title,
                "baseRefName": pr.base_ref, "files": {"totalCount": len(pr.files), "nodes": [{"path": p} for p in pr.files]},
            }}
        out: dict[str, Any] = {"data": data}
        if errors:
            out["errors"] = errors
        return out

    # -- pushes, diffs ------------------------------------------------------------------------------------

    def tip(self) -> str:
        """The PR's current head commit (what GET /pulls/N answers)."""
        head = self.pull_overrides.get("head")
        return str(head["sha"]) if isinstance(head, dict) and head.get("sha") else self.bundle.pr.head_ref_oid

    def push(self, changes: dict[str, bytes | None], *, from_base: bool = False,
             when: dt.datetime | None = None) -> str:
        """A new head commit on the PR branch: the tip's files with `changes` (None deletes a path).

        GitHub records the push now (a check suite), after the sign-off, so the sign-off still pins
        the commit it judged. `from_base=True` models a merge of the base branch bringing changes the
        base already has: the PR's file listing stays as it was. Otherwise a changed path that was not
        in the PR's diff enters the listing of the new tip. Returns the new commit's sha."""
        parent = self.tip()
        listing = dict(self.trees[parent])
        for path, data in changes.items():
            if data is None:
                listing.pop(path, None)
                continue
            oid = git_blob_sha(data)
            self.blobs[oid] = data
            listing[path] = oid
        sha = hashlib.sha1(f"{parent}:{sorted(listing.items())}".encode()).hexdigest()
        self.trees[sha] = listing
        self.parents[sha] = parent
        self.extra_commits.append(sha)
        moment = when or dt.datetime.now(dt.UTC).replace(microsecond=0)
        self.commit_dates[sha] = moment
        self.push_times[sha] = moment
        head = dict(self.pull_json()["head"])
        head["sha"] = sha
        self.pull_overrides["head"] = head
        if not from_base:
            listed = {f.path for f in self.bundle.pr.files} | {f["filename"] for f in self.tip_files}
            base = self.trees.get(self.bundle.pr.base_sha, {})
            for path in sorted(changes):
                if path not in listed:
                    status = "removed" if changes[path] is None else "modified" if path in base else "added"
                    self.tip_files.append({"filename": path, "status": status, "sha": listing.get(path, "0" * 40),
                                           "additions": 1, "deletions": 0, "changes": 1})
        return sha

    def descends(self, sha: str, ancestor: str) -> bool:
        """True when `ancestor` is `sha` or one of its first parents."""
        cur: str | None = sha
        while cur is not None:
            if cur == ancestor:
                return True
            cur = self.parents.get(cur)
        return False

    def patch(self, path: str, head: str | None = None) -> str | None:
        """The unified-diff hunks GitHub's file listing shows for `path` between the PR base and `head`."""
        if path in self.patch_overrides:
            return self.patch_overrides[path]
        base_oid = self.trees.get(self.bundle.pr.base_sha, {}).get(path)
        head_oid = self.trees.get(head or self.tip(), {}).get(path)
        texts = []
        for oid in (base_oid, head_oid):
            try:
                texts.append(self.blobs[oid].decode("utf-8").splitlines() if oid else [])
            except UnicodeDecodeError:
                return None
        lines = list(difflib.unified_diff(texts[0], texts[1], lineterm="", n=3))
        return "\n".join(lines[2:]) if lines else None

    def diff_lines(self, path: str, head: str | None = None) -> set[int]:
        """Head-side line numbers inside the diff hunks of `path` (where GitHub accepts a review comment)."""
        out: set[int] = set()
        number = 0
        for line in (self.patch(path, head) or "").split("\n"):
            m = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", line)
            if m:
                number = int(m.group(1))
                continue
            if line.startswith(("+", " ")):
                out.add(number)
                number += 1
        return out

    def compare(self, base: str, head: str) -> dict[str, Any] | None:
        """GitHub's three-dot compare between two commits the stand-in holds (None: unknown commit)."""
        if base not in self.trees or head not in self.trees:
            return None
        old, new = self.trees[base], self.trees[head]
        files = []
        for path in sorted(old.keys() | new.keys()):
            if old.get(path) == new.get(path):
                continue
            status = "added" if path not in old else "removed" if path not in new else "modified"
            files.append({"filename": path, "status": status, "sha": new.get(path, "0" * 40),
                          "additions": 1, "deletions": 0, "changes": 1})
        ahead = self.descends(head, base)
        return {"status": "identical" if base == head else "ahead" if ahead else "diverged",
                "ahead_by": 1 if ahead and base != head else 0, "behind_by": 0 if ahead else 1,
                "total_commits": 1, "files": files}

    def posted_review_comments(self) -> list[dict[str, Any]]:
        """Review comments written through the API (suggestions), oldest first."""
        return [r for r in self.extra_review_comments if r.get("posted")]

    # -- writes ------------------------------------------------------------------------------------------

    def add_comment(self, login: str, body: str, *, bot: bool = False, association: str = "NONE") -> dict[str, Any]:
        now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        c = {"id": self.new_id(), "login": login, "bot": bot, "association": association, "created_at": now,
             "updated_at": now, "body": body}
        with self._lock:
            self.comments.append(c)
        return c

    def verdict_comments(self) -> list[dict[str, Any]]:
        return [c for c in self.comments if c["body"].startswith("<!-- codeowner-signoff-verify")]

    def writes(self) -> list[Logged]:
        """Every request that would change GitHub (GraphQL is read-only here)."""
        return [r for r in self.log if r.method in ("POST", "PATCH", "PUT", "DELETE") and r.path != "/api/graphql"]


def _paginate(handler: BaseHTTPRequestHandler, standin: StandIn, items: list[Any], query: dict[str, list[str]],
              key: str | None = None, extra: dict[str, Any] | None = None) -> None:
    per_page = min(int(query.get("per_page", ["30"])[0]), standin.page_size)
    page = int(query.get("page", ["1"])[0])
    chunk = items[(page - 1) * per_page: page * per_page]
    headers = {}
    last = max(1, -(-len(items) // per_page))
    if page < last:
        q = {k: v[0] for k, v in query.items()}
        links = []
        for rel, n in (("next", page + 1), ("last", last)):
            q["page"] = str(n)
            path = handler.path.split("?", 1)[0]
            links.append(f'<{standin.base_url}{path}?{urllib.parse.urlencode(q)}>; rel="{rel}"')
        headers["Link"] = ", ".join(links)
    body: Any = chunk if key is None else {"total_count": len(items), key: chunk, **(extra or {})}
    _send(handler, 200, body, headers)


def _send(handler: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None,
          raw: bytes | None = None, content_type: str = "application/json; charset=utf-8") -> None:
    data = raw if raw is not None else (json.dumps(body).encode("utf-8") if body is not None else b"")
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.send_header("X-RateLimit-Limit", "5000")
    hdrs = headers or {}
    if "x-ratelimit-remaining" not in {k.lower() for k in hdrs}:
        handler.send_header("X-RateLimit-Remaining", "4999")
    for k, v in hdrs.items():
        handler.send_header(k, v)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


def _handler(s: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *_args: Any) -> None:  # quiet
            return

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return None
            try:
                return json.loads(raw)
            except ValueError:
                return raw

        def _dispatch(self) -> None:
            parts = urllib.parse.urlsplit(self.path)
            path, query = parts.path, urllib.parse.parse_qs(parts.query)
            body = self._body() if self.command in ("POST", "PATCH", "PUT") else None
            s.log.append(Logged(self.command, path, query, self.headers.get("Authorization"),
                                self.headers.get("Host", ""), body))
            for fault in s.faults:
                if fault.matches(self.command, path):
                    fault.times -= 1
                    return _send(self, fault.status, fault.body if fault.body is not None else {"message": "fault"},
                                 fault.headers, raw=fault.raw)
            if path.startswith("/_blobs/"):
                aid = int(path.removeprefix("/_blobs/").removesuffix(".zip"))
                return _send(self, 200, None, raw=s.artifact_zip(aid), content_type="application/zip")
            if path == "/docs-proxy":
                page = s.page(query.get("url", [""])[0])
                if page is None:
                    return _send(self, 404, {"message": "not found"})
                url = query["url"][0]
                ctype = "text/markdown; charset=utf-8" if url.endswith((".md", ".mdx")) or b"<html" not in page[:200] \
                    else "text/html; charset=utf-8"
                return _send(self, 200, None, raw=page, content_type=ctype)
            if path.startswith("/hf/"):
                m = re.match(r"^/hf/(.+?)/resolve/([^/]+)/(.+)$", path)
                data = s.bundle.checkpoints.get(f"{m.group(1)}/{m.group(3)}") if m else None
                if data is None:
                    return _send(self, 404, {"error": "Entry not found"})
                return _send(self, 200, None, raw=data)
            auth = self.headers.get("Authorization") or ""
            if auth not in (f"token {s.token}", f"Bearer {s.token}"):
                return _send(self, 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com"})
            if path == "/api/graphql" and self.command == "POST":
                if not s.graphql_enabled:
                    return _send(self, 404, {"message": "Not Found"})
                return _send(self, 200, s.graphql(str((body or {}).get("query", ""))))
            if not path.startswith(API):
                return _send(self, 404, {"message": "Not Found"})
            return self._api(path.removeprefix(API), query, body)

        def _api(self, path: str, query: dict[str, list[str]], body: Any) -> None:
            r = re.escape(s.repo)
            n = s.bundle.pr.number
            m = None

            def match(pattern: str) -> bool:
                nonlocal m
                m = re.fullmatch(pattern, path, flags=re.IGNORECASE)
                return m is not None

            cmd = self.command
            if cmd == "GET" and path == "/user":
                if s.user_readable:
                    return _send(self, 200, s.user(s.login))
                return _send(self, 403, {"message": "Resource not accessible by integration"})
            if cmd == "GET" and match(rf"/repos/{r}"):
                return _send(self, 200, s.repo_json())
            if cmd == "GET" and match(rf"/repos/{r}/pulls/{n}"):
                return _send(self, 200, s.pull_json())
            if cmd == "GET" and match(rf"/repos/{r}/pulls/{n}/commits"):
                items = [{"sha": sha, "url": f"{s.api_url}/repos/{s.repo}/commits/{sha}",
                          "html_url": f"https://github.com/{s.repo}/commit/{sha}",
                          "commit": {"message": "commit", "url": f"{s.api_url}/repos/{s.repo}/git/commits/{sha}",
                                     "author": {"name": "a", "email": "a@x", "date": _iso(s.commit_dates[sha])},
                                     "committer": {"name": "a", "email": "a@x", "date": _iso(s.commit_dates[sha])}},
                          "parents": []} for sha in (*s.bundle.pr.commits, *s.extra_commits)]
                return _paginate(self, s, items, query)
            if cmd == "GET" and match(rf"/repos/{r}/pulls/{n}/files"):
                items = [{**f, **({"patch": p} if (p := s.patch(f["filename"])) is not None else {})}
                         for f in [*self._files(), *s.tip_files]]
                return _paginate(self, s, items, query)
            if cmd == "GET" and match(rf"/repos/{r}/compare/([0-9a-f]{{40}})\.\.\.([0-9a-f]{{40}})"):
                if m.group(1) == s.bundle.pr.base_sha:
                    return _send(self, 200, {"files": self._files(), "status": "ahead"})
                found = s.compare(m.group(1), m.group(2))
                return _send(self, 200, found) if found else _send(self, 404, {"message": "Not Found"})
            if cmd == "POST" and match(rf"/repos/{r}/pulls/{n}/comments"):
                return self._review_comment(body)
            if cmd == "PATCH" and match(rf"/repos/{r}/pulls/comments/(\d+)"):
                for item in s.posted_review_comments():
                    if item["id"] == int(m.group(1)):
                        item["body"] = str((body or {}).get("body", ""))
                        item["updated_at"] = dt.datetime.now(dt.UTC).replace(microsecond=0)
                        return _send(self, 200, s.review_comments()[s.extra_review_comments.index(item)])
                return _send(self, 404, {"message": "Not Found"})
            if cmd == "GET" and match(rf"/repos/{r}/issues/{n}/comments"):
                return _paginate(self, s, [s.comment_json(c) for c in list(s.comments)], query)
            if cmd == "POST" and match(rf"/repos/{r}/issues/{n}/comments"):
                c = s.add_comment(s.login, str((body or {}).get("body", "")), bot=s.login.endswith("[bot]"))
                return _send(self, 201, s.comment_json(c))
            if cmd == "PATCH" and match(rf"/repos/{r}/issues/comments/(\d+)"):
                for c in s.comments:
                    if c["id"] == int(m.group(1)):
                        c["body"] = str((body or {}).get("body", ""))
                        c["updated_at"] = dt.datetime.now(dt.UTC).replace(microsecond=0)
                        return _send(self, 200, s.comment_json(c))
                return _send(self, 404, {"message": "Not Found"})
            if cmd == "GET" and match(rf"/repos/{r}/pulls/{n}/reviews"):
                return _paginate(self, s, s.reviews(), query)
            if cmd == "GET" and match(rf"/repos/{r}/pulls/{n}/reviews/(\d+)"):
                found = [x for x in s.reviews() if x["id"] == int(m.group(1))]
                return _send(self, 200, found[0]) if found else _send(self, 404, {"message": "Not Found"})
            if cmd == "GET" and match(rf"/repos/{r}/pulls/{n}/comments"):
                return _paginate(self, s, s.review_comments(), query)
            if cmd == "GET" and match(rf"/repos/{r}/pulls/comments/(\d+)"):
                found = [x for x in s.review_comments() if x["id"] == int(m.group(1))]
                return _send(self, 200, found[0]) if found else _send(self, 404, {"message": "Not Found"})
            if cmd == "GET" and match(rf"/repos/{r}/commits/([0-9a-f]{{40}})/check-suites"):
                pushed = s.push_times.get(m.group(1))
                suites = [] if pushed is None else [{"id": s.new_id(), "head_sha": m.group(1), "status": "completed",
                                                     "app": {"slug": "github-actions"}, "created_at": _iso(pushed)}]
                return _paginate(self, s, suites, query, key="check_suites")
            if cmd == "GET" and match(rf"/repos/{r}/commits/([0-9a-f]{{40}})/check-runs"):
                return _paginate(self, s, s.check_runs(m.group(1)), query, key="check_runs")
            if cmd == "GET" and match(rf"/repos/{r}/actions/runs/(\d+)"):
                run = s.run_json(int(m.group(1)))
                return _send(self, 200, run) if run else _send(self, 404, {"message": "Not Found"})
            if cmd == "GET" and match(rf"/repos/{r}/actions/runs"):
                sha, event = query.get("head_sha", [""])[0], query.get("event", [""])[0]
                runs = [s.run_json(rid) for rid, run in s.bundle.runs.items()
                        if (not sha or run.head_sha == sha) and (not event or run.event == event)]
                return _paginate(self, s, runs, query, key="workflow_runs")
            if cmd == "GET" and match(rf"/repos/{r}/actions/runs/(\d+)/artifacts"):
                rid = int(m.group(1))
                if rid not in s.run_artifacts:
                    return _send(self, 404, {"message": "Not Found"})
                return _paginate(self, s, [s.artifact_json(a) for a in s.run_artifacts[rid]], query, key="artifacts")
            if cmd == "GET" and match(rf"/repos/{r}/actions/artifacts/(\d+)/zip"):
                aid = int(m.group(1))
                if aid not in s.artifacts or s.artifacts[aid][2]:
                    return _send(self, 410, {"message": "Artifact has expired"})
                return _send(self, 302, None, {"Location": f"http://localhost:{s.port}/_blobs/{aid}.zip"})
            if cmd == "GET" and match(rf"/repos/{r}/git/trees/([0-9a-f]{{40}})"):
                listing = s.trees.get(m.group(1))
                if listing is None:
                    return _send(self, 404, {"message": "Not Found"})
                return _send(self, 200, {"sha": m.group(1), "truncated": False, "tree": self._tree(listing)})
            if cmd == "GET" and match(rf"/repos/{r}/git/blobs/([0-9a-f]{{40}})"):
                data = s.blobs.get(m.group(1))
                if data is None:
                    return _send(self, 404, {"message": "Not Found"})
                return _send(self, 200, {"sha": m.group(1), "size": len(data), "encoding": "base64",
                                         "content": base64.encodebytes(data).decode("ascii")})
            if cmd == "GET" and match(rf"/repos/{r}/collaborators"):
                users = [s.collaborator(u) for u in s.bundle.github.permissions]
                return _paginate(self, s, [u for u in users if u], query)
            if cmd == "GET" and match(rf"/repos/{r}/collaborators/([^/]+)/permission"):
                login = urllib.parse.unquote(m.group(1))
                if login in s.permission_answers:
                    status, answer = s.permission_answers[login]
                    return _send(self, status, answer)
                perm = s.bundle.github.permissions.get(login)
                if perm is None:
                    return _send(self, 404, {"message": "Not Found"})
                return _send(self, 200, {"permission": perm.permission, "role_name": perm.role_name,
                                         "user": s.user(login)})
            if cmd == "GET" and match(r"/orgs/([^/]+)/teams/([^/]+)/members"):
                members = s.bundle.github.teams.get(f"{m.group(1)}/{m.group(2)}")
                if members is None:
                    return _send(self, 404, {"message": "Not Found"})
                return _paginate(self, s, [s.user(u) for u in members], query)
            if cmd == "POST" and match(rf"/repos/{r}/statuses/([0-9a-f]{{40}})"):
                s.statuses.append({"sha": m.group(1), **(body or {})})
                return _send(self, 201, {"id": s.new_id(), "state": (body or {}).get("state"),
                                         "context": (body or {}).get("context"), "url": "x",
                                         "creator": s.user(s.login)})
            if cmd == "DELETE" and match(rf"/repos/{r}/issues/comments/(\d+)"):
                with s._lock:
                    before = len(s.comments)
                    s.comments[:] = [c for c in s.comments if c["id"] != int(m.group(1))]
                    gone = len(s.comments) < before
                return _send(self, 204, None) if gone else _send(self, 404, {"message": "Not Found"})
            if cmd == "GET" and self._other_repo(path, query):
                return None
            if cmd == "GET" and match(r"/repos/([^/]+/[^/]+)/pulls/(\d+)"):
                return self._other_pull(m.group(1), int(m.group(2)))
            if cmd == "GET" and match(r"/repos/([^/]+/[^/]+)/pulls/(\d+)/files"):
                found = s.upstream_pr(m.group(1), int(m.group(2)))
                if found is None:
                    return _send(self, 404, {"message": "Not Found"})
                return _paginate(self, s, [{"filename": p, "status": "modified"} for p in found["pr"].files], query)
            return _send(self, 404, {"message": "Not Found"})

        def _review_comment(self, body: Any) -> None:
            """POST /pulls/N/comments: GitHub refuses a line outside the diff hunks at that commit (422)."""
            doc = body if isinstance(body, dict) else {}
            path, line, commit = str(doc.get("path") or ""), doc.get("line"), str(doc.get("commit_id") or "")
            known = {*s.bundle.pr.commits, *s.extra_commits}
            if commit not in known or not isinstance(line, int) or doc.get("side", "RIGHT") != "RIGHT" \
                    or line not in s.diff_lines(path, commit):
                return _send(self, 422, {"message": "Validation Failed", "errors": [
                    {"resource": "PullRequestReviewComment", "code": "custom", "field": "pull_request_review_thread.line",
                     "message": "could not be resolved"}]})
            now = dt.datetime.now(dt.UTC).replace(microsecond=0)
            item = {"id": s.new_id(), "login": s.login, "body": str(doc.get("body") or ""), "association": "NONE",
                    "created_at": now, "updated_at": now, "commit_id": commit, "path": path, "line": line,
                    "side": "RIGHT", "posted": True}
            with s._lock:
                s.extra_review_comments.append(item)
            return _send(self, 201, s.review_comments()[s.extra_review_comments.index(item)])

        def _files(self) -> list[dict[str, Any]]:
            head = s.trees.get(s.bundle.pr.head_sha, {})
            out = []
            for f in s.bundle.pr.files:
                item = {"filename": f.path, "status": f.status, "sha": head.get(f.path, "0" * 40),
                        "additions": 1, "deletions": 0, "changes": 1}
                if f.previous_path:
                    item["previous_filename"] = f.previous_path
                out.append(item)
            return out

        @staticmethod
        def _tree(listing: dict[str, str]) -> list[dict[str, Any]]:
            dirs: set[str] = set()
            for path in listing:
                parts = path.split("/")[:-1]
                for i in range(1, len(parts) + 1):
                    dirs.add("/".join(parts[:i]))
            entries: Iterable[dict[str, Any]] = [
                {"path": d, "mode": "040000", "type": "tree", "sha": hashlib.sha1(d.encode()).hexdigest()} for d in dirs
            ]
            entries = list(entries) + [
                {"path": p, "mode": "100644", "type": "blob", "sha": oid, "size": len(s.blobs[oid])}
                for p, oid in listing.items()
            ]
            return sorted(entries, key=lambda e: e["path"])

        def _other_repo(self, path: str, query: dict[str, list[str]]) -> bool:
            """Answer a read of another repository the stand-in serves (FakeRepo); False: not one."""
            m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
            if not m or m.group(1).lower() not in s.upstream_repos or m.group(1).lower() == s.repo.lower():
                return False
            fake, rest = s.upstream_repos[m.group(1).lower()], urllib.parse.unquote(m.group(2) or "")

            def commit_json(sha: str) -> dict[str, Any]:
                date, parents, _files = fake.commits[sha]
                return {"sha": sha, "commit": {"committer": {"date": date}}, "parents": [{"sha": p} for p in parents]}

            if rest == "":
                _send(self, 200, {"full_name": m.group(1), "default_branch": fake.default_branch})
                return True
            if rest.startswith("/branches/") and rest[10:] in fake.branches:
                _send(self, 200, {"name": rest[10:], "commit": commit_json(fake.branches[rest[10:]])})
                return True
            if rest.startswith("/git/ref/tags/") and rest[14:] in fake.tags:
                _send(self, 200, {"ref": f"refs/tags/{rest[14:]}", "object": {"type": "commit",
                                                                              "sha": fake.tags[rest[14:]]}})
                return True
            if rest.startswith("/commits/") and rest[9:] in fake.commits:
                _send(self, 200, commit_json(rest[9:]))
                return True
            if rest.startswith("/contents/"):
                ref = query.get("ref", [""])[0]
                files = fake.commits[ref][2] if ref in fake.commits else None
                data = files.get(rest[10:]) if files is not None else None
                if data is not None:
                    _send(self, 200, {"type": "file", "path": rest[10:], "sha": git_blob_sha(data), "size": len(data),
                                      "encoding": "base64", "content": base64.encodebytes(data).decode("ascii")})
                    return True
            _send(self, 404, {"message": "Not Found"})
            return True

        def _other_pull(self, repo: str, number: int) -> None:
            if repo.lower() == s.repo.lower() and number in s.pulls_extra:
                extra = s.pulls_extra[number]
                return _send(self, 200, {"number": number, "state": "closed", "merged": True,
                                         "merged_at": "2026-01-01T00:00:00Z",
                                         "merge_commit_sha": extra["merge_commit_sha"],
                                         "html_url": f"https://github.com/{repo}/pull/{number}"})
            found = s.upstream_pr(repo, number)
            if found is None:
                return _send(self, 404, {"message": "Not Found"})
            pr = found["pr"]
            merged = pr.state == "MERGED"
            return _send(self, 200, {"number": number, "state": "open" if pr.state == "OPEN" else "closed",
                                     "merged": merged, "merged_at": _iso(pr.merged_at), "title": pr.title,
                                     "html_url": pr.url, "base": {"ref": pr.base_ref}})

        def do_GET(self) -> None:  # noqa: N802
            self._dispatch()

        def do_POST(self) -> None:  # noqa: N802
            self._dispatch()

        def do_PATCH(self) -> None:  # noqa: N802
            self._dispatch()

        def do_DELETE(self) -> None:  # noqa: N802
            self._dispatch()

    return Handler
