"""Acceptance mutations for checks 3 (upstream recipe), 15 (PR description), 16 (vendor overview),
17 (metrics publication) and 18 (recipe/image/sweep consistency).

Each test clones one of the shared cases into tmp_path, applies ONE realistic, self-consistent
mutation (the way a maintainer would build a hidden acceptance bundle: a changed recipe is also
changed in the server logs, the cookbook page, the PR body and the changelog), and asserts the
status of every row against the case's expected statuses with the intended changes, plus the key
substrings of the FAIL/WARN rows (English and Chinese summaries together).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, read_yaml, replace_text
from verifier.render.json import verdict_document

APPROVED = CASES / "pr4524-approved"
REJECTED = CASES / "pr4524"
PIN = 40739166138
E2E = "tree/head/inferencex-e2e"
RECIPES = f"{E2E}/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp"
TP2 = f"{RECIPES}/agentic-tp2.yaml"
TP4 = f"{RECIPES}/agentic.yaml"
MASTER = f"{E2E}/configs/nvidia-master.yaml"
CHANGELOG = f"{E2E}/perf-changelog.yaml"
OVERVIEW = f"{E2E}/docs/overview/nvidia.md"
PAGE = "pages/sglang-minimax-m3.1.md"
KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"

pytestmark = pytest.mark.skipif(not CASES.is_dir(), reason="shared cases not available")


# ------------------------------------------------------------------------------------------ helpers


def expected_statuses(case: Path) -> dict[int, str]:
    """The case's expected status of every row."""
    return {int(k): str(v) for k, v in read_yaml(case / "expected.yaml")["checks"].items()}


def verdict(bundle: Path) -> dict[str, Any]:
    """The OUTPUT.md document of a bundle."""
    return verdict_document(judge(bundle))


def row_text(doc: Mapping[str, Any], check_id: int) -> str:
    """English and Chinese summaries of one row."""
    item = next(c for c in doc["checks"] if c["id"] == check_id)
    return item["summary"]["en"] + "\n" + item["summary"]["zh"]


def assert_rows(doc: Mapping[str, Any], case: Path, changes: Mapping[int, str] | None = None,
                mentions: Mapping[int, Iterable[str]] | None = None,
                absent: Mapping[int, Iterable[str]] | None = None) -> None:
    """Every row has the case's status with `changes` applied; FAIL/WARN rows name their evidence."""
    want = {**expected_statuses(case), **(changes or {})}
    got = {c["id"]: c["status"] for c in doc["checks"]}
    diff = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    texts = {k: row_text(doc, k)[:1500] for k in diff}
    assert not diff, (diff, texts)
    statuses = set(want.values())
    verdict_ = "REJECTED" if "FAIL" in statuses else "WARN" if "WARN" in statuses else "APPROVED"
    assert doc["verdict"] == verdict_
    for check_id, needles in (mentions or {}).items():
        text = row_text(doc, check_id)
        for needle in needles:
            assert needle in text, f"check {check_id} row lacks {needle!r}: {text[:2000]}"
    for check_id, needles in (absent or {}).items():
        text = row_text(doc, check_id)
        for needle in needles:
            assert needle not in text, f"check {check_id} row contains {needle!r}: {text[:2000]}"
    for item in doc["checks"]:
        assert "check-crashed" not in str(item), item
        if item["status"] in ("FAIL", "WARN"):
            assert item["evidence"], f"check {item['id']} has no evidence"


def server_logs(bundle: Path, pattern: str = "*", run: int = PIN) -> list[Path]:
    """server.log files of one run whose artifact name matches a glob."""
    return sorted((bundle / "runs" / str(run)).glob(f"bmk_agentic_{pattern}/server.log"))


def replace_in_logs(bundle: Path, pattern: str, old: str, new: str, run: int = PIN) -> None:
    """Replace text in the server logs of the matching points (asserting it is there)."""
    logs = server_logs(bundle, pattern, run)
    assert logs, pattern
    for log in logs:
        replace_text(log, old, new)


def edit_signoff(bundle: Path, change: Callable[[str], str]) -> None:
    """Change the sign-off body in signoff.yaml and in its copy in comments.yaml."""
    signoff = read_yaml(bundle / "signoff.yaml")
    old = str(signoff["body"])
    new = change(old)
    assert new != old
    edit_yaml(bundle / "signoff.yaml", lambda d: d.__setitem__("body", new))

    def comments(data: Any) -> None:
        for item in data:
            if item["id"] == signoff["id"]:
                item["body"] = new

    edit_yaml(bundle / "comments.yaml", comments)


