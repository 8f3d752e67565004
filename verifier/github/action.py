"""The GitHub Action entry point (`verify-pr action`): judge a sign-off and publish one comment per sign-off.

Reads GITHUB_EVENT_NAME, GITHUB_EVENT_PATH and GITHUB_REPOSITORY (command-line flags override them),
decides which sign-off the event is about, collects the PR with verifier.github.collect (PR code is
never checked out or run), judges it, and then:

* upserts exactly one comment per sign-off: the last comment by the Action's own account whose body
  starts with `<!-- codeowner-signoff-verify signoff=<KEY> ...` is edited in place (only when the
  text changed); without one, a new comment is posted;
* sets commit status `codeowner-signoff-verify` on the assessed SHA: success for APPROVED and WARN,
  failure for REJECTED;
* appends the verdict to $GITHUB_STEP_SUMMARY.

Events: issue_comment, pull_request_review, pull_request_review_comment (a body with the sign-off
phrase, not a bot, not our marker; the author needs write access), pull_request /
pull_request_target (re-verify the newest eligible sign-off), workflow_dispatch (input
`signoff_url`, optional `pr_number`). Exit status: 0 when a verdict was published or the event was
skipped, 1 for REJECTED with --fail-on-reject, 2 when GitHub or the input could not be read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from github import GithubException

from verifier.errors import GitHubError, UsageError, VerifierError
from verifier.github.client import Client, RetryPolicy, to_github_error
from verifier.github.signoff import is_bot, looks_like_signoff, marker_regex, parse_signoff_url

MAX_EVENT_BYTES = 25 * 1024 * 1024
STATUS_DESCRIPTION = 140


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
    p.add_argument("--login", help="the account the Action posts as (default: GET /user, else github-actions[bot])")
    p.add_argument("--record", type=Path, help="also write the collected bundle to this directory")
    p.add_argument("--fail-on-reject", action="store_true", help="exit 1 when the verdict is REJECTED")
    p.add_argument("--no-status", action="store_true", help="do not set a commit status")
    return p


@dataclass(frozen=True)
class Plan:
    """What to verify: the PR, the sign-off URL (None = the newest eligible), and whether an event named it."""

    pr: int
    signoff_url: str | None
    from_event: bool
    author: str | None = None


@dataclass(frozen=True)
class Skip:
    """The event is not about a sign-off we verify."""

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


def _get(doc: Mapping[str, Any], *keys: str) -> Any:
    cur: Any = doc
    for key in keys:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(key)
    return cur


def plan_event(name: str, event: Mapping[str, Any], settings: Mapping[str, Any]) -> Plan | Skip:
    """Decide from the event which sign-off to verify."""
    phrase, marker = settings["signoff"]["phrase"], settings["signoff"]["marker"]

    def signoff_item(item: Any, pr: Any, url_key: str = "html_url") -> Plan | Skip:
        if not isinstance(item, Mapping) or not isinstance(pr, int):
            return Skip("the event has no comment on a pull request")
        body = str(item.get("body") or "")
        login = str(_get(item, "user", "login") or "")
        if not looks_like_signoff(body, phrase, marker):
            return Skip("the comment is not a sign-off")
        if is_bot(login, _get(item, "user", "type")):
            return Skip(f"the comment is by a bot ({login})")
        url = str(item.get(url_key) or "")
        if "#" not in url:
            return Skip("the event does not carry the comment's URL")
        return Plan(pr, url, True, login)

    if name == "issue_comment":
        if not _get(event, "issue", "pull_request"):
            return Skip("the comment is on an issue, not a pull request")
        if event.get("action") == "deleted":
            return Skip("the comment was deleted")
        if _closed_or_draft(event.get("issue")):
            return Skip("the pull request is closed or a draft")
        return signoff_item(event.get("comment"), _get(event, "issue", "number"))
    if name == "pull_request_review":
        if str(_get(event, "review", "state") or "").upper() in settings["signoff"]["ignored_review_states"]:
            return Skip("the review is dismissed or pending")
        if _closed_or_draft(event.get("pull_request")):
            return Skip("the pull request is closed or a draft")
        return signoff_item(event.get("review"), _get(event, "pull_request", "number"))
    if name == "pull_request_review_comment":
        if event.get("action") == "deleted":
            return Skip("the comment was deleted")
        if _closed_or_draft(event.get("pull_request")):
            return Skip("the pull request is closed or a draft")
        return signoff_item(event.get("comment"), _get(event, "pull_request", "number"))
    if name in ("pull_request", "pull_request_target"):
        number = _get(event, "pull_request", "number") or event.get("number")
        if not isinstance(number, int):
            return Skip("the event has no pull request number")
        if _closed_or_draft(event.get("pull_request")):
            return Skip("the pull request is closed or a draft")
        return Plan(number, None, False)
    if name == "workflow_dispatch":
        inputs = event.get("inputs") or {}
        url = next((str(inputs[k]) for k in ("signoff_url", "signoff-url", "comment_url", "comment-url")
                    if inputs.get(k)), None)
        number = next((inputs[k] for k in ("pr_number", "pr-number", "pr") if inputs.get(k)), None)
        if url:
            ref = parse_signoff_url(url)
            number = number or ref.number
        if number is None:
            return Skip("workflow_dispatch needs a signoff_url input (or pr_number)")
        try:
            return Plan(int(number), url, False)
        except ValueError:
            raise UsageError(f"usage error: pr_number {number!r} is not a number") from None
    return Skip(f"event {name or '(none)'} is not handled")


def _closed_or_draft(pr: Any) -> bool:
    if not isinstance(pr, Mapping):
        return False
    return pr.get("state") == "closed" or bool(pr.get("draft"))


def _own_login(client: Client, explicit: str | None, default: str) -> str:
    if explicit:
        return explicit
    try:
        user = client.get_json("/user")
        login = str(user.get("login") or "")
        if login:
            return login
    except GithubException as exc:
        if exc.status == 401:
            raise to_github_error(exc, "the Action's account") from None
    return default


def _author_may_sign(client: Client, repo: str, login: str, settings: Mapping[str, Any]) -> bool | None:
    """True/False when the author's permission is readable, None when it is not."""
    try:
        data = client.get_json(f"/repos/{repo}/collaborators/{login}/permission")
    except GithubException as exc:
        if exc.status in (403, 404):
            return None
        raise to_github_error(exc, f"permission of {login}") from None
    permission = str(data.get("permission") or "none")
    role = str(data.get("role_name") or permission)
    return permission in settings["signoff"]["permissions"] and role in settings["signoff"]["roles"]


