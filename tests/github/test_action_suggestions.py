"""Suggestions reviewers can apply: the Action's opt-in `suggest-fixes` posts a review comment with a
GitHub ```suggestion block on each line the PR adds where a finding has a mechanical fix, against the
stand-in on 127.0.0.1 (which refuses, as GitHub does, a review comment on a line outside the diff).

pr4524 fails Check 13 for `speculative-draft-kv-cache-dtype: fp8_e4m3`, added at agentic.yaml:39 and
agentic-tp2.yaml:37 (a new file); the fix is deleting that line. The other fixes of the table
(a prohibited environment variable set off, a fork image moved to the upstream org) are exercised on
the project's own Check 13 and Check 6 fixtures.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.github import test_action_as_shipped as shipped
from tests.github import test_action_publish as publish
from tests.github.conftest import REPO
from tests.github.standin import StandIn
from tests.kit import CASES, FIXTURES, PROJECT
from verifier.app.action import Identity, key_is_valid, main, publish_suggestions, sign_body
from verifier.app.suggestions import (
    FIXES,
    Site,
    Suggestion,
    added_lines,
    delete_flag_line,
    env_off,
    plan_suggestions,
    upstream_image,
)
from verifier.core.results import FileEvidence, finding

pytestmark = pytest.mark.skipif(not (CASES / "pr4524").is_dir(), reason="needs ../shared/cases")

# the fixtures and helpers the other Action tests use: `env` (in process), `step` (action.yml's script)
env = publish.env
step = shipped.step
_dispatch, _outputs = publish._dispatch, publish._outputs

HEAD = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
DIR = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/"
RECIPE, TP2 = DIR + "agentic.yaml", DIR + "agentic-tp2.yaml"
DRAFT_KV_LINE = "        speculative-draft-kv-cache-dtype: fp8_e4m3"
MARKER = "<!-- codeowner-signoff-verify"


def _run(server: StandIn, *extra: str) -> int:
    return main(["--docs-proxy", server.docs_proxy, *extra])


def _suggestions(server: StandIn) -> list[dict[str, Any]]:
    return server.posted_review_comments()


def _review_posts(server: StandIn) -> list[Any]:
    return [w for w in server.writes() if w.path.endswith("/pulls/4524/comments")]


# -- through verifier.app.action.main, in process -------------------------------------------------------------


def test_a_suggestion_deletes_the_draft_kv_line(standin: Callable[..., StandIn],
                                                 env: Callable[..., dict[str, Path]]) -> None:
    server = standin()
    files = env(server, "workflow_dispatch", _dispatch())
    assert _run(server, "--suggest-fixes") == 0
    posted = {(c["path"], c["line"]): c for c in _suggestions(server)}
    assert set(posted) == {(RECIPE, 39), (TP2, 37)}
    ours = posted[(RECIPE, 39)]
    assert ours["commit_id"] == HEAD and ours["side"] == "RIGHT" and ours["login"] == "github-actions[bot]"
    body = ours["body"]
    assert re.fullmatch(rf"{MARKER}-fix fix=[0-9a-f]{{16}} -->", body.splitlines()[0])
    assert "**Check 13 (Draft precision)**: remove the draft-only KV-cache dtype override " \
           "`speculative-draft-kv-cache-dtype`" in body and "检查 13（Draft precision）" in body
    assert body.endswith("\n```suggestion\n```\n"), "an empty suggestion block deletes the line"
    # the review-comment events our comment causes never pass the workflow's prefilter
    assert "CODEOWNER" not in body
    request = next(w for w in _review_posts(server) if w.body["path"] == RECIPE)
    assert request.body == {"body": body, "commit_id": HEAD, "path": RECIPE, "line": 39, "side": "RIGHT"}
    assert _outputs(files["output"])["suggestions"] == "2"
    assert "- Suggestions: 2 posted, 0 updated, 0 already present" in files["summary"].read_text(encoding="utf-8")
    assert len(server.verdict_comments()) == 1


def test_suggestions_are_off_by_default(standin: Callable[..., StandIn],
                                        env: Callable[..., dict[str, Path]]) -> None:
    server = standin()
    files = env(server, "workflow_dispatch", _dispatch())
    assert _run(server) == 0
    assert _suggestions(server) == [] and _review_posts(server) == []
    assert _outputs(files["output"])["suggestions"] == "0"


def test_none_in_dry_run(standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]]) -> None:
    server = standin()
    files = env(server, "workflow_dispatch", _dispatch())
    assert _run(server, "--suggest-fixes", "--dry-run") == 0
    assert server.writes() == [] and _suggestions(server) == []
    summary = files["summary"].read_text(encoding="utf-8")
    assert f"Dry run: 2 suggestion(s) would be posted: `{RECIPE}:39`, `{TP2}:37`" in summary


def test_none_twice_a_rerun_skips_or_updates(standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    server = standin()
    files = env(server, "workflow_dispatch", _dispatch())
    monkeypatch.setenv("INPUT_MARKER_SECRET", "s3cret")
    assert _run(server, "--suggest-fixes") == 0
    first = [dict(c) for c in _suggestions(server)]
    assert len(first) == 2 and all(key_is_valid(c["body"], "s3cret", REPO, 4524) for c in first)
    assert _run(server, "--suggest-fixes") == 0
    assert [c["body"] for c in _suggestions(server)] == [c["body"] for c in first]
    assert len(_review_posts(server)) == 2, "the second run posted nothing"
    assert "- Suggestions: 0 posted, 0 updated, 2 already present" in files["summary"].read_text(encoding="utf-8")
    # an older wording of the same fix (same marker key) is edited in place, never posted again
    old = _suggestions(server)[0]
    unkeyed = re.sub(r" key=[0-9a-f]{32}(?= -->)", "", old["body"], count=1)
    old["body"] = sign_body(unkeyed.replace("remove the", "delete the"), "s3cret", REPO, 4524)
    assert key_is_valid(old["body"], "s3cret", REPO, 4524)
    assert _run(server, "--suggest-fixes") == 0
    assert len(_suggestions(server)) == 2 and old["body"] == first[0]["body"]
    patches = [w for w in server.writes() if w.method == "PATCH" and "/pulls/comments/" in w.path]
    assert [w.path.rsplit("/", 1)[-1] for w in patches] == [str(old["id"])]
    # a comment by the same account that carries the marker text without our key is not taken for ours
    forged = dict(first[1], id=server.new_id(), posted=True, body=first[1]["body"].replace(" key=", " k="))
    server.extra_review_comments.insert(0, forged)
    assert _run(server, "--suggest-fixes") == 0
    assert len(_review_posts(server)) == 2 and forged["body"].count(" k=") == 1


def test_none_outside_the_diff(standin: Callable[..., StandIn], env: Callable[..., dict[str, Path]]) -> None:
    server = standin()
    # GitHub's patch of agentic.yaml without line 39 in its hunks (as if the line predated the PR)
    server.patch_overrides[RECIPE] = ("@@ -70,6 +72,7 @@\n         speculative-algorithm: null\n"
                                      "+        speculative-draft-kv-cache-dtype: null\n         max-running-requests: 2")
    env(server, "workflow_dispatch", _dispatch())
    assert _run(server, "--suggest-fixes") == 0
    assert [(c["path"], c["line"]) for c in _suggestions(server)] == [(TP2, 37)]
    assert all(w.body["path"] != RECIPE for w in _review_posts(server)), "not even tried"


def test_a_context_line_is_not_a_changed_line(standin: Callable[..., StandIn],
                                              env: Callable[..., dict[str, Path]]) -> None:
    server = standin()
    # line 39 inside a hunk, but as context: the PR does not change it
    server.patch_overrides[RECIPE] = ("@@ -38,3 +38,4 @@\n         # FP8 draft KV\n"
                                      f" {DRAFT_KV_LINE}\n+        watchdog-timeout: 1800\n         enable-metrics: true")
    env(server, "workflow_dispatch", _dispatch())
    assert _run(server, "--suggest-fixes") == 0
    assert [(c["path"], c["line"]) for c in _suggestions(server)] == [(TP2, 37)]


def test_github_refusing_a_line_skips_it(standin: Callable[..., StandIn]) -> None:
    from verifier.record.github.client import Client

    server = standin()
    client = Client("standin-token", server.api_url, seconds_between_writes=0.0)
    outside = Suggestion(13, "Draft precision", "draft-kv-below-target", RECIPE, 5, "x", (), "en", "zh")
    inside = Suggestion(13, "Draft precision", "draft-kv-below-target", RECIPE, 39, DRAFT_KV_LINE, (), "en", "zh")
    try:
        done = publish_suggestions(client, REPO, 4524, HEAD, Identity("github-actions[bot]", "test"),
                                   [outside, inside], None, MARKER)
    finally:
        client.close()
    assert (done.posted, done.refused) == (1, 1)
    assert [(c["path"], c["line"]) for c in _suggestions(server)] == [(RECIPE, 39)]


# -- the table of mechanical fixes ---------------------------------------------------------------------------


def test_every_fix_names_message_ids_the_templates_define() -> None:
    for fix in FIXES:
        template = (PROJECT / "templates" / "checks" / f"c{fix.check:02d}.en.md.j2").read_text(encoding="utf-8")
        for message_id in fix.message_ids:
            assert f"macro {message_id.replace('-', '_')}(p)" in template, message_id


@pytest.mark.parametrize(("fixture", "path", "line", "before", "after"), [
    ("c06/fail-fork-image", "inferencex-e2e/configs/nvidia-master.yaml", 2,
     "  image: ghcr.io#quill-ai/sglang:v0.5.23-quill", ("  image: lmsysorg/sglang:v0.5.23-quill",)),
    ("c13/fail-prohibited-env",
     "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/quill2flash/sglang/b300-fp4-mtp/agentic.yaml", 32,
     "        SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '1'", ("        SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: '0'",)),
    ("c13/fail-draft-kv-fp8",
     "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/quill2flash/sglang/b300-fp4-mtp/agentic.yaml", 30,
     "        speculative-draft-kv-cache-dtype: fp8_e4m3", ()),
], ids=["upstream-image-org", "prohibited-env-off", "draft-kv-delete"])
def test_each_fix_on_a_fixture(fixture: str, path: str, line: int, before: str, after: tuple[str, ...]) -> None:
    from checks import judge
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies

    policies = load_policies()
    bundle = read_bundle(FIXTURES / fixture)
    report = judge(bundle, policies)
    every_line = {p: frozenset(range(1, 500)) for p in bundle.head.files}
    (found,) = plan_suggestions(report, policies, every_line)
    assert (found.path, found.line, found.original, found.replacement) == (path, line, before, after)
    assert plan_suggestions(report, policies, {}) == [], "no line in the diff, no suggestion"


def _site(line: str, item: Any, lines: tuple[str, ...] = ("a: 1", "{}", "b: 2"), text: str | None = None) -> Site:
    from verifier.core.policy import load_policies

    filled = tuple(line if x == "{}" else x for x in lines)
    return Site(filled, filled.index(line), item, FileEvidence(path="x", line=2, text=text), load_policies())


@pytest.mark.parametrize(("line", "after"), [
    ("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1", "export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0"),
    ('  SGLANG_GLM_NEXTN_MOE_PTPC: "true"', '  SGLANG_GLM_NEXTN_MOE_PTPC: "0"'),
    ("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 python3 -m x", "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0 python3 -m x"),
    ('"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": "1",', '"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": "0",'),
    ("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE_X=1", None),
    ("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=off", None),
    ("    env:", None),
])
def test_prohibited_env_is_set_off(line: str, after: str | None) -> None:
    name = "SGLANG_GLM_NEXTN_MOE_PTPC" if "GLM" in line else "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"
    edit = env_off(_site(line, finding("prohibited-env", flag=name, value="1")))
    assert (edit.lines if edit else None) == (None if after is None else (after,))


@pytest.mark.parametrize(("line", "lines", "deleted"), [
    ("  --speculative-draft-kv-cache-dtype fp8_e4m3 \\", ("cmd \\", "{}", "  --x 1"), True),
    ("  --speculative-draft-kv-cache-dtype fp8_e4m3", ("cmd \\", "{}"), False),  # the command's last line
    ("  speculative_draft_kv_cache_dtype: fp8  # x", ("  a: 1", "{}"), True),
    ("  speculative-draft-kv-cache-dtype: fp8", ("x:", "{}", "y: 1"), False),  # the mapping's only key
    ("  extra_args: ['--speculative-draft-kv-cache-dtype=fp8']", ("  a: 1", "{}"), False),
])
def test_draft_kv_line_is_deleted_only_when_that_is_mechanical(line: str, lines: tuple[str, ...],
                                                                deleted: bool) -> None:
    item = finding("draft-kv-below-target", flag="speculative-draft-kv-cache-dtype", value="fp8")
    edit = delete_flag_line(_site(line, item, lines))
    assert (edit is not None and edit.lines == ()) is deleted


@pytest.mark.parametrize(("raw", "after"), [
    ("myfork/sglang:v0.5.5-cu130", "lmsysorg/sglang:v0.5.5-cu130"),
    ("ghcr.io/x/sglang-rocm:v1@sha256:abc", "lmsysorg/sglang-rocm:v1@sha256:abc"),
    ("foo/bar:1", None),  # no upstream repository of that name: not mechanical
])
def test_image_moves_to_the_upstream_org(raw: str, after: str | None) -> None:
    item = finding("image-not-upstream", key="k", image=raw, allowed=["lmsysorg/sglang", "lmsysorg/sglang-rocm"])
    edit = upstream_image(_site(f"  image: {raw}", item, text=f"image: {raw}"))
    assert (edit.lines if edit else None) == (None if after is None else (f"  image: {after}",))


def test_added_lines_reads_hunks() -> None:
    patch = "@@ -1,3 +1,4 @@\n a\n+b\n c\n-d\n+e\n\\ No newline at end of file\n@@ -10 +11,2 @@\n+f\n g"
    assert added_lines(patch) == {2, 4, 11}
    assert added_lines(None) == frozenset() and added_lines("") == frozenset()


# -- through action.yml's own step script ---------------------------------------------------------------------


@pytest.mark.skipif(not shipped.CONSOLE.exists(), reason="needs the installed verify-pr console script")
def test_as_shipped_suggest_fixes_input(standin: Callable[..., StandIn], step: shipped.Runner) -> None:
    server = standin()
    done, files = step(server, shipped._comment(), suggest_fixes="true")
    assert done.returncode == 0, done.stdout + done.stderr
    assert {(c["path"], c["line"]) for c in _suggestions(server)} == {(RECIPE, 39), (TP2, 37)}
    assert shipped._outputs(files["output"])["suggestions"] == "2"
    done, files = step(server, shipped._comment(), suggest_fixes="true", dry_run="true")
    assert done.returncode == 0 and len(_review_posts(server)) == 2, done.stdout + done.stderr