def edit_body(bundle: Path, change: Callable[[str], str]) -> None:
    """Change the PR body."""
    edit_yaml(bundle / "pr.yaml", lambda d: d.__setitem__("body", change(str(d["body"]))))


def sub(pattern: str, repl: str, count: int = 0, flags: int = 0) -> Callable[[str], str]:
    """A text change by regular expression that must match."""

    def change(text: str) -> str:
        new, n = re.subn(pattern, repl, text, count=count, flags=flags)
        assert n, pattern
        return new

    return change


def page_commands(bundle: Path) -> list[tuple[int, int]]:
    """(start, end) line spans of the `sglang serve` blocks of the cookbook page, in order."""
    lines = (bundle / PAGE).read_text(encoding="utf-8").split("\n")
    spans = []
    for i, line in enumerate(lines):
        if line.startswith("sglang serve"):
            j = i
            while lines[j].endswith("\\"):
                j += 1
            spans.append((i, j))
    return spans


def edit_page_command(bundle: Path, index: int, change: Callable[[str], str]) -> None:
    """Change one `sglang serve` command of the cookbook page (0 = TP2 c32, 1 = TP2 c46, 2 = TP4, 3 = TP4 HiCache)."""
    path = bundle / PAGE
    lines = path.read_text(encoding="utf-8").split("\n")
    start, end = page_commands(bundle)[index]
    block = "\n".join(lines[start : end + 1])
    new = change(block)
    assert new != block
    path.write_text("\n".join([*lines[:start], new, *lines[end + 1 :]]), encoding="utf-8")


def drop_line(flag: str) -> Callable[[str], str]:
    """Remove the `  --flag ...` continuation line of a command."""
    return sub(rf"\n  {re.escape(flag)}(?: [^\n\\]*)? \\", "", count=1)


@pytest.fixture()
def approved(tmp_path: Path) -> Path:
    return clone_bundle(APPROVED, tmp_path)


@pytest.fixture()
def rejected(tmp_path: Path) -> Path:
    return clone_bundle(REJECTED, tmp_path)


# ------------------------------------------------------------------------- the cases themselves


@pytest.mark.parametrize("case", [APPROVED, REJECTED], ids=lambda p: p.name)
def test_unmutated_cases(case: Path) -> None:
    assert_rows(verdict(case), case)


# ------------------------------------------------------------------------ Check 3: upstream recipe


@pytest.mark.parametrize("state", ["OPEN", "CLOSED"])
def test_c03_linked_pr_not_merged(approved: Path, state: str) -> None:
    def change(data: Any) -> None:
        fact = data["upstream_prs"]["sgl-project/sglang#47214"]
        fact["state"] = state
        fact["merged_at"] = None

    edit_yaml(approved / "github.yaml", change)
    edit_signoff(approved, sub(r"\) is MERGED \(2026-10-29\)\.", f") is {state}."))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sgl-project/sglang#47214", state]})


def test_c03_linked_pr_unrecorded(approved: Path) -> None:
    edit_yaml(approved / "github.yaml", lambda d: d["upstream_prs"].pop("sgl-project/sglang#47214") and None)
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sgl-project/sglang#47214", "Could not be verified"]})


def test_c03_detail_section_without_upstream_link(approved: Path) -> None:
    edit_signoff(approved, sub(r"- \*\*Upstream recipe:\*\*\n(?:  - [^\n]*\n)+", ""))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: [KEY]})


def test_c03_page_not_stored(approved: Path) -> None:
    (approved / PAGE).unlink()
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sglang-minimax-m3.1.md"]})


@pytest.mark.parametrize("commands", [[0, 1], [0]], ids=["both-tp2", "tp2-c32-only"])
def test_c03_page_drops_write_policy(approved: Path, commands: list[int]) -> None:
    for index in commands:
        edit_page_command(approved, index, drop_line("--hicache-write-policy"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"},
                {3: ["hicache-write-policy", "write_back", "agentic-tp2.yaml", "agg"]},
                absent={3: ["agentic.yaml:"]})


def test_c03_page_drops_lpm(approved: Path) -> None:
    edit_page_command(approved, 1, drop_line("--schedule-policy"))
    replace_text(approved / PAGE, "switch to longest-prefix-match scheduling from concurrency 44. ", "")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["schedule-policy", "lpm", "agentic-tp2.yaml", "agg"]})


