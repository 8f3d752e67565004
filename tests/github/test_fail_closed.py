"""Live collection against the stand-in fails closed: GitHub-recorded pins, no unread fact as "absent".

Findings of issue 9: (b) the sign-off moved onto a later commit by a backdated committer date;
(d) partial live data (a 403 on a blob or an artifact, a truncated JSON answer); (e) a changed-file
list that omits changes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest

from checks import judge
from tests.github.conftest import collect
from tests.github.standin import Fault, StandIn, git_blob_sha
from tests.kit import CASES, clone_bundle, edit_yaml, row
from verifier.core.bundle import read_bundle
from verifier.core.errors import GitHubError
from verifier.core.policy import load_policies
from verifier.core.results import Status
from verifier.render.json import render_json

SIGNED = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
LATER = "c" * 40


def _json(bundle: object) -> str:
    return render_json(judge(bundle, load_policies()))  # type: ignore[arg-type]


def _moved(tmp_path: Path) -> Path:
    case = clone_bundle(CASES / "pr4524", tmp_path)

    def move(d: dict) -> None:  # type: ignore[type-arg]
        d["commits"].append(LATER)
        d["head_ref_oid"] = LATER

    edit_yaml(case / "pr.yaml", move)
    return case


def test_backdated_commit_does_not_move_the_pin(tmp_path: Path, standin: Callable[..., StandIn]) -> None:
    """(b) The pusher backdates the later commit's committer date to before the sign-off."""
    server = standin(_moved(tmp_path))
    when = server.bundle.signoff.updated_at or server.bundle.signoff.created_at
    server.commit_dates[LATER] = when - dt.timedelta(days=30)  # chosen by the pusher
    server.push_times[LATER] = when + dt.timedelta(minutes=10)  # recorded by GitHub
    live, _ = collect(server)
    assert live.pr.head_sha == SIGNED and live.pr.head_ref_oid == LATER


def test_no_push_recorded_before_the_signoff_is_an_error(tmp_path: Path, standin: Callable[..., StandIn]) -> None:
    server = standin()
    when = server.bundle.signoff.updated_at or server.bundle.signoff.created_at
    for sha in server.push_times:
        server.push_times[sha] = when + dt.timedelta(hours=1)
    with pytest.raises(GitHubError, match="cannot pin the signed commit"):
        collect(server)


def test_unreadable_check_suites_are_an_error_not_the_tip(standin: Callable[..., StandIn]) -> None:
    server = standin()
    server.faults.append(Fault(path=r"/check-suites$", status=403, times=99, body={"message": "Resource not accessible"}))
    with pytest.raises(GitHubError, match="check suites"):
        collect(server)


def test_blob_that_cannot_be_read_is_an_error_not_a_missing_file(standin: Callable[..., StandIn]) -> None:
    """(d) A 403 on the base thresholds blob must not turn into "the base has no thresholds"."""
    server = standin(graphql=False)
    bundle = server.bundle
    oid = git_blob_sha(bundle.base.read("inferencex-e2e/infx/evals/thresholds.yaml") or b"")
    server.faults.append(Fault(path=rf"/git/blobs/{oid}$", status=403, times=99, body={"message": "Forbidden"}))
    with pytest.raises(GitHubError, match="403"):
        collect(server)


def test_rate_limited_artifact_download_is_retried(standin: Callable[..., StandIn]) -> None:
    """(d) A secondary rate limit on an artifact zip is retried like an API call, not dropped."""
    server = standin()
    server.faults.append(Fault(path=r"^/_blobs/", status=403, times=2, headers={"retry-after": "0"},
                               body={"message": "You have exceeded a secondary rate limit."}))
    live, stats = collect(server, sleep=lambda _s: None)
    assert stats.retries >= 2
    assert _json(live) == _json(read_bundle(CASES / "pr4524"))


def test_artifact_that_cannot_be_downloaded_is_an_error(standin: Callable[..., StandIn]) -> None:
    server = standin()
    server.faults.append(Fault(path=r"^/_blobs/", status=404, times=999))
    with pytest.raises(GitHubError, match="download failed"):
        collect(server, sleep=lambda _s: None)


def test_truncated_json_answer_is_retried(standin: Callable[..., StandIn]) -> None:
    """(d) An API answer cut off in transit is read again, never taken as data or as an error."""
    server = standin()
    server.faults.append(Fault(path=r"/pulls/4524/commits$", status=200, raw=b'[{"sha": "51bb40', times=1))
    live, stats = collect(server, sleep=lambda _s: None)
    assert stats.retries >= 1
    assert _json(live) == _json(read_bundle(CASES / "pr4524"))


def test_file_listing_that_omits_a_change_is_completed_from_the_trees(tmp_path: Path,
                                                                     standin: Callable[..., StandIn]) -> None:
    """(e) GitHub's listing (capped at 3,000 files, 300 for compare) lacks a changed path: the trees add it."""
    case = clone_bundle(CASES / "pr4524", tmp_path)
    master = "inferencex-e2e/configs/nvidia-master.yaml"
    edit_yaml(case / "pr.yaml", lambda d: d.__setitem__("files", [f for f in d["files"] if f["path"] != master]))
    assert row(judge(read_bundle(case), load_policies()), 0).status is Status.FAIL  # offline: Check 0
    server = standin(case)
    live, stats = collect(server)
    assert master in {f.path for f in live.pr.files}
    assert any("changed-file listing omitted 1" in a for a in stats.absent)
    assert row(judge(live, load_policies()), 0).status is Status.PASS
