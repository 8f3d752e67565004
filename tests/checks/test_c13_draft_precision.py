"""Check 13 (Draft precision): fixtures, the canonical case, and the shared draft-precision rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import c13_draft_precision as c13
from tests.checks.fixture_runner import assert_fixture, file_lines, fixture_dirs, params, run_one, texts
from tests.kit import CASES
from verifier.core.policy import load_policies
from verifier.core.results import CommentEvidence, RunEvidence
from verifier.engines import draft_precision as dp

RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/quill2flash/sglang/b300-fp4-mtp/agentic.yaml"
M31 = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/"
POLICY = load_policies()["prohibited_settings"]["draft_precision"]


@pytest.mark.parametrize("bundle", fixture_dirs(13), ids=lambda p: p.name)
def test_fixture(bundle: Path) -> None:
    assert_fixture(bundle, 13)


def _fx(name: str) -> Path:
    return next(p for p in fixture_dirs(13) if p.name == name)


def test_rule_docstring_headings() -> None:
    for heading in ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:"):
        assert heading in (c13.__doc__ or "")
    assert (c13.ID, load_policies()["checks"]["checks"][str(c13.ID)]["name"]) == (13, "Draft precision")


def test_draft_kv_names_flag_value_file_line_and_run() -> None:
    result = run_one(_fx("fail-draft-kv-fp8"), 13)
    p = params(result, "draft-kv-below-target")
    assert (p["flag"], p["value"], p["target"], p["target_setting"]) == (
        "speculative-draft-kv-cache-dtype", "fp8_e4m3", "bf16", "auto")
    assert (RECIPE, 30) in file_lines(result)
    assert any(isinstance(e, RunEvidence) for e in result.evidence)
    assert result.findings[0].message_id == "draft-kv-below-target"


@pytest.mark.parametrize(("name", "flag", "value", "line"), [
    ("fail-draft-kv-equals-form", "speculative-draft-kv-cache-dtype", "fp8_e5m2", 18),
    ("fail-draft-kv-prefix-abbreviation", "speculative-draft-kv-cache-dtype", "fp8_e4m3", 30),
    ("fail-draft-kv-below-explicit-target", "speculative-draft-kv-cache-dtype", "fp8_e5m2", 31),
])
def test_spellings_resolve_to_the_draft_kv_flag(name: str, flag: str, value: str, line: int) -> None:
    result = run_one(_fx(name), 13)
    p = params(result, "draft-kv-below-target")
    assert (p["flag"], p["value"]) == (flag, value)
    assert p["written"] == (["speculative-draft-kv-cache"] if "prefix" in name else [])
    assert (RECIPE, line) in file_lines(result)


def test_inherited_env_points_at_runners_yaml() -> None:
    result = run_one(_fx("fail-prohibited-env-inherited"), 13)
    p = params(result, "prohibited-env")
    assert p["flag"] == "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"
    assert any(path.endswith("configs/runners.yaml") for path, _ in file_lines(result))
    assert p["runs"], "the launch environment in the run's server.log is evidence too"


def test_weights_note_absent_when_weights_are_cut() -> None:
    ids = [f.message_id for f in run_one(_fx("fail-draft-quantization"), 13).findings]
    assert ids[0] == "draft-quantization" and "draft-weights-as-shipped" not in ids


def test_canonical_case_fails_naming_both_recipes() -> None:
    result = run_one(CASES / "pr4524", 13)
    assert result.status.value == "FAIL"
    text = " ".join(texts(13, result).values())
    for needle in ("speculative-draft-kv-cache-dtype", "fp8_e4m3", "agentic.yaml", "agentic-tp2.yaml", "bf16"):
        assert needle in text
    lines = file_lines(result)
    assert (M31 + "agentic.yaml", 39) in lines and (M31 + "agentic-tp2.yaml", 37) in lines
    assert any(isinstance(e, RunEvidence) and e.run_id == 40739166138 for e in result.evidence)
    ids = [f.message_id for f in result.findings]
    assert ids[0] == "draft-kv-below-target"
    assert "signoff-note-not-exception" in ids  # "confirmed offline with SA admins" is no exception
    assert any(isinstance(e, CommentEvidence) for e in result.evidence)
    assert params(result, "draft-kv-below-target")["points"] == 15  # the non-speculative c1 point nulls it


def test_approved_twin_passes() -> None:
    result = run_one(CASES / "pr4524-approved", 13)
    assert result.status.value == "PASS", texts(13, result)["en"]
    p = params(result, "draft-as-shipped")
    assert (p["stored"], p["logged"], p["target_kv"]) == ("mxfp8", "mxfp8", "bf16")


@pytest.mark.parametrize(("value", "enabled"), [
    (None, False), ("0", False), ("false", False), ("No", False), ("", False),
    ("1", True), ("true", True), ("yes", True), ("2", True)])
def test_env_enabled(value: str | None, enabled: bool) -> None:
    assert dp.env_enabled(value, POLICY) is enabled


def test_env_text_issues_in_scripts_and_yaml() -> None:
    text = ("export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1\n# SGLANG_GLM_NEXTN_MOE_PTPC=1 (comment)\n"
            "    SGLANG_GLM_NEXTN_MOE_PTPC: '0'\n  - \"SGLANG_GLM_NEXTN_MOE_PTPC=true\"\n")
    found = [(i.name, i.value, i.line) for i in dp.env_text_issues("x.sh", text, POLICY)]
    assert found == [("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", "1", 1), ("SGLANG_GLM_NEXTN_MOE_PTPC", "true", 4)]


@pytest.mark.parametrize(("draft", "target", "result"), [
    ("fp8_e4m3", "bfloat16", True), ("bf16", "torch.bfloat16", False), ("fp8_e4m3", "fp8_e4m3", False),
    ("bf16", "fp8_e4m3", False), ("nvfp4", "fp8_e5m2", True), ("weird", "bf16", None)])
def test_below(draft: str, target: str, result: bool | None) -> None:
    assert dp.below(draft, target) is result


@pytest.mark.parametrize(("draft_path", "method", "target_cfg", "expected"), [
    ("/model/dspark", "dspark", {}, "org/M/dspark"),
    ("/model", "dspark", {}, "org/M"),
    (None, "dspark", {}, "org/M/dspark"),
    (None, "dspark", {"dspark_block_size": 7}, "org/M"),
    (None, "eagle", {}, "org/M"),
    ("Inferact/Kimi-K3-DSpark", "dspark", {}, "Inferact/Kimi-K3-DSpark"),
    ("hf:acme/Draft", "eagle3", {}, "acme/Draft"),
])
def test_draft_repo_path(draft_path: str | None, method: str, target_cfg: dict, expected: str) -> None:  # type: ignore[type-arg]
    target = dp.Checkpoint("checkpoints/org/M/config.json", target_cfg)
    assert dp.draft_repo_path("org/M", "/model", draft_path, method, target) == expected


def test_a_launch_that_sets_nothing_on_the_draft_needs_no_checkpoint(tmp_path: Path) -> None:
    """A spec-decode launch with no draft path, draft KV dtype, draft quantization or online target
    quantization serves the draft through the image's default handling by construction (most
    InferenceX MTP recipes); checkpoint metadata is needed only once something touches the draft."""
    from tests.checks.fixture_runner import run_one
    from tests.minibundle import build

    plain = build(tmp_path / "plain", drop_args=("speculative-draft-model-path",), checkpoints=False)
    result = run_one(plain, 13)
    assert result.status.value == "PASS", [(f.message_id, f.params) for f in result.findings]
    assert any(f.message_id == "draft-default-by-construction" for f in result.findings)
    touched = build(tmp_path / "touched", drop_args=("speculative-draft-model-path",), checkpoints=False, logs=False,
                    args={"speculative-draft-kv-cache-dtype": "fp8_e4m3"})
    assert run_one(touched, 13).findings[0].message_id == "checkpoint-missing"
