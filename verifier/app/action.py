"""The GitHub Action entry point (`verify-pr action`): judge a sign-off and publish one comment per sign-off.

Reads GITHUB_EVENT_NAME, GITHUB_EVENT_PATH and GITHUB_REPOSITORY (command-line flags override them),
decides what the event asks for, and then, in this order:

1. **Plan** (event payload only): a sign-off to verify, a sign-off *retracted* (deleted, edited so
   it is no longer a sign-off, edited by another account than its author, review dismissed), or
   nothing to do (not a sign-off, a bot, our own comment).
2. **Gate** (GitHub-recorded facts): the PR is read fresh; draft and closed PRs are not verified.
   The requester (the sign-off's author for comment and review events, `sender` for
   workflow_dispatch) needs `permission` and `role_name` from the collaborator permission
   endpoint (policies/github.yaml `signoff`); bots never. A permission that cannot be read stops
   the run as *not verified* (exit 2, no success status). A PR whose changed files are owned only
   by repository admins or the core team needs no sign-off (`scope`): reported as such, no
   verdict comment.
3. **Judge**: collect the PR (PR code is never checked out or run) and run the checks.
4. **Publish** (skipped entirely with --dry-run): a `pending` commit status first, then exactly one
   comment per sign-off (find-then-update on a fresh listing: the newest comment of ours is
   edited, duplicates are deleted), then the final status (success for APPROVED and WARN,
   failure for REJECTED; a retraction sets failure "sign-off retracted").
5. **Head moved** (the PR head is not the commit the verdict assessed: a `synchronize` push, or a
   re-run after one): the verdict is carried forward to the head (same state, "carried forward
   from <sha>") only when every file changed since is a modification of a file the verdict did not
   read and the PR's changed-file list is the same; otherwise it is stale (a line at the top of its
   comment, and the head gets pending, or failure for REJECTED, "verdict is stale: ... re-sign").
6. **Suggestions** (--suggest-fixes, never with --dry-run): findings with a mechanical fix
   (verifier.app.suggestions) on lines the PR adds get a review comment with a ```suggestion
   block, one per line, keyed by a marker so a re-run updates or skips it.

Our comments are recognised by author **and** key: the author is the account the token belongs to
(`--login`, else GET /user, else the `creator` GitHub records on the pending status we just set;
App installation tokens cannot read /user); the marker carries `key=`, an HMAC of the comment body
keyed with `--marker-secret`, so a comment by the same account that merely carries our marker text
(another workflow posting as github-actions[bot]) is never edited.

Always: $GITHUB_STEP_SUMMARY gets a summary that reads on its own, $GITHUB_OUTPUT gets `verdict`,
`comment-url`, `failing-checks`, `status`, `reason`, `pr-number`, `assessed-sha`, `head-moved` and
`suggestions`, every FAIL/WARN evidence item with a
repository file and line becomes an `::error`/`::warning` annotation, `--sarif FILE` writes SARIF.
Exit status: 0 when a verdict was published or the event was skipped, 1 for REJECTED with
--fail-on-reject, 2 when GitHub or the input could not be read (an `::error` with the reason).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import hmac
import json
import os
import posixpath
import re
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from github import GithubException

from verifier.core.errors import GitHubError, UsageError, VerifierError
from verifier.record.github.client import Client, RetryPolicy, to_github_error
from verifier.record.github.scope import Access, Permissions, read_scope, requester_access
from verifier.record.github.signoff import is_bot, looks_like_signoff, marker_regex, parse_signoff_url

MAX_EVENT_BYTES = 25 * 1024 * 1024
STATUS_DESCRIPTION = 140
TITLE = "codeowner-signoff-verify"
SUMMARY_EVIDENCE = 100  # evidence items listed per FAIL/WARN row in the step summary
_KEY_ATTR = re.compile(r" key=([0-9a-f]{32})(?= -->)")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"usage error: {message} (see verify-pr action --help)")


def build_parser() -> argparse.ArgumentParser:
    """Flags of `verify-pr action`."""
    p = _Parser(prog="verify-pr action", description="Verify a CODEOWNER sign-off from a GitHub Actions event.")
    p.add_argument("--repo", help="OWNER/NAME (default: GITHUB_REPOSITORY)")
    p.add_argument("--pr", type=int, help="PR number (default: from the event or the sign-off URL)")
    p.add_argument("--signoff", help="sign-off URL (default: from the event)")
    p.add_argument("--event-name", help="default: GITHUB_EVENT_NAME")
    p.add_argument("--event-path", type=Path, help="default: GITHUB_EVENT_PATH")
    p.add_argument("--api-url", help="default: GITHUB_API_URL or https://api.github.com")
    p.add_argument("--docs-proxy", help="fetch allowlisted pages through URL?url=<encoded original>")
    p.add_argument("--login", help="the account the Action posts as (default: GET /user, else the status creator)")
    p.add_argument("--marker-secret", help="key for the marker HMAC (default: env INPUT_MARKER_SECRET)")
    p.add_argument("--record", type=Path, help="also write the collected bundle to this directory")
    p.add_argument("--sarif", type=Path, help="also write the verdict as SARIF 2.1.0 to this file")
    p.add_argument("--fail-on-reject", action="store_true", help="exit 1 when the verdict is REJECTED")
    p.add_argument("--no-status", action="store_true", help="do not set a commit status")
    p.add_argument("--dry-run", action="store_true", help="judge and summarize; post no comment and no status")
    p.add_argument("--suggest-fixes", action="store_true",
                   help="post review-comment suggestions for findings with a mechanical fix on lines the PR adds")
    return p


# -- plans -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What to verify: the PR, the sign-off URL (None = the newest eligible), and who asked."""

    pr: int
    signoff_url: str | None
    from_event: bool
    author: str | None = None
    requester: str | None = None
    requester_type: str | None = None


@dataclass(frozen=True)
class Skip:
    """The event is not about a sign-off we verify."""

    reason: str


@dataclass(frozen=True)
class Retract:
    """A sign-off stopped being one: its verdict and status must not stand."""

    pr: int
    key: str
    reason: str


