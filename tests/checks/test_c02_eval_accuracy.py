"""Check 2 (Eval accuracy): thresholds resolution, image parity, invalid and missing results, and
lm-eval style files, on edited copies of pr4524."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row, row_summary
from verifier.core.results import Status

PINNED = 40739166138
HEAD_SHA = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"
IMAGE = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5"
THRESHOLDS = "tree/{side}/inferencex-e2e/infx/evals/thresholds.yaml"


def _judge(path: Path) -> Any:
    return row(judge(path, only={1, 2}), 2)


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    return clone_bundle(CASES / "pr4524", tmp_path)


def _results_path(case: Path) -> Path:
    return case / "runs" / str(PINNED) / "eval_results_all" / "results.json"


def _edit_records(case: Path, change: Any) -> None:
    path = _results_path(case)
    records = json.loads(path.read_text(encoding="utf-8"))
    result = change(records)
    path.write_text(json.dumps(result if isinstance(result, list) and result is not records and
                               all(isinstance(r, dict) for r in result) else records, indent=2), encoding="utf-8")


def test_pr4524_passes_with_both_scores() -> None:
    r = _judge(CASES / "pr4524")
    assert r.status is Status.PASS
    text = row_summary(r)
    assert "0.9629 >= 0.9 (`default`)" in text and "0.9666 >= 0.9 (`default`)" in text
    assert IMAGE in text
    assert any(getattr(e, "path", None) == "inferencex-e2e/infx/evals/thresholds.yaml" and e.line == 3
               for e in r.result.evidence)


def test_score_below_default_fails_naming_config_task_score_threshold(case: Path) -> None:
    _edit_records(case, lambda rs: rs[1].update(score=0.8812))
    r = _judge(case)
    assert r.status is Status.FAIL
    text = row_summary(r)
    assert f"`{KEY}` `gsm8k` scored 0.8812 (`em_strict`), below the threshold 0.9 (`default`)" in text
    assert "tp4 conc96" in text


def test_model_threshold_applies_and_head_cannot_lower_the_bar(case: Path) -> None:
    for side in ("base", "head"):
        replace_text(case / THRESHOLDS.format(side=side), '"models": {',
                     '"models": {\n    "minimaxm31flash": {"gsm8k": 0.965},')
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "0.9629 (`em_strict`), below the threshold 0.965 (`models.minimaxm31flash`)" in row_summary(r)

    # The head lowers the bar again: the stricter base bar still applies.
    replace_text(case / THRESHOLDS.format(side="head"), '"minimaxm31flash": {"gsm8k": 0.965},', "")
    r = _judge(case)
    assert r.status is Status.FAIL and "0.965" in row_summary(r)


def test_unknown_task_falls_back_to_085(case: Path) -> None:
    _edit_records(case, lambda rs: [rec.update(task="brand_new_task", score=0.86) for rec in rs])
    r = _judge(case)
    assert r.status is Status.PASS and "0.86 >= 0.85 (`fallback`)" in row_summary(r)
    _edit_records(case, lambda rs: rs[0].update(score=0.84))
    r = _judge(case)
    assert r.status is Status.FAIL and "below the threshold 0.85 (`fallback`)" in row_summary(r)


def test_other_image_fails_and_hash_separator_is_normalized(case: Path) -> None:
    _edit_records(case, lambda rs: rs[0].update(image=IMAGE.replace("/", "#", 1)))
    assert _judge(case).status is Status.PASS
    _edit_records(case, lambda rs: rs[0].update(image="lmsysorg/sglang:v0.5.23-cu130"))
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "ran on `lmsysorg/sglang:v0.5.23-cu130`, not on the image of" in row_summary(r)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        pytest.param({"integration_error": {"type": "Timeout", "message": "server died"}},
                     "integration error (`Timeout: server died`)", id="integration-error"),
        pytest.param({"n_eff": 0}, "no effective samples (`0`)", id="no-samples"),
        pytest.param({"score": None}, "no numeric score (`None`)", id="no-score"),
        pytest.param({"head_sha": "2e12ce08a499c60b5762ed530750428fb2458753"},
                     "was recorded on `2e12ce08a`, not on the run's commit `51bb400fd`", id="other-commit"),
    ],
)
def test_invalid_records_fail(case: Path, change: dict[str, Any], needle: str) -> None:
    _edit_records(case, lambda rs: rs[0].update(change))
    r = _judge(case)
    assert r.status is Status.FAIL
    assert needle in row_summary(r)


def test_eval_job_without_a_record_fails(case: Path) -> None:
    _edit_records(case, lambda rs: rs[:1])
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "The eval job `agentic eval / minimaxm31flash-fp4-b300-sglang-agentic-dspark tp4 conc96" in row_summary(r)


def test_empty_results_fail(case: Path) -> None:
    _results_path(case).write_text("[]", encoding="utf-8")
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "hold no eval results" in row_summary(r)


def test_expired_eval_artifact_is_unverifiable(case: Path) -> None:
    def expire(run: Any) -> None:
        for artifact in run["artifacts"]:
            if artifact["name"] == "eval_results_all":
                artifact["expired"] = True
    edit_yaml(case / "runs" / str(PINNED) / "run.yaml", expire)
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "`eval_results_all` of run 40739166138 has expired" in row_summary(r)
    assert any(getattr(e, "what", None) == "eval_results_all" for e in r.result.evidence)


def test_record_without_image_is_unverifiable(case: Path) -> None:
    _edit_records(case, lambda rs: rs[0].pop("image"))
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "the image the eval" in row_summary(r) and "is unknown" in row_summary(r)


def test_no_passing_sweep_is_unverifiable(case: Path) -> None:
    def no_evals(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [i for i in items if not i["name"].startswith("agentic eval /")]
    edit_yaml(case / "checks.yaml", no_evals)
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "no passing in-PR sweep run" in row_summary(r)


def _lm_eval(strict: float, flexible: float, **extra: Any) -> dict[str, Any]:
    return {
        "lm_eval_version": "0.4.9",
        "model_name": "m",
        "results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": strict,
                              "exact_match_stderr,strict-match": 0.005,
                              "exact_match,flexible-extract": flexible}},
        "configs": {"gsm8k": {"metric_list": [{"metric": "exact_match"}]}},
        "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}},
        **extra,
    }


def _use_lm_eval(case: Path, data: dict[str, Any], meta: dict[str, Any]) -> None:
    folder = _results_path(case).parent
    _results_path(case).unlink()
    (folder / "results_gsm8k_conc96.json").write_text(json.dumps(data), encoding="utf-8")
    (folder / "meta_env.json").write_text(json.dumps(meta), encoding="utf-8")


def test_lm_eval_every_exact_match_metric_is_compared(case: Path) -> None:
    meta = {"infmax_model_prefix": "minimaxm31flash", "config_key": KEY, "image": IMAGE}
    _use_lm_eval(case, _lm_eval(0.95, 0.87), meta)
    r = _judge(case)
    assert r.status is Status.FAIL
    text = row_summary(r)
    assert "scored 0.87 (`exact_match,flexible-extract`), below the threshold 0.9" in text
    assert "stderr" not in text


def test_lm_eval_passes_with_identity(case: Path) -> None:
    # identity: config key, image and the run's commit (a record naming no commit is not established)
    meta = {"infmax_model_prefix": "minimaxm31flash", "config_key": KEY, "image": IMAGE, "head_sha": HEAD_SHA}
    _use_lm_eval(case, _lm_eval(0.95, 0.96), meta)
    r = _judge(case)
    assert r.status is Status.PASS
    assert "`exact_match,strict-match` 0.95 >= 0.9" in row_summary(r)


def test_lm_eval_integration_error_fails(case: Path) -> None:
    meta = {"infmax_model_prefix": "minimaxm31flash", "config_key": KEY, "image": IMAGE}
    _use_lm_eval(case, _lm_eval(0.95, 0.96, integration_error={"type": "OOM", "message": "x"}), meta)
    r = _judge(case)
    assert r.status is Status.FAIL and "integration error (`OOM: x`)" in row_summary(r)


def test_lm_eval_without_image_is_unverifiable(case: Path) -> None:
    # meta_env.json has no image field (FORMATS 11.2): image parity cannot be established from it.
    _use_lm_eval(case, _lm_eval(0.95, 0.96), {"infmax_model_prefix": "minimaxm31flash", "config_key": KEY,
                                              "head_sha": HEAD_SHA})
    r = _judge(case)
    assert r.status is Status.FAIL
    assert "is unknown" in row_summary(r)


def test_small_independent_bundle_without_evals_is_unverifiable(tmp_path: Path) -> None:
    from tests import minibundle

    r = _judge(minibundle.build(tmp_path / "mini"))
    assert r.status is Status.FAIL
    assert "no passing in-PR sweep run" in row_summary(r)
