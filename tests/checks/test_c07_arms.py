"""Check 7: arm-level deprecations (issue 11 defect 9).

Real-world shape: InferenceX PRs #2616 and #2637 (Kimi-K3 AgentX). MODELS.md then said
"| Kimi-K3 (`kimik3`) | Agentic coding, non-DSpark (deprecated from day 0) | Agentic coding, DSpark |"
and, in the support matrix, "Agentic coding non-DSpark arm (deprecated from day 0)". #2616's script
drafted with DSpark up to conc 16 and launched conc 24-70 with no speculative config; #2637 added a
no-speculation config next to DSpark configs. The real verifier rejected both for the points on the
non-DSpark arm. These bundles are our own (the invented Quill-2-Flash of tests/minibundle.py).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.checks.fixture_runner import params, run_one
from tests.kit import row_summary
from tests.minibundle import MODELS_MD, NOSPEC, RECIPE, build, master_text
from verifier.core.policy import load_policies
from verifier.documents.models_md import parse_models_md

CONC4 = "quill2flash_tp4_conc4_kvnone_spec-draft_model"
CONC8 = "quill2flash_tp4_conc8_kvnone"
# conc 8 runs without speculation: its row says so and its recipe variant drops the DSpark args
MIXED = {"override_args": {8: dict.fromkeys(NOSPEC)}, "logs": False, "master": master_text(rows=(
    f"      - {{ tp: 4, kv-offloading: none, spec-decoding: draft_model, conc-list: [4], srt-recipe: {RECIPE} }}\n"
    f"      - {{ tp: 4, kv-offloading: none, spec-decoding: none, conc-list: [8], srt-recipe: {RECIPE} }}\n"))}


def _models_md(cell: str = "Agentic coding, non-DSpark (deprecated from day 0)",
               status: str = "**Status: not yet enacted.** Every non-spec-decode agentic arm above still runs.",
               header: str = "| Model | Deprecated arm | Published arm |", matrix_cell: str = "") -> str:
    arms = (f"## Deprecation Notice\n\n### Monday, August 3, 2026\n\n"
            "Speculative-decoding A/B retirements apply to each pair below.\n\n"
            f"{header}\n|---|---|---|\n"
            f"| Quill-2-Flash (`quill2flash`) | {cell} | Agentic coding, DSpark |\n"
            "| Quill-1 (`quill1`) | Agentic coding, non-MTP | Agentic coding, MTP |\n\n"
            f"{status}\n\n")
    text = MODELS_MD.replace("{date}", "2026-06-20")
    if matrix_cell:
        text = text.replace("| Agentic coding | |\n| Quill-1", f"| Agentic coding (DSpark only) | {matrix_cell} |\n| Quill-1", 1)
    return text.replace("## Model support matrix", arms + "## Model support matrix", 1)


def _arm_findings(result: object) -> list[dict]:
    return [f.params for f in result.findings if f.message_id == "arm-deprecated"]  # type: ignore[attr-defined]


def test_parse_arm_rules() -> None:
    rules = load_policies()["models"]["arm_rules"]
    doc = parse_models_md(_models_md(), "MODELS.md", rules)
    arms = [(a.prefix, a.scenario, a.method, a.arm, a.effective) for a in doc.arm_deprecations]
    # the day-0 row is in force from the model's first day; quill1's row waits for enactment
    assert arms == [("quill2flash", "agentic-coding", "dspark", "non-DSpark", dt.date.min)]
    enacted = parse_models_md(_models_md(cell="Agentic coding, non-DSpark", status="**Enacted on 2026-09-01** in #9."),
                              "MODELS.md", rules)
    assert {(a.prefix, a.effective) for a in enacted.arm_deprecations} == {
        ("quill2flash", dt.date(2026, 9, 1)), ("quill1", dt.date(2026, 9, 1))}
    matrix = parse_models_md(_models_md(cell="Agentic coding, DSpark", matrix_cell=(
        "Agentic coding non-DSpark arm (deprecated from day 0)")), "MODELS.md", rules)
    assert [(a.prefix, a.method) for a in matrix.arm_deprecations] == [("quill2flash", "dspark")]


def test_points_launching_without_the_speculative_config_fail_named(tmp_path: Path) -> None:
    """#2616 shape: one variant of a DSpark config launches without DSpark; the other stays valid."""
    bundle = build(tmp_path / "b", models_md=_models_md(), **MIXED)
    result = run_one(bundle, 7)
    assert result.status.value == "FAIL", result.findings
    (p,) = _arm_findings(result)
    assert (p["points"], p["count"], p["total"], p["arm"], p["method"]) == ([CONC8], 1, 2, "non-DSpark", "dspark")
    text = row_summary(type("R", (), {"id": 7, "result": result})())
    assert CONC8 in text and CONC4 not in text and "MODELS.md" in text


