"""Eval facts for Check 2: thresholds resolution (FORMATS §11.1) and eval records read from a run's
artifacts (cases/README.md collector records, and lm-eval style `results*.json`, §11.2).

Public API:
  * `thresholds(ctx) -> Thresholds`: both sides' thresholds files parsed (memoized), with
    `resolve(prefix, task) -> Threshold` (models[prefix][task] -> default[task] -> fallback; the
    stricter side when policy says so).
  * `eval_records(ctx, run) -> EvalArtifacts`: every eval record in the run's eval artifacts, the
    expired artifacts and the files that could not be read (memoized per run).
  * `normalize_image(image)`: the first `#` read as `/` (`nvcr.io#nvidia/...`), for comparisons.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.model import Run
from verifier.core.yamlio import decode_text, load_json, load_yaml_lines, plain
from verifier.documents.rules import rule_document

_DOCKER_HUB = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def normalize_image(image: str) -> str:
    """An image reference with its first `#` read as `/` and Docker Hub's explicit registry dropped."""
    text = image.strip().replace("#", "/", 1)
    for prefix in _DOCKER_HUB:
        if text.lower().startswith(prefix):
            return text[len(prefix):]
    return text


# --------------------------------------------------------------------------------------------
# Thresholds


@dataclass(frozen=True, eq=False, repr=False)
class Threshold:
    """The bar one (model prefix, task) must reach, and where it comes from."""

    value: float
    source: str  # "models.<prefix>" | "default" | "fallback"
    path: str | None = None
    line: int | None = None
    side: str = "base"


@dataclass(frozen=True, eq=False, repr=False)
class ThresholdsFile:
    """One side's thresholds file: task bars by model prefix, and their lines."""

    side: str
    path: str
    default: dict[str, tuple[float, int | None]]
    models: dict[str, dict[str, tuple[float, int | None]]]


@dataclass(frozen=True, eq=False, repr=False)
class Thresholds:
    """Both sides' thresholds files (a side is None when the tree lacks the file)."""

    base: ThresholdsFile | None
    head: ThresholdsFile | None
    fallback: float
    stricter: bool
    path: str
    errors: tuple[tuple[str, str, str], ...] = ()  # (side, path, reason)

    @property
    def available(self) -> bool:
        """True when at least one side's file was read."""
        return self.base is not None or self.head is not None

    @staticmethod
    def _one(doc: ThresholdsFile, prefix: str | None, task: str, fallback: float) -> Threshold:
        if prefix is not None and task in doc.models.get(prefix, {}):
            value, line = doc.models[prefix][task]
            return Threshold(value, f"models.{prefix}", doc.path, line, doc.side)
        if task in doc.default:
            value, line = doc.default[task]
            return Threshold(value, "default", doc.path, line, doc.side)
        return Threshold(fallback, "fallback", doc.path, None, doc.side)

    def resolve(self, prefix: str | None, task: str) -> Threshold:
        """The bar for a task: models[prefix][task], then default[task], then the fallback.

        With `stricter`, both sides are resolved and the higher bar wins (a PR cannot lower its
        own bar); otherwise the trusted base side is used, the head when the base lacks the file.
        """
        sides = [d for d in (self.base, self.head) if d is not None]
        if not sides:
            return Threshold(self.fallback, "fallback")
        if not self.stricter:
            sides = sides[:1]
        found = [self._one(d, prefix, task, self.fallback) for d in sides]
        return max(found, key=lambda t: t.value)  # ties keep the base side (first)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _table(node: Any, path: str, lines: dict[tuple[Any, ...], int],
           prefix: tuple[Any, ...]) -> dict[str, tuple[float, int | None]]:
    out: dict[str, tuple[float, int | None]] = {}
    if not isinstance(node, dict):
        raise InputError(path, "a thresholds table is not a mapping of task to score")
    for task, value in node.items():
        number = _number(plain(value))
        if number is None:
            raise InputError(path, f"threshold of task {task!r} is not a number")
        out[str(task)] = (number, lines.get((*prefix, task)))
    return out


def parse_thresholds(raw: bytes, path: str, side: str) -> ThresholdsFile:
    """Parse a thresholds file (JSON syntax or YAML; a legacy flat file counts as `default`)."""
    text = decode_text(raw, path)
    try:
        doc, lines = load_yaml_lines(text, path)
    except InputError:
        doc, lines = load_json(text, path), {}  # JSON that YAML refuses (tabs); lines are then unknown
    if not isinstance(doc, dict):
        raise InputError(path, "top level is not a mapping")
    if "default" in doc or "models" in doc:
        default = _table(doc.get("default") or {}, path, lines, ("default",))
        models_node = doc.get("models") or {}
        if not isinstance(models_node, dict):
            raise InputError(path, "models is not a mapping of model prefix to tasks")
        models = {str(k): _table(v, path, lines, ("models", k)) for k, v in models_node.items()}
    else:
        default, models = _table(doc, path, lines, ()), {}
    return ThresholdsFile(side=side, path=path, default=default, models=models)


