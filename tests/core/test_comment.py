"""The PR comment: the blocking paragraph once, one path style, and a cap under GitHub's 65,536 characters."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from checks import judge
from tests.kit import CASES
from verifier.core.bundle import read_bundle
from verifier.core.policy import load_policies
from verifier.core.results import FileEvidence, failed, finding, passed, warned
from verifier.render.markdown import GITHUB_COMMENT_LIMIT, clip, render_markdown, repository_paths

RECIPE = "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml"


def _module(check_id: int, fn: Any) -> Any:
    return SimpleNamespace(ID=check_id, check=fn, __name__=f"fake{check_id}")


def _paragraphs(md: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", md) if len(p.strip()) > 80]


def test_pr4524_comment_repeats_no_paragraph_and_uses_repository_paths() -> None:
    md = render_markdown(judge(read_bundle(CASES / "pr4524"), load_policies()))
    english = md.split("<summary>中文</summary>")[0]
    paragraphs = _paragraphs(english)
    assert len(paragraphs) == len(set(paragraphs))
    sentences = [s for p in paragraphs for s in re.split(r"(?<=[.!?]) ", p) if len(s) > 60]
    assert len(sentences) == len(set(sentences)), "a sentence of the comment appears twice"
    assert "Blocking: Check 13 (Draft precision)." in english
    # one path style: every code span naming the recipe carries the inferencex-e2e/ prefix the links carry
    spans = re.findall(r"`([^`\n]*minimaxm31flash/sglang/b300-fp4-mtp/agentic\.yaml[^`\n]*)`", md)
    assert spans and all(s.startswith("inferencex-e2e/") for s in spans)
    assert f"/inferencex-e2e/{RECIPE}#L39" in md


def test_repository_paths_touch_only_real_files() -> None:
    bundle = read_bundle(CASES / "pr4524")
    assert repository_paths(f"`{RECIPE}:39` and `not/a/file.yaml` and `{RECIPE}x`", bundle) == (
        f"`inferencex-e2e/{RECIPE}:39` and `not/a/file.yaml` and `{RECIPE}x`")
    assert repository_paths("`.github/CODEOWNERS`", bundle) == "`.github/CODEOWNERS`"


def _huge(ctx: Any, status: str) -> Any:
    items = [finding("check-crashed", FileEvidence(path=f"inferencex-e2e/configs/f{i}.yaml", line=i + 1),
                     error="x" * 190 + str(i)) for i in range(200)]
    return {"FAIL": failed, "WARN": warned, "PASS": passed}[status](*items)


def test_a_huge_verdict_is_capped_keeping_header_verdict_and_failing_rows_first() -> None:
    modules = [_module(i, (lambda s: lambda ctx: _huge(ctx, s))("PASS" if i < 10 else "WARN" if i == 14 else "FAIL"))
               for i in range(19)]
    report = judge(read_bundle(CASES / "pr4524"), load_policies(), modules)
    full = render_markdown(report, max_chars=10**9)
    assert len(full) > GITHUB_COMMENT_LIMIT * 5
    md = render_markdown(report, full_verdict="[the job summary of run 7](https://github.com/o/r/actions/runs/7)")
    assert len(md) <= 65000
    assert md.startswith("<!-- codeowner-signoff-verify signoff=issuecomment-4711000001 ")
    assert "## ❌❌❌ **REJECTED** ❌❌❌" in md and "Blocking: Check 10 (Engine patches)" in md
    names = load_policies()["checks"]["checks"]
    for check_id in range(10, 19):
        status = "WARN" if check_id in (14, 15) else "FAIL"
        assert f"Check {check_id} ({names[str(check_id)]['name']}): {status} — " in md
    assert md.index("❌ Check 10") < md.index("Passed and not applicable checks")
    assert "the full verdict is in [the job summary of run 7](https://github.com/o/r/actions/runs/7)" in md
    assert md.rstrip().endswith("</details>")
    assert md.count("`") % 2 == 0  # never cut inside a code span


def test_a_normal_comment_is_not_shortened() -> None:
    md = render_markdown(judge(read_bundle(CASES / "pr4524"), load_policies()))
    assert "shortened" not in md and len(md) < GITHUB_COMMENT_LIMIT


def test_clip_cuts_between_words_outside_code_spans() -> None:
    text = "alpha `beta gamma delta` epsilon " * 10
    out = clip(text, 40)
    assert len(out) <= 40 and out.count("`") % 2 == 0 and out.endswith("…")
