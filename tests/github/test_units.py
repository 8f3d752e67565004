"""Units of verifier.record.github: safe unzip, sign-off URLs and markers, link scanning, retries, policy file."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest
import requests

from tests.kit import PROJECT
from verifier.core.errors import GitHubError, UsageError
from verifier.core.policy import load_policies
from verifier.record.github.archive import ArchiveLimits, extract_zip, safe_member_path
from verifier.record.github.client import CollectStats, RetryPolicy, Transport
from verifier.record.github.links import page_urls, reuse_run_id, run_ids, upstream_refs
from verifier.record.github.signoff import looks_like_signoff, marker_regex, parse_signoff_url

KEEP = ["result.json", "server.log", "results*.json"]


def _zip(members: dict[str, bytes], *, symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_zip_keeps_only_evidence_files() -> None:
    data = _zip({"result.json": b"{}", "logs/server.log": b"x", "results_2026.json": b"[]", "trace.jsonl": b"y"})
    out = extract_zip(data, KEEP)
    assert out.files == {"result.json": b"{}", "logs/server.log": b"x", "results_2026.json": b"[]"}


@pytest.mark.parametrize("name", ["../result.json", "/abs/result.json", "a/../../result.json", "C:/result.json",
                                  "a\\..\\result.json"])
def test_zip_slip_is_refused(name: str) -> None:
    out = extract_zip(_zip({name: b"{}"}), KEEP)
    assert out.files == {} and out.refused
    assert safe_member_path(name) is None


def test_zip_symlink_is_refused() -> None:
    out = extract_zip(_zip({}, symlink="result.json"), KEEP)
    assert out.files == {} and "symbolic link" in out.refused[0]


def test_zip_bomb_is_refused() -> None:
    bomb = _zip({"server.log": b"\0" * (8 * 1024 * 1024)})
    assert len(bomb) < 64 * 1024
    out = extract_zip(bomb, KEEP, ArchiveLimits(file_bytes=1024 * 1024))
    assert out.files == {} and out.refused
    out = extract_zip(bomb, KEEP, ArchiveLimits(file_bytes=64 * 1024 * 1024, compression_ratio=100))
    assert out.files == {} and "ratio" in out.refused[0]


def test_zip_total_size_and_member_caps() -> None:
    many = _zip({f"d{i}/result.json": b"x" * 1000 for i in range(20)})
    out = extract_zip(many, KEEP, ArchiveLimits(archive_bytes=5500))
    assert out.error and "total" in out.error
    assert extract_zip(many, KEEP, ArchiveLimits(members=10)).error
    assert extract_zip(b"not a zip", KEEP).error


def test_signoff_urls() -> None:
    ref = parse_signoff_url("https://github.com/SemiAnalysisAI/InferenceX/pull/4524#issuecomment-4711000001")
    assert (ref.kind, ref.id, ref.repo, ref.number) == ("conversation comment", 4711000001, "SemiAnalysisAI/InferenceX", 4524)
    ref = parse_signoff_url("https://github.com/o/r/pull/7/files#discussion_r12")
    assert ref.kind == "inline review comment" and ref.key == "discussion_r12"
    assert parse_signoff_url("pullrequestreview-5").kind == "review summary"
    for bad in ("https://github.com/o/r/pull/7", "https://github.com/o/r/issues/7#issuecomment-1",
                "javascript:alert(1)#issuecomment-1", "#issuecomment-0", "https://github.com/o/r/pull/7#x-1"):
        with pytest.raises(UsageError):
            parse_signoff_url(bad)


def test_marker_and_signoff_detection() -> None:
    pattern = marker_regex("issuecomment-42")
    assert pattern.match("<!-- codeowner-signoff-verify signoff=issuecomment-42 sha=" + "a" * 40 + " -->\nbody")
    assert pattern.match("<!-- codeowner-signoff-verify signoff=issuecomment-42 -->\n")
    assert not pattern.match("<!-- codeowner-signoff-verify signoff=issuecomment-421 -->\n")
    assert not pattern.match("text\n<!-- codeowner-signoff-verify signoff=issuecomment-42 -->")
    assert looks_like_signoff("As a PR reviewer and CODEOWNER, I have")
    assert not looks_like_signoff("<!-- codeowner-signoff-verify signoff=x -->\nAs a PR reviewer and CODEOWNER")


def test_link_scanning() -> None:
    policy = load_policies()["upstream"]
    text = ("see https://github.com/sgl-project/sglang/pull/47214, sgl-project/sglang#46807 and "
            "https://github.com/someone/else/pull/1 and [page](https://docs.sglang.io/cookbook/intro) "
            "https://hub.docker.com/u/lmsysorg https://github.com/SemiAnalysisAI/InferenceX/actions/runs/40739166138")
    assert [r.key for r in upstream_refs([text], policy, "SemiAnalysisAI/InferenceX")] == [
        "sgl-project/sglang#47214", "sgl-project/sglang#46807"]
    assert page_urls([text], policy) == ["https://docs.sglang.io/cookbook/intro"]
    assert run_ids(text, "SemiAnalysisAI/InferenceX") == [40739166138]


def test_reuse_command_newest_trusted_whole_line_wins() -> None:
    comments = [
        {"body": "/use 1", "author_association": "MEMBER", "created_at": "2026-01-01"},
        {"body": "please /use 2", "author_association": "MEMBER", "created_at": "2026-01-02"},
        {"body": "/use 3", "author_association": "CONTRIBUTOR", "created_at": "2026-01-03"},
        {"body": "/use 4\n/reuse-sweep-run 5", "author_association": "COLLABORATOR", "created_at": "2026-01-04"},
    ]
    assert reuse_run_id(comments) == 5
    assert reuse_run_id(comments[:3]) == 1


class _Resp:
    def __init__(self, status: int, headers: dict[str, str] | None = None, text: str = "") -> None:
        self.status, self.headers, self._text = status, headers or {}, text

    def read(self) -> str:
        return self._text


def test_transport_is_bounded_and_counts_every_attempt() -> None:
    stats = CollectStats()
    sleeps: list[float] = []
    transport = Transport(stats, RetryPolicy(attempts=3, base_delay=1, max_delay=3), sleeps.append)
    answers = iter([_Resp(500), _Resp(502), _Resp(503)])
    assert transport.perform("GET", "http://127.0.0.1/repos/o/r", lambda: next(answers)).status == 503  # type: ignore[arg-type, return-value]
    assert stats.requests == 3 and stats.retries == 2 and sleeps == [1, 2]
    with pytest.raises(GitHubError, match="rate limit exhausted"):
        transport.perform("GET", "http://127.0.0.1/y", lambda: _Resp(429, {"x-ratelimit-remaining": "0"}))  # type: ignore[arg-type, return-value]


def test_comment_posts_are_not_repeated_after_5xx() -> None:
    stats = CollectStats()
    transport = Transport(stats, RetryPolicy(attempts=5, base_delay=0), lambda _s: None)
    assert transport.perform("POST", "http://127.0.0.1/repos/o/r/issues/1/comments", lambda: _Resp(502)).status == 502  # type: ignore[arg-type, return-value]
    assert stats.requests == 1

    def boom() -> _Resp:
        raise requests.ConnectionError("down")

    with pytest.raises(GitHubError, match="cannot reach"):
        transport.perform("GET", "http://127.0.0.1/y", boom)  # type: ignore[arg-type]


def test_action_files_exist_and_never_check_out_pr_code() -> None:
    action = (PROJECT / "action.yml").read_text(encoding="utf-8")
    workflow = (PROJECT / "examples" / "workflows" / "codeowner-signoff-verify.yml").read_text(encoding="utf-8")
    assert "using: composite" in action and "verify-pr action" in action
    assert "actions/checkout" not in action and "actions/checkout" not in workflow
    for event in ("issue_comment", "pull_request_review", "pull_request_review_comment", "pull_request_target",
                  "workflow_dispatch"):
        assert f"{event}:" in workflow
    from ruamel.yaml import YAML

    doc = YAML(typ="safe").load(action)
    runs = [step["run"] for step in doc["runs"]["steps"] if "run" in step]
    assert runs and all("${{" not in run for run in runs)  # inputs reach scripts through env only
    flow = YAML(typ="safe").load(workflow)
    job = flow["jobs"]["verify"]["permissions"]
    assert flow["permissions"] == {} and job["statuses"] == "write" and job["contents"] == "read"


def test_policy_file_loads() -> None:
    settings = load_policies()["github"]
    assert RetryPolicy.from_policy(settings["retry"]).attempts >= 2
    assert Path(PROJECT / "policies" / "schema" / "github.schema.json").is_file()


@pytest.mark.parametrize("text", ["yes", "null", "2026-10-29", "  leading\nspaces  \n", "crlf\r\nline\r\n", "tab\there\n",
                                  "trailing space \nnext", "# not a comment", "- not a list", "emoji ✅ 中文\n", "",
                                  "cr\ronly", "nel\x85x", "ls\u2028x\n", "\ufeffbom\n"])
def test_written_strings_round_trip_exactly(text: str, tmp_path: Path) -> None:
    from tests.kit import CASES
    from verifier.core.bundle import read_bundle
    from verifier.record.github.record import write_bundle

    bundle = read_bundle(CASES / "pr4524")
    pr = bundle.pr.model_copy(update={"body": text, "title": text.replace("\n", " ")})
    so = bundle.signoff.model_copy(update={"body": text})
    edited = bundle.model_copy(update={"pr": pr, "signoff": so})
    write_bundle(edited, tmp_path / "b")
    again = read_bundle(tmp_path / "b")
    assert again.pr.body == text and again.signoff.body == text and again.pr.title == pr.title


def test_record_directory_must_be_empty(tmp_path: Path) -> None:
    from tests.kit import CASES
    from verifier.core.bundle import read_bundle
    from verifier.record.github.record import write_bundle

    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty"):
        write_bundle(read_bundle(CASES / "pr4524"), tmp_path / "x")
