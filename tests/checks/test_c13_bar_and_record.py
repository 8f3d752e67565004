"""Check 13: the draft-KV bar and the draft-precision record (issue 11 defect 7).

Real-world case: SemiAnalysisAI/InferenceX#4524 (the seed thread). The real verifier's Check 13 row
says the FP8 draft KV "is neither the framework default nor a dtype applied to both target and
draft", and its fix is "set the same upstream-supported KV dtype on target and draft". The newest
checklist item asks for "the shipped and effective draft precision recorded in the additional
detail section". The bundles are our own (tests/minibundle.py's Quill-2-Flash).
"""

from __future__ import annotations

from pathlib import Path

from tests.checks.fixture_runner import params, run_one
from tests.kit import row_summary
from tests.minibundle import TARGET_CONFIG, build

FP8_KV_TARGET = {**TARGET_CONFIG, "quantization_config": {**TARGET_CONFIG["quantization_config"],
                                                          "kv_cache_quant_algo": "FP8"}}


def _text(result: object) -> str:
    return row_summary(type("R", (), {"id": 13, "result": result})())


def test_draft_only_kv_below_the_drafts_default_fails(tmp_path: Path) -> None:
    """The target's KV is FP8 by its checkpoint, the draft's default is its own bf16; an FP8 draft-KV
    flag is not below the target's pool, but it is below the draft's default and set on the draft only."""
    bundle = build(tmp_path / "b", target_checkpoint=FP8_KV_TARGET,
                   args={"speculative-draft-kv-cache-dtype": "fp8_e4m3"})
    result = run_one(bundle, 13)
    assert result.status.value == "FAIL", _text(result)
    p = params(result, "draft-kv-below-default")
    assert (p["flag"], p["value"], p["target"]) == ("speculative-draft-kv-cache-dtype", "fp8_e4m3", "bf16")
    assert any(f.endswith("agentic.yaml:30") or "agentic.yaml" in f for f in p["files"])
    assert "speculative-draft-kv-cache-dtype" in _text(result)


def test_one_dtype_on_target_and_draft_alike_passes(tmp_path: Path) -> None:
    bundle = build(tmp_path / "b", target_checkpoint=FP8_KV_TARGET,
                   args={"kv-cache-dtype": "fp8_e4m3", "speculative-draft-kv-cache-dtype": "fp8_e4m3"})
    assert run_one(bundle, 13).status.value == "PASS"


def test_restating_the_drafts_default_passes(tmp_path: Path) -> None:
    bundle = build(tmp_path / "b", target_checkpoint=FP8_KV_TARGET,
                   args={"speculative-draft-kv-cache-dtype": "bf16"})
    assert run_one(bundle, 13).status.value == "PASS"


TEMPLATE = """# PR review checklist

## Template

```
As a PR reviewer and CODEOWNER, I have reviewed this and have:
- [ ] Verified that every draft model and draft head is served as it ships: the draft that ships with the served checkpoint, at its stored precision, through the pinned upstream image's default handling{record}. No submission-side quantization may lower draft precision below that default.

### Additional detail section:
- insert any additional info here

Signed: `FILL_IN_GITHUB_USERNAME`
```

## Example
"""
WITH_ITEM = TEMPLATE.replace("{record}", ", with the shipped and effective draft precision recorded in the additional "
                                         "detail section")
RECORD = ("- **Draft precision:**\n  - Shipped: `acme/Quill-2-Flash` bundles `dspark/`, stored bf16 (no quantization_config).\n"
          "  - Effective: the server logs show `speculative_draft_model_path='/model/dspark'` and the draft loaded "
          "unquantized, with bf16 draft KV.\n")


def test_record_required_by_the_base_template(tmp_path: Path) -> None:
    bundle = build(tmp_path / "b", base_files={"docs/PR_REVIEW_CHECKLIST.md": WITH_ITEM})
    result = run_one(bundle, 13)
    assert result.status.value == "FAIL", _text(result)
    p = params(result, "precision-record-missing")
    assert p["line"] == 7 and "shipped and effective draft precision" in p["item"]
    assert "PR_REVIEW_CHECKLIST.md" in _text(result)


def test_record_present_passes(tmp_path: Path) -> None:
    bundle = build(tmp_path / "b", base_files={"docs/PR_REVIEW_CHECKLIST.md": WITH_ITEM}, signoff_extra=RECORD)
    result = run_one(bundle, 13)
    assert result.status.value == "PASS", _text(result)
    assert "Shipped" in params(result, "precision-recorded")["quote"]


def test_a_record_missing_its_effective_half_fails(tmp_path: Path) -> None:
    half = "- **Draft precision:** shipped `dspark/` at bf16.\n"
    bundle = build(tmp_path / "b", base_files={"docs/PR_REVIEW_CHECKLIST.md": WITH_ITEM}, signoff_extra=half)
    assert run_one(bundle, 13).status.value == "FAIL"


def test_template_predating_the_item_does_not_require_it(tmp_path: Path) -> None:
    bundle = build(tmp_path / "b", base_files={"docs/PR_REVIEW_CHECKLIST.md": TEMPLATE.replace("{record}", "")})
    assert run_one(bundle, 13).status.value == "PASS"


def test_one_points_log_shows_a_quantized_draft(tmp_path: Path) -> None:
    """Issue 11 defect 1's audit of Check 13: the recipe sets no draft quantization and conc 4 loads
    the draft as stored, but conc 8's own server log shows the draft loaded with quant=fp8."""
    bundle = build(tmp_path / "b", point_draft_quant={8: "fp8"})
    result = run_one(bundle, 13)
    assert result.status.value == "FAIL", _text(result)
    p = params(result, "draft-loaded-quantized")
    assert p["named"] == ["quill2flash_tp4_conc8_kvnone_spec-draft_model"] and p["value"] == "fp8"
    assert "quill2flash_tp4_conc8_kvnone_spec-draft_model" in _text(result)
