"""Check 18 (Recipe/image/sweep consistency): PASS with the baseline figures of both cases, and FAIL /
unverifiable / N/A paths on edited copies of pr4524."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.results import Status

E2E = "tree/head/inferencex-e2e"
MASTER = f"{E2E}/configs/nvidia-master.yaml"
CHANGELOG = f"{E2E}/perf-changelog.yaml"
RECIPES = f"{E2E}/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp"
KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"
IMAGE = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5"
BASELINE = 40178345296


def _row(path: Path) -> Any:
    return row(judge(path, only={18}), 18)


def _params(r: Any, message_id: str) -> dict[str, Any]:
    return next(f.params for f in r.result.findings if f.message_id == message_id)


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


def test_pr4524_passes_with_retuned_points() -> None:
    r = _row(CASES / "pr4524")
    assert r.status is Status.PASS, row_summary(r)
    assert _params(r, "points-bound") == {"points": 16, "variants": 16,
                                          "recipes": ["agentic-tp2.yaml (6)", "agentic.yaml (10)"]}
    sizes = _params(r, "host-cache-fits")["sizes"]
    assert "hicache_size 370 GB x 2 = 740 GB <= 749 GB (agentic-tp2.yaml)" in sizes
    assert "hicache_size 290 GB x 4 = 1160 GB <= 1199 GB (agentic.yaml)" in sizes
    compared = _params(r, "baseline-compared")
    assert compared["runs"] == [BASELINE] and compared["pinned"] == 40739166138 and compared["added"] == 6
    retuned = _params(r, "points-retuned")
    assert retuned["count"] == 9 and retuned["low"] == -9.6 and retuned["high"] == 5.2
    assert retuned["changes"][:2] == ["tp4_conc64_kvdram-hicache_spec-draft_model -9.6%",
                                      "tp4_conc96_kvdram-hicache_spec-draft_model +5.2%"]
    assert all(abs(float(c.rsplit(" ", 1)[1].rstrip("%"))) <= 4.4 for c in retuned["changes"][2:])
    assert _params(r, "points-rerun-unchanged")["changes"] == ["tp4_conc1_kvnone +0.6%"]
    assert "no-new-images" in [f.message_id for f in r.result.findings]


def test_approved_twin_passes_with_unchanged_tp4_launches() -> None:
    r = _row(CASES / "pr4524-approved")
    assert r.status is Status.PASS, row_summary(r)
    assert "points-retuned" not in [f.message_id for f in r.result.findings]
    rerun = _params(r, "points-rerun-unchanged")
    assert rerun["count"] == 10 and rerun["changes"][0] == "tp4_conc64_kvdram-hicache_spec-draft_model -2.3%"


def test_host_cache_over_budget_fails(case: Path) -> None:
    replace_text(case / f"{RECIPES}/agentic-tp2.yaml", "hicache-size: 370", "hicache-size: 380")
    r = _row(case)
    assert r.status is Status.FAIL
    first = r.result.findings[0]
    assert first.message_id == "host-cache-over-budget"
    assert "380 GB x 2" in row_summary(r) and "760" in row_summary(r) and "749" in row_summary(r) and "agentic-tp2.yaml:58" in row_summary(r)


def test_point_without_variant_is_a_generation_error(case: Path) -> None:
    replace_text(case / f"{RECIPES}/agentic-tp2.yaml", "CONC: ['44', '46', '48']", "CONC: ['44', '47', '48']")
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "point-binding-failed"
    assert "minimaxm31flash_tp2_conc46_kvdram-hicache_spec-draft_model" in row_summary(r)
    assert "no variant matches" in row_summary(r) and "agentic-tp2.yaml" in row_summary(r)


def test_new_image_is_listed_and_needs_only_the_entry_naming_its_key(case: Path) -> None:
    """No InferenceX document asks the changelog entry to spell out a new image: the entry that names
    the key (already appended by the case) is what a bump needs, and the image is listed."""
    replace_text(case / MASTER, f"  image: {IMAGE}\n  model: MiniMaxAI/MiniMax-M3.1-Flash",
                 "  image: lmsysorg/sglang:v0.5.24-cu130\n  model: MiniMaxAI/MiniMax-M3.1-Flash")
    r = _row(case)
    assert r.status is Status.PASS, row_summary(r)
    assert _params(r, "new-images")["images"] == ["lmsysorg/sglang:v0.5.24-cu130"]


def test_changelog_byte_rule_violation_fails(case: Path) -> None:
    replace_text(case / CHANGELOG, "\n\n- config-keys:\n    - minimaxm31flash", "\n- config-keys:\n    - minimaxm31flash")
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "changelog-rule-broken"
    assert "perf-changelog.yaml" in row_summary(r)


def test_changelog_must_name_the_affected_key(case: Path) -> None:
    text = (case / CHANGELOG).read_text(encoding="utf-8")
    head, sep, tail = text.rpartition(f"    - {KEY}\n")
    (case / CHANGELOG).write_text(head + sep.replace(KEY, "glm5.2-fp4-b300-sglang-agentic-mtp") + tail, encoding="utf-8")
    r = _row(case)
    assert r.status is Status.FAIL
    assert "changelog-key-unnamed" in [f.message_id for f in r.result.findings]
    assert KEY in row_summary(r)


def test_removed_frontier_point_fails_unless_explained(case: Path) -> None:
    replace_text(case / MASTER, "conc-list: [1, 4, 8, 16, 32], srt-recipe: benchmarks/single_node/srt-slurm-recipes/minimax",
                 "conc-list: [4, 8, 16, 32], srt-recipe: benchmarks/single_node/srt-slurm-recipes/minimax")
    r = _row(case)
    assert r.status is Status.FAIL
    first = r.result.findings[0]
    assert first.message_id == "frontier-point-removed"
    assert first.params["point"] == "minimaxm31flash_tp4_conc1_kvnone_spec-draft_model"
    assert str(BASELINE) in row_summary(r)

    replace_text(case / CHANGELOG, '    - "Add TP2 DRAM KV offload',
                 '    - "Drop the TP4 DSpark point at concurrency 1. Add TP2 DRAM KV offload')
    r = _row(case)
    assert r.status is Status.PASS, row_summary(r)


def test_missing_baseline_run_is_unverifiable(case: Path) -> None:
    shutil.rmtree(case / "runs" / str(BASELINE))
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "baseline-run-missing"
    assert f"runs/{BASELINE}" in row_summary(r)


def test_unrecorded_baseline_is_unverifiable(case: Path) -> None:
    def drop(gh: Any) -> None:
        del gh["baseline_runs"]

    edit_yaml(case / "github.yaml", drop)
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "baseline-run-unrecorded"


def test_nothing_affected_is_not_applicable(case: Path) -> None:
    head, base = case / "tree" / "head", case / "tree" / "base"
    for rel in ("inferencex-e2e/configs/nvidia-master.yaml", "inferencex-e2e/perf-changelog.yaml",
                "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml"):
        shutil.copyfile(base / rel, head / rel)
    (head / "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/"
     "agentic-tp2.yaml").unlink()
    edit_yaml(case / "pr.yaml", lambda pr: pr.update(files=[]))
    r = _row(case)
    assert r.status is Status.NA, row_summary(r)


def test_implicit_host_cache_size_is_reported(case: Path) -> None:
    replace_text(case / f"{RECIPES}/agentic-tp2.yaml", "          hicache-size: 370\n", "")
    r = _row(case)
    assert r.status is Status.PASS, row_summary(r)
    assert len(_params(r, "host-cache-size-implicit")["points"]) == 6
