"""verifier.frozen: the immutable typed records of the domain model and of check results."""

from __future__ import annotations

import datetime as dt
import pickle

import pytest

from verifier.frozen import ModelError
from verifier.model import Comment, GitHubFacts, PullRequest, Run, Tree
from verifier.results import CheckResult, FileEvidence, Finding, MissingEvidence, Status, finding, passed

SHA = "a" * 40


def _pr(**extra: object) -> PullRequest:
    fields = {"repo": "o/r", "number": 1, "base_sha": SHA, "head_sha": SHA, "head_ref_oid": SHA, "commits": [SHA],
              "files": [{"path": "a.yaml", "status": "added"}], **extra}
    return PullRequest(**fields)


def test_construction_converts_like_the_bundle_needs() -> None:
    pr = _pr(created_at="2026-10-29T10:00:00Z", labels=["x"])
    assert pr.commits == (SHA,) and pr.labels == ("x",)
    assert pr.files[0].path == "a.yaml" and pr.files[0].status == "added"
    assert pr.created_at == dt.datetime(2026, 10, 29, 10, tzinfo=dt.UTC)
    naive = Comment(id="7", author="a", created_at="2026-10-29T10:00:00")
    assert naive.id == 7 and naive.created_at.tzinfo is not None  # a time without a zone is UTC
    facts = GitHubFacts(teams={"o/t": ["a", "b"]}, permissions={"a": {"permission": "write"}})
    assert facts.teams == {"o/t": ("a", "b")} and facts.permissions["a"].permission == "write"
    assert Run(id=1, artifacts=[{"name": "x", "files": {"f": b"1"}}]).artifact("x").files == {"f": b"1"}


@pytest.mark.parametrize(("extra", "loc"), [
    ({"state": "draft"}, ("state",)),
    ({"files": [{"path": "a", "status": "bogus"}]}, ("files", 0, "status")),
    ({"number": "one"}, ("number",)),
    ({"created_at": "yesterday"}, ("created_at",)),
    ({"labels": "x"}, ("labels",)),
])
def test_a_value_that_does_not_fit_names_its_field(extra: dict[str, object], loc: tuple[object, ...]) -> None:
    with pytest.raises(ModelError) as err:
        _pr(**extra)
    assert err.value.loc == loc


def test_required_and_unknown_fields() -> None:
    with pytest.raises(ModelError) as err:
        PullRequest(repo="o/r", number=1)
    assert err.value.msg == "Field required"
    assert _pr(unknown="ignored") == _pr()
    with pytest.raises(ModelError):
        FileEvidence(path="a", colour="red")  # evidence refuses unknown fields


def test_records_are_immutable_values() -> None:
    ev = FileEvidence(path="a", line=3)
    with pytest.raises(ModelError):
        ev.line = 4  # type: ignore[misc]
    assert ev == FileEvidence(path="a", line=3) and ev != FileEvidence(path="a", line=4)
    assert len({ev, FileEvidence(path="a", line=3), MissingEvidence(what="a")}) == 2
    result = passed(finding("x", ev, FileEvidence(path="a", line=3), n=1))
    assert result.evidence == (ev,)
    assert pickle.loads(pickle.dumps(result)) == result
    assert Finding(message_id="m", evidence=[{"kind": "missing", "what": "w"}]).evidence == (MissingEvidence(what="w"),)


def test_copy_and_dump() -> None:
    result = CheckResult(status="FAIL", findings=[Finding(message_id="m", params={"a": (1, 2)})])
    assert result.status is Status.FAIL
    warned = result.model_copy(update={"status": Status.WARN})
    assert warned.status is Status.WARN and result.status is Status.FAIL and warned.findings == result.findings
    assert result.model_dump(mode="json") == {
        "status": "FAIL", "findings": [{"message_id": "m", "params": {"a": [1, 2]}, "evidence": []}], "name": None}
    pr = _pr(created_at="2026-10-29T10:00:00Z")
    dumped = pr.model_dump(mode="json", exclude={"body"}, exclude_none=True)
    assert dumped["created_at"] == "2026-10-29T10:00:00Z" and "body" not in dumped and "draft" in dumped
    tree = Tree(sha=SHA, files={"b": b"2", "a": b"1"})
    assert list(tree.paths()) == ["a", "b"]
    assert list(tree.model_copy(update={"files": {"c": b""}}).paths()) == ["c"]  # no stale index
    assert tree.model_dump(mode="json")["files"] == {"b": "2", "a": "1"}