def _load_event(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"usage error: cannot read the event file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_EVENT_BYTES:
        raise UsageError(f"usage error: event file {path} is over {MAX_EVENT_BYTES} bytes")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UsageError(f"usage error: event file {path} is not JSON") from None
    return doc if isinstance(doc, dict) else {}


def _get(doc: Any, *keys: str) -> Any:
    cur: Any = doc
    for key in keys:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


_KEY_OF_EVENT = {"issue_comment": "issuecomment-", "pull_request_review": "pullrequestreview-",
                 "pull_request_review_comment": "discussion_r"}


def plan_event(name: str, event: Mapping[str, Any], settings: Mapping[str, Any]) -> Plan | Skip | Retract:
    """Decide from the event payload what to do (GitHub's facts are checked later, in the gate)."""
    phrase, marker = settings["signoff"]["phrase"], settings["signoff"]["marker"]
    action = str(event.get("action") or "")
    sender = str(_get(event, "sender", "login") or "")

    def signoff_item(item: Any, pr: Any) -> Plan | Skip | Retract:
        if not isinstance(item, Mapping) or not isinstance(pr, int) or isinstance(pr, bool):
            return Skip("the event has no comment on a pull request")
        body = str(item.get("body") or "")
        login = str(_get(item, "user", "login") or "")
        key = f"{_KEY_OF_EVENT[name]}{item.get('id')}"
        before = _get(event, "changes", "body", "from")
        if action == "deleted" or action == "dismissed":
            if looks_like_signoff(body, phrase, marker) and not is_bot(login, _get(item, "user", "type")):
                what = "deleted" if action == "deleted" else "dismissed"
                return Retract(pr, key, f"the sign-off {key} by {login} was {what}")
            return Skip(f"a comment that is not a sign-off was {action}")
        if action == "edited" and isinstance(before, str) and looks_like_signoff(before, phrase, marker) \
                and not looks_like_signoff(body, phrase, marker):
            return Retract(pr, key, f"the sign-off {key} was edited so it is no longer a sign-off")
        if not looks_like_signoff(body, phrase, marker):
            return Skip("the comment is not a sign-off")
        if is_bot(login, _get(item, "user", "type")):
            return Skip(f"the comment is by a bot ({login})")
        if action == "edited" and sender and sender != login:
            # GitHub lets other writers edit a comment; the text is then no longer the author's attestation.
            return Retract(pr, key, f"the sign-off {key} by {login} was edited by {sender}, not by its author")
        url = str(item.get("html_url") or "")
        if "#" not in url:
            return Skip("the event does not carry the comment's URL")
        return Plan(pr, url, True, login, login, str(_get(item, "user", "type") or ""))

    if name == "issue_comment":
        if not _get(event, "issue", "pull_request"):
            return Skip("the comment is on an issue, not a pull request")
        return signoff_item(event.get("comment"), _get(event, "issue", "number"))
    if name == "pull_request_review":
        state = str(_get(event, "review", "state") or "").upper()
        if state in settings["signoff"]["ignored_review_states"] and action != "dismissed":
            return Skip("the review is dismissed or pending")
        return signoff_item(event.get("review"), _get(event, "pull_request", "number"))
    if name == "pull_request_review_comment":
        return signoff_item(event.get("comment"), _get(event, "pull_request", "number"))
    if name in ("pull_request", "pull_request_target"):
        number = _get(event, "pull_request", "number") or event.get("number")
        if not isinstance(number, int):
            return Skip("the event has no pull request number")
        return Plan(number, None, False)
    if name == "workflow_dispatch":
        inputs = event.get("inputs") or {}
        url = next((str(inputs[k]) for k in ("signoff_url", "signoff-url", "comment_url", "comment-url")
                    if inputs.get(k)), None)
        number = next((inputs[k] for k in ("pr_number", "pr-number", "pr") if inputs.get(k)), None)
        if url:
            ref = parse_signoff_url(url)
            if number is not None and ref.number is not None and str(ref.number) != str(number).strip():
                raise UsageError(f"usage error: signoff_url is for PR #{ref.number}, pr_number is {number}")
            number = number or ref.number
        if number is None:
            return Skip("workflow_dispatch needs a signoff_url input (or pr_number)")
        try:
            return Plan(int(str(number).strip()), url, False, requester=sender,
                        requester_type=str(_get(event, "sender", "type") or ""))
        except ValueError:
            raise UsageError(f"usage error: pr_number {number!r} is not a number") from None
    return Skip(f"event {name or '(none)'} is not handled")


# -- identity and the keyed marker -------------------------------------------------------------------------


def sign_body(body: str, secret: str | None, repo: str, number: int) -> str:
    """Add `key=<HMAC>` to the marker line (first line) when a secret is configured."""
    if not secret:
        return body
    first, sep, rest = body.partition("\n")
    if not first.endswith(" -->"):
        return body
    digest = _digest(secret, repo, number, body)
    return f"{first[:-4]} key={digest} -->{sep}{rest}"


def _digest(secret: str, repo: str, number: int, unkeyed_body: str) -> str:
    message = f"{repo.lower()}#{number}\n{unkeyed_body}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:32]


def key_is_valid(body: str, secret: str, repo: str, number: int) -> bool:
    """True when the marker's key is the HMAC of this very body (so only a holder of the secret wrote it)."""
    first, sep, rest = body.partition("\n")
    m = _KEY_ATTR.search(first)
    if m is None:
        return False
    unkeyed = first[: m.start()] + first[m.end():] + sep + rest
    return hmac.compare_digest(m.group(1), _digest(secret, repo, number, unkeyed))


@dataclass
class Identity:
    """The account our writes are recorded under, and how we know it."""

    login: str | None
    source: str


def own_identity(client: Client, explicit: str | None) -> Identity:
    """--login, else GET /user (user tokens); None when the token cannot say (App installation tokens)."""
    if explicit:
        return Identity(explicit, "the login input")
    try:
        user = client.get_json("/user")
    except GithubException as exc:
        if exc.status == 401:
            raise to_github_error(exc, "the Action's account") from None
        return Identity(None, f"GET /user answered {exc.status}")
    login = str(user.get("login") or "") if isinstance(user, Mapping) else ""
    return Identity(login or None, "GET /user")


@dataclass(frozen=True)
class OurComment:
    """One comment of ours, from a fresh listing."""

    id: int
    url: str
    body: str


def our_comments(client: Client, repo: str, number: int, key: str, identity: Identity, secret: str | None,
                 marker_prefix: str) -> list[OurComment]:
    """Our comments for one sign-off, oldest first: by our account, with our marker and (with a secret) our key."""
    pattern = marker_regex(key, marker_prefix)
    found = []
    try:
        for c in client.paged(f"/repos/{repo}/issues/{number}/comments"):
            if not isinstance(c, Mapping):
                continue
            body = str(c.get("body") or "")
            if str(_get(c, "user", "login") or "") != identity.login or not pattern.match(body):
                continue
            if secret and not key_is_valid(body, secret, repo, number):
                continue
            found.append(OurComment(int(c["id"]), str(c.get("html_url") or ""), body))
    except GithubException as exc:
        raise to_github_error(exc, f"comments of {repo}#{number}") from None
    return sorted(found, key=lambda c: c.id)


def upsert_comment(client: Client, repo: str, number: int, key: str, identity: Identity, body: str,
                   secret: str | None, marker_prefix: str) -> tuple[str, str]:
    """Edit the newest of our comments for this sign-off (deleting duplicates), or post one."""
    ours = our_comments(client, repo, number, key, identity, secret, marker_prefix) if identity.login else []
    action, url = "posted", ""
    if ours:
        newest = ours[-1]
        for extra in ours[:-1]:
            _delete(client, f"/repos/{repo}/issues/comments/{extra.id}")
        if newest.body == body:
            return ("unchanged" if len(ours) == 1 else "deduplicated"), newest.url
        try:
            data = client.send_json("PATCH", f"/repos/{repo}/issues/comments/{newest.id}", {"body": body})
            return "updated", str(data.get("html_url") or newest.url)
        except GithubException as exc:
            if exc.status != 404:
                raise to_github_error(exc, f"comment {newest.id}") from None
    try:
        data = client.send_json("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
    except GithubException as exc:
        raise to_github_error(exc, f"comments of {repo}#{number}") from None
    url = str(data.get("html_url") or "")
    if identity.login is None:
        identity.login, identity.source = str(_get(data, "user", "login") or "") or None, "the comment we posted"
    return action, url


def _delete(client: Client, path: str) -> None:
    try:
        client.requester.requestJsonAndCheck("DELETE", client.url(path))
    except GithubException as exc:
        if exc.status != 404:
            raise to_github_error(exc, path) from None


def post_status(client: Client, repo: str, sha: str, state: str, description: str, context: str,
                target_url: str = "") -> dict[str, Any]:
    """Set one commit status; returns GitHub's record of it (its `creator` is our account)."""
    body = {"state": state, "context": context, "description": description[:STATUS_DESCRIPTION]}
    if target_url.startswith("https://"):
        body["target_url"] = target_url
    try:
        data = client.send_json("POST", f"/repos/{repo}/statuses/{sha}", body)
    except GithubException as exc:
        raise to_github_error(exc, f"commit status of {sha}") from None
    return data if isinstance(data, dict) else {}


def verdict_status(report: Any) -> tuple[str, str]:
    """(state, description) of the final status: success for APPROVED/WARN, failure for REJECTED."""
    from verifier.core.results import Status
    from verifier.core.runner import Verdict

    failing = [f"{r.id}" for r in report.rows if r.status is Status.FAIL]
    warning = [f"{r.id}" for r in report.rows if r.status is Status.WARN]
    state = "failure" if report.verdict is Verdict.REJECTED else "success"
    description = report.verdict.value
    if failing:
        description += ": check " + ", ".join(failing) + " failed"
    elif warning:
        description += ": check " + ", ".join(warning) + " warned"
    return state, description


# -- what the run reports ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What the run concluded: the `status` output, the one-line reason, and the verdict if any."""

    status: str
    reason: str
    verdict: str = ""
    comment_url: str = ""
    failing: tuple[int, ...] = ()
    summary: list[str] = field(default_factory=list)
    writes: bool = False
    pr: int | None = None
    assessed_sha: str = ""
    head_moved: str = ""  # "", "stale" or "carried-forward"
    suggestions: int = 0


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(report: Any, limit: int) -> list[str]:
    """`::error`/`::warning` workflow commands for FAIL/WARN evidence with a repository file and line."""
    from verifier.core.results import Status
    from verifier.render.markdown import repository_paths
    from verifier.render.sarif import repository_locations
    from verifier.render.text import render_summary

    out = []
    ordered = sorted(report.rows, key=lambda r: (r.status is not Status.FAIL, r.id))
    for row in ordered:
        if row.status not in (Status.FAIL, Status.WARN):
            continue
        command = "error" if row.status is Status.FAIL else "warning"
        title = f"Check {row.id} ({' '.join(row.name.split())}): {row.status.value}"
        message = repository_paths(render_summary(row.id, row.result, "en"), report.bundle)
        for path, line in repository_locations(row, report.bundle):
            if len(out) >= limit:
                return out
            out.append(f"::{command} file={_escape_property(path)},line={line},title={_escape_property(title)}::"
                       f"{_escape_data(message)}")
    return out


def _step_summary(text: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text.rstrip() + "\n")
    except OSError:
        pass


def write_outputs(outcome: Outcome) -> None:
    """The step outputs, in GitHub's multi-line-safe `name<<DELIMITER` form."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    values = {"verdict": outcome.verdict, "comment-url": outcome.comment_url,
              "failing-checks": ",".join(str(i) for i in outcome.failing), "status": outcome.status,
              "reason": outcome.reason, "pr-number": "" if outcome.pr is None else str(outcome.pr),
              "assessed-sha": outcome.assessed_sha, "head-moved": outcome.head_moved,
              "suggestions": str(outcome.suggestions)}
    delimiter = f"EOF_{uuid.uuid4().hex}"
    try:
        with open(path, "a", encoding="utf-8") as fh:
            for name, value in values.items():
                fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    except OSError:
        pass


def _run_url() -> str | None:
    server = os.environ.get("GITHUB_SERVER_URL") or "https://github.com"
    repo, run_id = os.environ.get("GITHUB_REPOSITORY"), os.environ.get("GITHUB_RUN_ID")
    if repo and run_id and run_id.isdigit():
        return f"{server}/{repo}/actions/runs/{run_id}"
    return None


def summary_markdown(report: Any, comment_url: str, status: str, dry_run: bool, notes: Sequence[str] = ()) -> str:
    """A step summary that reads on its own: header, what was assessed, one table row per check, links.
    `notes`: more bullet lines after the header's (the head moved, suggestions)."""
    from verifier.core.results import Status
    from verifier.render.evidence import evidence_markdown
    from verifier.render.markdown import EMOJI, HEADER, clip, repository_paths
    from verifier.render.text import render_summary

    b = report.bundle
    lines = [f"## {TITLE}: {HEADER[report.verdict]}", ""]
    lines.append(f"- Pull request: [{b.pr.repo}#{b.pr.number}]({b.pr.url})")
    lines.append(f"- Sign-off: [{b.signoff.key}]({b.signoff.url}) by `{b.signoff.author}` ({b.signoff.kind})")
    lines.append(f"- Assessed commit: `{b.pr.head_sha}`")
    if dry_run:
        lines.append("- Dry run: nothing was posted; the commit status would be "
                     f"`{status}` and the comment below would be published.")
    else:
        lines.append(f"- Commit status `{TITLE}`: `{status}`")
        if comment_url:
            lines.append(f"- Verdict comment: {comment_url}")
    lines += [f"- {note}" for note in notes]
    lines += ["", "| Check | Status | Summary |", "|---|---|---|"]
    for row in report.rows:
        text = repository_paths(render_summary(row.id, row.result, "en"), b)
        # GitHub caps a step summary at 1 MiB: PASS/N/A cells stay short, FAIL/WARN cells bounded
        text = clip(text, 300 if row.status in (Status.PASS, Status.NA) else 8000)
        cell = text.replace("|", "\\|")
        lines.append(f"| {row.id} {' '.join(row.name.split())} | {EMOJI[row.status]} {row.status.value} | {cell} |")
    bad = [r for r in report.rows if r.status in (Status.FAIL, Status.WARN)]
    for row in bad:
        lines += ["", f"### Check {row.id} ({' '.join(row.name.split())}): {row.status.value} — evidence", ""]
        evidence = row.result.evidence
        lines += [f"- {evidence_markdown(e, b)}" for e in evidence[:SUMMARY_EVIDENCE]]
        if len(evidence) > SUMMARY_EVIDENCE:
            lines.append(f"- … {len(evidence) - SUMMARY_EVIDENCE} more (see `verify-pr --format json`)")
    return "\n".join(lines) + "\n"


# -- the head moved: stale or carried forward ---------------------------------------------------------------

COMPARE_FILE_CAP = 300  # GitHub's compare API lists at most this many files
MAX_LINKS = 20  # symbolic links among the files a verdict read that are followed to their targets

# why a verdict is stale: (English, Chinese), each a clause completing "... after this verdict, and ..."
_STALE_WHY = {
    "read-changed": ("files it read changed ({paths})", "其读取的文件已变更（{paths}）"),
    "added-or-removed": ("the commits since add, remove or rename files ({paths}), which can change what the "
                         "checks find", "之后的提交新增、删除或重命名了文件（{paths}），可能改变检查结果"),
    "file-list-changed": ("the PR's changed-file list changed ({paths})", "本 PR 的变更文件列表已改变（{paths}）"),
    "file-list-unreadable": ("the PR's changed files at the new head could not be read",
                             "无法读取新 head 的变更文件列表"),
    "compare-unreadable": ("the changes since could not be read from GitHub ({detail})",
                           "无法从 GitHub 读取之后的变更（{detail}）"),
    "not-descendant": ("the new head does not descend from the assessed commit (history was rewritten)",
                       "新 head 并非基于已评估的提交（历史已被改写）"),
    "too-many": ("more files changed than GitHub's compare lists ({detail})", "变更文件数超过 GitHub 的列出上限（{detail}）"),
    "read-set-unknown": ("the files it read cannot be established ({detail})", "无法确定其读取的文件（{detail}）"),
}


@dataclass(frozen=True)
class HeadMove:
    """How a verdict on `assessed` stands on the PR's current `head`.

    `why` is "carried-forward" or a key of the stale reasons; `paths` the decisive paths; `changed`
    every path that differs between the two commits (None: unknown); `read` how many files the
    verdict read."""

    assessed: str
    head: str
    why: str
    paths: tuple[str, ...] = ()
    detail: str = ""
    changed: frozenset[str] | None = None
    read: int = 0

    @property
    def carried(self) -> bool:
        """True when the verdict holds for the head as well."""
        return self.why == "carried-forward"


def pr_files(client: Client, repo: str, number: int, cap: int) -> list[Mapping[str, Any]] | None:
    """The PR's changed files as GitHub lists them now (with each file's `patch`); None when the
    listing cannot be read or reaches GitHub's cap (it may then be truncated)."""
    try:
        items = [f for f in client.paged(f"/repos/{repo}/pulls/{number}/files", max_pages=max(1, cap // 100))
                 if isinstance(f, Mapping)]
    except GithubException:
        return None
    return None if len(items) >= cap else items


def _read_set(client: Client, repo: str, bundle: Any) -> tuple[set[str] | None, str]:
    """Every path the verdict read (both trees of the bundle), plus the targets of the symbolic links
    among them at the assessed commit (the bundle holds a link under its own path, with its
    target's bytes); None and why when that cannot be established."""
    read = set(bundle.head.files) | set(bundle.base.files)
    if not read:
        return None, "the verdict's bundle holds no files"
    try:
        tree = client.get_json(f"/repos/{repo}/git/trees/{bundle.pr.head_sha}", {"recursive": 1})
    except GithubException as exc:
        return None, f"the tree of the assessed commit: GitHub answered {exc.status}"
    if not isinstance(tree, Mapping) or tree.get("truncated"):
        return None, "the tree of the assessed commit is truncated"
    links = [e for e in tree.get("tree") or [] if isinstance(e, Mapping) and str(e.get("mode")) == "120000"
             and str(e.get("path")) in bundle.head.files]
    if len(links) > MAX_LINKS:
        return None, f"{len(links)} symbolic links"
    for entry in links:
        try:
            blob = client.get_json(f"/repos/{repo}/git/blobs/{entry.get('sha')}")
            target = base64.b64decode(str(blob.get("content") or "")).decode("utf-8").strip()
        except (GithubException, ValueError, AttributeError):
            return None, f"the target of the symbolic link {entry.get('path')}"
        if target.startswith("/"):
            return None, f"the symbolic link {entry.get('path')} leaves the repository"
        read.add(posixpath.normpath(posixpath.join(posixpath.dirname(str(entry["path"])), target)))
    return read, ""


def assess_head_move(client: Client, repo: str, bundle: Any, head: str,
                     files_at_head: Sequence[Mapping[str, Any]] | None) -> HeadMove:
    """Carried forward when the files the verdict read are byte-identical at `head` and nothing it
    could have looked for appeared or vanished; stale otherwise, or whenever that cannot be known.

    Sound approximation: the commits since the assessed one (GitHub's compare, which must show the
    head descending from it) may only *modify* files, none of them one the verdict read (the
    bundle's trees, symbolic links followed), and the PR's changed-file list must be the same (a
    path entering the diff is one Check 0 must find an owner for and the scanners must read)."""
    assessed = bundle.pr.head_sha

    def stale(why: str, paths: Sequence[str] = (), detail: str = "", changed: frozenset[str] | None = None,
              read: int = 0) -> HeadMove:
        return HeadMove(assessed, head, why, tuple(paths), detail, changed, read)

    try:
        doc = client.get_json(f"/repos/{repo}/compare/{assessed}...{head}")
    except GithubException as exc:
        return stale("compare-unreadable", detail=f"GitHub answered {exc.status}")
    files = doc.get("files") if isinstance(doc, Mapping) else None
    if not isinstance(doc, Mapping) or doc.get("status") not in ("ahead", "identical"):
        return stale("not-descendant")
    if not isinstance(files, list) or len(files) >= COMPARE_FILE_CAP:
        return stale("too-many", detail=f"{len(files) if isinstance(files, list) else 'no'} files listed")
    entries = [f for f in files if isinstance(f, Mapping)]
    changed = frozenset(str(f.get(k)) for f in entries for k in ("filename", "previous_filename") if f.get(k))
    read, why_unknown = _read_set(client, repo, bundle)
    if read is None:
        return stale("read-set-unknown", detail=why_unknown, changed=changed)
    hit = sorted(changed & read)
    if hit:
        return stale("read-changed", hit, changed=changed, read=len(read))
    moved = sorted(str(f.get("filename")) for f in entries if f.get("status") != "modified")
    if moved:
        return stale("added-or-removed", moved, changed=changed, read=len(read))
    if files_at_head is None:
        return stale("file-list-unreadable", changed=changed, read=len(read))
    then = {(f.path, f.previous_path) for f in bundle.pr.files}
    now = {(str(f.get("filename")), str(f["previous_filename"]) if f.get("previous_filename") else None)
           for f in files_at_head}
    if then != now:
        differ = sorted({p for pair in then ^ now for p in pair if p})
        return stale("file-list-changed", differ, changed=changed, read=len(read))
    return HeadMove(assessed, head, "carried-forward", tuple(sorted(changed)), changed=changed, read=len(read))


def _paths(paths: Sequence[str], lang: str, limit: int = 3) -> str:
    from verifier.app.suggestions import code_span

    shown = [code_span(p) for p in paths[:limit]]
    more = len(paths) - len(shown)
    if lang == "en":
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    return "、".join(shown) + (f" 等 {len(paths)} 个" if more > 0 else "")


def head_move_status(move: HeadMove, state: str, description: str) -> tuple[str, str]:
    """(state, description) of the commit status on the moved head."""
    if move.carried:
        return state, f"carried forward from {move.assessed[:12]} (no file it read changed): {description}"
    return ("failure" if state == "failure" else "pending"), \
        f"verdict is stale: head moved from {move.assessed[:12]} to {move.head[:12]}; re-sign"


def head_move_banner(move: HeadMove, state: str, context: str) -> str:
    """The lines at the top of the verdict comment, English then Chinese, saying how it stands on the head."""
    x, y, xs, ys = move.assessed, move.head, move.assessed[:12], move.head[:12]
    head_state = head_move_status(move, state, "")[0]
    if move.carried:
        n = len(move.paths)
        since_en = (f"The {n} file{'s' if n != 1 else ''} changed since ({_paths(move.paths, 'en')}) existed before "
                    f"and {'are' if n != 1 else 'is'} none of the {move.read} files this verdict read") if n else \
            "The commits since change no file"
        since_zh = (f"此后变更的 {n} 个文件（{_paths(move.paths, 'zh')}）此前已存在，均不在此结论读取的 {move.read} "
                    "个文件之中") if n else "此后的提交未变更任何文件"
        return (f"> ℹ️ **Verdict carried forward to `{ys}`.** The PR head moved from `{x}` to `{y}` after this "
                f"verdict. {since_en}, and the PR's changed-file list is the same, so the verdict holds for "
                f"`{ys}` too: its commit "
                f"status `{context}` is `{head_state}`, carried forward from `{xs}`.\n>\n"
                f"> ℹ️ **结论已沿用至 `{ys}`。** 此结论之后 PR head 已从 `{x}` 移至 `{y}`。{since_zh}，且 PR 的变更"
                f"文件列表未变，因此结论同样适用于 `{ys}`：其状态 `{context}` 为 `{head_state}`，沿用自 `{xs}`。")
    en, zh = _STALE_WHY[move.why]
    words_en = {"paths": _paths(move.paths, "en"), "detail": move.detail}
    words_zh = {"paths": _paths(move.paths, "zh"), "detail": move.detail}
    return (f"> ⚠️ **Stale verdict.** The PR head moved from `{x}` to `{y}` after this verdict, and "
            f"{en.format(**words_en)}. This verdict covers `{xs}` only; commit status `{context}` on `{ys}` is "
            f"`{head_state}` until a CODEOWNER signs off again.\n>\n"
            f"> ⚠️ **结论已过期。** 此结论之后 PR head 已从 `{x}` 移至 `{y}`，且{zh.format(**words_zh)}。"
            f"此结论仅适用于 `{xs}`；在 CODEOWNER 重新签核之前，`{ys}` 上的状态 `{context}` 为 `{head_state}`。")


def with_banner(body: str, banner: str) -> str:
    """The comment body with `banner` right below its marker line."""
    if not banner:
        return body
    first, sep, rest = body.partition("\n")
    return f"{first}\n{banner}\n\n{rest}" if sep else f"{body}\n{banner}\n"


# -- suggestions ------------------------------------------------------------------------------------------


def diff_lines_for_suggestions(files_at_head: Sequence[Mapping[str, Any]] | None,
                               move: HeadMove | None) -> dict[str, frozenset[int]]:
    """Repository path -> head lines the PR adds, for the files whose bytes are the assessed ones
    (all of them when the verdict assessed the head; else those the commits since left alone)."""
    from verifier.app.suggestions import added_lines

    if files_at_head is None or (move is not None and move.changed is None):
        return {}
    touched = frozenset() if move is None else move.changed or frozenset()
    return {str(f.get("filename")): added_lines(str(f["patch"])) for f in files_at_head
            if isinstance(f.get("patch"), str) and str(f.get("filename")) not in touched}


@dataclass
class SuggestionsDone:
    """What publishing suggestions did."""

    posted: int = 0
    updated: int = 0
    unchanged: int = 0
    refused: int = 0

    @property
    def present(self) -> int:
        """Suggestions of this verdict now on the PR."""
        return self.posted + self.updated + self.unchanged


def publish_suggestions(client: Client, repo: str, number: int, commit: str, identity: Identity,
                        suggestions: Sequence[Any], secret: str | None, marker_prefix: str) -> SuggestionsDone:
    """Post each suggestion as a review comment on `commit`, unless one of ours with its key exists
    (then it is edited when its text changed, else left alone). GitHub refusing one (422: the line is
    not in the diff) skips it."""
    done = SuggestionsDone()
    prefix = f"{marker_prefix}-fix fix="
    ours: dict[str, tuple[int, str]] = {}
    for c in client.paged(f"/repos/{repo}/pulls/{number}/comments"):
        body = str(c.get("body") or "") if isinstance(c, Mapping) else ""
        if not body.startswith(prefix) or str(_get(c, "user", "login") or "") != identity.login:
            continue
        if secret and not key_is_valid(body, secret, repo, number):
            continue
        ours.setdefault(body[len(prefix):len(prefix) + 16], (int(c["id"]), body))
    for item in suggestions:
        body = sign_body(item.body(marker_prefix), secret, repo, number)
        if item.key in ours:
            cid, old = ours[item.key]
            if old == body:
                done.unchanged += 1
                continue
            client.send_json("PATCH", f"/repos/{repo}/pulls/comments/{cid}", {"body": body})
            done.updated += 1
            continue
        try:
            client.send_json("POST", f"/repos/{repo}/pulls/{number}/comments",
                             {"body": body, "commit_id": commit, "path": item.path, "line": item.line,
                              "side": "RIGHT"})
        except GithubException as exc:
            if exc.status != 422:
                raise
            done.refused += 1
            continue
        done.posted += 1
    return done


# -- the run ------------------------------------------------------------------------------------------------


@dataclass
class Context:
    """Everything one run shares."""

    args: argparse.Namespace
    settings: Mapping[str, Any]
    repo: str
    writer: Client
    permissions: Permissions
    secret: str | None

    @property
    def context_name(self) -> str:
        return str(self.settings["action"]["status_context"])

    @property
    def publishing(self) -> bool:
        return not self.args.dry_run


def _pull(ctx: Context, number: int) -> dict[str, Any]:
    try:
        data = ctx.writer.get_json(f"/repos/{ctx.repo}/pulls/{number}")
    except GithubException as exc:
        raise to_github_error(exc, f"pull request {ctx.repo}#{number}") from None
    if not isinstance(data, dict) or not isinstance(_get(data, "head", "sha"), str):
        raise GitHubError(f"pull request {ctx.repo}#{number}: GitHub's answer has no head commit")
    return data


def _not_ready(pull: Mapping[str, Any]) -> str | None:
    number = pull.get("number")
    if pull.get("state") == "closed" or pull.get("merged"):
        return f"PR #{number} is closed; closed pull requests are not verified"
    if pull.get("draft"):
        return f"PR #{number} is a draft; draft pull requests are not verified"
    return None


def _retract(ctx: Context, plan: Retract, pull: Mapping[str, Any]) -> Outcome:
    head = str(_get(pull, "head", "sha"))
    identity = own_identity(ctx.writer, ctx.args.login)
    if identity.login is None:
        # An App token cannot read /user and a reset must find our comment before it writes anything.
        identity = Identity(str(ctx.settings["action"]["default_login"]), "the policy's default_login")
    marker = str(ctx.settings["signoff"]["marker"])
    ours = our_comments(ctx.writer, ctx.repo, plan.pr, plan.key, identity, ctx.secret, marker)
    if not ours:
        # Without a verdict of ours for it, the sign-off never set a status: nothing to reset.
        return Outcome("skipped", f"{plan.reason}; it has no verdict of ours, nothing to reset")
    description = f"sign-off retracted: {plan.reason}"
    body = sign_body(
        f"{marker} signoff={plan.key} sha={head} -->\n## ⛔ **Sign-off retracted** ⛔\n\n"
        f"{plan.reason.capitalize()}. The earlier verdict for this sign-off no longer stands; "
        f"commit status `{ctx.context_name}` on `{head}` is `failure` until a sign-off is verified again.\n\n"
        f"<details>\n<summary>中文</summary>\n\n**签核已撤回**：此签核之前的结论不再有效；在重新验证签核之前，"
        f"提交 `{head}` 上的状态 `{ctx.context_name}` 为 `failure`。\n\n</details>\n",
        ctx.secret, ctx.repo, plan.pr)
    outcome = Outcome("retracted", description, summary=[f"## {TITLE}: sign-off retracted", "", description])
    if not ctx.publishing:
        outcome.summary.append("\nDry run: the status and the comment were not changed.")
        return outcome
    outcome.writes = True
    if not ctx.args.no_status:
        post_status(ctx.writer, ctx.repo, head, "failure", description, ctx.context_name)
    if ours:
        newest = ours[-1]
        for extra in ours[:-1]:
            _delete(ctx.writer, f"/repos/{ctx.repo}/issues/comments/{extra.id}")
        if newest.body != body:
            try:
                ctx.writer.send_json("PATCH", f"/repos/{ctx.repo}/issues/comments/{newest.id}", {"body": body})
            except GithubException as exc:
                if exc.status != 404:
                    raise to_github_error(exc, f"comment {newest.id}") from None
        outcome.comment_url = newest.url
    return outcome


def _gate_requester(ctx: Context, login: str | None, user_type: str | None, role: str) -> Outcome | None:
    """None when the account may start a verification; else the outcome that stops the run."""
    access, why = requester_access(login or "", user_type, ctx.permissions, ctx.settings)
    if access is Access.ALLOWED:
        return None
    if access is Access.DENIED:
        return Outcome("skipped", f"the {role} may not start a verification: {why}")
    raise GitHubError(f"not verified: the {role}'s access could not be established: {why}")


def _publish_suggestions(client: Client, repo: str, number: int, head: str, identity: Identity,
                         suggestions: Sequence[Any], secret: str | None, marker: str, outcome: Outcome) -> str:
    """Publish the suggestions after the verdict; a failure here is a warning, never the verdict's."""
    try:
        done = publish_suggestions(client, repo, number, head, identity, suggestions, secret, marker)
    except (GithubException, VerifierError) as exc:
        why = exc.one_line() if isinstance(exc, VerifierError) else f"GitHub answered {exc.status}"
        print(f"::warning title={TITLE}::suggestions were not posted: {_escape_data(why)}")
        return f"Suggestions were not posted: {why}"
    outcome.suggestions = done.present
    return (f"Suggestions: {done.posted} posted, {done.updated} updated, {done.unchanged} already present"
            + (f", {done.refused} refused by GitHub" if done.refused else ""))


def run(args: argparse.Namespace) -> Outcome:
    """The Action, after argument parsing."""
    from checks import ALL_CHECKS, judge
    from verifier.core.policy import load_policies
    from verifier.record.github.collect import collect_bundle
    from verifier.render.markdown import render_markdown

    policies = load_policies()
    settings = policies["github"]
    repo = args.repo or os.environ.get("GITHUB_REPOSITORY") or ""
    if not repo:
        raise UsageError("usage error: no repository (set GITHUB_REPOSITORY or --repo)")
    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or None
    if not token:
        raise GitHubError("no token: set GITHUB_TOKEN or GH_TOKEN")
    api_url = args.api_url or os.environ.get("GITHUB_API_URL") or None
    event_name = args.event_name or os.environ.get("GITHUB_EVENT_NAME") or ""
    event_path = args.event_path or (Path(os.environ["GITHUB_EVENT_PATH"]) if os.environ.get("GITHUB_EVENT_PATH") else None)
    secret = args.marker_secret or os.environ.get("INPUT_MARKER_SECRET") or None
    event = _load_event(event_path)

    if args.signoff or args.pr:
        number = args.pr
        if args.signoff:
            ref = parse_signoff_url(args.signoff)
            number = number or ref.number
        if number is None:
            raise UsageError("usage error: --signoff URL names no PR; add --pr")
        requester = str(_get(event, "sender", "login") or "") if event_name == "workflow_dispatch" else None
        plan: Plan | Skip | Retract = Plan(int(number), args.signoff, False, requester=requester,
                                           requester_type=str(_get(event, "sender", "type") or ""))
    else:
        plan = plan_event(event_name, event, settings)
    if isinstance(plan, Skip):
        return Outcome("skipped", plan.reason)

    writer = Client(
        token, api_url, retry=RetryPolicy.from_policy(settings["retry"]),
        seconds_between_requests=float(settings["throttle"]["seconds_between_requests"]),
        seconds_between_writes=float(settings["throttle"]["seconds_between_writes"]),
    )
    ctx = Context(args, settings, repo, writer, Permissions(writer, repo), secret)
    pending_set = False
    head = ""
    try:
        pull = _pull(ctx, plan.pr)
        head = str(_get(pull, "head", "sha"))
        not_ready = _not_ready(pull)
        if not_ready:
            return Outcome("skipped", not_ready)
        if isinstance(plan, Retract):
            return _retract(ctx, plan, pull)
        if plan.requester is not None:
            role = "sign-off author" if plan.from_event else "requester (the account that started the run)"
            stop = _gate_requester(ctx, plan.requester, plan.requester_type, role)
            if stop is not None:
                return stop
        scope = read_scope(writer, repo, pull, ctx.permissions, settings)
        if not scope.needed:
            outcome = Outcome("no-signoff-needed", f"no CODEOWNER sign-off needed: {scope.reason}")
            outcome.summary = [f"## {TITLE}: no sign-off needed", "", f"PR #{plan.pr}: {scope.reason}. "
                               "No verdict comment is posted."]
            if ctx.publishing and not args.no_status:
                outcome.writes = True
                post_status(writer, repo, head, "success", outcome.reason, ctx.context_name)
            return outcome

        identity = own_identity(writer, args.login)
        if ctx.publishing and not args.no_status:
            record = post_status(writer, repo, head, "pending",
                                 str(settings["publish"]["pending_description"]), ctx.context_name)
            pending_set = True
            creator = str(_get(record, "creator", "login") or "")
            if identity.login is None and creator:
                identity = Identity(creator, "the creator of our pending status")

        try:
            bundle, stats = collect_bundle(
                repo, plan.pr, signoff_url=plan.signoff_url, token=token, api_url=api_url,
                docs_proxy=args.docs_proxy, progress=None, policies=policies,
            )
        except GitHubError as exc:
            if plan.signoff_url is not None or not exc.one_line().startswith("no sign-off"):
                raise
            outcome = Outcome("awaiting-signoff", f"a CODEOWNER sign-off is required: {exc.one_line()}")
            if pending_set:
                post_status(writer, repo, head, "failure", "a CODEOWNER sign-off is required", ctx.context_name)
            return outcome
        signer = _gate_requester(ctx, bundle.signoff.author, "Bot" if is_bot(bundle.signoff.author) else None,
                                 "sign-off author")
        if signer is not None:
            if pending_set:
                post_status(writer, repo, head, "failure", f"not verified: {signer.reason}", ctx.context_name)
            signer.status = "not-verified"
            return signer
        if args.record:
            from verifier.record.github.record import write_bundle

            write_bundle(bundle, args.record)
        report = judge(bundle, policies, ALL_CHECKS, resolved=stats.resolved)
        state, description = verdict_status(report)
        assessed = bundle.pr.head_sha
        cap = int(settings["scope"]["max_files"])
        files_at_head = pr_files(writer, repo, plan.pr, cap) if head != assessed or args.suggest_fixes else None
        move = assess_head_move(writer, repo, bundle, head, files_at_head) if head != assessed else None
        banner = head_move_banner(move, state, ctx.context_name) if move else ""
        run_url = _run_url()
        full = f"[the job summary of run {run_url.rsplit('/', 1)[-1]}]({run_url})" if run_url else None
        limit = int(settings["publish"]["comment_max_chars"]) - 64 - len(banner)
        body = sign_body(with_banner(render_markdown(report, max_chars=limit, full_verdict=full), banner),
                         secret, repo, plan.pr)
        from verifier.core.results import Status

        failing = tuple(r.id for r in report.rows if r.status is Status.FAIL)
        outcome = Outcome(state, f"{report.verdict.value} for {bundle.signoff.key} at {assessed}",
                          verdict=report.verdict.value, failing=failing, pr=plan.pr, assessed_sha=assessed,
                          head_moved="" if move is None else "carried-forward" if move.carried else "stale")
        notes: list[str] = []
        if move is not None:
            head_state, head_description = head_move_status(move, state, description)
            verdict_there = "the verdict is carried forward" if move.carried else "the verdict is stale"
            notes.append(f"Head moved to `{head}`: {verdict_there} (commit status `{head_state}` "
                         f"\"{head_description}\")")
            outcome.reason += f"; {head_description}"
        suggestions: list[Any] = []
        if args.suggest_fixes:
            from verifier.app.suggestions import plan_suggestions

            suggestions = plan_suggestions(report, policies, diff_lines_for_suggestions(files_at_head, move))
        if args.sarif:
            from verifier.render.sarif import render_sarif

            args.sarif.write_text(render_sarif(report), encoding="utf-8")
        for line in annotations(report, int(settings["publish"]["max_annotations"])):
            print(line)
        action = "not posted (dry run)"
        if ctx.publishing:
            outcome.writes = True
            if identity.login is None:
                identity = Identity(str(settings["action"]["default_login"]), "the policy's default_login")
                print(f"::warning title={TITLE}::the token's account could not be read; assuming "
                      f"{identity.login} (set the login input)")
            if not secret:
                print(f"::warning title={TITLE}::no marker-secret: comments are recognised by account only")
            marker = str(settings["signoff"]["marker"])
            action, outcome.comment_url = upsert_comment(writer, repo, plan.pr, bundle.signoff.key, identity, body,
                                                         secret, marker)
            if not args.no_status:
                post_status(writer, repo, assessed, state, description, ctx.context_name, outcome.comment_url)
                if move is not None:
                    # the pending status went on the current head: the verdict is carried there or stale
                    post_status(writer, repo, head, *head_move_status(move, state, description), ctx.context_name,
                                outcome.comment_url)
            if suggestions:
                notes.append(_publish_suggestions(writer, repo, plan.pr, head, identity, suggestions, secret, marker,
                                                  outcome))
        elif suggestions:
            from verifier.app.suggestions import code_span

            notes.append(f"Dry run: {len(suggestions)} suggestion(s) would be posted: "
                         + ", ".join(code_span(f"{s.path}:{s.line}") for s in suggestions))
        outcome.summary = [summary_markdown(report, outcome.comment_url, state, not ctx.publishing, notes)]
        print(f"{TITLE}: {report.verdict.value} for {bundle.signoff.key} at {assessed} "
              f"(comment {action}; {stats.requests + writer.stats.requests} API requests)")
        return outcome
    except Exception as exc:
        if pending_set and head:
            # a run that could not finish never leaves a pending (let alone a success) status behind
            why = exc.one_line() if isinstance(exc, VerifierError) else f"internal error: {type(exc).__name__}"
            with contextlib.suppress(Exception):
                post_status(writer, repo, head, "error", f"not verified: {why}", ctx.context_name)
        raise
    finally:
        writer.close()


def _finish(outcome: Outcome, args: argparse.Namespace) -> int:
    if outcome.status in ("skipped", "no-signoff-needed", "awaiting-signoff", "retracted", "not-verified"):
        level = "warning" if outcome.status in ("retracted", "not-verified", "awaiting-signoff") else "notice"
        print(f"::{level} title={TITLE}::{outcome.status}: {_escape_data(outcome.reason)}")
    _step_summary("\n".join(outcome.summary) if outcome.summary else f"## {TITLE}: {outcome.status}\n\n{outcome.reason}")
    write_outputs(outcome)
    return 1 if args.fail_on_reject and outcome.verdict == "REJECTED" else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (errors: one `::error` line on stdout and one line on stderr, exit 2)."""
    try:
        args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse has printed its usage line
        return 2 if exc.code else 0
    return execute(args)


def execute(args: argparse.Namespace) -> int:
    """Run the Action on parsed options and return the documented exit status: 0 (a verdict or a
    skipped event; 1 for REJECTED with --fail-on-reject), 2 when nothing could be verified. The
    outputs, the step summary and the annotations are written on every path, an error included."""
    try:
        return _finish(run(args), args)
    except VerifierError as exc:
        reason = exc.one_line()
    except KeyboardInterrupt:
        reason = "interrupted"
    except Exception as exc:  # a bug: still one line and exit 2, never a traceback that hides the status
        reason = f"internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    print(f"::error title={TITLE} failed::{_escape_data(reason)}")
    print(f"verify-pr action: {reason}", file=sys.stderr)
    write_outputs(Outcome("error", reason))
    _step_summary(f"## {TITLE}: not verified\n\n{reason}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
