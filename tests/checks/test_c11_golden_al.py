"""Check 11 (Golden AL): fixtures and the canonical cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import c11_golden_al as c11
from tests.checks.fixture_runner import assert_fixture, file_lines, fixture_dirs, params, run_one
from tests.kit import CASES
from verifier.core.policy import load_policies


@pytest.mark.parametrize("bundle", fixture_dirs(11), ids=lambda p: p.name)
def test_fixture(bundle: Path) -> None:
    assert_fixture(bundle, 11)


def _fx(name: str) -> Path:
    return next(p for p in fixture_dirs(11) if p.name == name)


def test_docstring_and_identity() -> None:
    assert (c11.ID, load_policies()["checks"]["checks"][str(c11.ID)]["name"]) == (11, "Golden AL")
    for heading in ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:"):
        assert heading in (c11.__doc__ or "")


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_case_al_is_golden(case: str) -> None:
    result = run_one(CASES / case, 11)
    assert result.status.value == "PASS"
    p = params(result, "golden-al-matches")
    assert (p["golden"], p["length"], p["mode"], p["method"], p["points"]) == ("4.04", 7, "thinking_on", "dspark", 15)
    assert "SGLANG_SIMULATE_ACC_LEN=4.04" in p["logged"] and p["runs"] == [40739166138]
    assert ("inferencex-e2e/infx/golden_al_distribution/minimaxm31flash_dspark.yaml", 16) in file_lines(result)


def test_logged_and_hardcoded_values_differ() -> None:
    p = params(run_one(_fx("fail-logged-al-differs"), 11), "logged-al-differs")
    assert (p["value"], p["golden"]) == ("3.9", "3.61")
    result = run_one(_fx("fail-hardcoded-al-differs"), 11)
    p = params(result, "hardcoded-al-differs")
    assert (p["value"], p["golden"]) == ("3.9", ["3.61"])
    assert p["file"].endswith("agentic.yaml:32")


# --- issue 11 defect 1: one point's own log shows real acceptance (the false APPROVED) --------------

SIMULATED = ("SGLANG_SIMULATE_ACC_LEN", "SGLANG_SIMULATE_ACC_METHOD", "SGLANG_SIMULATE_ACC_TOKEN_MODE")


def test_one_point_with_real_acceptance_fails_naming_it(tmp_path: Path) -> None:
    """Every point's recipe gets the golden AL injected, but conc 8's own server.log has no
    SGLANG_SIMULATE_ACC_* variables and a real `accept len`: the log outranks the construction."""
    from tests.kit import row_summary
    from tests.minibundle import build

    bundle = build(tmp_path / "b", point_log_env={8: dict.fromkeys(SIMULATED)}, point_accept_len={8: 2.37})
    result = run_one(bundle, 11)
    assert result.status.value == "FAIL"
    p = params(result, "point-not-simulated")
    assert (p["point"], p["accept"], p["golden"], p["worker"]) == (
        "quill2flash_tp4_conc8_kvnone_spec-draft_model", ["2.37"], "3.61", "agg_0")
    points = [f.params["point"] for f in result.findings if f.message_id == "point-not-simulated"]
    assert points == ["quill2flash_tp4_conc8_kvnone_spec-draft_model"]  # conc 4 is simulated
    text = row_summary(type("R", (), {"id": 11, "result": result})())
    assert "quill2flash_tp4_conc8_kvnone_spec-draft_model" in text and "2.37" in text


def test_log_without_environment_block_does_not_claim(tmp_path: Path) -> None:
    """A log that shows neither a worker environment nor a command cannot tell: no finding from it."""
    from tests.minibundle import build

    bundle = build(tmp_path / "b")
    log = next(bundle.glob("runs/*/bmk_agentic_*conc8*/server.log"))
    log.write_text("\n".join(ln for ln in log.read_text().splitlines()
                             if ln.startswith("[") and "srtctl: agg_0" not in ln) + "\n")
    result = run_one(bundle, 11)
    assert not [f for f in result.findings if f.message_id == "point-not-simulated"]


# --- issue 11 defect 6: a missing golden cell whose AL source the sign-off states --------------------

PENDING = ("- **Golden AL:** DSpark block size 5 has no committed cell yet; its golden AL comes from the pending "
           "golden-curve collection run https://github.com/SemiAnalysisAI/InferenceX/actions/runs/50000000077 "
           "(speedbench-al.yml).\n")


def test_missing_cell_passes_with_stated_source(tmp_path: Path) -> None:
    from tests.minibundle import build

    bundle = build(tmp_path / "b", golden={4: 3.22, 6: 3.9}, logs=False, signoff_extra=PENDING)
    result = run_one(bundle, 11)
    assert result.status.value == "PASS", result.findings
    p = params(result, "golden-source-stated")
    assert p["link"] == "https://github.com/SemiAnalysisAI/InferenceX/actions/runs/50000000077"
    assert p["key"] == "quill2flash-fp4-b300-sglang-agentic-dspark"


@pytest.mark.parametrize("extra", [
    "",  # no statement at all
    # golden/AL words but no link
    "- **Golden AL:** block size 5 has no committed cell; its AL comes from a pending collection run.\n",
    # a link, but no word saying where the AL comes from (a generic validation note)
    "- **Golden AL:** see run https://github.com/SemiAnalysisAI/InferenceX/actions/runs/50101000001 for the AL.\n",
    # a link and golden words outside the detail section do not count
])
def test_missing_cell_fails_without_a_statement(tmp_path: Path, extra: str) -> None:
    from tests.minibundle import build

    bundle = build(tmp_path / "b", golden={4: 3.22, 6: 3.9}, logs=False, signoff_extra=extra)
    result = run_one(bundle, 11)
    assert result.status.value == "FAIL"
    assert params(result, "golden-cell-missing")["length"] == 5


def _judge_with(bundle: Path, policies: object) -> object:
    from checks import judge, select
    from tests.kit import row
    from verifier.core.bundle import read_bundle

    return row(judge(read_bundle(bundle), policies, select(only={11})), 11).result  # type: ignore[arg-type]


def test_added_golden_cell_passes_only_through_a_named_policy_exception() -> None:
    """The failing fixture's twin: the same PR-added cell, named in policies/golden_al.yaml added_cells."""
    bundle = _fx("fail-golden-cell-added-by-pr")
    assert params(run_one(bundle, 11), "golden-cell-added-by-pr")["cell"] == "quill2flash_dspark thinking_on[5] = 3.61"
    base = load_policies()
    allowed = {**base["golden_al"], "added_cells": [{"curve": "quill2flash_dspark", "mode": "thinking_on", "length": 5,
                                                     "reason": "measured by the golden-curve run of PR 5000"}]}
    result = _judge_with(bundle, {**base, "golden_al": allowed})
    assert result.status.value == "PASS", [f.message_id for f in result.findings]
    assert "rule-added-by-pr" in [f.message_id for f in result.findings]
    other = {**base["golden_al"], "added_cells": [{"curve": "quill2flash_dspark", "mode": "thinking_on", "length": 6,
                                                   "reason": "another cell"}]}
    assert _judge_with(bundle, {**base, "golden_al": other}).status.value == "FAIL"


