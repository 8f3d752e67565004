"""Regression tests for the crashes tests/test_fuzz_bundles.py found (one focused test per fix)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, row
from verifier.app.cli import main
from verifier.core.errors import BundleError, InputError

APPROVED = CASES / "pr4524-approved"
MASTER = "tree/head/inferencex-e2e/configs/nvidia-master.yaml"
RUNNERS = "tree/head/inferencex-e2e/configs/runners.yaml"
RUN = "runs/40739166138/run.yaml"


def _summary(report: object, check_id: int) -> str:
    result = row(report, check_id).result
    return json.dumps([f.model_dump(mode="json") for f in result.findings])


def _no_crash(report: object) -> None:
    for r in report.rows:  # type: ignore[attr-defined]
        assert all(f.message_id != "check-crashed" for f in r.result.findings), (r.id, r.result)


def _append_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(path.read_bytes() + data)


def test_unreadable_master_config_is_unverifiable_naming_the_file(tmp_path: Path) -> None:
    """Fuzz: invalid UTF-8 in the head master config crashed checks 1, 2, 4, 7-9, 11, 13, 14."""
    bundle = clone_bundle(APPROVED, tmp_path)
    _append_bytes(bundle / MASTER, b"\xff")
    report = judge(bundle)
    _no_crash(report)
    for check_id in (1, 2, 7, 8, 9, 11, 13):
        r = row(report, check_id)
        assert r.status.value == "FAIL", check_id
        assert "nvidia-master.yaml" in _summary(report, check_id), check_id
    assert row(report, 14).status.value == "WARN"  # advisory: unverifiable softened to WARN
    finding = row(report, 1).result.findings[0]
    assert finding.message_id == "input-unreadable"
    assert finding.params["missing"] == "inferencex-e2e/configs/nvidia-master.yaml"
    assert "not UTF-8" in finding.params["reason"]


def test_master_entry_with_broken_yaml_does_not_crash(tmp_path: Path) -> None:
    """Fuzz: a truncated head master config (one entry cut mid-flow-mapping) crashed checks 3-18."""
    bundle = clone_bundle(APPROVED, tmp_path)
    text = (bundle / MASTER).read_text(encoding="utf-8")
    cut = text.index("search-space:", text.index("minimaxm31flash-fp4-b300-sglang-agentic-dspark:"))
    (bundle / MASTER).write_text(text[: cut + 40], encoding="utf-8")
    report = judge(bundle)
    _no_crash(report)
    assert report.verdict.value == "REJECTED"


def test_broken_base_master_entry_does_not_crash(tmp_path: Path) -> None:
    """Fuzz: an unclosed flow mapping in an unrelated base entry crashed Check 18 (image scan)."""
    bundle = clone_bundle(APPROVED, tmp_path)
    path = bundle / MASTER.replace("/head/", "/base/")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(44, "key: {unclosed\n")
    path.write_text("".join(lines), encoding="utf-8")
    _no_crash(judge(bundle))


def test_unreadable_runners_yaml_is_a_launch_error(tmp_path: Path) -> None:
    """Fuzz: invalid YAML in runners.yaml crashed checks 8, 9, 11, 13 (launch resolution)."""
    from verifier.configs import runners
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch import launches

    bundle = clone_bundle(APPROVED, tmp_path)
    _append_bytes(bundle / RUNNERS, b"\nnot: [valid\n")
    ctx = CheckContext(bundle=read_bundle(bundle), policies=load_policies())
    table = runners(ctx, "head")
    assert table.format == "unreadable" and table.error and "invalid YAML" in table.error
    errors = launches(ctx).fatal_errors
    assert errors and errors[0].file == "inferencex-e2e/configs/runners.yaml"
    report = judge(bundle)
    _no_crash(report)
    # one root cause, one FAIL row: Check 18 owns the unresolved launch; 8, 9, 11, 13 name it
    assert row(report, 18).status.value == "FAIL" and "runners.yaml" in _summary(report, 18)
    assert report.verdict.value == "REJECTED"
    for check_id in (8, 9, 11, 13):
        assert "launch-reported-by-check18" in _summary(report, check_id) and "runners.yaml" in _summary(report, check_id)


@pytest.mark.parametrize("value", [".inf", "abc", "{number: []}", "[1]", "true"])
def test_run_pull_requests_must_be_numbers(tmp_path: Path, value: str) -> None:
    """Fuzz: `pull_requests: [.inf]` in run.yaml raised OverflowError in the bundle reader."""
    bundle = clone_bundle(APPROVED, tmp_path)
    text = (bundle / RUN).read_text(encoding="utf-8")
    (bundle / RUN).write_text(text.replace("pull_requests:\n- 4524\n", f"pull_requests:\n- {value}\n"),
                              encoding="utf-8")
    from verifier.core.bundle import read_bundle

    with pytest.raises(BundleError) as info:
        read_bundle(bundle)
    assert info.value.path == RUN and info.value.field == "pull_requests.0"


def test_run_pull_requests_number_objects_still_read(tmp_path: Path) -> None:
    """The `{number: N}` form the API returns keeps working."""
    bundle = clone_bundle(APPROVED, tmp_path)
    edit_yaml(bundle / RUN, lambda d: d.__setitem__("pull_requests", [{"number": 4524}, "4525"]))
    from verifier.core.bundle import read_bundle

    assert read_bundle(bundle).runs[40739166138].pull_requests == (4524, 4525)


def test_unsupported_yaml_directive_is_refused() -> None:
    """Fuzz: `%YAML 9.9` made ruamel raise KeyError out of load_yaml."""
    from verifier.core.yamlio import load_yaml

    with pytest.raises(InputError, match="invalid YAML"):
        load_yaml("%YAML 9.9\n---\na: 1\n", "comments.yaml")


def test_unsupported_yaml_directive_in_bundle_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """...and verify-pr refuses the bundle with one line, not an internal error."""
    bundle = clone_bundle(APPROVED, tmp_path)
    path = bundle / "comments.yaml"
    path.write_text("%YAML 9.9\n---\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["--bundle", str(bundle), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "comments.yaml" in err and "internal error" not in err


def test_codeowners_not_utf8_is_unverifiable(tmp_path: Path) -> None:
    """Fuzz: invalid UTF-8 in CODEOWNERS crashed Check 0."""
    bundle = clone_bundle(APPROVED, tmp_path)
    for side in ("base", "head"):
        _append_bytes(bundle / f"tree/{side}/.github/CODEOWNERS", b"\xff\xfe\x80")
    report = judge(bundle, only={0})
    _no_crash(report)
    assert row(report, 0).status.value == "FAIL"
    assert "CODEOWNERS" in _summary(report, 0)


def test_models_md_with_nul_byte_is_unverifiable(tmp_path: Path) -> None:
    """Fuzz: a NUL byte in MODELS.md crashed checks 7 and 8."""
    bundle = clone_bundle(APPROVED, tmp_path)
    for side in ("base", "head"):
        _append_bytes(bundle / f"tree/{side}/inferencex-e2e/docs/MODELS.md", b"\x00\n")
    report = judge(bundle, only={7, 8})
    _no_crash(report)
    assert "MODELS.md" in _summary(report, 7)