def test_config_without_speculation_next_to_dspark_fails(tmp_path: Path) -> None:
    """#2637 shape: a whole config declared `spec-decoding: none`, its recipe without DSpark."""
    rows = (f"      - {{ tp: 4, kv-offloading: none, spec-decoding: none, conc-list: [4, 8], "
            f"srt-recipe: {RECIPE} }}\n")
    bundle = build(tmp_path / "b", models_md=_models_md(), drop_args=NOSPEC, logs=False, master=master_text(rows=rows))
    p = params(run_one(bundle, 7), "arm-deprecated")
    assert p["count"] == 2 and p["total"] == 2


def test_valid_dspark_arm_passes(tmp_path: Path) -> None:
    assert run_one(build(tmp_path / "b", models_md=_models_md()), 7).status.value == "PASS"


def test_arm_rule_not_in_force_or_relaxed_passes(tmp_path: Path) -> None:
    # not deprecated from day 0 and not yet enacted
    bundle = build(tmp_path / "a", models_md=_models_md(cell="Agentic coding, non-DSpark"), **MIXED)
    assert run_one(bundle, 7).status.value == "PASS"
    # the newest MODELS.md wording: a standalone baseline that is "not required", under another header
    relaxed = _models_md(cell="Agentic coding, standalone non-DSpark baseline (not required from day 0)",
                         header="| Model | Standalone A/B baseline to retire | Spec-decode counterpart |")
    bundle = build(tmp_path / "b", models_md=relaxed, **MIXED)
    assert run_one(bundle, 7).status.value == "PASS"
    # enacted before the review date: in force
    enacted = _models_md(cell="Agentic coding, non-DSpark", status="**Enacted on 2026-09-01** in #9.")
    bundle = build(tmp_path / "c", models_md=enacted, **MIXED)
    assert _arm_findings(run_one(bundle, 7))[0]["points"] == [CONC8]


def test_legacy_script_that_stops_drafting_above_conc_8(tmp_path: Path) -> None:
    """The exact #2616 shape: every row says it speculates, but the old-layout launcher script only
    passes the DSpark args at conc 8 and below; the points above it run the deprecated arm."""
    from tests.kit import replace_text
    from tests.launch.test_legacy_script import LEGACY_MINIMAX, _old_layout_bundle

    gate = 'if [ "$SPEC_DECODING" != "none" ]; then'
    script = LEGACY_MINIMAX.replace(gate, 'if [ "$SPEC_DECODING" != "none" ] && [ "$CONC" -le 8 ]; then')
    bundle = _old_layout_bundle(tmp_path, script)
    rule = ("| MiniMax-M3.1-Flash (`minimaxm31flash`) | Agentic coding, non-DSpark (deprecated from day 0) "
            "| Agentic coding, DSpark |")
    for side in ("base", "head"):
        replace_text(bundle / f"tree/{side}/docs/MODELS.md", "## Model support matrix",
                     f"### Monday, August 3, 2026\n\n| Model | Deprecated arm | Published arm |\n|---|---|---|\n{rule}\n\n"
                     "**Status: not yet enacted.**\n\n## Model support matrix", count=1)
        (bundle / f"tree/{side}/docs/MODELS.md").rename(bundle / f"tree/{side}/MODELS.md")  # old layout: root
    result = run_one(bundle, 7)
    assert result.status.value == "FAIL", result.findings
    p = params(result, "arm-deprecated")
    named = set(p["points"])
    assert "minimaxm31flash_tp4_conc16_kvnone_spec-draft_model" in named
    assert "minimaxm31flash_tp4_conc8_kvnone_spec-draft_model" not in named
    assert "minimaxm31flash_tp4_conc1_kvnone" in named  # the non-speculative baseline point
    assert any(e.path.endswith("minimaxm31flash_fp4_b300_sglang_mtp.sh") for f in result.findings
               for e in f.evidence if getattr(e, "path", None))


def test_a_speculating_point_whose_launch_does_not_resolve_is_check_18s(tmp_path: Path) -> None:
    """InferenceX PR 2476: the points of kimik3-fp4-b300-vllm-agentic-dspark declare speculation, but
    their launcher script does not resolve statically. Check 18 names that construct; Check 7 lists
    the points as not judged here instead of failing on the same root cause."""
    bundle = build(tmp_path / "b", models_md=_models_md(), remove_head=(RECIPE,), logs=False)
    result = run_one(bundle, 7)
    ids = [f.message_id for f in result.findings]
    assert result.status.value == "PASS", ids
    assert "arm-unknown" not in ids and "launch-reported-by-check18" in ids