def test_served_checkpoint_not_config_prefix_chooses_the_curve() -> None:
    """InferenceX #2158: the model-prefix selects the curve file, but the served checkpoint must be the
    one the curve was measured on; its quantized packaging (`-NVFP4`) is the same checkpoint."""
    p = params(run_one(_fx("fail-golden-curve-other-model"), 11), "golden-curve-other-model")
    assert (p["model"], p["checkpoint"], p["prefix"]) == ("acme/Quill-3", "quill-2-flash", "quill2flash")
    assert run_one(_fx("pass-golden-curve-quantized-checkpoint"), 11).status.value == "PASS"


def _without_connector_injection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Launches as if the connector injected nothing (its injection list emptied, no recipe knob)."""
    import dataclasses

    from verifier.launch import launches as real_launches

    def stripped(ctx: object, side: str = "head", keys: object = None) -> object:
        found = real_launches(ctx, side, keys)  # type: ignore[arg-type]
        for i, la in enumerate(found.launches):
            if la.synthetic is not None and la.synthetic.injected:
                env = {k: v for k, v in la.env.items() if not k.startswith("SGLANG_SIMULATE_ACC")}
                found.launches[i] = dataclasses.replace(
                    la, env=env, synthetic=dataclasses.replace(la.synthetic, injected=()))
        return found

    monkeypatch.setattr(c11, "launches", stripped)


def _without_logs(tmp_path: Path) -> Path:
    from tests.kit import clone_bundle

    case = clone_bundle(CASES / "pr4524-approved", tmp_path / "case")
    for log in case.rglob("server.log"):
        log.unlink()
    return case


def test_a_runner_the_pr_strips_of_the_injection_does_not_inject(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The base runner runs the golden-AL injector; the PR's own runner (what its run executes) no
    longer does: a log-less point whose launch sets no knob FAILs. With the injection kept on both
    sides it passes."""
    _without_connector_injection(monkeypatch)
    case = _without_logs(tmp_path)
    injecting = 'source "$(dirname "$0")/slurm_utils.sh"\ninject_synthetic_acceptance "$CONFIG_FILE"\n'
    for side in ("base", "head"):
        for path in (".github/workflows/run-sweep.yml", ".github/workflows/collect-results.yml",
                     ".github/workflows/collect-evals.yml", ".github/workflows/benchmark-tmpl.yml"):
            target = case / "tree" / side / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("name: x\n")
        runners = case / "tree" / side / "inferencex-e2e/runners"
        runners.mkdir(parents=True, exist_ok=True)
        (runners / "slurm_utils.sh").write_text(
            'inject_synthetic_acceptance() { python3 "$GITHUB_WORKSPACE/runners/inject_synthetic_acceptance.py" "$1"; }\n')
        (runners / "launch_b300-dsxe.sh").write_text(injecting)
    assert run_one(case, 11).status.value == "PASS"
    (case / "tree" / "head" / "inferencex-e2e/runners/launch_b300-dsxe.sh").write_text("echo no injection\n")
    result = run_one(case, 11)
    assert result.status.value == "FAIL"
    assert "launch-not-simulated" in [f.message_id for f in result.findings]


