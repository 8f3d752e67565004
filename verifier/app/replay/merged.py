"""Which merged PRs a clone holds: first-parent squash merges whose subject ends with `(#N)`.

Each is judged at its merge commit against its first parent (the main branch just before it), the
same base and head GitHub shows for the merged diff. `refs/pull/N/head` refs (a clone fetched with
`+refs/pull/*/head:refs/pull/*/head`) add PRs that are not on the first-parent line: their head
is judged against its merge base with the replayed branch.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, dataclass

from verifier.core.layout import FORMER_PATHS, POLICY_PATHS
from verifier.record.git.repo import GitRepo

_PR_SUFFIX = re.compile(r"\(#(\d{1,7})\)\s*$")
_PULL_REF = re.compile(r"^refs/pull/(\d{1,7})/head$")
# every place a master config has lived, in every era (`.github/configs/`, `configs/`, `inferencex-e2e/configs/`)
MASTER_PATHS = frozenset(p for name in ("nvidia_master", "amd_master")
                         for p in (*POLICY_PATHS[name], *FORMER_PATHS.get(name, ())))


@dataclass(frozen=True)
class MergedPR:
    """One PR to replay: its number, the commits judged, and how it was found."""

    number: int
    head: str
    base: str
    subject: str
    date: str
    kind: str  # squash | pull-ref
    touches_master: bool

    def as_dict(self) -> dict[str, object]:
        """Plain data (for the JSON lines)."""
        return asdict(self)


def _changed_names(repo: GitRepo, rev: str, since: str | None, until: str | None) -> dict[str, set[str]]:
    """sha -> changed paths of every first-parent commit, in one `git log` call."""
    args = ["log", "--first-parent", "--diff-merges=first-parent", "--no-renames", "--name-only", "-z",
            "--format=%x1e%H"]
    if since:
        args.append(f"--since={since}")
    if until:
        args.append(f"--until={until}")
    out = repo.run(*args, repo.resolve(rev), "--")
    names: dict[str, set[str]] = {}
    for record in out.split("\x1e"):
        fields = [f.strip("\n") for f in record.split("\0")]
        if fields and fields[0]:
            head, *paths = fields
            sha, _, first = head.partition("\n")
            names[sha.strip()] = {p for p in [first, *paths] if p}
    return names


def merged_prs(
    repo: GitRepo, *, rev: str = "HEAD", numbers: set[int] | None = None, since: str | None = None,
    until: str | None = None, all_prs: bool = False, unmerged: bool = False,
) -> list[MergedPR]:
    """The PRs to replay, oldest first: by number, or by merge date; master-config PRs unless all_prs.

    A PR head the clone has (`refs/pull/N/head`) that never reached the branch is replayed only when
    asked for: by number, or with `unmerged` (a date window of merged PRs is merged PRs only)."""
    until_day = until
    if until and _DAY.fullmatch(until):
        until_day = _midnight((dt.date.fromisoformat(until) + dt.timedelta(days=1)).isoformat())  # inclusive day
    if since and _DAY.fullmatch(since):
        since = _midnight(since)  # git reads a bare date as that day at the current time of day
    window = (since, until_day) if numbers is None else (None, None)
    changed = _changed_names(repo, rev, *window)
    found: dict[int, MergedPR] = {}
    for commit in repo.first_parent_log(rev, *window):
        m = _PR_SUFFIX.search(commit.subject)
        if not m or not commit.parents:
            continue
        number = int(m.group(1))
        if numbers is not None and number not in numbers or number in found:
            continue
        touches = bool(changed.get(commit.sha, set()) & MASTER_PATHS)
        found[number] = MergedPR(number, commit.sha, commit.parents[0], commit.subject, commit.committed_at,
                                 "squash", touches)
    main = repo.resolve(rev)
    for ref, sha in sorted(repo.refs("refs/pull/").items()):
        m = _PULL_REF.match(ref)
        if not m or int(m.group(1)) in found or numbers is not None and int(m.group(1)) not in numbers:
            continue
        if numbers is None and not unmerged:
            continue
        base = repo.run("merge-base", main, sha).strip()
        if not base or base == sha:
            continue
        commit = repo.commit(sha)
        if numbers is None and not _in_window(commit.committed_at, since, until_day):
            continue
        touches = any(f.path in MASTER_PATHS for f in repo.diff(base, sha))
        found[int(m.group(1))] = MergedPR(int(m.group(1)), sha, base, commit.subject, commit.committed_at,
                                          "pull-ref", touches)
    prs = [p for p in found.values() if all_prs or numbers is not None or p.touches_master]
    return sorted(prs, key=lambda p: (p.date, p.number))


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _midnight(day: str) -> str:
    return f"{day}T00:00:00+00:00"


def _in_window(when: str, since: str | None, until: str | None) -> bool:
    try:
        moment = dt.datetime.fromisoformat(when).astimezone(dt.UTC)
    except ValueError:
        return False

    def bound(text: str) -> dt.datetime:
        value = dt.datetime.fromisoformat(text)
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)

    try:
        return (since is None or moment >= bound(since)) and (until is None or moment < bound(until))
    except ValueError:
        return True
