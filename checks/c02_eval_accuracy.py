"""Check 2: Eval accuracy.

Rule: Evals actually pass (accuracy), on that in-PR commit's run.
Why: a green eval job only says the harness finished; the score must reach the bar of
    thresholds.yaml, on the image the PR ships, or the measured throughput may come from a
    configuration that answers wrongly.
Evidence: the eval artifacts (`eval_results_*`, `eval_*`) of the run Check 1 accepted: collector
    records (`results.json`, a list) and lm-eval `results*.json`. Each record's score is compared
    with models[<model-prefix>][task], then default[task], then 0.85 (the stricter of base and
    head thresholds.yaml); its image must equal the master-config image of its config key (`#`
    read as `/`); an integration error, no effective samples or no score fails it; every executed
    eval job of the run must have a record. A FAIL names config, task, score and threshold. The bars
    are a rule document (verifier.documents.rules): a PR that edits thresholds.yaml cannot lower its own bar,
    and the row names the edit; a file the base lacks is applied as the PR's named addition.
N/A when: never.
Unverifiable when: Check 1 found no passing in-PR run; the run, its eval artifact (expired or
    absent) or thresholds.yaml is missing; a record's image, config entry or model prefix is unknown;
    the run executed the PR's own copy of a file that produces its eval results (the executed
    closure, verifier.facts.producers: the row names the file and its role).
Policy: evals (fallback_threshold, artifact_patterns, record_files, lm_eval_files,
    primary_metric_order, lm_eval_metrics, stricter_of_base_and_head), ci (via Check 1's run),
    launch (the affected configs and their launches, via verifier.configs / verifier.launch)
"""

from __future__ import annotations

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    MissingEvidence,
    failed,
    finding,
    passed,
    unverifiable,
)
from verifier.documents.rules import rule_changes, rule_document
from verifier.facts import ci, evals, producers

ID = 2
MAX_LISTED = 8


def _label(record: evals.EvalRecord) -> str:
    return record.job or record.config_key or record.where


def _number_text(value: float, minimum_decimals: int = 0) -> str:
    """A score or bar as written in result and thresholds files: `0.90`, `0.963`, `0.8812`."""
    text = f"{value:.{minimum_decimals}f}"
    return text if float(text) == value else format(value, ".6g")


def _bar_params(th: evals.Threshold) -> dict[str, object]:
    return {"threshold": th.value, "threshold_text": _number_text(th.value, 2), "source": th.source,
            "file": (th.path or "thresholds.yaml").rsplit("/", 1)[-1]}


def _threshold_evidence(th: evals.Threshold) -> list[FileEvidence]:
    if th.path is None:
        return []
    return [FileEvidence(path=th.path, line=th.line, side="head" if th.side == "head" else "base")]


