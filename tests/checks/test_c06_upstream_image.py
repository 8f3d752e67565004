"""Check 6 (Upstream image/order/provenance): fixtures and the canonical cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import c06_upstream_image as c06
from tests.checks.fixture_runner import assert_fixture, fixture_dirs, params, run_one, texts
from tests.kit import CASES
from verifier.core.policy import load_policies


@pytest.mark.parametrize("bundle", fixture_dirs(6), ids=lambda p: p.name)
def test_fixture(bundle: Path) -> None:
    assert_fixture(bundle, 6)


def _fx(name: str) -> Path:
    return next(p for p in fixture_dirs(6) if p.name == name)


def test_docstring_and_identity() -> None:
    assert (c06.ID, load_policies()["checks"]["checks"][str(c06.ID)]["name"]) == (6, "Upstream image/order/provenance")
    for heading in ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:"):
        assert heading in (c06.__doc__ or "")


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_cases_pass_with_enablement_window(case: str) -> None:
    result = run_one(CASES / case, 6)
    assert result.status.value == "PASS"
    p = params(result, "enablement-image-in-window")
    assert (p["date_added"], p["window_end"], p["days"]) == ("2026-10-23", "2026-12-07", 45)
    assert "lmsysorg/sglang:dev-minimax-m31-flash" in texts(6, result)["en"]


def test_expired_window_names_dates_and_image_line() -> None:
    result = run_one(_fx("fail-enablement-expired"), 6)
    p = params(result, "enablement-window-expired")
    assert (p["window_end"], p["review_date"]) == ("2026-10-16", "2026-11-20")
    assert any(getattr(e, "line", None) == 2 for e in result.evidence)  # the image: line


def test_fork_hash_normalized() -> None:
    p = params(run_one(_fx("fail-fork-image"), 6), "image-not-upstream")
    assert p["image"] == "ghcr.io/quill-ai/sglang:v0.5.23-quill" and p["sku"] == "b300"


def test_vendor_order_names_runner() -> None:
    p = params(run_one(_fx("fail-vendor-before-open-source"), 6), "vendor-before-open-source")
    assert (p["framework"], p["runner"]) == ("atom", "cluster:mi355x-amds")


def _vendor_bundle(tmp_path: Path, runner: str, prefix: str = "quill2flash", models_md: str | None = None) -> Path:
    from tests.minibundle import PREFIX, _vendor_entry, build, master_text

    vendor = _vendor_entry("quill2-fp4-b300-dynamo-trt", "dynamo-trt", runner, "nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:1.3.0")
    vendor = vendor.replace(f"model-prefix: {PREFIX}", f"model-prefix: {prefix}")
    return build(tmp_path / f"{runner}-{prefix}".replace(":", "_"), master=master_text() + vendor, models_md=models_md)


def test_engine_order_is_judged_per_hardware_not_runner_label(tmp_path: Path) -> None:
    """InferenceX PR 2249 added kimik2.5-fp4-b200-dynamo-trt on `b200-multinode` after the
    single-node vLLM entry on `b200`: the same hardware, so the open-source engine came first."""
    same_sku = run_one(_vendor_bundle(tmp_path, "b300-multinode"), 6)
    assert same_sku.status.value == "PASS", texts(6, same_sku)["en"]
    assert params(same_sku, "engine-order-ok")["open_key"] == "quill2flash-fp4-b300-sglang-agentic-dspark"
    other_sku = run_one(_vendor_bundle(tmp_path, "gb300-nv"), 6)
    p = params(other_sku, "vendor-before-open-source")
    assert (p["sku"], p["runner"]) == ("gb300", "gb300-nv")


def test_engine_order_counts_another_prefix_of_the_same_model(tmp_path: Path) -> None:
    """MODELS.md's `GLM-5 / GLM-5.1` row (`glm5`, `glm5.1`) is one model: the GLM-5.1 SGLang entry
    on GB200 precedes GLM-5's Dynamo TRT-LLM entries (InferenceX PRs 1800, 1803)."""
    from tests.minibundle import MODELS_MD

    family = MODELS_MD.replace("| Quill-2-Flash | `quill2flash` |", "| Quill-2 / Quill-2-Flash | `quill2`, `quill2flash` |")
    joined = run_one(_vendor_bundle(tmp_path, "cluster:b300-dsxe", "quill2", family), 6)
    assert joined.status.value == "PASS", texts(6, joined)["en"]
    alone = run_one(_vendor_bundle(tmp_path, "cluster:b300-dsxe", "quill2"), 6)
    assert params(alone, "vendor-before-open-source")["prefix"] == "quill2"


def test_a_fork_image_the_pr_neither_chooses_nor_reruns_is_not_judged(tmp_path: Path) -> None:
    """InferenceX PRs 2096 (metadata fields renamed) and 2263 (1k1k scenarios removed) edited
    entries that run `rocm/sgl-dev` images without re-running them (no changelog entry)."""
    from tests.minibundle import CHANGELOG_BASE, build, master_text

    fork = "rocm/sgl-dev:sglang-0.5.9-rocm720-mi35x-mori-0227-2"
    base = master_text(fork, runner="cluster:mi355x-amds")
    head = base.replace("dram-utilization: 0.8", "dram-utilization: 0.75")
    quiet = build(tmp_path / "quiet", master=head, base_master=base, head_files={"perf-changelog.yaml": CHANGELOG_BASE})
    result = run_one(quiet, 6)
    assert result.status.value == "PASS", texts(6, result)["en"]
    assert params(result, "image-not-resubmitted")["image"] == fork
    rerun = build(tmp_path / "rerun", master=head, base_master=base)  # the minibundle appends a changelog entry
    assert params(run_one(rerun, 6), "image-not-upstream")["image"] == fork
