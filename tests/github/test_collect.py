"""Live collection against the GitHub stand-in: same verdict as the shared cases, budget, faults."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from checks import judge
from tests.github.conftest import FAST, REPO, collect
from tests.github.standin import API, TOKEN, Fault, StandIn
from tests.kit import CASES, clone_bundle, edit_yaml
from verifier.core.bundle import read_bundle
from verifier.core.errors import GitHubError, UsageError
from verifier.core.policy import load_policies
from verifier.record.github.record import write_bundle
from verifier.render.json import render_json

CASE_NAMES = sorted(p.name for p in CASES.iterdir() if (p / "bundle.yaml").is_file())


def _json(bundle: object) -> str:
    return render_json(judge(bundle, load_policies()))  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASE_NAMES)
def test_live_verdict_equals_bundle_verdict(case: str, standin: Callable[..., StandIn]) -> None:
    server = standin(CASES / case)
    live, stats = collect(server)
    assert _json(live) == _json(read_bundle(CASES / case))
    assert stats.absent == []


@pytest.mark.parametrize("case", CASE_NAMES)
def test_collected_files_are_the_case_files(case: str, standin: Callable[..., StandIn]) -> None:
    """The file resolution finds every file the case holds, on both sides, and nothing it lacks."""
    ref = read_bundle(CASES / case)
    live, _ = collect(standin(CASES / case))
    assert sorted(live.head.files) == sorted(ref.head.files)
    assert sorted(live.base.files) == sorted(ref.base.files)
    assert live.head.files == ref.head.files and live.base.files == ref.base.files
    assert {k: r.model_dump() for k, r in live.runs.items()} == {k: r.model_dump() for k, r in ref.runs.items()}
    assert live.checkpoints == ref.checkpoints
    assert live.github.model_dump(exclude={"pages"}) == ref.github.model_dump(exclude={"pages"})
    assert set(live.github.pages) == set(ref.github.pages)
    for url, rel in live.github.pages.items():
        assert live.pages[rel] == ref.pages[ref.github.pages[url]]
    assert live.pr == ref.pr and live.signoff == ref.signoff and live.comments == ref.comments
    assert live.check_runs == ref.check_runs and live.review_date == ref.review_date


def test_request_budget_for_pr4524(standin: Callable[..., StandIn]) -> None:
    server = standin()
    _, stats = collect(server)
    assert stats.requests == len(server.api_requests())
    assert stats.requests <= 40, stats.summary()
    assert stats.retries == 0 and stats.downloads == 29
    print(f"\npr4524: {stats.summary()}")


def test_record_then_replay_gives_identical_json(tmp_path: Path, standin: Callable[..., StandIn]) -> None:
    live, _ = collect(standin())
    write_bundle(live, tmp_path / "rec")
    replay = read_bundle(tmp_path / "rec")
    assert _json(replay) == _json(live)
    assert replay.model_dump(exclude={"source"}) == live.model_dump(exclude={"source"})


def test_cli_live_and_record_replay(tmp_path: Path, standin: Callable[..., StandIn], monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    from verifier.app.cli import main

    server = standin()
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("HF_ENDPOINT", server.hf_endpoint)
    code = main(["4524", "--repo", REPO, "--api-url", server.api_url, "--docs-proxy", server.docs_proxy,
                 "--record", str(tmp_path / "rec"), "--format", "json", "-q"])
    live = capsys.readouterr().out
    assert code == 1
    assert main(["--bundle", str(tmp_path / "rec"), "--format", "json"]) == 1
    assert capsys.readouterr().out == live
    assert json.loads(live)["verdict"] == "REJECTED"


def test_graphql_unavailable_falls_back_to_rest(standin: Callable[..., StandIn]) -> None:
    ref, ref_stats = collect(standin())
    live, stats = collect(standin(graphql=False))
    assert _json(live) == _json(ref)
    assert live.github.upstream_prs == ref.github.upstream_prs
    assert stats.requests > ref_stats.requests


def test_small_pages_follow_link_headers(standin: Callable[..., StandIn]) -> None:
    server = standin(page_size=3)
    live, _ = collect(server)
    ref = read_bundle(CASES / "pr4524")
    assert live.comments == ref.comments and live.check_runs == ref.check_runs and live.pr.commits == ref.pr.commits
    assert any("page" in r.query for r in server.api_requests())


def test_artifact_download_does_not_forward_the_token(standin: Callable[..., StandIn]) -> None:
    server = standin()
    collect(server)
    blobs = [r for r in server.log if r.path.startswith("/_blobs/")]
    assert blobs and all(r.authorization is None for r in blobs)
    assert all(r.host.startswith("localhost:") for r in blobs)
    hf = [r for r in server.log if r.path.startswith("/hf/") or r.path == "/docs-proxy"]
    assert hf and all(r.authorization is None for r in hf)


def test_artifacts_keep_only_the_evidence_files(standin: Callable[..., StandIn]) -> None:
    live, _ = collect(standin())
    for run in live.runs.values():
        for artifact in run.artifacts:
            assert not any(p.startswith("telemetry/") for p in artifact.files)


@pytest.mark.parametrize(
    "fault",
    [
        Fault(path=rf"{API}/repos/[^/]+/[^/]+/pulls/4524$", status=500, times=2),
        Fault(path=r"/check-runs$", status=502, times=3),
        Fault(path=r"/git/trees/", status=403, headers={"Retry-After": "1"},
              body={"message": "You have exceeded a secondary rate limit."}, times=1),
        Fault(path=r"/collaborators$", status=403, body={"message": "You have exceeded a secondary rate limit"}, times=2),
        Fault(path=r"/issues/4524/comments$", status=429, headers={"x-ratelimit-remaining": "12"}, times=1),
        Fault(path=r"^/api/graphql$", method="POST", status=503, times=1),
    ],
    ids=["500-pull", "502-check-runs", "403-retry-after", "403-secondary", "429", "503-graphql"],
)
def test_transient_faults_are_retried(fault: Fault, standin: Callable[..., StandIn]) -> None:
    server = standin()
    server.faults.append(fault)
    sleeps: list[float] = []
    live, stats = collect(server, sleep=sleeps.append)
    assert fault.times == 0
    assert stats.retries >= 1 and len(sleeps) == stats.retries
    assert all(s <= FAST.max_delay for s in sleeps)
    assert _json(live) == _json(read_bundle(CASES / "pr4524"))


def test_persistent_5xx_on_a_required_read_is_one_line_error(standin: Callable[..., StandIn]) -> None:
    server = standin()
    server.faults.append(Fault(path=r"/pulls/4524/commits$", status=500, times=99))
    with pytest.raises(GitHubError) as err:
        collect(server, sleep=lambda _s: None)
    assert "500" in err.value.one_line()
    assert len([r for r in server.log if r.path.endswith("/pulls/4524/commits")]) == FAST.attempts


def test_exhausted_rate_limit_is_not_retried(standin: Callable[..., StandIn]) -> None:
    server = standin()
    reset = str(int(time.time()) + 3600)
    server.faults.append(Fault(path=r"/pulls/4524$", status=403, times=99,
                               headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
                               body={"message": "API rate limit exceeded for installation."}))
    with pytest.raises(GitHubError) as err:
        collect(server)
    assert "rate limit exhausted" in err.value.one_line()
    assert len(server.api_requests()) == 1


def test_bad_token_and_missing_pr(standin: Callable[..., StandIn]) -> None:
    server = standin()
    with pytest.raises(GitHubError, match="rejected the token"):
        collect(server, token="wrong")
    with pytest.raises(GitHubError, match="not found"):
        collect(server, number=999)


def test_cli_bad_token_exits_2_with_one_line(standin: Callable[..., StandIn], monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from verifier.app.cli import main

    server = standin()
    monkeypatch.setenv("GITHUB_TOKEN", "wrong")
    assert main(["4524", "--api-url", server.api_url, "--format", "json", "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and "401" in err and "Traceback" not in err


def test_unreadable_team_and_permissions_are_left_absent(standin: Callable[..., StandIn]) -> None:
    server = standin()
    server.faults.append(Fault(path=r"/teams/core/members$", status=403, times=9, body={"message": "Must have admin rights"}))
    server.faults.append(Fault(path=r"/collaborators$", status=403, times=9, body={"message": "Must have push access"}))
    live, stats = collect(server)
    assert "InferenceX/core" not in live.github.teams
    # without the listing, the sign-off author and the PR author are read one by one
    assert set(live.github.permissions) == {"nvpohanh", "ispobock"}
    assert any("team InferenceX/core" in a for a in stats.absent)


def test_bot_quoting_the_signoff_phrase_is_ignored(standin: Callable[..., StandIn]) -> None:
    server = standin()
    phrase = "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] quoted"
    server.add_comment("claude[bot]", phrase, bot=True)
    server.add_comment("some-contributor", phrase, association="CONTRIBUTOR")
    server.extra_reviews.append({"id": 77, "login": "renovate[bot]", "body": phrase, "state": "COMMENTED",
                                 "association": "NONE", "submitted_at": server.bundle.signoff.created_at,
                                 "commit_id": server.bundle.pr.head_sha})
    live, _ = collect(server)
    assert live.signoff.id == 4711000001 and live.signoff.author == "nvpohanh"


def test_named_signoff_url(standin: Callable[..., StandIn]) -> None:
    server = standin()
    url = f"https://github.com/{REPO}/pull/4524#issuecomment-4711000001"
    live, stats = collect(server, signoff_url=url)
    assert live.signoff.key == "issuecomment-4711000001"
    assert not any(r.path.endswith("/reviews") for r in server.api_requests())
    with pytest.raises(GitHubError, match="not found"):
        collect(server, signoff_url=f"https://github.com/{REPO}/pull/4524#issuecomment-1")
    with pytest.raises(UsageError, match="not SemiAnalysisAI/InferenceX#4524|is for"):
        collect(server, signoff_url="https://github.com/other/repo/pull/4524#issuecomment-4711000001")


def test_review_signoff_pins_the_review_commit(tmp_path: Path, standin: Callable[..., StandIn]) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    edit_yaml(case / "signoff.yaml", lambda d: d.update({"kind": "review summary", "id": 3300000001}))
    edit_yaml(case / "comments.yaml", lambda d: [c for c in d if c["id"] != 4711000001])
    server = standin(case)
    live, _ = collect(server)
    assert live.signoff.kind == "review summary" and live.signoff.key == "pullrequestreview-3300000001"
    assert live.pr.head_sha == read_bundle(case).pr.head_sha
    named, _ = collect(server, signoff_url=f"https://github.com/{REPO}/pull/4524#pullrequestreview-3300000001")
    assert named.signoff == live.signoff


def test_moved_head_keeps_the_signed_commit(tmp_path: Path, standin: Callable[..., StandIn]) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    later = "c" * 40

    def move(d: dict) -> None:  # type: ignore[type-arg]
        d["commits"].append(later)
        d["head_ref_oid"] = later

    edit_yaml(case / "pr.yaml", move)
    server = standin(case)
    live, _ = collect(server)
    assert live.pr.head_moved and live.pr.head_sha == "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
    assert live.pr.head_ref_oid == later
    assert any("/compare/" in r.path for r in server.api_requests())
    assert _json(live) == _json(read_bundle(case))