def check(ctx: CheckContext) -> CheckResult:
    """PASS when every eval record of the Check 1 run reaches its threshold on the PR's image."""
    chosen, run = ci.sweep_run(ctx)
    if chosen is None:
        return unverifiable("no-sweep-run", missing="a passing in-PR sweep run (Check 1)")
    run_ev = ci.run_evidence(ctx, chosen.run_id)
    if run is None:
        return unverifiable("sweep-run-not-recorded", run_ev, missing=f"runs/{chosen.run_id}/run.yaml",
                            run=chosen.run_id)
    untrusted, params = producers.untrusted_evidence(ctx, MAX_LISTED)
    if untrusted and not producers.run_trusted(ctx, run, producers.edited_producers(ctx)):
        # the run executed the PR's own copy of a file that produces its artifacts (verifier.launch.closure)
        return unverifiable("evidence-untrusted", run_ev, *untrusted, run=run.id, **params)
    table = evals.thresholds(ctx)
    if not table.available:
        if table.errors:
            side, path, reason = table.errors[0]
            return unverifiable("thresholds-unreadable", FileEvidence(path=path, side="head" if side == "head"
                                                                      else "base"), missing=path, reason=reason)
        return unverifiable("thresholds-missing", missing=table.path)

    found = evals.eval_records(ctx, run)
    if not found.artifacts:
        return unverifiable("eval-artifact-missing", run_ev, missing=f"eval_results_* artifact of run {run.id}",
                            run=run.id)
    if found.expired and not found.records:
        return unverifiable("eval-artifact-expired",
                            *(ci.run_evidence(ctx, run.id, artifact=a) for a in found.expired),
                            missing=found.expired[0], run=run.id, artifacts=list(found.expired))

    fails: list[Finding] = []
    unknown: list[Finding] = []
    oks: list[Finding] = []
    images: set[str] = set()

    for record in found.records:
        art_ev = ci.run_evidence(ctx, run.id, job=record.job, artifact=record.artifact)
        label = _label(record)
        if record.problems:
            for kind, detail in record.problems:
                fails.append(finding(f"eval-{kind}", art_ev, job=label, task=record.task, detail=detail,
                                     file=record.where))
            continue
        facts = None
        if record.config_key is not None:
            try:
                facts = evals.config_facts(ctx, record.config_key)
            except InputError as exc:
                unknown.append(finding("master-config-unreadable", art_ev, MissingEvidence(what=exc.path),
                                       missing=exc.path, reason=exc.reason))
                continue
        prefix = record.model_prefix or (facts or {}).get("model_prefix")
        if prefix is None and any(side.models for side in (table.base, table.head) if side is not None):
            unknown.append(finding("eval-prefix-unknown", art_ev, MissingEvidence(what=f"model prefix of {label}"),
                                   job=label, config=record.config_key or "unknown"))
            continue
        th = table.resolve(prefix, record.task)
        assert record.score is not None
        if record.score < th.value:
            fails.append(finding("eval-below-threshold", art_ev, *_threshold_evidence(th), job=label,
                                 config=record.config_key or "unknown", task=record.task, metric=record.metric,
                                 score=record.score, score_text=_number_text(record.score), **_bar_params(th)))
            continue
        if record.head_sha and record.head_sha != run.head_sha:
            fails.append(finding("eval-record-other-commit", art_ev, job=label, sha=record.head_sha[:9],
                                 run_sha=run.head_sha[:9]))
            continue
        # A record is this run's only when it names the run's commit and the config key its job ran.
        named = ci.job_config_key(record.job) if record.job else None
        if named is not None and record.config_key is not None and named != record.config_key:
            fails.append(finding("eval-record-other-config", art_ev, job=label, config=record.config_key,
                                 job_config=named))
            continue
        if not record.head_sha:
            what = f"head_sha of eval record {record.where}"
            unknown.append(finding("eval-record-commit-missing", art_ev, MissingEvidence(what=what), job=label,
                                   missing=what, run_sha=run.head_sha[:9]))
            continue
        if facts is None:
            what = f"master-config entry {record.config_key}" if record.config_key else f"config key of {label}"
            unknown.append(finding("eval-config-unknown", art_ev, MissingEvidence(what=what), job=label,
                                   config=record.config_key or "unknown"))
            continue
        expected = facts.get("image")
        config_ev = FileEvidence(path=facts["path"], line=facts["image_line"], text=f"image: {expected}")
        if record.image is None or expected is None:
            what = f"image of eval record {record.where}" if record.image is None else f"image of {record.config_key}"
            unknown.append(finding("eval-image-unknown", art_ev, config_ev, MissingEvidence(what=what), job=label,
                                   missing=what))
            continue
        if evals.normalize_image(record.image) != evals.normalize_image(expected):
            fails.append(finding("eval-image-differs", art_ev, config_ev, job=label, config=record.config_key,
                                 image=record.image, expected=expected))
            continue
        images.add(expected)
        oks.append(finding("eval-passed", art_ev, *_threshold_evidence(th), job=label, task=record.task,
                           metric=record.metric, score=record.score, score_text=_number_text(record.score),
                           **_bar_params(th)))

    # Every executed eval job of the run needs a record.
    recorded_jobs = {r.job for r in found.records if r.job}
    jobs = chosen.executed("eval")
    if recorded_jobs or not found.records:
        for job in jobs:
            if job.name not in recorded_jobs:
                fails.append(finding("eval-job-without-result", ci.run_evidence(ctx, run.id, job=job.name),
                                     MissingEvidence(what=f"eval record of {job.name}"), job=job.name))
    elif len(found.records) < len(jobs):
        fails.append(finding("eval-records-fewer-than-jobs", ci.run_evidence(ctx, run.id),
                             records=len(found.records), jobs=len(jobs)))
    if not found.records:
        fails.insert(0, finding("eval-results-empty", run_ev, run=run.id, artifacts=list(found.artifacts)))
    for artifact in found.expired:
        unknown.append(finding("eval-artifact-expired", ci.run_evidence(ctx, run.id, artifact=artifact),
                               MissingEvidence(what=artifact), missing=artifact, run=run.id, artifacts=[artifact]))
    for artifact, file, reason in found.unreadable:
        evidence = (ci.run_evidence(ctx, run.id, artifact=artifact), MissingEvidence(what=f"{artifact}/{file}"))
        if reason is None:
            unknown.append(finding("eval-file-unrecognized", *evidence, file=f"{artifact}/{file}"))
        else:
            unknown.append(finding("eval-file-unreadable", *evidence, file=f"{artifact}/{file}", reason=reason))

    # The bars are the base's thresholds; a PR that edits or adds the file has that named in the row.
    notes = rule_changes(rule_document(ctx, "thresholds"))
    if fails or unknown:
        return failed(*fails[:MAX_LISTED], *unknown[:MAX_LISTED], *notes)
    head = [finding("evals-on-pr-image", run_ev, run=run.id, sha=run.head_sha[:9], images=sorted(images))]
    return passed(*head, *notes, *oks)
