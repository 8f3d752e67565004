"""Check 7: deprecated models, scenarios and model-scenario pairs, judged on the review date."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.results import Status
from verifier.documents.models_md import parse_models_md

MASTER = "tree/head/inferencex-e2e/configs/nvidia-master.yaml"
MODELS = "tree/{}/inferencex-e2e/docs/MODELS.md"


def test_parse_models_md_deprecations() -> None:
    text = (CASES / "pr4524" / MODELS.format("base")).read_text(encoding="utf-8")
    doc = parse_models_md(text, "MODELS.md")
    deps = {(d.prefix, d.scenario, d.precision): d.effective for d in doc.deprecations}
    assert deps[("minimaxm3", "8k1k", None)] == dt.date(2026, 8, 4)  # last day Aug 3
    assert deps[(None, "1k1k", None)] == dt.date(2026, 7, 17)
    assert deps[("qwen3.5", None, "bf16")] == dt.date(2026, 8, 4)
    assert doc.model("kimik2.5").retired and not doc.model("minimaxm31flash").retired


def test_pass_on_pr4524() -> None:
    assert row(judge(CASES / "pr4524", only={7}), 7).status is Status.PASS


def test_retired_model_fails(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    for side in ("base", "head"):
        replace_text(case / MODELS.format(side), "| 2026-10-23 ([#4390](https://github.com/SemiAnalysisAI/InferenceX/pull/4390)) | Agentic coding |",
                     "| 2026-10-23 | None (retired 2026-10-25) |")
    result = row(judge(case, only={7}), 7)
    assert result.status is Status.FAIL
    assert result.result.findings[0].message_id == "model-retired"


def test_dated_notice_applies_only_after_the_last_day(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    notice = (
        "### Wednesday, October 28, 2026\n\n**Wednesday, October 28, 2026** is the last day.\n\n"
        "| Model | Deprecated | Remains |\n|---|---|---|\n| MiniMax-M3.1-Flash (`minimaxm31flash`) | Agentic coding | Nothing |\n\n"
    )
    replace_text(case / MODELS.format("base"), "## Scenarios", notice + "## Scenarios")
    result = row(judge(case, only={7}), 7)  # review date 2026-10-29 > last day
    assert result.status is Status.FAIL
    f = result.result.findings[0]
    assert f.message_id == "scenario-deprecated" and f.params["since"] == "2026-10-29"
    edit_yaml(case / "bundle.yaml", lambda d: d.__setitem__("review_date", dt.date(2026, 10, 28)))
    assert row(judge(case, only={7}), 7).status is Status.PASS  # still the last day


def test_deprecated_scenario_for_all_models(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    replace_text(case / MASTER, "    agentic-coding:", "    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {tp: 4, conc-list: [4]}\n    agentic-coding:", count=1)
    result = row(judge(case, only={7}), 7)
    assert result.status is Status.FAIL
    assert any(f.params.get("scenario") == "1k1k" for f in result.result.findings)


def test_unlisted_model_is_unverifiable(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    for side in ("base", "head"):
        replace_text(case / MODELS.format(side), "`minimaxm31flash`", "`other`")
    result = row(judge(case, only={7}), 7)
    assert result.status is Status.FAIL and result.result.findings[0].message_id == "model-not-listed"


def test_na_when_no_config_is_affected(tmp_path: Path) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    for rel in ("tree/head/inferencex-e2e",):
        import shutil

        shutil.rmtree(case / rel)
        shutil.copytree(case / "tree/base/inferencex-e2e", case / rel)
    edit_yaml(case / "pr.yaml", lambda d: d.__setitem__("files", []))
    assert row(judge(case, only={7}), 7).status is Status.NA


def test_models_md_absent_from_base_is_not_in_force(tmp_path: Path) -> None:
    """Before MODELS.md existed in the trusted base tree the rule was not in force: N/A naming it."""
    case = clone_bundle(CASES / "pr4524", tmp_path)
    (case / MODELS.format("base")).unlink()
    (case / MODELS.format("head")).unlink()
    r = row(judge(case, only={7}), 7)
    assert r.status is Status.NA
    assert r.result.findings[0].message_id == "models-md-not-in-force"
    en, zh = row_summary(r).split("\n")
    assert "inferencex-e2e/docs/MODELS.md" in en and "inferencex-e2e/docs/MODELS.md" in zh


def test_models_md_added_by_the_pr_is_not_yet_in_force(tmp_path: Path) -> None:
    """A PR cannot bring its own governing document into force: only the base tree's copy counts."""
    case = clone_bundle(CASES / "pr4524", tmp_path)
    (case / MODELS.format("base")).unlink()
    assert row(judge(case, only={7}), 7).status is Status.NA


