"""Check 16 (Vendor overview): table parsing, and PASS / FAIL / unverifiable / N/A paths on edited copies
of pr4524."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.results import Status
from verifier.documents.overview import parse_overview

KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"
OVERVIEW = "tree/head/inferencex-e2e/docs/overview/nvidia.md"
HEADER = ["Model", "Prefix", "SGLang", "vLLM", "TRT-LLM", "Dynamo"]


def _row(path: Path) -> Any:
    return row(judge(path, only={16}), 16)


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


def test_parse_overview_table() -> None:
    text = "\n".join([
        "# Overview",
        "| Model | Prefix | SGLang | vLLM |",
        "|---|---|---|---|",
        "| Wrong | table | x | y |",
        "",
        "| Model | Prefix | SGLang | vLLM | TRT-LLM | Dynamo |",
        "|---|---|---|---|---|---|",
        "| A | a | `a-sglang`, [a-sglang-2](x.md) | — | — | a-dynamo-trt |",
        "| B | b | — | b-vllm | — | — |",
        "| B again | b | b-other | — | — | — |",
        "",
        "| not | part |",
    ])
    overview = parse_overview(text, "nvidia.md", HEADER)
    assert overview.header_line == 6
    a = overview.row("a")
    assert a is not None and a.line == 8
    assert a.cells["SGLang"] == ("a-sglang", "a-sglang-2") and a.cells["vLLM"] == ()
    assert a.column_of("a-dynamo-trt") == "Dynamo" and a.column_of("zzz") is None
    assert overview.row("b").model == "B" and len(overview.duplicates) == 1  # type: ignore[union-attr]
    assert parse_overview("no table", "x.md", HEADER).header_line is None


@pytest.mark.parametrize("name", ["pr4524", "pr4524-approved"])
def test_cases_pass_with_vendor_name(name: str) -> None:
    r = _row(CASES / name)
    assert r.status is Status.PASS and r.name == "NVIDIA overview"
    assert "nvidia.md:13" in row_summary(r) and KEY in row_summary(r) and "SGLang" in row_summary(r)


def test_key_missing_from_cell_fails(case: Path) -> None:
    replace_text(case / OVERVIEW, f"| minimaxm31flash | {KEY} |", "| minimaxm31flash | — |")
    r = _row(case)
    assert r.status is Status.FAIL and r.name == "NVIDIA overview"
    assert r.result.findings[0].message_id == "overview-key-missing"
    assert KEY in row_summary(r) and "nvidia.md:13" in row_summary(r)
    assert r.result.evidence[0].line == 13  # type: ignore[union-attr]


def test_key_in_wrong_engine_cell_fails(case: Path) -> None:
    replace_text(case / OVERVIEW, f"| minimaxm31flash | {KEY} | — |", f"| minimaxm31flash | — | {KEY} |")
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "overview-key-wrong-column"
    assert "`vLLM`" in row_summary(r) and "`SGLang`" in row_summary(r)


def test_model_row_missing_fails(case: Path) -> None:
    replace_text(case / OVERVIEW, f"| MiniMax-M3.1-Flash | minimaxm31flash | {KEY} | — | — | — |\n", "")
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "overview-model-missing"
    assert "minimaxm31flash" in row_summary(r) and "nvidia.md:11" in row_summary(r)


def test_missing_overview_is_unverifiable(case: Path) -> None:
    (case / OVERVIEW).unlink()
    r = _row(case)
    assert r.status is Status.FAIL and r.name == "NVIDIA overview"
    assert r.result.findings[0].message_id == "overview-missing"
    assert "inferencex-e2e/docs/overview/nvidia.md" in row_summary(r)


def test_overview_without_table_is_unverifiable(case: Path) -> None:
    (case / OVERVIEW).write_text("# NVIDIA overview\n\nNothing here yet.\n", encoding="utf-8")
    r = _row(case)
    assert r.status is Status.FAIL
    assert r.result.findings[0].message_id == "overview-table-missing"


def test_no_affected_key_is_not_applicable(case: Path) -> None:
    """Head equals base for every config-relevant file: nothing is submitted."""
    head, base = case / "tree" / "head", case / "tree" / "base"
    for rel in ("inferencex-e2e/configs/nvidia-master.yaml",
                "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml"):
        shutil.copyfile(base / rel, head / rel)
    (head / "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/"
     "agentic-tp2.yaml").unlink()
    edit_yaml(case / "pr.yaml", lambda pr: pr.update(files=[f for f in pr["files"] if "changelog" in f["path"]]))
    r = _row(case)
    assert r.status is Status.NA, row_summary(r)


def test_overview_absent_from_base_is_not_in_force(case: Path) -> None:
    """Before the vendor overview existed in the trusted base tree the rule was not in force: N/A."""
    (case / OVERVIEW).unlink()
    (case / OVERVIEW.replace("tree/head/", "tree/base/")).unlink()
    r = _row(case)
    assert r.status is Status.NA and r.name == "NVIDIA overview"
    assert r.result.findings[0].message_id == "overview-not-in-force"
    assert "inferencex-e2e/docs/overview/nvidia.md" in row_summary(r)
