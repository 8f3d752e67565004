"""Who may start a verification, and whether a PR needs a CODEOWNER sign-off at all.

InferenceX's rules (CONTRIBUTING.md and its `signoff_scope` workflow helper; FORMATS §1, §2.5):

* Requester: an event-triggered verification counts only for an account whose repository
  permission is in `signoff.permissions` **and** whose `role_name` is in `signoff.roles`, both read
  from `GET /repos/{repo}/collaborators/{login}/permission`; bots never. A permission that cannot
  be read is not a "no": the requester is *unverified* and nothing is published as verified.
* Scope: a sign-off is needed only when some changed file (both paths of a rename) has a CODEOWNER
  other than the core team or an individual repository admin (`permission: admin` and
  `role_name: admin`). Ownership comes from CODEOWNERS at the PR's base commit. Teams other than
  the core team and e-mail owners always need a sign-off; an owner whose permission cannot be read,
  a file listing GitHub truncated, or an unreadable CODEOWNERS never grant the exemption.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from github import GithubException

from verifier.core.errors import GitHubError
from verifier.documents.codeowners import owning_rule, parse_codeowners
from verifier.record.github.client import Client, to_github_error
from verifier.record.github.signoff import is_bot


class Access(StrEnum):
    """What the permission endpoint says about one account."""

    ALLOWED = "allowed"
    DENIED = "denied"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class Permission:
    """permission and role_name of one account, or why they could not be read."""

    login: str
    permission: str | None = None
    role_name: str | None = None
    error: str | None = None


class Permissions:
    """Reads (and remembers) permission and role_name per login."""

    def __init__(self, client: Client, repo: str) -> None:
        self.client = client
        self.repo = repo
        self._cache: dict[str, Permission] = {}

    def of(self, login: str) -> Permission:
        """The permission of an account (never raises for a 403/404: it is recorded as unreadable)."""
        if login not in self._cache:
            self._cache[login] = self._read(login)
        return self._cache[login]

    def _read(self, login: str) -> Permission:
        try:
            data = self.client.get_json(f"/repos/{self.repo}/collaborators/{login}/permission")
        except GithubException as exc:
            if exc.status == 401:
                raise to_github_error(exc, f"permission of {login}") from None
            if exc.status == 404:
                # GitHub's own answer: no such user or not a collaborator; that is a fact, not a gap
                return Permission(login, "none", None)
            return Permission(login, error=f"HTTP {exc.status}")
        except GitHubError as exc:
            return Permission(login, error=exc.one_line())
        if not isinstance(data, Mapping) or not isinstance(data.get("permission"), str):
            return Permission(login, error="no permission in the answer")
        role = data.get("role_name")
        return Permission(login, str(data["permission"]), str(role) if isinstance(role, str) and role else None)


def requester_access(login: str, user_type: Any, permissions: Permissions, settings: Mapping[str, Any]) -> tuple[Access, str]:
    """Whether an account may start a verification, with the one-line reason."""
    if not login:
        return Access.UNREADABLE, "the event names no account"
    if is_bot(login, user_type if isinstance(user_type, str) else None):
        return Access.DENIED, f"{login} is a bot; bots never start a verification"
    perm = permissions.of(login)
    if perm.error is not None:
        return Access.UNREADABLE, f"the permission of {login} could not be read ({perm.error})"
    allowed_permissions = settings["signoff"]["permissions"]
    allowed_roles = settings["signoff"]["roles"]
    if perm.permission in allowed_permissions and (perm.role_name or "") in allowed_roles:
        return Access.ALLOWED, f"{login} has permission {perm.permission}, role {perm.role_name}"
    return Access.DENIED, (f"{login} has permission {perm.permission}, role {perm.role_name or 'none'}; "
                           f"a verification needs one of {', '.join(allowed_roles)}")


@dataclass(frozen=True)
class ScopeDecision:
    """Whether the PR needs a sign-off, and why."""

    needed: bool
    reason: str
    # changed path -> the owners that make a sign-off necessary (empty when exempt)
    qualifying: dict[str, tuple[str, ...]] = field(default_factory=dict)


def decide_scope(
    codeowners: str | None,
    paths: Iterable[str],
    is_admin: Callable[[str], bool | None],
    core_teams: Iterable[str],
    *,
    complete: bool = True,
) -> ScopeDecision:
    """Apply the scope rule to the changed paths (renames: pass both paths).

    `is_admin(login)` is True/False when the account's permission was read, None when it was not.
    """
    if not complete:
        return ScopeDecision(True, "the changed-file list is incomplete, so no exemption can be established")
    if codeowners is None:
        return ScopeDecision(True, "CODEOWNERS could not be read at the base commit, so no exemption can be established")
    core = {t.lower() for t in core_teams}
    rules = parse_codeowners(codeowners)
    qualifying: dict[str, tuple[str, ...]] = {}
    for path in sorted(set(paths)):
        rule = owning_rule(rules, path)
        if rule is None or not rule.owners:
            continue
        needs = []
        for owner in rule.owners:
            if owner.lower() in core:
                continue
            if owner.startswith("@") and "/" not in owner and is_admin(owner[1:]) is True:
                continue
            needs.append(owner)  # another team, an e-mail, a non-admin or an unreadable account
        if needs:
            qualifying[path] = tuple(needs)
    if qualifying:
        first = next(iter(qualifying))
        return ScopeDecision(True, f"{first} is owned by {', '.join(qualifying[first])}", qualifying)
    return ScopeDecision(False, "every changed file is owned only by repository admins or the core team, or by no one")


def is_repository_admin(permissions: Permissions, settings: Mapping[str, Any]) -> Callable[[str], bool | None]:
    """is_admin for decide_scope: permission and role_name both equal to the policy's admin values."""
    admin = settings["scope"]["admin"]

    def check(login: str) -> bool | None:
        perm = permissions.of(login)
        if perm.error is not None:
            return None
        return perm.permission == admin["permission"] and perm.role_name == admin["role_name"]

    return check


