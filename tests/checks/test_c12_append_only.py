"""Check 12 (Append-only): N/A, PASS, FAIL and unverifiable paths on edited copies of pr4524, and the
recipe fingerprint of FORMATS §5.3."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.configs import points
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.core.results import Status
from verifier.facts import append_only

KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"
E2E = "inferencex-e2e"
CHANGELOG = f"{E2E}/perf-changelog.yaml"
MASTER = f"{E2E}/configs/nvidia-master.yaml"
RECIPE = f"{E2E}/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml"
SCRIPT = f"{E2E}/benchmarks/srt_agentic.sh"
LINK = "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/4524\n"


def _judge(path: Path) -> Any:
    return row(judge(path, only={12}), 12)


def _append_only(case: Path, extra: str = "") -> None:
    replace_text(case / "tree" / "head" / CHANGELOG, LINK, LINK + "  append-only: true\n" + extra)


def _drop_file(case: Path, path: str) -> None:
    edit_yaml(case / "pr.yaml", lambda pr: pr.update(files=[f for f in pr["files"] if f["path"] != path]))


def _add_file(case: Path, path: str) -> None:
    edit_yaml(case / "pr.yaml", lambda pr: pr["files"].append({"path": path, "status": "modified"}))


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


@pytest.fixture()
def clean(case: Path) -> Path:
    """pr4524 as a valid append-only PR: TP2 points only, the TP4 recipe left as on main."""
    _append_only(case)
    (case / "tree" / "head" / RECIPE).write_bytes((case / "tree" / "base" / RECIPE).read_bytes())
    _drop_file(case, RECIPE)
    return case


def test_pr4524_is_not_applicable() -> None:
    r = _judge(CASES / "pr4524")
    assert r.status is Status.NA
    assert "append-only: true" in row_summary(r)


def test_no_appended_entry_is_not_applicable(case: Path) -> None:
    (case / "tree" / "head" / CHANGELOG).write_bytes((case / "tree" / "base" / CHANGELOG).read_bytes())
    r = _judge(case)
    assert r.status is Status.NA and r.result.findings[0].message_id == "no-new-changelog-entry"


def test_pr4524_as_append_only_fails_naming_the_recipe(case: Path) -> None:
    _append_only(case)
    r = _judge(case)
    assert r.status is Status.FAIL
    text = row_summary(r)
    assert "`agentic.yaml`" in text and "changes the launch of 9 existing points" in text
    assert "`minimaxm31flash_tp4_conc1_kvnone`" not in text  # the non-speculative c1 recipe is unchanged
    assert any(getattr(e, "path", None) == RECIPE for e in r.result.evidence)


def test_clean_append_only_passes(clean: Path) -> None:
    r = _judge(clean)
    assert r.status is Status.PASS, row_summary(r)
    assert "all 10 base points keep the same recipe fingerprint and launch (10 kept), 6 new points" in row_summary(r)


def test_mixing_with_a_regular_entry_fails(clean: Path) -> None:
    path = clean / "tree" / "head" / CHANGELOG
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "\n- config-keys:\n    - " + KEY + "\n  description:\n    - \"x\"\n" + LINK,
                    encoding="utf-8")
    r = _judge(clean)
    assert r.status is Status.FAIL
    assert "mixed with a regular changelog entry" in row_summary(r)


def test_eval_modifier_conflicts(case: Path) -> None:
    _append_only(case, extra="  evals-only: true\n")
    r = _judge(case)
    assert r.status is Status.FAIL and "also sets `evals-only`" in row_summary(r)


def test_changed_benchmark_script_fails_naming_it(clean: Path) -> None:
    (clean / "tree" / "head" / SCRIPT).write_text(
        (clean / "tree" / "head" / SCRIPT).read_text(encoding="utf-8") + "\n# tweak\n", encoding="utf-8")
    _add_file(clean, SCRIPT)
    r = _judge(clean)
    assert r.status is Status.FAIL
    assert "`srt_agentic.sh`" in row_summary(r) and "can affect existing points" in row_summary(r)


def test_unscoped_changed_file_fails(clean: Path) -> None:
    other = f"{E2E}/utils/helper.py"
    (clean / "tree" / "head" / other).parent.mkdir(parents=True)
    (clean / "tree" / "head" / other).write_text("x = 1\n", encoding="utf-8")
    edit_yaml(clean / "pr.yaml", lambda pr: pr["files"].append({"path": other, "status": "added"}))
    r = _judge(clean)
    assert r.status is Status.FAIL and "`helper.py`" in row_summary(r)


def test_docs_change_is_neutral(clean: Path) -> None:
    doc = f"{E2E}/docs/MODELS.md"
    replace_text(clean / "tree" / "head" / doc, "\n", "\n\n", count=1)
    _add_file(clean, doc)
    assert _judge(clean).status is Status.PASS


def test_removed_base_point_fails(clean: Path) -> None:
    replace_text(clean / "tree" / "head" / MASTER, "conc-list: [32, 64, 80, 96]", "conc-list: [32, 64, 96]")
    r = _judge(clean)
    assert r.status is Status.FAIL
    assert "`minimaxm31flash_tp4_conc80_kvdram-hicache_spec-draft_model`" in row_summary(r)
    assert "is no longer generated" in row_summary(r)


def test_unselected_config_change_fails(clean: Path) -> None:
    master = clean / "tree" / "head" / MASTER
    base_text = (clean / "tree" / "base" / MASTER).read_text(encoding="utf-8")
    start = base_text.index("dsv4-")
    key = base_text[start:base_text.index(":", start)]
    replace_text(master, f"{key}:\n", f"{key}:\n  # edited\n", count=1)
    replace_text(master, "model-prefix: dsv4\n", "model-prefix: dsv4x\n", count=1)
    r = _judge(clean)
    assert r.status is Status.FAIL
    assert f"`{key}` changes although the append-only entry does not select it" in row_summary(r)


def test_unresolvable_base_launch_is_unverifiable(clean: Path) -> None:
    (clean / "tree" / "head" / RECIPE).unlink()
    edit_yaml(clean / "pr.yaml", lambda pr: pr["files"].append({"path": RECIPE, "status": "removed"}))
    r = _judge(clean)
    assert r.status is Status.FAIL
    assert "cannot be resolved" in row_summary(r)


def _ctx() -> CheckContext:
    return CheckContext(bundle=read_bundle(CASES / "pr4524"), policies=load_policies())


def test_recipe_fingerprint_is_sha256_of_canonical_identity() -> None:
    ctx = _ctx()
    point = points(ctx, "base", KEY)[0]
    identity = append_only.recipe_identity(point)
    assert "conc" not in identity and "exp-name" not in identity
    expected = hashlib.sha256(json.dumps(identity, sort_keys=True, separators=(",", ":"),
                                         ensure_ascii=False).encode()).hexdigest()
    assert append_only.recipe_fingerprint(point) == expected
    # conc and exp-name do not move the fingerprint; the image does.
    assert append_only.recipe_fingerprint(replace(point, conc=999, exp_name="x")) == expected
    assert append_only.recipe_fingerprint(replace(point, image="other")) != expected


def test_series_key_groups_tp_variants_but_not_offload() -> None:
    ctx = _ctx()
    pts = points(ctx, "head", KEY)
    tp2 = next(p for p in pts if p.tp == 2)
    tp4_hicache = next(p for p in pts if p.tp == 4 and p.kv_offloading == "dram")
    tp4_gpu = next(p for p in pts if p.tp == 4 and p.kv_offloading == "none")
    assert append_only.series_key(tp2) == append_only.series_key(tp4_hicache)
    assert append_only.series_key(tp2) != append_only.series_key(tp4_gpu)