def _thresholds(ctx: CheckContext) -> Thresholds:
    policy = ctx.policy("evals")
    path = ctx.bundle.path("thresholds")
    sides: dict[str, ThresholdsFile | None] = {"base": None, "head": None}
    errors = []
    doc = rule_document(ctx, "thresholds")  # the base is the rule; the head is compared with it
    for side, raw in (("base", doc.base), ("head", doc.head)):
        if raw is None:
            continue
        try:
            sides[side] = parse_thresholds(raw, path, side)
        except InputError as exc:
            errors.append((side, path, exc.reason))
    return Thresholds(
        base=sides["base"],
        head=sides["head"],
        fallback=float(policy["fallback_threshold"]),
        stricter=bool(policy["stricter_of_base_and_head"]),
        path=path,
        errors=tuple(errors),
    )


def thresholds(ctx: CheckContext) -> Thresholds:
    """Both sides' thresholds files, parsed once per verdict."""
    return ctx.memo("evals.thresholds", lambda: _thresholds(ctx))


# --------------------------------------------------------------------------------------------
# Eval records


@dataclass(frozen=True, eq=False, repr=False)
class EvalRecord:
    """One eval score as a run recorded it.

    `problems` lists (kind, detail) pairs that make the record unusable on its own; kinds are
    integration-error, no-samples, no-score, infrastructure-failed, not-an-object, no-results and
    no-metric. An empty tuple means the score can be compared with its bar.
    """

    artifact: str
    file: str
    index: int | None
    task: str
    metric: str
    score: float | None
    config_key: str | None = None
    job: str | None = None
    image: str | None = None
    head_sha: str | None = None
    model_prefix: str | None = None
    tp: int | None = None
    conc: int | None = None
    problems: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        """`<artifact>/<file>[#index]`, for evidence."""
        suffix = f"#{self.index}" if self.index is not None else ""
        return f"{self.artifact}/{self.file}{suffix}"


@dataclass(frozen=True, eq=False, repr=False)
class EvalArtifacts:
    """What a run's eval artifacts hold."""

    artifacts: tuple[str, ...]
    expired: tuple[str, ...]
    records: tuple[EvalRecord, ...]
    unreadable: tuple[tuple[str, str, str | None], ...]  # (artifact, file, parse error; None: not an eval result)


