"""A verdict after the PR head moved: stale, or carried forward when provably unaffected.

The stand-in records a verdict on the signed commit, then `push()` adds a commit after the sign-off
(the sign-off still pins the old one) and the Action runs again, on the `pull_request_target`
`synchronize` event GitHub sends for the push (or as a re-run by workflow_dispatch). The verdict is
carried forward only when the commits since merely modify files the verdict did not read and the
PR's changed-file list is the same; anything else, or anything that cannot be read, is stale.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.github import test_action_as_shipped as shipped
from tests.github import test_action_publish as publish
from tests.github.standin import Fault, StandIn
from tests.kit import CASES, clone_bundle
from verifier.app.action import main

pytestmark = pytest.mark.skipif(not (CASES / "pr4524").is_dir(), reason="needs ../shared/cases")

# the fixtures and helpers the other Action tests use: `env` (in process), `step` (action.yml's script)
env = publish.env
step = shipped.step
_comment, _dispatch, _outputs = publish._comment, publish._dispatch, publish._outputs

HEAD = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml"
README = "inferencex-e2e/README.md"
CONTEXT = "codeowner-signoff-verify"


def _run(server: StandIn, *extra: str) -> int:
    return main(["--docs-proxy", server.docs_proxy, *extra])


def _synchronize(before: str, after: str) -> dict[str, Any]:
    return {"action": "synchronize", "number": 4524, "before": before, "after": after,
            "pull_request": {"number": 4524, "head": {"sha": after}}}


def _with_readme(tmp_path: Path, case: Path) -> Path:
    """The case with a README on both sides that no check reads (the collector never fetches it)."""
    copy = clone_bundle(case, tmp_path / "case")
    for side in ("base", "head"):
        (copy / "tree" / side / README).write_text("# InferenceX\n", encoding="utf-8")
    return copy


def _push(server: StandIn, changes: dict[str, bytes | None], **options: Any) -> str:
    """A push GitHub records after the sign-off (so the sign-off keeps pinning the commit it judged)."""
    signed = server.bundle.signoff.updated_at or server.bundle.signoff.created_at
    return server.push(changes, when=signed + dt.timedelta(hours=1), **options)


def _verdict_then_push(server: StandIn, env: Callable[..., dict[str, Path]], changes: dict[str, bytes | None],
                       event: str = "pull_request_target", **options: Any) -> tuple[str, dict[str, Path]]:
    env(server, "issue_comment", _comment())
    assert _run(server) == 0
    new = _push(server, changes, **options)
    files = env(server, event, _synchronize(HEAD, new) if event == "pull_request_target" else _dispatch())
    assert _run(server) == 0
    return new, files


def _on(server: StandIn, sha: str) -> list[tuple[str, str]]:
    return [(s["state"], s["description"]) for s in server.statuses if s["sha"] == sha]


def _banner(server: StandIn) -> list[str]:
    (ours,) = server.verdict_comments()
    lines = ours["body"].split("\n")
    assert lines[0].startswith(f"<!-- {CONTEXT} signoff=issuecomment-4711000001 sha={HEAD}")
    return lines[1:4]


def _recipe_touched(server: StandIn) -> dict[str, bytes | None]:
    return {RECIPE: server.blobs[server.trees[HEAD][RECIPE]] + b"# touched\n"}


@pytest.mark.parametrize(("case", "head_state"), [("pr4524-approved", "pending"), ("pr4524", "failure")],
                         ids=["approved-pending", "rejected-failure"])
@pytest.mark.parametrize("event", ["pull_request_target", "workflow_dispatch"], ids=["synchronize", "rerun"])
def test_a_push_touching_a_file_the_verdict_read_makes_it_stale(
    case: str, head_state: str, event: str, standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    server = standin(CASES / case)
    new, files = _verdict_then_push(server, env, _recipe_touched(server), event=event)
    stale = f"verdict is stale: head moved from {HEAD[:12]} to {new[:12]}; re-sign"
    assert _on(server, new) == [("pending", "verification in progress"), (head_state, stale)]
    assert all(state != "success" for state, _ in _on(server, new))
    verdict = "success" if case == "pr4524-approved" else "failure"
    assert _on(server, HEAD)[-1][0] == verdict, "the assessed commit keeps its verdict"
    en, gap, zh = _banner(server)
    assert en == (f"> ⚠️ **Stale verdict.** The PR head moved from `{HEAD}` to `{new}` after this verdict, and "
                  f"files it read changed (`{RECIPE}`). This verdict covers `{HEAD[:12]}` only; commit status "
                  f"`{CONTEXT}` on `{new[:12]}` is `{head_state}` until a CODEOWNER signs off again.")
    assert gap == ">" and zh.startswith("> ⚠️ **结论已过期。**") and f"（`{RECIPE}`）" in zh
    out = _outputs(files["output"])
    assert out["head-moved"] == "stale" and out["status"] == verdict and out["assessed-sha"] == HEAD
    assert out["reason"].endswith(stale)
    summary = files["summary"].read_text(encoding="utf-8")
    assert f"- Head moved to `{new}`: the verdict is stale (commit status `{head_state}` \"{stale}\")" in summary


def test_a_push_touching_only_an_unread_file_carries_the_verdict_forward(
    tmp_path: Path, standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    server = standin(_with_readme(tmp_path, CASES / "pr4524-approved"))
    # a merge of the base branch brings a README change: the PR's own diff stays what it was
    new, files = _verdict_then_push(server, env, {README: b"# InferenceX\n\nBenchmarks.\n"}, from_base=True)
    carried = f"carried forward from {HEAD[:12]} (no file it read changed): APPROVED"
    assert _on(server, new) == [("pending", "verification in progress"), ("success", carried)]
    assert _on(server, HEAD)[-1][0] == "success"
    en, gap, zh = _banner(server)
    assert en.startswith(f"> ℹ️ **Verdict carried forward to `{new[:12]}`.** The PR head moved from `{HEAD}` to "
                         f"`{new}` after this verdict. The 1 file changed since (`{README}`) existed before and is "
                         "none of the ")
    assert en.endswith(f"files this verdict read, and the PR's changed-file list is the same, so the verdict holds "
                       f"for `{new[:12]}` too: its commit status `{CONTEXT}` is `success`, carried forward from "
                       f"`{HEAD[:12]}`.")
    assert gap == ">" and zh.startswith(f"> ℹ️ **结论已沿用至 `{new[:12]}`。**") and f"沿用自 `{HEAD[:12]}`" in zh
    out = _outputs(files["output"])
    assert out["head-moved"] == "carried-forward" and out["status"] == "success"
    # a second run (another delivery of the event) changes nothing
    before = server.verdict_comments()[0]["body"]
    assert _run(server) == 0
    assert [c["body"] for c in server.verdict_comments()] == [before]
    assert _on(server, new)[-1] == ("success", carried)


def test_an_unread_file_entering_the_prs_diff_is_stale(
    tmp_path: Path, standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
) -> None:
    # pushed to the PR branch itself, README becomes a changed file: an owner must be found for it and
    # the scanners would read it, so nothing the verdict read vouches for it
    server = standin(_with_readme(tmp_path, CASES / "pr4524-approved"))
    new, files = _verdict_then_push(server, env, {README: b"# InferenceX\n\nBenchmarks.\n"})
    assert _on(server, new)[-1] == ("pending", f"verdict is stale: head moved from {HEAD[:12]} to {new[:12]}; re-sign")
    assert f"the PR's changed-file list changed (`{README}`)" in _banner(server)[0]


@pytest.mark.parametrize(("what", "words"), [
    ("added-file", "the commits since add, remove or rename files (`inferencex-e2e/docs/NEW.md`), which can change "
                   "what the checks find"),
    ("rewritten-history", "the new head does not descend from the assessed commit (history was rewritten)"),
    ("compare-unreadable", "the changes since could not be read from GitHub (GitHub answered 404)"),
])
def test_what_cannot_be_shown_unaffected_is_stale(what: str, words: str, standin: Callable[..., StandIn],
                                                  env: Callable[..., dict[str, Path]]) -> None:
    server = standin(CASES / "pr4524-approved")
    env(server, "issue_comment", _comment())
    assert _run(server) == 0
    # a file no check read at the assessed commit could still be one a check looked for and did not find
    new = _push(server, {"inferencex-e2e/docs/NEW.md": b"new\n"}, from_base=True)
    if what == "rewritten-history":
        del server.parents[new]  # a force-push: the new head is not built on the assessed commit
    if what == "compare-unreadable":
        server.faults.append(Fault(path=rf"/compare/{HEAD}\.\.\.", status=404, times=5))
    files = env(server, "pull_request_target", _synchronize(HEAD, new))
    assert _run(server) == 0
    assert _on(server, new)[-1][0] == "pending"
    assert f"after this verdict, and {words}." in _banner(server)[0]
    assert _outputs(files["output"])["head-moved"] == "stale"


def test_no_move_no_banner(standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]]) -> None:
    server = standin(CASES / "pr4524-approved")
    files = env(server, "pull_request_target", _synchronize("0" * 40, HEAD))
    assert _run(server) == 0
    assert server.verdict_comments()[0]["body"].split("\n")[1].startswith("## ")
    assert _outputs(files["output"])["head-moved"] == "" and {s["sha"] for s in server.statuses} == {HEAD}
    assert not any("/compare/" in r.path for r in server.log), "nothing to compare"


@pytest.mark.skipif(not shipped.CONSOLE.exists(), reason="needs the installed verify-pr console script")
def test_as_shipped_synchronize_after_a_push(standin: Callable[..., StandIn], step: shipped.Runner) -> None:
    server = standin(CASES / "pr4524-approved")
    done, _ = step(server, shipped._comment())
    assert done.returncode == 0 and server.statuses[-1]["state"] == "success", done.stdout + done.stderr
    new = _push(server, _recipe_touched(server))
    done, files = step(server, _synchronize(HEAD, new), name="pull_request_target")
    assert done.returncode == 0, done.stdout + done.stderr
    out = shipped._outputs(files["output"])
    assert out["head-moved"] == "stale" and out["status"] == "success" and out["assessed-sha"] == HEAD
    assert _on(server, new)[-1] == ("pending", f"verdict is stale: head moved from {HEAD[:12]} to {new[:12]}; "
                                               "re-sign")
    assert _banner(server)[0].startswith("> ⚠️ **Stale verdict.**")
    assert json.loads(files["event"].read_text(encoding="utf-8"))["action"] == "synchronize"