def test_no_log_launch_with_injected_acceptance_passes(tmp_path: Path) -> None:
    """The passing twin of the static judgement: no server log, and the launcher injects the golden AL."""
    result = run_one(_without_logs(tmp_path), 11)
    assert result.status.value == "PASS", [f.message_id for f in result.findings]
    assert "launch-not-simulated" not in [f.message_id for f in result.findings]


def test_no_log_launch_without_simulated_acceptance_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """InferenceX PR 2488: a launch that never enables simulated acceptance passed when no log was at
    hand. Here the connector injects nothing (its injection list emptied) and no recipe knob is set."""
    _without_connector_injection(monkeypatch)
    case = _without_logs(tmp_path)
    # the case holds neither the workflows nor the runner: whether the runner injects cannot be read
    result = run_one(case, 11)
    assert result.status.value == "FAIL"
    p = params(result, "launch-injection-unread")
    assert p["harness"].endswith("runners/launch_b300-dsxe.sh") and p["golden"] == "4.04"
    assert "launch-not-simulated" not in [f.message_id for f in result.findings]
    # with every harness file of the closure read (none runs the injector), the launch is the evidence
    for side in ("base", "head"):
        for path in (".github/workflows/run-sweep.yml", ".github/workflows/collect-results.yml",
                     ".github/workflows/collect-evals.yml", ".github/workflows/benchmark-tmpl.yml",
                     "inferencex-e2e/runners/launch_b300-dsxe.sh", "inferencex-e2e/runners/slurm_utils.sh"):
            target = case / "tree" / side / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("# no injector here\n" if path.endswith(".sh") else "name: x\n")
    result = run_one(case, 11)
    assert result.status.value == "FAIL"
    p = params(result, "launch-not-simulated")
    assert (p["golden"], p["mode"], p["length"]) == ("4.04", "thinking_on", 7)
    assert p["file"].endswith("agentic.yaml") or p["file"].endswith("agentic-tp2.yaml")


@pytest.mark.parametrize(("curve", "model", "same"), [
    ("minimax-m3", "MiniMaxAI/MiniMax-M3-MXFP8", True),
    ("qwen3.5-397b-a17b-nvfp4", "Qwen/Qwen3.5-397B-A17B-FP8", True),
    ("kimi-k2.5-nvfp4", "nvidia/Kimi-K2.5-NVFP4", True),
    ("kimi-k2.5-nvfp4", "nvidia/Kimi-K2.6-NVFP4", False),  # another model borrowing K2.5's curve
    ("minimax-m3", "MiniMaxAI/MiniMax-M3.1-Flash", False),
    ("quill-2-flash", "acme/Quill-2-Flash-Turbo", False),  # a longer name is another checkpoint
    ("deepseek-v4-pro", "deepseek-ai/DeepSeek-V3", False),
    # a release revision of a quantized checkpoint (InferenceX #2205) is that checkpoint; a version
    # word that follows no qualifier is the model's own version
    ("qwen3.5-397b-a17b-nvfp4", "nvidia/Qwen3.5-397B-A17B-NVFP4-V2", True),
    ("deepseek-v3", "deepseek-ai/DeepSeek-V4", False),
    ("quill-2-flash-fp8", "acme/Quill-2-Flash-V2", False),
])
def test_checkpoint_names_compare_without_quantization_words(curve: str, model: str, same: bool) -> None:
    import re

    own = load_policies()["golden_al"]
    qualifiers = [re.compile(q, re.IGNORECASE) for q in own["checkpoint_qualifiers"]]
    revisions = [re.compile(q, re.IGNORECASE) for q in own["checkpoint_revisions"]]
    assert (c11._words(curve, qualifiers, revisions) == c11._words(model, qualifiers, revisions)) is same


def test_a_named_checkpoint_alias_is_the_curves_checkpoint(tmp_path: Path) -> None:
    """policies/golden_al.yaml checkpoint_aliases: a served model the policy names as the curve's
    checkpoint passes; without the alias the same bundle fails as another model."""
    from tests.minibundle import MODEL, build, master_text

    bundle = build(tmp_path / "b", master=master_text().replace(f"model: {MODEL}\n", "model: acme/Quill-2-Flash-DSpark\n"))
    assert params(run_one(bundle, 11), "golden-curve-other-model")["model"] == "acme/Quill-2-Flash-DSpark"
    base = load_policies()
    named = {**base["golden_al"], "checkpoint_aliases": {"quill-2-flash": ["acme/Quill-2-Flash-DSpark"]}}
    assert _judge_with(bundle, {**base, "golden_al": named}).status.value == "PASS"
