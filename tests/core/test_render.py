"""Rendering: JSON per OUTPUT.md, and a Markdown comment that hostile PR text cannot forge."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import jsonschema

from checks import judge
from tests.kit import CASES, clone_bundle, edit_yaml
from verifier.core.bundle import read_bundle
from verifier.core.policy import load_policies
from verifier.core.results import FileEvidence, failed, finding, passed
from verifier.render.json import render_json
from verifier.render.markdown import render_markdown
from verifier.render.text import code_span, sanitize

HOSTILE = (
    "<!-- codeowner-signoff-verify signoff=issuecomment-1 -->\n## ✅✅✅ **APPROVED** ✅✅✅\n"
    "**Verdict: PASS**\n✅ Check 13 (Draft precision): PASS — fine\n@everyone @SemiAnalysisAI/core `x` ``y``"
)
OUTPUT_SCHEMA = Path(__file__).resolve().parents[2] / "verifier" / "core" / "schemas" / "output-v1.schema.json"


def _module(check_id: int, fn):  # type: ignore[no-untyped-def]
    return SimpleNamespace(ID=check_id, check=fn, __name__=f"fake{check_id}")


def _mentions_outside_code(markdown: str) -> list[str]:
    without_code = re.sub(r"`[^`\n]*`", "", markdown)
    return re.findall(r"(?<![\w`])@[\w-]+(?:/[\w-]+)?", without_code)


def test_code_span_folds_lines_and_neutralises_backticks() -> None:
    span = code_span("a\n`b`\n<!-- c -->")
    assert span.count("`") == 2 and "\n" not in span
    assert sanitize({"x": ["@everyone", 3]}) == {"x": ["`@everyone`", 3]}


def test_hostile_params_cannot_forge_marker_header_rows_or_mentions(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    edit_yaml(case / "pr.yaml", lambda d: d.__setitem__("body", HOSTILE * 50))
    bundle = read_bundle(case)
    modules = [
        _module(0, lambda ctx: failed(finding("check-crashed", FileEvidence(path="a`b\n@x", line=1, text=HOSTILE),
                                              error=ctx.bundle.pr.body))),
        _module(1, lambda ctx: passed(finding("check-crashed", error=HOSTILE))),
    ]
    report = judge(bundle, load_policies(), modules)
    md = render_markdown(report)
    lines = md.splitlines()
    assert lines[0].startswith("<!-- codeowner-signoff-verify signoff=issuecomment-4711000001 sha=")
    assert sum(1 for line in lines if "<!--" in line and not line.lstrip().startswith("- ")) == 1
    assert [line for line in lines if line.startswith("## ")] == ["## ❌❌❌ **REJECTED** ❌❌❌"]
    rows = [line for line in lines if re.match(r"^(✅|❌|➖|⚠️) Check \d+ ", line)]
    assert [r.split(" ")[2] for r in rows] == ["0", "1"]
    assert _mentions_outside_code(md) == ["@nvpohanh"]
    assert "**Verdict: PASS**" not in re.sub(r"`[^`\n]*`", "", md)


def test_invalid_signer_login_is_not_mentioned(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    edit_yaml(case / "signoff.yaml", lambda d: d.__setitem__("author", "everyone here"))
    report = judge(read_bundle(case), load_policies(), [_module(0, lambda ctx: failed(finding("check-crashed", error="x")))])
    assert _mentions_outside_code(render_markdown(report)) == []


def test_markdown_layout_and_chinese_block() -> None:
    report = judge(
        read_bundle(CASES / "pr4524"),
        load_policies(),
        [_module(0, lambda ctx: passed(finding("check-crashed", error="e"))),
         _module(13, lambda ctx: failed(finding("check-crashed", error="e")))],
    )
    md = render_markdown(report)
    assert "<details>\n<summary>Passed and not applicable checks</summary>\n\n✅ Check 0" in md
    assert "<details>\n<summary>中文</summary>" in md
    assert "❌ Check 13 (Draft precision): FAIL — " in md
    assert "❌ 检查 13 (Draft precision)：FAIL — " in md
    assert "Assessed commit: `51bb400fde2167c9a265ec9d7e19f61a61d7b7ee`." in md
    assert md.index("❌ Check 13") < md.index("Passed and not applicable checks")


def test_json_follows_the_output_contract() -> None:
    report = judge(read_bundle(CASES / "pr4524"), load_policies())
    doc = json.loads(render_json(report))
    jsonschema.validate(doc, json.loads(OUTPUT_SCHEMA.read_text(encoding="utf-8")))
    assert [c["id"] for c in doc["checks"]] == list(range(19))
    assert doc["signoff"] == {"id": 4711000001, "author": "nvpohanh", "kind": "conversation comment"}
    assert doc["head_moved"] is False
