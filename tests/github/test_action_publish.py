"""The Action against the stand-in: outputs, annotations, SARIF, dry-run, exit 2, requester and scope gates,
draft/closed, identity with App tokens, the keyed marker, de-duplication and retraction."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.github.conftest import REPO
from tests.github.standin import TOKEN, StandIn
from tests.kit import CASES, clone_bundle, edit_yaml
from verifier.app.action import key_is_valid, main, sign_body

HEAD = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
KEY = "issuecomment-4711000001"
SIGNOFF_URL = f"https://github.com/{REPO}/pull/4524#{KEY}"
RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml"
SECRET = "s3cret-marker-key"
PHRASE = "As a PR reviewer and CODEOWNER, I have reviewed this and have:"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[str, Path]]:
    """Point the Action at a stand-in with an event payload; returns the summary and output files."""

    def setup(server: StandIn, name: str, payload: dict[str, Any]) -> dict[str, Path]:
        event = tmp_path / f"{name}.json"
        event.write_text(json.dumps(payload), encoding="utf-8")
        files = {"summary": tmp_path / "summary.md", "output": tmp_path / "output.txt"}
        for path in files.values():
            path.unlink(missing_ok=True)
        for key, value in {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": server.api_url,
                           "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(event),
                           "GITHUB_STEP_SUMMARY": str(files["summary"]), "GITHUB_OUTPUT": str(files["output"]),
                           "HF_ENDPOINT": server.hf_endpoint, "GITHUB_RUN_ID": "777",
                           "GITHUB_SERVER_URL": "https://github.com"}.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("INPUT_MARKER_SECRET", raising=False)
        return files

    return setup


def _run(server: StandIn, *extra: str) -> int:
    return main(["--docs-proxy", server.docs_proxy, *extra])


def _outputs(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    return {m.group(1): m.group(3) for m in re.finditer(r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", text, re.M | re.S)}


def _comment(body: str = PHRASE, login: str = "nvpohanh", action: str = "created", cid: int = 4711000001,
             sender: str | None = None, before: str | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "action": action,
        "issue": {"number": 4524, "state": "open", "pull_request": {"url": "x"}},
        "comment": {"id": cid, "body": body, "user": {"login": login, "type": "User"},
                    "html_url": f"https://github.com/{REPO}/pull/4524#issuecomment-{cid}"},
        "sender": {"login": sender or login, "type": "User"},
    }
    if before is not None:
        event["changes"] = {"body": {"from": before}}
    return event


def _dispatch(sender: str = "nvpohanh", kind: str = "User") -> dict[str, Any]:
    return {"inputs": {"signoff_url": SIGNOFF_URL, "pr_number": "4524"}, "sender": {"login": sender, "type": kind}}


# -- item 1: outputs, annotations, SARIF, dry-run, exit 2, summary --------------------------------------------


def test_outputs_annotations_and_summary(standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
                                         capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    server = standin()
    files = env(server, "workflow_dispatch", _dispatch())
    sarif = tmp_path / "out.sarif"
    assert _run(server, "--sarif", str(sarif)) == 0
    out = _outputs(files["output"])
    assert out["verdict"] == "REJECTED" and out["failing-checks"] == "13" and out["status"] == "failure"
    assert out["comment-url"].endswith(f"#issuecomment-{server.verdict_comments()[0]['id']}")
    assert out["assessed-sha"] == HEAD and out["pr-number"] == "4524"
    stdout = capsys.readouterr().out
    errors = [line for line in stdout.splitlines() if line.startswith("::error ")]
    assert f"::error file={RECIPE},line=39,title=Check 13 (Draft precision)%3A FAIL::" in stdout
    assert all("file=inferencex-e2e/" in line for line in errors)
    summary = files["summary"].read_text(encoding="utf-8")
    assert summary.startswith("## codeowner-signoff-verify: ❌❌❌ **REJECTED** ❌❌❌")
    assert "| 13 Draft precision | ❌ FAIL |" in summary and "| 0 CODEOWNER | ✅ PASS |" in summary
    assert f"- Verdict comment: {out['comment-url']}" in summary and f"`{HEAD}`" in summary
    assert sarif.is_file()


SARIF_ESSENTIALS = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name", "rules"],
                    "properties": {"rules": {"type": "array", "items": {"type": "object", "required": ["id"]}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["ruleId", "message", "locations", "level"],
                    "properties": {
                        "level": {"enum": ["error", "warning", "note", "none"]},
                        "message": {"type": "object", "required": ["text"]},
                        "locations": {"type": "array", "minItems": 1, "items": {
                            "type": "object", "required": ["physicalLocation"],
                            "properties": {"physicalLocation": {
                                "type": "object", "required": ["artifactLocation"],
                                "properties": {
                                    "artifactLocation": {"type": "object", "required": ["uri"],
                                                         "properties": {"uri": {"type": "string",
                                                                                "pattern": "^[^/]"}}},
                                    "region": {"type": "object", "required": ["startLine"],
                                               "properties": {"startLine": {"type": "integer", "minimum": 1}}},
                                }}}}}}}}},
        }},
    },
}


def test_sarif_format_follows_sarif_2_1_0() -> None:
    from checks import judge
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies
    from verifier.render import OutputFormat, renderer

    doc = json.loads(renderer(OutputFormat.SARIF)(judge(read_bundle(CASES / "pr4524"), load_policies())))
    jsonschema.validate(doc, SARIF_ESSENTIALS)
    results = doc["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"check-13-draft-precision"}
    # one result per location (GitHub shows only a result's first one), each with its own fingerprint
    assert all(len(r["locations"]) == 1 and r["partialFingerprints"]["primaryLocationLineHash"] for r in results)
    locations = {(loc["physicalLocation"]["artifactLocation"]["uri"], loc["physicalLocation"]["region"]["startLine"])
                 for r in results for loc in r["locations"]}
    assert locations == {(RECIPE, 39), (RECIPE.replace("agentic.yaml", "agentic-tp2.yaml"), 37)}
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    rule_ids = [rule["id"] for rule in rules]
    assert len(rule_ids) == 19 and all(r["ruleId"] == rule_ids[r["ruleIndex"]] for r in results)
    assert all(rule["fullDescription"]["text"] and rule["help"]["text"] for rule in rules)
    assert doc["runs"][0]["automationDetails"]["id"] == "codeowner-signoff-verify/"  # no PR number: one category


def test_dry_run_posts_nothing(standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]]) -> None:
    server = standin()
    files = env(server, "issue_comment", _comment())
    assert _run(server, "--dry-run") == 0
    assert server.writes() == [] and server.statuses == [] and server.verdict_comments() == []
    out = _outputs(files["output"])
    assert out["verdict"] == "REJECTED" and out["comment-url"] == "" and out["status"] == "failure"
    summary = files["summary"].read_text(encoding="utf-8")
    assert "Dry run: nothing was posted" in summary and "| 13 Draft precision | ❌ FAIL |" in summary


def test_exit_2_is_an_error_annotation_with_the_reason(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = standin()
    files = env(server, "workflow_dispatch", _dispatch())
    monkeypatch.setenv("GITHUB_TOKEN", "wrong")
    assert _run(server) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("::error title=codeowner-signoff-verify failed::")
    assert "rejected the token" in lines[0]
    assert _outputs(files["output"])["status"] == "error"


# -- item 3: requester and scope rules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sender", "kind", "answer", "expected"),
    [
        ("ispobock", "User", None, "may not start a verification"),           # read / read in the bundle
        ("claude[bot]", "Bot", None, "bots never start a verification"),
        ("triager", "User", (200, {"permission": "write", "role_name": "triage"}), "may not start a verification"),
    ],
    ids=["reader", "bot", "write-permission-triage-role"],
)
def test_dispatch_requester_needs_write_maintain_or_admin(
    sender: str, kind: str, answer: tuple[int, Any] | None, expected: str,
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]], capsys: pytest.CaptureFixture[str],
) -> None:
    server = standin()
    if answer:
        server.permission_answers[sender] = answer
    files = env(server, "workflow_dispatch", _dispatch(sender, kind))
    assert _run(server) == 0
    assert expected in capsys.readouterr().out
    assert server.writes() == [] and _outputs(files["output"])["status"] == "skipped"


def test_unreadable_permission_is_not_verified(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]], capsys: pytest.CaptureFixture[str],
) -> None:
    server = standin()
    server.permission_answers["nvpohanh"] = (403, {"message": "Resource not accessible by integration"})
    env(server, "issue_comment", _comment())
    assert _run(server) == 2
    assert "not verified" in capsys.readouterr().out
    assert not any(s["state"] == "success" for s in server.statuses) and server.verdict_comments() == []


def _core_only_case(tmp_path: Path, owners: str) -> Path:
    case = clone_bundle(CASES / "pr4524", tmp_path / "case")
    (case / "tree" / "base" / ".github" / "CODEOWNERS").write_text(
        f"* @InferenceX/core\n/inferencex-e2e/ {owners}\n", encoding="utf-8")
    edit_yaml(case / "github.yaml", lambda d: d["permissions"].update({"boss": {"permission": "admin",
                                                                                "role_name": "admin"}}))
    return case


def test_pr_owned_only_by_core_and_admins_needs_no_signoff(
    tmp_path: Path, standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    server = standin(_core_only_case(tmp_path, "@boss @SemiAnalysisAI/core"))
    files = env(server, "issue_comment", _comment())
    assert _run(server) == 0
    assert server.verdict_comments() == []
    assert [(s["state"], s["sha"]) for s in server.statuses] == [("success", HEAD)]
    assert server.statuses[0]["description"].startswith("no CODEOWNER sign-off needed")
    assert _outputs(files["output"])["status"] == "no-signoff-needed"
    assert "no sign-off needed" in files["summary"].read_text(encoding="utf-8")


@pytest.mark.parametrize("owners", ["@boss @nvpohanh", "@boss @InferenceX/b300-team", "@boss owner@example.com"],
                         ids=["non-admin-user", "other-team", "email"])
def test_any_other_owner_needs_a_signoff(owners: str, tmp_path: Path, standin: Callable[..., StandIn],
                                         env: Callable[..., dict[str, Path]]) -> None:
    server = standin(_core_only_case(tmp_path, owners))
    files = env(server, "issue_comment", _comment())
    _run(server)
    assert _outputs(files["output"])["status"] != "no-signoff-needed"


def test_an_admin_whose_permission_cannot_be_read_grants_no_exemption(
    tmp_path: Path, standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    server = standin(_core_only_case(tmp_path, "@boss"))
    server.permission_answers["boss"] = (403, {"message": "forbidden"})
    files = env(server, "issue_comment", _comment())
    _run(server)
    assert _outputs(files["output"])["status"] == "failure"  # judged: Check 13 fails, as for pr4524
    assert len(server.verdict_comments()) == 1


@pytest.mark.parametrize(("override", "word"), [({"draft": True}, "draft"), ({"state": "closed"}, "closed")])
def test_draft_and_closed_prs_are_not_verified(
    override: dict[str, Any], word: str, standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = standin()
    server.pull_overrides.update(override)
    files = env(server, "workflow_dispatch", _dispatch())
    assert _run(server) == 0
    assert f"is {'a ' if word == 'draft' else ''}{word}" in capsys.readouterr().out
    assert server.writes() == [] and _outputs(files["output"])["status"] == "skipped"


# -- item 5: identity, keyed marker, duplicates --------------------------------------------------------------


def test_app_token_finds_its_own_comment_by_the_status_creator(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    server = standin(login="infx-verifier[bot]", user_readable=False)  # GET /user is 403
    env(server, "issue_comment", _comment())
    assert _run(server) == 0 and _run(server) == 0
    ours = server.verdict_comments()
    assert [c["login"] for c in ours] == ["infx-verifier[bot]"]


def test_marker_text_by_the_same_account_without_our_key_is_never_edited(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = standin()
    forged = server.add_comment("github-actions[bot]", f"<!-- codeowner-signoff-verify signoff={KEY} sha={HEAD} -->\n"
                                "## ✅✅✅ **APPROVED** ✅✅✅", bot=True)
    env(server, "issue_comment", _comment())
    monkeypatch.setenv("INPUT_MARKER_SECRET", SECRET)
    assert _run(server) == 0
    assert forged["body"].endswith("APPROVED** ✅✅✅") and forged in server.comments
    mine = [c for c in server.verdict_comments() if c is not forged]
    assert len(mine) == 1 and key_is_valid(mine[0]["body"], SECRET, REPO, 4524)
    assert _run(server) == 0  # idempotent
    assert len(server.verdict_comments()) == 2 and forged["body"].endswith("APPROVED** ✅✅✅")


def test_two_of_ours_update_the_newest_and_delete_the_duplicate(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = standin()
    stale = sign_body(f"<!-- codeowner-signoff-verify signoff={KEY} sha={HEAD} -->\nold", SECRET, REPO, 4524)
    older = server.add_comment("github-actions[bot]", stale, bot=True)
    newer = server.add_comment("github-actions[bot]", stale, bot=True)
    env(server, "issue_comment", _comment())
    monkeypatch.setenv("INPUT_MARKER_SECRET", SECRET)
    assert _run(server) == 0
    assert server.verdict_comments() == [newer] and "REJECTED" in newer["body"]
    assert ("DELETE", f"/api/v3/repos/{REPO}/issues/comments/{older['id']}") in [(r.method, r.path)
                                                                                  for r in server.writes()]


def test_key_covers_the_whole_body() -> None:
    body = sign_body(f"<!-- codeowner-signoff-verify signoff={KEY} sha={HEAD} -->\nREJECTED", SECRET, REPO, 4524)
    assert key_is_valid(body, SECRET, REPO, 4524)
    assert not key_is_valid(body.replace("REJECTED", "APPROVED"), SECRET, REPO, 4524)
    assert not key_is_valid(body, "other", REPO, 4524) and not key_is_valid(body, SECRET, REPO, 1)


# -- item 6: retraction ------------------------------------------------------------------------------------


def _verified(server: StandIn, env: Callable[..., dict[str, Path]]) -> None:
    env(server, "issue_comment", _comment())
    assert _run(server) == 0
    assert server.statuses[-1]["state"] == "failure"  # pr4524 is REJECTED; what matters is what comes next
    server.statuses[-1]["state"] = "success"


def test_deleting_the_signoff_resets_status_and_updates_our_comment(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    server = standin(CASES / "pr4524-approved")
    env(server, "issue_comment", _comment())
    assert _run(server) == 0 and server.statuses[-1]["state"] == "success"
    files = env(server, "issue_comment", _comment(action="deleted"))
    assert _run(server) == 0
    assert server.statuses[-1]["state"] == "failure" and server.statuses[-1]["sha"] == HEAD
    assert server.statuses[-1]["description"].startswith("sign-off retracted")
    ours = server.verdict_comments()
    assert len(ours) == 1 and "Sign-off retracted" in ours[0]["body"] and "APPROVED" not in ours[0]["body"]
    assert _outputs(files["output"])["status"] == "retracted"


def test_editing_the_phrase_away_retracts(standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]]) -> None:
    server = standin(CASES / "pr4524-approved")
    env(server, "issue_comment", _comment())
    assert _run(server) == 0
    env(server, "issue_comment", _comment(body="never mind", action="edited", before=PHRASE))
    assert _run(server) == 0
    assert server.statuses[-1]["state"] == "failure" and "retracted" in server.statuses[-1]["description"]


def test_an_edit_by_another_writer_does_not_reverify_as_the_author(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    server = standin(CASES / "pr4524-approved")
    env(server, "issue_comment", _comment())
    assert _run(server) == 0 and server.statuses[-1]["state"] == "success"
    env(server, "issue_comment", _comment(action="edited", sender="kedarpotdar-nv", before=PHRASE + " (old)"))
    assert _run(server) == 0
    assert server.statuses[-1]["state"] == "failure"
    assert "edited by kedarpotdar-nv, not by its author" in server.statuses[-1]["description"]


def test_the_authors_own_edit_reverifies(standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]]) -> None:
    server = standin(CASES / "pr4524-approved")
    env(server, "issue_comment", _comment(action="edited", before=PHRASE + " (old)"))
    assert _run(server) == 0
    assert server.statuses[-1]["state"] == "success" and len(server.verdict_comments()) == 1


def test_deleting_a_signoff_without_a_verdict_of_ours_changes_nothing(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    server = standin()
    env(server, "issue_comment", _comment(login="mallory", cid=4711999999, action="deleted"))
    assert _run(server) == 0
    assert server.writes() == []


def test_a_push_without_an_eligible_signoff_awaits_one(
    tmp_path: Path, standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path / "case")
    edit_yaml(case / "signoff.yaml", lambda d: d.update({"author": "ispobock"}))
    edit_yaml(case / "comments.yaml", lambda d: [c for c in d if c["id"] != 4711000001])
    server = standin(case)
    files = env(server, "pull_request_target", {"action": "synchronize", "number": 4524,
                                                "pull_request": {"number": 4524}})
    assert _run(server) == 0
    assert _outputs(files["output"])["status"] == "awaiting-signoff"
    assert [s["state"] for s in server.statuses] == ["pending", "failure"] and server.verdict_comments() == []


def test_a_run_that_fails_after_the_pending_status_leaves_error_not_pending(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    from tests.github.standin import Fault

    server = standin()
    server.faults.append(Fault(path=r"/pulls/4524/commits$", status=401, times=10))
    env(server, "workflow_dispatch", _dispatch())
    assert _run(server) == 2
    assert [s["state"] for s in server.statuses] == ["pending", "error"]
    assert server.verdict_comments() == []


def test_annotations_cannot_inject_workflow_commands() -> None:
    from types import SimpleNamespace

    from checks import judge
    from verifier.app.action import annotations
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies
    from verifier.core.results import FileEvidence, failed, finding

    evil = FileEvidence(path=f"{RECIPE}", line=3, text="x")
    module = SimpleNamespace(ID=13, __name__="fake13",
                             check=lambda ctx: failed(finding("check-crashed", evil, error="a\n::add-mask::x %0A")))
    policies = dict(load_policies())  # a registry row whose name needs escaping in an annotation title
    rows = policies["checks"]["checks"]
    policies["checks"] = {"checks": {**rows, "13": {**rows["13"], "name": "Draft, precision"}}}
    lines = annotations(judge(read_bundle(CASES / "pr4524"), policies, [module]), 50)
    assert len(lines) == 1 and "\n" not in lines[0]
    assert lines[0].startswith(f"::error file={RECIPE},line=3,title=Check 13 (Draft%2C precision)%3A FAIL::")
    assert "%250A" in lines[0]


def test_a_huge_verdict_posts_a_capped_comment_pointing_at_the_job_summary(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    import checks
    from tests.core.test_comment import _huge, _module

    original = checks.judge
    from verifier.core.results import finding, passed

    modules = [_module(i, (lambda ctx: _huge(ctx, "FAIL")) if i == 13 else (lambda ctx: passed(finding(
        "check-crashed", error="e")))) for i in range(19)]
    monkeypatch.setattr(checks, "judge", lambda bundle, policies, selected=None, **_: original(
        bundle, policies, modules))
    server = standin()
    files = env(server, "issue_comment", _comment())
    assert _run(server) == 0
    (ours,) = server.verdict_comments()
    assert len(ours["body"]) <= 65536 and "## ❌❌❌ **REJECTED** ❌❌❌" in ours["body"]
    assert "[the job summary of run 777](https://github.com/SemiAnalysisAI/InferenceX/actions/runs/777)" in ours["body"]
    assert "| 13 Draft precision | ❌ FAIL |" in files["summary"].read_text(encoding="utf-8")


def test_a_crash_is_exit_2_and_an_error_status_never_success(
    standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import checks

    def boom(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("bug\nwith newline")

    monkeypatch.setattr(checks, "judge", boom)
    server = standin()
    env(server, "issue_comment", _comment())
    assert _run(server) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "::error title=codeowner-signoff-verify failed::internal error: RuntimeError: bug with newline"
    assert [s["state"] for s in server.statuses] == ["pending", "error"] and server.verdict_comments() == []
