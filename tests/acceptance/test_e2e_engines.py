"""End-to-end bundles on engines other than pr4524's SGLang path (fixtures/e2e, built by fixtures/e2e/build.py).

Each bundle is APPROVED as built; each mutation is one self-consistent change (recipe, server logs and
published page together) that must flip exactly the intended rows.
"""

from __future__ import annotations

import filecmp
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.acceptance.support import report_text
from tests.kit import FIXTURES, clone_bundle, judge, list_tree_changes, replace_text

E2E = FIXTURES / "e2e"
APPROVED = dict.fromkeys(range(19), "PASS") | {12: "N/A", 17: "N/A"}
NV = "vllm-b200-eagle3"
AMD = "vllm-mi355x-eagle3"
ROOT = "tree/head/inferencex-e2e/"


def _recipe(bundle: Path) -> Path:
    return next((bundle / ROOT / "benchmarks").rglob("agentic.yaml"))


def _logs(bundle: Path) -> list[Path]:
    return sorted(p for p in (bundle / "runs").rglob("server.log") if "60000" in str(p))


def _everywhere(bundle: Path, old: str, new: str) -> None:
    """Replace text in the head recipe, the pinned run's server logs and the published page."""
    for path in [_recipe(bundle), *_logs(bundle), bundle / "pages/vllm-wren-3.md"]:
        if old in path.read_text(encoding="utf-8"):
            replace_text(path, old, new)


def _statuses(report: object) -> dict[int, str]:
    return {r.id: r.status.value if hasattr(r.status, "value") else str(r.status) for r in report.rows}  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [NV, AMD])
def test_bundle_is_approved(name: str) -> None:
    assert _statuses(judge(E2E / name)) == APPROVED


def test_committed_bundles_equal_a_fresh_build(tmp_path: Path) -> None:
    sys.path.insert(0, str(FIXTURES))
    try:
        from e2e.build import build
    finally:
        sys.path.remove(str(FIXTURES))
    build(tmp_path)
    for name in (NV, AMD):
        fresh, committed = tmp_path / name, E2E / name
        files = sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(committed) for p in committed.rglob("*") if p.is_file()), name
        _m, mismatch, errors = filecmp.cmpfiles(fresh, committed, [str(f) for f in files], shallow=False)
        assert not mismatch and not errors, (name, mismatch, errors)


def _draft_quantization(b: Path) -> None:
    _everywhere(b, '"num_speculative_tokens":3', '"num_speculative_tokens":3,"quantization":"fp8"')


def _synthetic_al_differs(b: Path) -> None:
    for log in _logs(b):
        replace_text(log, '"synthetic_acceptance_length":2.87', '"synthetic_acceptance_length":3.16')


def _page_without_spec_config(b: Path) -> None:
    page = b / "pages/vllm-wren-3.md"
    lines = [x for x in page.read_text(encoding="utf-8").splitlines() if "--speculative-config" not in x]
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _page_spec_keys_reordered(b: Path) -> None:
    replace_text(b / "pages/vllm-wren-3.md",
                 '{"method":"eagle3","model":"acme/Wren-3-EAGLE3","num_speculative_tokens":3}',
                 '{"num_speculative_tokens": 3, "model": "acme/Wren-3-EAGLE3", "method": "eagle3"}')


def _overview_missing_key(b: Path) -> None:
    replace_text(b / ROOT / "docs/overview/amd.md", "| wren3-fp8-mi355x-vllm-agentic-eagle3 |", "| — |")


def _int4_allreduce(b: Path) -> None:
    _everywhere(b, "ROCM_QUICK_REDUCE_QUANTIZATION: NONE", "ROCM_QUICK_REDUCE_QUANTIZATION: INT4")
    for log in _logs(b):
        replace_text(log, "ROCM_QUICK_REDUCE_QUANTIZATION=NONE", "ROCM_QUICK_REDUCE_QUANTIZATION=INT4")
    replace_text(b / "pages/vllm-wren-3.md", "ROCM_QUICK_REDUCE_QUANTIZATION=NONE", "ROCM_QUICK_REDUCE_QUANTIZATION=INT4")


def _trt_without_sibling(b: Path) -> None:
    master = b / ROOT / "configs/nvidia-master.yaml"
    master.write_text(master.read_text(encoding="utf-8") + (
        "\nwren3-fp8-b300-trt-agentic-eagle3:\n  image: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc23\n"
        "  model: acme/Wren-3-FP8\n  model-prefix: wren3\n  runner: cluster:b300-dsxe\n  precision: fp8\n"
        "  framework: trt\n  multinode: false\n  scenarios:\n    agentic-coding: []\n"), encoding="utf-8")
    replace_text(b / ROOT / "docs/overview/nvidia.md", "| vllm-b200-eagle3 | — | — |".replace("vllm-b200-eagle3",
                 "wren3-fp8-b200-vllm-agentic-eagle3"), "| wren3-fp8-b200-vllm-agentic-eagle3 | "
                 "wren3-fp8-b300-trt-agentic-eagle3 | — |")
    replace_text(b / ROOT / "perf-changelog.yaml", "    - wren3-fp8-b200-vllm-agentic-eagle3\n  scenario-type:\n"
                 "    - agentic-coding\n  description:\n    - \"Raise",
                 "    - wren3-fp8-b200-vllm-agentic-eagle3\n    - wren3-fp8-b300-trt-agentic-eagle3\n  scenario-type:\n"
                 "    - agentic-coding\n  description:\n    - \"Add wren3-fp8-b300-trt-agentic-eagle3 on "
                 "nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc23.\"\n    - \"Raise")


MUTATIONS: list[tuple[str, str, Callable[[Path], None], dict[int, str], dict[int, list[str]]]] = [
    ("vllm-draft-quantization", NV, _draft_quantization, {13: "FAIL"}, {13: ["quantization", "fp8"]}),
    ("vllm-synthetic-al-differs", NV, _synthetic_al_differs, {11: "FAIL"}, {11: ["3.16", "2.87"]}),
    ("vllm-page-without-spec-config", NV, _page_without_spec_config, {3: "FAIL"}, {3: ["speculative-config"]}),
    ("vllm-page-spec-keys-reordered", NV, _page_spec_keys_reordered, {}, {}),
    ("amd-overview-missing-key", AMD, _overview_missing_key, {16: "FAIL"},
     {16: ["wren3-fp8-mi355x-vllm-agentic-eagle3", "amd.md"]}),
    ("amd-int4-allreduce-new-model", AMD, _int4_allreduce, {8: "FAIL"}, {8: ["ROCM_QUICK_REDUCE_QUANTIZATION", "INT4"]}),
    ("amd-synthetic-al-differs", AMD, _synthetic_al_differs, {11: "FAIL"}, {11: ["3.16"]}),
    ("trt-without-open-source-sibling", NV, _trt_without_sibling, {6: "FAIL"}, {6: ["wren3-fp8-b300-trt-agentic-eagle3"]}),
]


@pytest.mark.parametrize(("label", "name", "mutate", "changed", "mentions"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_mutation(tmp_path: Path, label: str, name: str, mutate: Callable[[Path], None], changed: dict[int, str],
                  mentions: dict[int, list[str]]) -> None:
    bundle = clone_bundle(E2E / name, tmp_path)
    mutate(bundle)
    list_tree_changes(bundle)
    report = judge(bundle)
    assert _statuses(report) == APPROVED | changed, label
    for check_id, needles in mentions.items():
        text = report_text(report, check_id)
        for needle in needles:
            assert needle in text, (label, check_id, needle, text)