def _str(value: Any) -> str | None:
    return None if value is None or isinstance(value, dict | list) else str(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


Problem = tuple[str, str]


def _sample_problem(n_eff: Any) -> Problem | None:
    if n_eff is None:
        return None
    number = _number(n_eff)
    if number is None or number <= 0:
        return ("no-samples", str(n_eff))
    return None


def _integration_problem(value: Any) -> Problem | None:
    if value in (None, False, "", {}):
        return None
    if isinstance(value, dict):
        kind = str(value.get("type") or "error")
        message = " ".join(str(value.get("message") or "").split())[:120]
        return ("integration-error", f"{kind}: {message}" if message else kind)
    return ("integration-error", " ".join(str(value).split())[:120])


def _collector_records(data: list[Any], artifact: str, file: str, order: tuple[str, ...]) -> list[EvalRecord]:
    records = []
    for i, row in enumerate(data):
        if not isinstance(row, dict):
            records.append(EvalRecord(artifact, file, i, "?", "?", None, problems=(("not-an-object", ""),)))
            continue
        metric = _str(row.get("metric")) or _str(row.get("score_name"))
        score_raw = row.get("score")
        if score_raw is None:
            for name in order:
                if row.get(name) is not None:
                    metric, score_raw = name, row.get(name)
                    break
        score = _number(score_raw)
        problems: list[Problem] = []
        if score is None:
            problems.append(("no-score", str(score_raw)))
        for problem in (_integration_problem(row.get("integration_error")), _sample_problem(row.get("n_eff"))):
            if problem:
                problems.append(problem)
        if row.get("infrastructure_success") is False:
            problems.append(("infrastructure-failed", ""))
        records.append(EvalRecord(
            artifact=artifact, file=file, index=i,
            task=_str(row.get("task")) or "?", metric=metric or "score", score=score,
            config_key=_str(row.get("config_key")), job=_str(row.get("job")), image=_str(row.get("image")),
            head_sha=_str(row.get("head_sha")), model_prefix=_str(row.get("model_prefix")),
            tp=_int(row.get("tp")), conc=_int(row.get("conc")), problems=tuple(problems),
        ))
    return records


def _lm_eval_records(data: dict[str, Any], meta: dict[str, Any], artifact: str, file: str,
                     default_metrics: tuple[str, ...]) -> list[EvalRecord]:
    results = data.get("results")
    configs = data.get("configs") if isinstance(data.get("configs"), dict) else {}
    samples = data.get("n-samples") if isinstance(data.get("n-samples"), dict) else {}
    integration = _integration_problem(data.get("integration_error"))
    prefix = _str(meta.get("infmax_model_prefix")) or _str(meta.get("model_prefix"))
    common = {
        "config_key": _str(meta.get("config_key")), "image": _str(meta.get("image")),
        "head_sha": _str(meta.get("head_sha")), "model_prefix": prefix, "job": _str(meta.get("job")),
    }
    conc_match = re.search(r"_conc(\d+)(?:_\d+)?\.json$", file)
    conc = int(conc_match.group(1)) if conc_match else _int(meta.get("conc"))
    records: list[EvalRecord] = []
    if integration:
        records.append(EvalRecord(artifact, file, None, "?", "?", None, conc=conc, problems=(integration,), **common))
    if not isinstance(results, dict):
        if not integration:
            records.append(EvalRecord(artifact, file, None, "?", "?", None, conc=conc,
                                      problems=(("no-results", ""),), **common))
        return records
    for task, metrics in results.items():
        task = str(task)
        declared = default_metrics
        cfg = configs.get(task)
        if isinstance(cfg, dict) and isinstance(cfg.get("metric_list"), list):
            names = tuple(str(m["metric"]) for m in cfg["metric_list"] if isinstance(m, dict) and "metric" in m)
            declared = names or default_metrics
        problems: list[Problem] = []
        if integration:
            problems.append(integration)
        sample = samples.get(task)
        if isinstance(sample, dict) and "effective" in sample:
            problem = _sample_problem(sample.get("effective"))
            if problem:
                problems.append(problem)
        found = 0
        if isinstance(metrics, dict):
            for name, value in metrics.items():
                name = str(name)
                if "stderr" in name or not any(name.startswith(f"{m},") for m in declared):
                    continue
                found += 1
                score = _number(value)
                extra = [] if score is not None else [("no-score", str(value))]
                records.append(EvalRecord(artifact, file, None, task, name, score, conc=conc,
                                          problems=tuple(problems + extra), **common))
        if not found:
            records.append(EvalRecord(artifact, file, None, task, ",".join(declared), None, conc=conc,
                                      problems=(*problems, ("no-metric", ",".join(declared))), **common))
    return records


def _matches(patterns: tuple[str, ...], name: str) -> bool:
    return any(re.search(p, name) for p in patterns)


def _eval_records(ctx: CheckContext, run: Run) -> EvalArtifacts:
    policy = ctx.policy("evals")
    artifact_patterns = tuple(policy["artifact_patterns"])
    file_patterns = tuple(policy["record_files"]) + tuple(policy["lm_eval_files"])
    order = tuple(policy["primary_metric_order"])
    default_metrics = tuple(policy["lm_eval_metrics"])
    names: list[str] = []
    expired: list[str] = []
    records: list[EvalRecord] = []
    unreadable: list[tuple[str, str, str | None]] = []
    for artifact in run.artifacts:
        if not _matches(artifact_patterns, artifact.name):
            continue
        names.append(artifact.name)
        if artifact.expired:
            expired.append(artifact.name)
            continue
        for file in sorted(artifact.files):
            base = file.rsplit("/", 1)[-1]
            if base == "meta_env.json" or not _matches(file_patterns, file):
                continue
            try:
                data = load_json(decode_text(artifact.files[file], file), file)
            except InputError as exc:
                unreadable.append((artifact.name, file, exc.reason))
                continue
            if isinstance(data, list):
                records.extend(_collector_records(data, artifact.name, file, order))
            elif isinstance(data, dict) and ("lm_eval_version" in data or
                                             data.get("result_format") == "inferencex-eval-v1"):
                meta_path = (file.rsplit("/", 1)[0] + "/" if "/" in file else "") + "meta_env.json"
                meta: dict[str, Any] = {}
                if meta_path in artifact.files:
                    try:
                        loaded = load_json(decode_text(artifact.files[meta_path], meta_path), meta_path)
                        meta = loaded if isinstance(loaded, dict) else {}
                    except InputError as exc:
                        unreadable.append((artifact.name, meta_path, exc.reason))
                records.extend(_lm_eval_records(data, meta, artifact.name, file, default_metrics))
            else:
                unreadable.append((artifact.name, file, None))
    return EvalArtifacts(tuple(names), tuple(expired), tuple(records), tuple(unreadable))


def eval_records(ctx: CheckContext, run: Run) -> EvalArtifacts:
    """Every eval record in a run's eval artifacts (memoized per run id)."""
    return ctx.memo(f"evals.records.{run.id}", lambda: _eval_records(ctx, run))


def config_facts(ctx: CheckContext, key: str, side: str = "head") -> Mapping[str, Any] | None:
    """Image, model prefix and file:line of one master-config entry, or None if the key is absent."""
    from verifier.configs import master_entries

    entry = master_entries(ctx, side).get(key)
    if entry is None:
        return None
    return {
        "image": entry.image,
        "model_prefix": entry.model_prefix,
        "path": entry.file,
        "image_line": entry.field_line("image") or entry.line,
        "line": entry.line,
    }