RETIRED_MODELS_MD = """# Models

## Model support matrix

| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |
|---|---|---|---|---|
| Quill-2-Flash | `quill2flash` | 2026-06-20 | None (retired 2026-06-30) | Agentic coding |
"""


def test_deleting_a_retired_configs_files_is_not_a_submission(tmp_path: Path) -> None:
    """InferenceX PR 2493 enacted deprecations by moving launcher scripts away; a config whose
    only change is such a deletion, named by no appended changelog entry, is not submitted."""
    from tests.minibundle import CHANGELOG_BASE, RECIPE, build

    case = build(tmp_path / "removed", models_md=RETIRED_MODELS_MD, remove_head=(RECIPE,),
                 head_files={"perf-changelog.yaml": CHANGELOG_BASE})
    result = row(judge(case, only={7}), 7)
    assert result.status is Status.NA, row_summary(result)
    assert [f.message_id for f in result.result.findings] == ["no-config-affected", "config-files-removed-only"]
    assert "quill2flash-fp4-b300-sglang-agentic-dspark" in row_summary(result)
    # the same config with its recipe changed (or named by a new changelog entry) is a submission
    changed = build(tmp_path / "changed", models_md=RETIRED_MODELS_MD)
    assert row(judge(changed, only={7}), 7).result.findings[0].message_id == "model-retired"


KIMI_MODELS_MD = """# Models

## Deprecation Notice

### Thursday, August 6, 2026

**Thursday, August 6, 2026** is the last day for the **Single-turn 8k1k** scenario on **Kimi-K2.5/2.6/2.7-Code** (`kimik2.5`).

## Model support matrix

| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |
|---|---|---|---|---|
| Kimi-K2.5/2.6/2.7-Code | `kimik2.5` | 2026-02-17 | Single-turn 8k1k | |
"""


def test_a_row_naming_several_versions_covers_their_prefixes() -> None:
    """MODELS.md lists `Kimi-K2.5/2.6/2.7-Code` under the prefix `kimik2.5`; InferenceX's master
    config spells the K2.6 entry `model-prefix: kimik2.6` (PR 2438), which that row covers."""
    from verifier.documents.models_md import version_aliases

    doc = parse_models_md(KIMI_MODELS_MD, "MODELS.md")
    assert doc.model("kimik2.6") is doc.model("kimik2.5") and doc.model("kimik2.7") is not None
    assert doc.model("kimik2.8") is None
    assert version_aliases("MiniMax-M2.5/2.7", ("minimaxm2.5",)) == ["minimaxm2.7"]
    assert version_aliases("GLM-5 / GLM-5.1", ("glm5", "glm5.1")) == []


def test_alias_prefix_follows_the_rows_notices(tmp_path: Path) -> None:
    from tests.minibundle import build

    case = build(tmp_path / "k", models_md=KIMI_MODELS_MD)
    master = (case / "tree/head/inferencex-e2e/configs/nvidia-master.yaml").read_text(encoding="utf-8")
    (case / "tree/head/inferencex-e2e/configs/nvidia-master.yaml").write_text(
        master.replace("model-prefix: quill2flash", "model-prefix: kimik2.6").replace(
            "    agentic-coding:", "    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n"
            "      - {tp: 4, conc-list: [4]}\n    agentic-coding:", 1), encoding="utf-8")
    edit_yaml(case / "bundle.yaml", lambda d: d.__setitem__("review_date", dt.date(2026, 8, 6)))
    on_last_day = row(judge(case, only={7}), 7)
    assert "model-not-listed" not in [f.message_id for f in on_last_day.result.findings], row_summary(on_last_day)
    assert not any(f.message_id == "scenario-deprecated" for f in on_last_day.result.findings)
    edit_yaml(case / "bundle.yaml", lambda d: d.__setitem__("review_date", dt.date(2026, 8, 7)))
    after = row(judge(case, only={7}), 7)
    assert any(f.message_id == "scenario-deprecated" and f.params["scenario"] == "8k1k"
               for f in after.result.findings), row_summary(after)