def read_scope(client: Client, repo: str, pull: Mapping[str, Any], permissions: Permissions,
               settings: Mapping[str, Any]) -> ScopeDecision:
    """Read the changed files and the base CODEOWNERS through the API and decide the scope."""
    number = pull.get("number")
    base_sha = str((pull.get("base") or {}).get("sha") or "")
    paths: list[str] = []
    listed = 0
    cap = int(settings["scope"]["max_files"])
    try:
        for item in client.paged(f"/repos/{repo}/pulls/{number}/files", max_pages=max(1, cap // 100)):
            if isinstance(item, Mapping):
                listed += 1
                paths.append(str(item.get("filename") or ""))
                if item.get("previous_filename"):
                    paths.append(str(item["previous_filename"]))
    except GithubException as exc:
        return ScopeDecision(True, f"the changed files could not be read (HTTP {exc.status})")
    expected = pull.get("changed_files")
    # GitHub stops listing at 3,000 files; a list shorter than the PR's own count is incomplete.
    complete = listed < cap and (not isinstance(expected, int) or listed >= expected)
    return decide_scope(_codeowners(client, repo, base_sha, settings), [p for p in paths if p],
                        is_repository_admin(permissions, settings), settings["scope"]["core_teams"],
                        complete=complete)


def _codeowners(client: Client, repo: str, base_sha: str, settings: Mapping[str, Any]) -> str | None:
    """The CODEOWNERS GitHub uses at the base commit (first of .github/, root, docs/), or None."""
    import base64

    if len(base_sha) != 40:
        return None
    try:
        tree = client.get_json(f"/repos/{repo}/git/trees/{base_sha}", {"recursive": "1"})
    except GithubException:
        return None
    if not isinstance(tree, Mapping) or tree.get("truncated"):
        return None
    blobs = {str(e.get("path")): str(e.get("sha")) for e in tree.get("tree") or [] if isinstance(e, Mapping)
             and e.get("type") == "blob"}
    for candidate in settings["scope"]["codeowners_paths"]:
        if candidate in blobs:
            try:
                blob = client.get_json(f"/repos/{repo}/git/blobs/{blobs[candidate]}")
                return base64.b64decode(str(blob.get("content") or "")).decode("utf-8")
            except (GithubException, ValueError, UnicodeDecodeError):
                return None
    return None  # no CODEOWNERS: missing ownership data never grants the exemption
