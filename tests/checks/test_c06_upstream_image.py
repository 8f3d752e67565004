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


def test_day0_model_tag_is_an_enablement_image() -> None:
    """MODELS.md: a new model may use "a model-enablement image that the engine maintainers publish
    for it"; a day-0 model tag without `dev-` (`lmsysorg/sglang:minimax-m3`) is one, judged by the
    window from its Date added, not failed as a non-default-branch build."""
    ok = run_one(_fx("pass-day0-model-tag-in-window"), 6)
    assert params(ok, "enablement-image-in-window")["image"] == "lmsysorg/sglang:quill-2-flash-cu130"
    late = run_one(_fx("fail-day0-model-tag-expired"), 6)
    p = params(late, "enablement-window-expired")
    assert (p["image"], p["date_added"]) == ("lmsysorg/sglang:quill-2-flash-cu130", "2026-09-01")
    assert "image-not-default-branch" not in [f.message_id for f in late.findings]


def test_another_models_day0_tag_is_not_this_models_enablement_image(tmp_path: Path) -> None:
    from tests.minibundle import build

    other = "lmsysorg/sglang:quill-3-cu130"
    result = run_one(build(tmp_path / "b", image=other, base_image=other, date_added="2026-11-01"), 6)
    assert result.status.value == "FAIL"
    assert params(result, "image-not-default-branch")["tag"] == "quill-3-cu130"


@pytest.mark.parametrize(("tag", "identities", "expected"), [
    ("minimax-m3", ["minimaxm3", "MiniMax-M3"], "minimaxm3"),
    ("deepseekv4-cu129", ["dsv4", "DeepSeek-V4-Pro"], "DeepSeek-V4-Pro"),
    ("dev-minimax-m31-flash", ["minimaxm31flash", "MiniMax-M3.1-Flash"], "minimaxm31flash"),
    ("dev-quill2flash-fix2", ["quill2flash"], "quill2flash"),
    # another model's day-0 tag: M3 is not M3.1-Flash, V4 is not V4.1-Flash
    ("minimax-m3", ["minimaxm31flash", "MiniMax-M3.1-Flash"], None),
    ("deepseekv4-cu129", ["dsv41flash", "DeepSeek-V4.1-Flash"], None),
    # default-branch builds name no model
    ("v0.5.23-cu130", ["minimaxm31flash", "MiniMax-M3.1-Flash"], None),
    ("dev-cu130", ["quill2flash"], None),
    ("nightly-20261101", ["quill2flash"], None),
    ("minimax-m3-5894fdf", ["minimaxm3", "MiniMax-M3"], "minimaxm3"),
    ("nightly-dev-x86_64-cu13.0.1-5894fdf", ["kimik3", "Kimi-K3"], None),
    (None, ["quill2flash"], None),
])
def test_enablement_tag_recognition(tag: str | None, identities: list[str], expected: str | None) -> None:
    from verifier.engines.images import enablement_model

    policy = load_policies()["images"]
    assert enablement_model(tag, identities, policy["enablement_tag"], policy["enablement_tag_qualifiers"]) == expected
