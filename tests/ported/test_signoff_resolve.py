"""InferenceX's sign-off resolver expectations, ported as facts against verifier.record.github.

Source: SemiAnalysisAI/InferenceX `inferencex-e2e/infx/tests/workflows/test_signoff_resolve.py`
(newest found: fork hbarclay/InferenceX at d67e45816b36fca27a001d4c09df2c382b435a7c). Ported: the
sign-off kind and key per event and dispatch URL, the rejected dispatch URLs (another repository,
another PR, another host, no comment fragment, shell text after the id), the rejected resource id,
the requester permission table (permission x role_name) and bot requesters, and non-sign-off bodies.
The resolver's shell-output plumbing (GITHUB_OUTPUT lines, `gh api` fetch commands) has no
counterpart here: we never build shell commands.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.github.conftest import FAST, REPO, collect
from tests.github.standin import TOKEN, StandIn
from verifier.core.errors import UsageError
from verifier.core.model import Permission
from verifier.core.policy import load_policies
from verifier.record.github.client import Client
from verifier.record.github.scope import Access, Permissions, requester_access
from verifier.record.github.signoff import is_bot, looks_like_signoff, parse_signoff_url

PR = f"https://github.com/{REPO}/pull/4524"


@pytest.mark.parametrize("suffix,kind,key", [
    ("#issuecomment-41", "conversation comment", "issuecomment-41"),
    ("#pullrequestreview-42", "review summary", "pullrequestreview-42"),
    ("/files#discussion_r43", "inline review comment", "discussion_r43"),
])
def test_dispatch_url_kind_and_key(suffix: str, kind: str, key: str) -> None:
    ref = parse_signoff_url(PR + suffix)
    assert (ref.kind, ref.key, ref.repo, ref.number) == (kind, key, REPO, 4524)


@pytest.mark.parametrize("url", [
    "https://evil.example/SemiAnalysisAI/InferenceX/pull/4524#issuecomment-41",
    "https://github.com@evil.example/SemiAnalysisAI/InferenceX/pull/4524#issuecomment-41",
    "https://github.com/SemiAnalysisAI/InferenceX/pull/4524",
    "https://github.com/SemiAnalysisAI/InferenceX/pull/4524#issuecomment-41;touch /tmp/unsafe",
    "issuecomment-41; echo unsafe",
], ids=["other-host", "userinfo-host", "no-fragment", "shell-after-id", "resource-id-with-shell"])
def test_malformed_dispatch_urls_and_resource_ids_are_refused(url: str) -> None:
    with pytest.raises(UsageError):
        parse_signoff_url(url)


@pytest.mark.parametrize("url", [
    "https://github.com/other/repo/pull/4524#issuecomment-4711000001",
    f"https://github.com/{REPO}/pull/4525#issuecomment-4711000001",
], ids=["other-repository", "other-pr"])
def test_dispatch_url_for_another_repository_or_pr_is_refused(standin: Callable[..., StandIn], url: str) -> None:
    with pytest.raises(UsageError):
        collect(standin(), signoff_url=url)


@pytest.mark.parametrize("permission,role,expected", [
    ("admin", "admin", True),
    ("write", "maintain", True),
    ("write", "write", True),
    ("read", "read", False),
    ("triage", "triage", False),
    ("write", "custom-role", False),
    ("read", "admin", False),
])
def test_only_repository_writers_with_known_roles_can_request(
        standin: Callable[..., StandIn], permission: str, role: str, expected: bool) -> None:
    server = standin()
    server.bundle.github.permissions["requester"] = Permission(permission=permission, role_name=role)
    client = Client(TOKEN, server.api_url, retry=FAST)
    access, _ = requester_access("requester", "User", Permissions(client, REPO), load_policies()["github"])
    assert (access is Access.ALLOWED) is expected


@pytest.mark.parametrize("login,user_type", [("writer[bot]", "User"), ("writer", "Bot")])
def test_bot_requesters_are_bots_even_with_write_permission(login: str, user_type: str) -> None:
    assert is_bot(login, user_type)


@pytest.mark.parametrize("body", [None, "", "Please review this.", "<!-- codeowner-signoff-verify -->\nVerdict: PASS"])
def test_non_signoff_comments_are_not_signoffs(body: str | None) -> None:
    assert not looks_like_signoff(body)


def test_signoff_phrase_is_a_signoff() -> None:
    assert looks_like_signoff("As a PR reviewer and CODEOWNER, I have reviewed this and have:")
