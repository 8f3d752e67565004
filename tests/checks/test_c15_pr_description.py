"""Check 15 (PR description, advisory): claim extraction, and PASS / WARN / N/A / unverifiable paths on
edited copies of pr4524."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, row, row_summary
from verifier.core.results import Status
from verifier.documents.claims import ConfigFacts, PointFacts, evaluate, extract_claims

TP2 = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic-tp2.yaml"


def _row(path: Path) -> Any:
    return row(judge(path, only={15}), 15)


def _edit_body(case: Path, old: str, new: str) -> None:
    def change(pr: Any) -> None:
        assert old in pr["body"], old
        pr["body"] = pr["body"].replace(old, new)

    edit_yaml(case / "pr.yaml", change)


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


# ---------------------------------------------------------------------------------------------- units


def test_extraction_skips_translation_disclosure_negation_and_approximations() -> None:
    body = "\n".join([
        "Add TP8 points at conc 4 to 64. Host cache is 300 GB per rank.",
        "- **Old arm:** it does not use conc 1 to 2 and frees about 10 GB per rank of host cache.",
        "- the new `x.yaml` recipe sets `schedule-policy: lpm`; image `lmsysorg/sglang:v0.5.23-cu130`.",
        "<details><summary>中文</summary>",
        "新增 TP8 conc 4 to 64",
        "</details>",
        "## AI model disclosure",
        "TP16 conc 1 to 9 in run 12345678901",
    ])
    claims = extract_claims(body)
    kinds = [(c.kind, dict(c.values)) for c in claims]
    assert ("conc-range", {"tp": 8, "low": 4, "high": 64, "recipe": None}) in kinds
    assert ("host-cache-per-rank", {"gb": 300.0, "tp": None, "recipe": None}) in kinds
    assert ("setting", {"name": "schedule-policy", "value": "lpm", "recipe": "x.yaml"}) in kinds
    assert ("recipe-status", {"recipe": "x.yaml", "status": "added"}) in kinds
    assert ("image", {"image": "lmsysorg/sglang:v0.5.23-cu130"}) in kinds
    assert all(c.values.get("tp") != 16 for c in claims)  # disclosure skipped
    assert not any(c.kind == "conc-range" and c.values["low"] == 1 for c in claims)  # negated
    assert sum(1 for c in claims if c.kind == "host-cache-per-rank") == 1  # "about 10 GB" skipped
    assert extract_claims("Fix a typo in the README.") == []


def test_evaluate_reports_contradictions_with_actual_values() -> None:
    points = tuple(
        PointFacts(key="k", exp_name=f"p{c}", tp=2, conc=c, kv_offloading="dram", total_cpu_dram_gb=749, gpus=2,
                   recipe="a/b/x.yaml", settings={"hicache-size": 370, "schedule-policy": "lpm" if c > 40 else "fcfs"})
        for c in (32, 40, 48)
    )
    facts = ConfigFacts(points=points, images=frozenset({"lmsysorg/sglang:v1"}), changed_files={"a/b/x.yaml": "added"},
                        append_only=True)
    body = ("- **TP2:** the new `x.yaml` recipe covers conc 32 to 64. Host cache is 370 GB per rank, inside the "
            "749 GB allocation. Conc 40 to 48 use lpm. The whole curve is rerun. Image `lmsysorg/sglang:v2`.")
    judged = {j.claim.kind: j for j in evaluate(extract_claims(body), facts)}
    assert judged["conc-range"].outcome == "contradiction" and "32, 40, 48" in judged["conc-range"].actual
    assert judged["host-cache-per-rank"].outcome == "match"
    assert judged["dram-allocation"].outcome == "match"
    assert judged["schedule-policy"].outcome == "contradiction" and "fcfs" in judged["schedule-policy"].actual
    assert judged["rerun"].outcome == "contradiction"
    assert judged["recipe-status"].outcome == "match"
    assert judged["image"].outcome == "contradiction"


# ---------------------------------------------------------------------------------------------- bundles


@pytest.mark.parametrize("name", ["pr4524", "pr4524-approved"])
def test_cases_pass(name: str) -> None:
    r = _row(CASES / name)
    assert r.status is Status.PASS, row_summary(r)
    text = row_summary(r)
    for needle in ("TP2 conc 32-48", "370 GB host cache per rank", "749 GB DRAM allocation at dram-utilization 1.0",
                   "TP2 lpm at conc 44-48", "whole-curve rerun"):
        assert needle in text
    if name == "pr4524":
        assert "speculative-draft-kv-cache-dtype: fp8_e4m3 in agentic.yaml" in text


@pytest.mark.parametrize(("old", "new", "needles"), [
    ("conc 32 to 48 to the existing", "conc 32 to 64 to the existing", ["TP2 conc 32-64", "32, 36, 40, 44, 46, 48"]),
    ("370 GB per rank", "400 GB per rank", ["400 GB host cache per rank", "hicache-size 370"]),
    ("749 GB allocation", "750 GB allocation", ["750 GB DRAM allocation", "total-cpu-dram-gb 749"]),
    ("Conc 44 to 48 use", "Conc 40 to 48 use", ["TP2 lpm at conc 40-48", "schedule-policy fcfs at conc 40"]),
    ("`speculative-draft-kv-cache-dtype: fp8_e4m3`, so", "`speculative-draft-kv-cache-dtype: fp8_e5m2`, so",
     ["fp8_e5m2", "speculative-draft-kv-cache-dtype fp8_e4m3"]),
    ("the existing `agentic.yaml` recipe also gains", "the existing `agentic.yaml` recipe is unchanged and gains",
     ["agentic.yaml unchanged", "agentic.yaml is modified in this PR"]),
])
def test_contradictions_warn(case: Path, old: str, new: str, needles: list[str]) -> None:
    _edit_body(case, old, new)
    r = _row(case)
    assert r.status is Status.WARN, row_summary(r)
    assert r.result.findings[0].message_id == "claim-contradicted"
    for needle in needles:
        assert needle in row_summary(r)
    assert r.result.evidence


def test_append_only_contradicts_whole_curve_rerun(case: Path) -> None:
    path = case / "tree/head/inferencex-e2e/perf-changelog.yaml"
    link = "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/4524\n"
    path.write_text(path.read_text().replace(link, link + "  append-only: true\n"))
    r = _row(case)
    assert r.status is Status.WARN
    assert "whole-curve rerun" in row_summary(r) and "append-only: true" in row_summary(r)


def test_no_claims_is_not_applicable(case: Path) -> None:
    edit_yaml(case / "pr.yaml", lambda pr: pr.update(body="Tidy up.\n\n## AI model disclosure\n\nNo AI used."))
    r = _row(case)
    assert r.status is Status.NA
    assert "no concrete technical claim" in row_summary(r)


def test_unresolvable_configuration_is_check18s_finding_listed_here(case: Path) -> None:
    """One root cause, one owner: a point without a launch FAILs Check 18; this row lists it, N/A."""
    (case / "tree" / "head" / TP2).unlink()
    r = _row(case)
    assert r.status is Status.NA
    assert r.result.findings[0].message_id == "launch-reported-by-check18"
    report = judge(case, only={15, 18})
    assert row(report, 18).status is Status.FAIL and "agentic-tp2.yaml" in row_summary(row(report, 18))


def test_unknown_setting_names_are_not_contradictions() -> None:
    point = PointFacts(key="k", exp_name="p", tp=8, conc=4, kv_offloading="none", total_cpu_dram_gb=0, gpus=8,
                       recipe="r/x.yaml", settings={"tensor-parallel-size": 8})
    facts = ConfigFacts(points=(point,), images=frozenset(), changed_files={}, append_only=None)
    judged = evaluate(extract_claims("The `x.yaml` recipe uses `tp: 8` and `dram-utilization: 0.9`."), facts)
    assert [j.outcome for j in judged if j.claim.kind == "setting"] == ["unchecked", "unchecked"]