def upsert_comment(client: Client, repo: str, number: int, bundle: Any, login: str, body: str) -> tuple[str, str]:
    """Edit our comment for this sign-off in place, or post one. Returns (action, comment URL)."""
    pattern = marker_regex(bundle.signoff.key)
    ours = [c for c in bundle.comments if c.author == login and pattern.match(c.body)]
    if ours:
        last = ours[-1]
        if last.body == body:
            return "unchanged", last.url
        try:
            data = client.send_json("PATCH", f"/repos/{repo}/issues/comments/{last.id}", {"body": body})
            return "updated", str(data.get("html_url") or last.url)
        except GithubException as exc:
            if exc.status != 404:
                raise to_github_error(exc, f"comment {last.id}") from None
    try:
        data = client.send_json("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body})
    except GithubException as exc:
        raise to_github_error(exc, f"comments of {repo}#{number}") from None
    return "posted", str(data.get("html_url") or "")


def set_status(client: Client, repo: str, sha: str, report: Any, context: str, target_url: str) -> None:
    """Commit status on the assessed SHA: success for APPROVED/WARN, failure for REJECTED."""
    from verifier.results import Status
    from verifier.runner import Verdict

    failing = [f"{r.id}" for r in report.rows if r.status is Status.FAIL]
    warning = [f"{r.id}" for r in report.rows if r.status is Status.WARN]
    state = "failure" if report.verdict is Verdict.REJECTED else "success"
    description = report.verdict.value
    if failing:
        description += ": check " + ", ".join(failing) + " failed"
    elif warning:
        description += ": check " + ", ".join(warning) + " warned"
    body = {"state": state, "context": context, "description": description[:STATUS_DESCRIPTION]}
    if target_url.startswith("https://"):
        body["target_url"] = target_url
    try:
        client.send_json("POST", f"/repos/{repo}/statuses/{sha}", body)
    except GithubException as exc:
        raise to_github_error(exc, f"commit status of {sha}") from None


def _summary(text: str) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text.rstrip() + "\n")
    except OSError:
        pass


def run(args: argparse.Namespace) -> int:
    """The Action, after argument parsing."""
    from checks import ALL_CHECKS
    from verifier.github.collect import collect_bundle
    from verifier.policy import load_policies
    from verifier.render.markdown import render_markdown
    from verifier.runner import Verdict, run_checks

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

    if args.signoff or args.pr:
        number = args.pr
        if args.signoff:
            ref = parse_signoff_url(args.signoff)
            number = number or ref.number
        if number is None:
            raise UsageError("usage error: --signoff URL names no PR; add --pr")
        plan: Plan | Skip = Plan(int(number), args.signoff, False)
    else:
        plan = plan_event(event_name, _load_event(event_path), settings)
    if isinstance(plan, Skip):
        print(f"::notice title=codeowner-signoff-verify::skipped: {plan.reason}")
        _summary(f"codeowner-signoff-verify skipped: {plan.reason}")
        return 0

    writer = Client(
        token, api_url, retry=RetryPolicy.from_policy(settings["retry"]),
        seconds_between_requests=float(settings["throttle"]["seconds_between_requests"]),
        seconds_between_writes=float(settings["throttle"]["seconds_between_writes"]),
    )
    try:
        if plan.from_event and plan.author:
            allowed = _author_may_sign(writer, repo, plan.author, settings)
            if allowed is False:
                reason = f"{plan.author} has no write access; sign-off not verified"
                print(f"::notice title=codeowner-signoff-verify::skipped: {reason}")
                _summary(f"codeowner-signoff-verify skipped: {reason}")
                return 0
        bundle, stats = collect_bundle(
            repo, plan.pr, signoff_url=plan.signoff_url, token=token, api_url=api_url,
            docs_proxy=args.docs_proxy, progress=None, policies=policies,
        )
        if args.record:
            from verifier.github.record import write_bundle

            write_bundle(bundle, args.record)
        report = run_checks(bundle, policies, ALL_CHECKS)
        body = render_markdown(report)
        login = _own_login(writer, args.login, str(settings["action"]["default_login"]))
        action, url = upsert_comment(writer, repo, plan.pr, bundle, login, body)
        if not args.no_status:
            set_status(writer, repo, bundle.pr.head_sha, report, str(settings["action"]["status_context"]), url)
    finally:
        writer.close()
    _summary(body)
    print(
        f"codeowner-signoff-verify: {report.verdict.value} for {bundle.signoff.key} at {bundle.pr.head_sha} "
        f"(comment {action}; {stats.requests + writer.stats.requests} API requests)"
    )
    return 1 if args.fail_on_reject and report.verdict is Verdict.REJECTED else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (errors are one line on stderr, exit 2)."""
    try:
        args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
        return run(args)
    except VerifierError as exc:
        print(f"verify-pr action: {exc.one_line()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("verify-pr action: interrupted", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
