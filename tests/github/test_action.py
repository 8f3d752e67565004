"""The Action entry point on event payload files against the stand-in: one comment per sign-off, status, summary."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.github.conftest import REPO
from tests.github.standin import TOKEN, StandIn
from tests.kit import CASES, clone_bundle, edit_yaml
from verifier.app.action import main

HEAD = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
SIGNOFF_URL = f"https://github.com/{REPO}/pull/4524#issuecomment-4711000001"
SENDER = {"login": "nvpohanh", "type": "User"}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[StandIn, str, dict[str, Any]], Path]:
    """Point the Action at a stand-in with an event payload file; returns the step summary path."""

    def setup(server: StandIn, name: str, payload: dict[str, Any]) -> Path:
        event = tmp_path / f"{name}.json"
        event.write_text(json.dumps(payload), encoding="utf-8")
        summary = tmp_path / "summary.md"
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        monkeypatch.setenv("GITHUB_REPOSITORY", REPO)
        monkeypatch.setenv("GITHUB_API_URL", server.api_url)
        monkeypatch.setenv("GITHUB_EVENT_NAME", name)
        monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        monkeypatch.setenv("HF_ENDPOINT", server.hf_endpoint)
        return summary

    return setup


def _signoff_body() -> str:
    return (CASES / "pr4524" / "signoff.yaml").read_text(encoding="utf-8")


def _comment_event(body: str, login: str = "nvpohanh", cid: int = 4711000001, kind: str = "User") -> dict[str, Any]:
    return {
        "action": "created",
        "issue": {"number": 4524, "state": "open", "pull_request": {"url": f"https://api.github.com/repos/{REPO}/pulls/4524"}},
        "comment": {"id": cid, "body": body, "user": {"login": login, "type": kind},
                    "html_url": f"https://github.com/{REPO}/pull/4524#issuecomment-{cid}"},
    }


def _writes(server: StandIn) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in server.log if r.method in ("POST", "PATCH") and r.path != "/api/graphql"]


def _run(server: StandIn, *extra: str) -> int:
    return main(["--docs-proxy", server.docs_proxy, *extra])


def test_comment_event_posts_once_then_updates_in_place(
    standin: Callable[..., StandIn], env: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    server = standin()
    summary = env(server, "issue_comment", _comment_event("As a PR reviewer and CODEOWNER, I have reviewed this"))
    assert _run(server) == 0
    ours = server.verdict_comments()
    assert len(ours) == 1 and ours[0]["login"] == "github-actions[bot]"
    assert ours[0]["body"].startswith("<!-- codeowner-signoff-verify signoff=issuecomment-4711000001 ")
    assert server.statuses[-1]["sha"] == HEAD
    assert server.statuses[-1]["state"] == "failure" and server.statuses[-1]["context"] == "codeowner-signoff-verify"
    assert "REJECTED" in summary.read_text(encoding="utf-8")
    assert "comment posted" in capsys.readouterr().out

    before = len(_writes(server))
    assert _run(server) == 0
    assert len(server.verdict_comments()) == 1
    new_writes = _writes(server)[before:]
    assert not any(m == "PATCH" or p.endswith("/comments") for m, p in new_writes)  # unchanged: only the status

    first_body = ours[0]["body"]
    ours[0]["body"] = ours[0]["body"].replace("REJECTED", "APPROVED")
    before = len(_writes(server))
    assert _run(server) == 0
    assert len(server.verdict_comments()) == 1
    assert server.verdict_comments()[0]["body"] == first_body
    assert ("PATCH", f"/api/v3/repos/{REPO}/issues/comments/{ours[0]['id']}") in _writes(server)[before:]


def test_marker_comment_by_someone_else_is_not_ours(standin: Callable[..., StandIn], env: Callable[..., Path]) -> None:
    server = standin()
    fake = server.add_comment("mallory", "<!-- codeowner-signoff-verify signoff=issuecomment-4711000001 -->\nAPPROVED")
    env(server, "issue_comment", _comment_event("As a PR reviewer and CODEOWNER"))
    assert _run(server) == 0
    mine = [c for c in server.verdict_comments() if c["login"] == "github-actions[bot]"]
    assert len(mine) == 1 and fake["body"].endswith("APPROVED")


def test_readable_user_names_our_account(standin: Callable[..., StandIn], env: Callable[..., Path]) -> None:
    server = standin(login="verifier-app[bot]", user_readable=True)
    server.add_comment("github-actions[bot]", "<!-- codeowner-signoff-verify signoff=issuecomment-4711000001 -->\nold",
                       bot=True)
    env(server, "issue_comment", _comment_event("As a PR reviewer and CODEOWNER"))
    assert _run(server) == 0
    assert [c["login"] for c in server.verdict_comments()] == ["github-actions[bot]", "verifier-app[bot]"]


@pytest.mark.parametrize(
    ("event", "kind", "key"),
    [
        ("pull_request_review", "review summary", "pullrequestreview-3300000001"),
        ("pull_request_review_comment", "inline review comment", "discussion_r3300000001"),
    ],
)
def test_review_and_review_comment_events(
    event: str, kind: str, key: str, tmp_path: Path, standin: Callable[..., StandIn], env: Callable[..., Path]
) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    edit_yaml(case / "signoff.yaml", lambda d: d.update({"kind": kind, "id": 3300000001}))
    edit_yaml(case / "comments.yaml", lambda d: [c for c in d if c["id"] != 4711000001])
    server = standin(case)
    item = {"id": 3300000001, "body": "As a PR reviewer and CODEOWNER, I have reviewed this",
            "user": {"login": "nvpohanh", "type": "User"}, "state": "commented",
            "html_url": f"https://github.com/{REPO}/pull/4524#{key}"}
    name = "review" if event == "pull_request_review" else "comment"
    env(server, event, {"action": "submitted", name: item, "pull_request": {"number": 4524, "state": "open"}})
    assert _run(server) == 0
    assert _run(server) == 0
    ours = server.verdict_comments()
    assert len(ours) == 1 and ours[0]["body"].startswith(f"<!-- codeowner-signoff-verify signoff={key} ")
    assert server.statuses[-1]["sha"] == HEAD


def test_dispatch_with_signoff_url(standin: Callable[..., StandIn], env: Callable[..., Path]) -> None:
    server = standin(CASES / "pr4524-approved")
    env(server, "workflow_dispatch", {"inputs": {"signoff_url": SIGNOFF_URL}, "sender": SENDER})
    assert _run(server, "--fail-on-reject") == 0
    assert len(server.verdict_comments()) == 1
    assert server.statuses[-1]["state"] == "success"


def test_pull_request_event_reverifies_the_newest_signoff(standin: Callable[..., StandIn], env: Callable[..., Path]) -> None:
    server = standin()
    env(server, "pull_request", {"action": "synchronize", "number": 4524,
                                 "pull_request": {"number": 4524, "state": "open", "draft": False}})
    assert _run(server, "--fail-on-reject") == 1
    assert server.verdict_comments()[0]["body"].startswith("<!-- codeowner-signoff-verify signoff=issuecomment-4711000001")


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (_comment_event("As a PR reviewer and CODEOWNER", login="claude[bot]", kind="Bot"), "bot"),
        (_comment_event("thanks!"), "not a sign-off"),
        (_comment_event("As a PR reviewer and CODEOWNER", login="ispobock"), "may not start a verification"),
        (_comment_event("<!-- codeowner-signoff-verify signoff=x -->\nAs a PR reviewer and CODEOWNER"), "not a sign-off"),
        ({"action": "created", "issue": {"number": 1}, "comment": {"body": "As a PR reviewer and CODEOWNER"}},
         "not a pull request"),
    ],
    ids=["bot", "no-phrase", "reader", "our-marker", "issue"],
)
def test_events_that_are_not_signoffs_are_skipped(
    payload: dict[str, Any], reason: str, standin: Callable[..., StandIn], env: Callable[..., Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = standin()
    env(server, "issue_comment", payload)
    assert _run(server) == 0
    assert reason in capsys.readouterr().out
    assert _writes(server) == [] and server.verdict_comments() == []


def test_bad_token_exits_2_with_one_line(
    standin: Callable[..., StandIn], env: Callable[..., Path], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = standin()
    env(server, "workflow_dispatch", {"inputs": {"signoff_url": SIGNOFF_URL}, "sender": SENDER})
    monkeypatch.setenv("GITHUB_TOKEN", "wrong")
    assert _run(server) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "rejected the token" in err


def test_dispatch_url_for_another_repo_is_a_usage_error(
    standin: Callable[..., StandIn], env: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    server = standin()
    env(server, "workflow_dispatch", {"inputs": {"signoff_url": "https://github.com/a/b/pull/4524#issuecomment-4711000001"}, "sender": SENDER})
    assert _run(server) == 2
    assert "is for a/b#4524" in capsys.readouterr().err