def test_c03_page_different_value(approved: Path) -> None:
    for index in (0, 1):
        edit_page_command(approved, index, sub("--hicache-size 370", "--hicache-size 300"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["hicache-size", "370", "300", "agentic-tp2.yaml"]})


def test_c03_page_drops_tp4_moe_backend(approved: Path) -> None:
    for index in (2, 3):
        edit_page_command(approved, index, drop_line("--moe-runner-backend"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["moe-runner-backend", "flashinfer_trtllm_routed", "agentic.yaml"]})


def test_c03_page_env_missing(approved: Path) -> None:
    replace_text(approved / PAGE, "export SGLANG_TIMEOUT_KEEP_ALIVE=900\n", "")
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["SGLANG_TIMEOUT_KEEP_ALIVE", "900"]})


def test_c03_page_equals_forms_aliases_and_order(approved: Path) -> None:
    def rewrite(block: str) -> str:
        lines = block.split("\n")
        head, flags = lines[0].rstrip(" \\"), [ln.strip().rstrip(" \\") for ln in lines[1:]]
        flags = list(reversed(flags))
        out = []
        for flag in flags:
            name, _, value = flag.partition(" ")
            name = {"--tensor-parallel-size": "--tp", "--mem-fraction-static": "--mem-fraction-static",
                    "--trust-remote-code": "--trust-remote-code"}.get(name, name)
            out.append(f"{name}={value}" if value else name)
        return head + " " + " \\\n  ".join(out)

    for index in range(4):
        edit_page_command(approved, index, rewrite)
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_page_inline_env_and_python_launcher(approved: Path) -> None:
    replace_text(approved / PAGE, "export SGLANG_TIMEOUT_KEEP_ALIVE=900\n", "")
    text = (approved / PAGE).read_text(encoding="utf-8")
    text = text.replace("sglang serve \\", "SGLANG_TIMEOUT_KEEP_ALIVE=900 python3 -m sglang.launch_server \\")
    (approved / PAGE).write_text(text, encoding="utf-8")
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_page_restates_default(approved: Path) -> None:
    edit_page_command(approved, 0, sub("--hicache-size 370", "--hicache-size 370 \\\n  --schedule-policy fcfs"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_harness_only_settings_not_on_page(approved: Path) -> None:
    # a harness-only benchmark variable and a logging knob in the recipe, absent from the page
    replace_text(approved / TP2, "      AIPERF_REQUIRED_SERVER_METRIC_PREFIX: 'sglang:'\n",
                 "      AIPERF_REQUIRED_SERVER_METRIC_PREFIX: 'sglang:'\n      AIPERF_REQUEST_TIMEOUT_SECONDS: '3600'\n")
    doc = verdict(approved)
    assert_rows(doc, APPROVED)


def test_c03_unlinked_page_pr_only(approved: Path) -> None:
    # the sign-off links the merged PR but no published page
    edit_signoff(approved, sub(r"\[published MiniMax-M3\.1 cookbook, Agentic Long-Context Deployment section\]\([^)]*\)",
                               "published MiniMax-M3.1 cookbook, Agentic Long-Context Deployment section"))
    doc = verdict(approved)
    assert_rows(doc, APPROVED)
    assert "but not its published page" in row_text(doc, 3)


def test_c03_pr_only_and_page_unrecorded(approved: Path) -> None:
    edit_signoff(approved, sub(r"\[published MiniMax-M3\.1 cookbook, Agentic Long-Context Deployment section\]\([^)]*\)",
                               "published MiniMax-M3.1 cookbook, Agentic Long-Context Deployment section"))
    edit_yaml(approved / "github.yaml", lambda d: d["pages"].pop(
        "https://docs.sglang.io/cookbook/autoregressive/MiniMax/MiniMax-M3.1#agentic-long-context-deployment") and None)
    (approved / PAGE).unlink()
    doc = verdict(approved)
    assert_rows(doc, APPROVED, {3: "FAIL"}, {3: ["sgl-project/sglang#47214", "Could not be verified"]})
