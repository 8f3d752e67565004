"""Check 8: Architecture hacks.

Rule: Verified that the model architecture isn't changed with benchmark hacks like using
    --hf-overrides to skip the indexer for every x layers on models that don't natively support
    this; optimizations that reduce the model architecture's FLOPs are not accepted. Also: new
    models disable integer all-reduce (SGLang ROCm explicitly sets ROCM_QUICK_REDUCE_QUANTIZATION=NONE;
    models added before MODELS.md's cutoff are grandfathered), and `publish_events_and_metrics:
    false` is prohibited in the effective config.
Why: a benchmark must run the model as designed; config overrides that drop layers, heads or
    indexer work, and integer-quantized all-reduce on new models, change what is measured.
Evidence: the file and line of every model-config override (`--json-model-override-args`,
    `--hf-overrides` / `hf_overrides`), sed/jq edit of a model's config.json (an inline program that
    rewrites config.json setting only metadata keys, policy `metadata_config_keys` such as
    `model_type`, changes no computation and is named, not failed), and
    `publish_events_and_metrics: false`, in the effective launch (recipe, shared block, extra_args)
    or in the scripts and recipes of affected configs; the worker environment's
    `*_QUICK_REDUCE_QUANTIZATION` with the MODELS.md row (Date added) of the model.
N/A when: the PR affects no config and changes no benchmark, recipe or config file, or the base's
    checklist template states none of the check's rules. Each rule (architecture overrides, integer
    all-reduce, metrics publication: the Dynamo TRT-LLM metrics item) is judged only while the base
    template has its item (verifier.documents.in_force); a rule not in force is skipped, named in the row.
Unverifiable when: an affected launch cannot be resolved, or an integer all-reduce setting (or a
    SGLang ROCm launch) belongs to a model whose Date added MODELS.md does not give, reviewed on or
    after the cutoff (before it, every model was necessarily added before the cutoff).
Policy: prohibited_settings (architecture: override_args, neutral_override_values,
    config_edit_patterns, prohibited_values, integer_allreduce), patches (scan_paths, skip_paths),
    launch, multinode (the affected configs and their launches, via verifier.configs / verifier.launch;
    multinode: a multi-node agentic point's DRAM budget),
    models (MODELS.md model identities, via verifier.documents.models_md)
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.layout import short_path
from verifier.core.results import (
    CheckResult,
    FileEvidence,
    Finding,
    MissingEvidence,
    failed,
    finding,
    not_applicable,
    passed,
)
from verifier.documents.in_force import part_skipped
from verifier.documents.models_md import models_doc
from verifier.documents.patches import heredoc_around, is_scanned
from verifier.engines import engine_or_generic
from verifier.launch import Launch, launches
from verifier.launch.reported import reported_by_check18
from verifier.launch.scope import affected_files, scan_texts

ID = 8
# The check's rules (policies/rules.yaml): each is judged only while the base template states it.
RULE_ARCH = "c08.architecture"
RULE_ALLREDUCE = "c08.integer-allreduce"
RULE_METRICS = "c08.metrics-publication"
MAX_LISTED = 6


@lru_cache(maxsize=4096)
@lru_cache(maxsize=4096)  # a PR's recipes repeat a few hundred keys over a million entries
def _norm(name: str) -> str:
    return name.lstrip("-").replace("_", "-").lower()


def _neutral(value: Any, policy: Mapping[str, Any]) -> bool:
    if value is None or value is False:
        return True
    text = str(value).strip().strip("'\"")
    if text.lower() in {str(v).lower() for v in policy["neutral_override_values"]}:
        return True
    try:
        return json.loads(text) in ({}, None, [])
    except (ValueError, RecursionError):
        return False


def _walk(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield (*path, key), key, value
            yield from _walk(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, (*path, i))


def _entries(node: Any, wanted: Callable[[Any, Any], bool]) -> list[tuple[tuple[Any, ...], Any, Any]]:
    """The (path, key, value) of `_walk(node)` that `wanted(key, value)` keeps, in the same order. A
    launch's recipe has thousands of entries and a few of them matter: the path of the others is
    never made (#2096: 1.2 million entries walked over 2,386 launches)."""
    out: list[tuple[tuple[Any, ...], Any, Any]] = []
    path: list[Any] = []

    def visit(item: Any) -> None:
        if isinstance(item, Mapping):
            for key, value in item.items():
                if wanted(key, value):
                    out.append(((*path, key), key, value))
                if isinstance(value, Mapping | list):
                    path.append(key)
                    visit(value)
                    path.pop()
        elif isinstance(item, list):
            for i, value in enumerate(item):
                if isinstance(value, Mapping | list):
                    path.append(i)
                    visit(value)
                    path.pop()

    visit(node)
    return out


def _json_values(value: Any) -> Iterator[tuple[Any, Any]]:
    """(key, value) pairs inside a JSON-object string (engine configs written as JSON text)."""
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            data = json.loads(value)
        except (ValueError, RecursionError):
            return
        for _, key, inner in _walk(data):
            yield key, inner


def _launch_findings(launch: Launch, policy: Mapping[str, Any], rules: frozenset[str]
                     ) -> list[tuple[str, str, int | None, dict[str, Any]]]:
    """(message id, file, line, params) for one launch; `rules`: this check's rules in force."""
    out: list[tuple[str, str, int | None, dict[str, Any]]] = []
    names = {_norm(n) for n in policy["override_args"]} if RULE_ARCH in rules else set()
    for setting in engine_or_generic(launch.engine).overrides(launch, names) if names else ():
        if not _neutral(setting.value, policy):
            out.append(("architecture-override", setting.path or launch.recipe_path, setting.line,
                        {"flag": setting.name, "value": setting.text}))
    prohibited = policy["prohibited_values"] if RULE_METRICS in rules else {}

    def wanted(key: Any, value: Any) -> bool:
        """An entry the loop below can report: a key it names, or a JSON-object string to look into."""
        if isinstance(value, str) and value.strip().startswith("{"):
            return True
        return isinstance(key, str) and ((bool(names) and _norm(key) in names) or key in prohibited)

    for path, key, value in _entries(launch.recipe, wanted):
        candidates = [(key, value), *_json_values(value)] if isinstance(value, str) else [(key, value)]
        for k, v in candidates:
            if not isinstance(k, str):
                continue
            if _norm(k) in names and isinstance(v, Mapping | str) and not _neutral(v if isinstance(v, str) else
                                                                                   json.dumps(v), policy):
                if path and path[-1] == k and path[:2] == ("roles", launch.role) and len(path) == 4:
                    continue  # a role arg: reported from argv above
                origin = launch.origins.get(path)
                out.append(("architecture-override", origin.path if origin else launch.recipe_path,
                            origin.line if origin else None, {"flag": k, "value": json.dumps(v) if not
                                                              isinstance(v, str) else v}))
            if k in prohibited and v == prohibited[k] and type(v) is type(prohibited[k]):
                origin = launch.origins.get(path)
                out.append(("prohibited-setting", origin.path if origin else launch.recipe_path,
                            origin.line if origin else None, {"setting": k, "value": json.dumps(v)}))
    return out


@lru_cache(maxsize=8)
def _text_patterns(override_args: tuple[str, ...], edit_patterns: tuple[str, ...],
                   prohibited: tuple[tuple[str, str], ...]
                   ) -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...], tuple[tuple[str, str, re.Pattern[str]], ...]]:
    """The policy's text patterns, compiled once per policy content."""
    names = "|".join(re.escape(n) for n in sorted({*override_args, *(n.replace("-", "_") for n in override_args)},
                                                  key=len, reverse=True))
    # the value runs to the end of the (stripped) line: a lazy value before `\s*$` tried that tail
    # again from each character of a blank run inside it (the square of its length)
    flag_rx = re.compile(r"(?:--|^|\s|[\"'])(" + names + r")[\"']?\s*(?:=|:|\s)\s*(.+)$")
    edits = tuple(re.compile(p, re.IGNORECASE) for p in edit_patterns)
    settings = tuple((key, word, re.compile(r"[\"']?" + re.escape(key) + r"[\"']?\s*[:=]\s*[\"']?" + re.escape(word)
                                            + r"\b", re.IGNORECASE)) for key, word in prohibited)
    return flag_rx, edits, settings


def _text_findings(path: str, text: str, policy: Mapping[str, Any], rules: frozenset[str],
                   offset: int = 0) -> list[tuple[str, str, int | None, dict[str, Any]]]:
    """Findings of one piece of a scanned file; `offset` is the number of file lines before it."""
    out: list[tuple[str, str, int | None, dict[str, Any]]] = []
    arch = RULE_ARCH in rules
    prohibited = tuple((key, json.dumps(bad) if not isinstance(bad, str) else bad)
                       for key, bad in policy["prohibited_values"].items()) if RULE_METRICS in rules else ()
    flag_rx, edits, settings = _text_patterns(tuple(policy["override_args"]), tuple(policy["config_edit_patterns"]),
                                              prohibited)
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        for pattern in edits if arch else ():
            if pattern.search(stripped):
                keys = _metadata_only_edit(lines, number, policy)
                if keys:
                    out.append(("config-edit-metadata-only", path, number + offset,
                                {"text": stripped[:200], "keys": keys}))
                else:
                    out.append(("model-config-edit", path, number + offset, {"text": stripped[:200]}))
                break
        match = flag_rx.search(stripped) if arch else None
        if match:
            value = match.group(2).split(" --", 1)[0].strip().strip("'\"")
            if not _neutral(value, policy):
                out.append(("architecture-override", path, number + offset,
                            {"flag": match.group(1), "value": value[:200]}))
        for key, word, rx in settings:
            if rx.search(stripped):
                out.append(("prohibited-setting", path, number + offset, {"setting": key, "value": word}))
    return out


_CONFIG_SET = re.compile(r"""\bconfig\[\s*["']([^"']+)["']\s*\]\s*=(?!=)""")
_CONFIG_OTHER = re.compile(r"\bconfig\.(?:update|pop|setdefault|clear)\(|\bdel\s+config\b|\bconfig\s*=(?!=)\s*(?![\s]|json\.load)")


def _metadata_only_edit(lines: list[str], number: int, policy: Mapping[str, Any]) -> list[str]:
    """The keys an inline program's config.json rewrite sets, when it sets only metadata keys
    (policy `metadata_config_keys`: `model_type` tells transformers which config class to build;
    the engine's model class and the computation are unchanged). [] when the edit is not inside a
    heredoc program, changes the config any other way, or sets another key."""
    body = heredoc_around(lines, number)
    if body is None:
        return []
    code = "\n".join(ln for ln in body if not ln.lstrip().startswith("#"))
    keys = list(dict.fromkeys(_CONFIG_SET.findall(code)))
    allowed = set(policy.get("metadata_config_keys") or ())
    if not keys or any(k not in allowed for k in keys) or _CONFIG_OTHER.search(code):
        return []
    return keys


def _model_date(ctx: CheckContext, prefix: str | None) -> tuple[dt.date | None, int | None]:
    for side in ("base", "head"):
        doc = models_doc(ctx, side)
        row = doc.model(prefix or "") if doc is not None else None
        if row is not None and row.date_added is not None:
            return row.date_added, row.line
    return None, None


def _allreduce(ctx: CheckContext, launch: Launch, policy: Mapping[str, Any]
               ) -> list[tuple[str, str, int | None, dict[str, Any]]]:
    rule = policy["integer_allreduce"]
    since = dt.date.fromisoformat(rule["since"])
    settings = {k: v for k, v in launch.env.items() if k.endswith(rule["env_suffix"])}
    bad = {k: v for k, v in settings.items() if str(v).upper() not in {a.upper() for a in rule["allowed_values"]}}
    image = (launch.image or "").lower()
    sku = (launch.point.runner or "").removeprefix("cluster:").split("-", 1)[0].lower()
    # The runner's SKU decides the platform; the image name only when the SKU is neither (new hardware).
    rocm_image = any(m in image for m in rule["rocm_image_markers"])
    rocm_sglang = engine_or_generic(launch.engine).rocm_quick_reduce_required and (
        sku in rule["rocm_skus"] or (rocm_image and sku not in rule["cuda_skus"]))
    if not bad and not rocm_sglang:
        return []
    date, _ = _model_date(ctx, launch.point.model_prefix)
    if date is None and ctx.review_date < since:
        return []  # a model benchmarked before the cutoff was added before it: grandfathered
    if date is None:
        return [("allreduce-model-date-unknown", ctx.bundle.path("models_md"), None,
                 {"prefix": launch.point.model_prefix or "", "missing": f"{launch.point.model_prefix} Date added"})]
    if date < since:
        return []
    out = []
    for name, value in bad.items():
        where = launch.env_origin(name) or (launch.recipe_path, None)
        out.append(("integer-allreduce", where[0], where[1], {"var": name, "value": value,
                                                              "added": date.isoformat(), "since": rule["since"]}))
    required = rule["required_env"]
    if rocm_sglang and str(launch.env.get(required, "")).upper() not in {a.upper() for a in rule["allowed_values"]}:
        out.append(("rocm-quick-reduce-not-disabled", launch.recipe_path, None,
                    {"var": required, "added": date.isoformat(), "since": rule["since"]}))
    return out


def check(ctx: CheckContext) -> CheckResult:
    """FAIL on a model-config override, a config.json edit, publish_events_and_metrics: false or
    integer all-reduce on a new model."""
    policy = ctx.policy("prohibited_settings")["architecture"]
    patches = ctx.policy("patches")
    launch_set = launches(ctx, "head")
    try:
        scope = affected_files(ctx)
        files = scope.scanned(patches)
    except (InputError, LookupError, ValueError):
        files = [f.path for f in ctx.bundle.pr.files if f.status != "removed" and is_scanned(f.path, patches)]
    if not launch_set.keys and not files:
        return not_applicable(finding("nothing-affected"))
    notes = {rule: note for rule in (RULE_ARCH, RULE_ALLREDUCE, RULE_METRICS)
             if (note := part_skipped(ctx, rule)) is not None}
    rules = frozenset(r for r in (RULE_ARCH, RULE_ALLREDUCE, RULE_METRICS) if r not in notes)
    hits: dict[tuple[str, str, int | None, str], tuple[str, dict[str, Any], set[str]]] = {}
    unknown: list[Finding] = []

    def add(item: tuple[str, str, int | None, dict[str, Any]], key: str | None) -> None:
        mid, path, line, params = item
        sig = (mid, path, line, str(sorted(params.items())))
        entry = hits.setdefault(sig, (mid, params, set()))
        if key:
            entry[2].add(key)

    allreduce_seen = {"new": set(), "old": set()}
    for launch in launch_set.launches:
        for item in _launch_findings(launch, policy, rules):
            add(item, launch.key)
        if RULE_ALLREDUCE not in rules:
            continue
        for item in _allreduce(ctx, launch, policy):
            if item[0] == "allreduce-model-date-unknown":
                f = finding("allreduce-model-date-unknown", MissingEvidence(what=item[3]["missing"]), key=launch.key,
                            **item[3])
                if f not in unknown:
                    unknown.append(f)
            else:
                add(item, launch.key)
        date, _ = _model_date(ctx, launch.point.model_prefix)
        if date is not None:
            since = dt.date.fromisoformat(policy["integer_allreduce"]["since"])
            allreduce_seen["new" if date >= since else "old"].add(launch.point.model_prefix or "")
    for path in files:
        for item in (i for text, offset in scan_texts(ctx, path)
                     for i in _text_findings(path, text, policy, rules, offset)):
            if not any(s[1] == item[1] and s[2] == item[2] and s[0] == item[0] for s in hits):
                add(item, None)
    # unresolved launches are Check 18's; the static scan above covered the files they run
    scoped = reported_by_check18(launch_set.fatal_errors)
    benign = [finding(mid, FileEvidence(path=path, line=line), file=short_path(path) + (f":{line}" if line else ""),
                      **params)
              for (mid, path, line, _), (_, params, _keys) in hits.items() if mid == "config-edit-metadata-only"]
    hits = {sig: v for sig, v in hits.items() if sig[0] != "config-edit-metadata-only"}
    scoped = [*benign[:MAX_LISTED], *scoped]
    if hits:
        out = []
        for (mid, path, line, _), (_, params, keys) in list(hits.items())[:MAX_LISTED]:
            place = short_path(path) + (f":{line}" if line else "")
            out.append(finding(mid, FileEvidence(path=path, line=line), file=place, configs=sorted(keys), **params))
        return failed(*out, *unknown, *scoped, *notes.values())
    if unknown:
        return failed(*unknown, *scoped, *notes.values())
    ok = []
    if RULE_ARCH in rules or RULE_METRICS in rules:
        ok.append(finding("no-architecture-hacks", launches=len(launch_set.launches), files=len(files)))
    if RULE_ALLREDUCE in rules:
        ok.append(finding("integer-allreduce-ok", new=sorted(allreduce_seen["new"]), old=sorted(allreduce_seen["old"]),
                          since=policy["integer_allreduce"]["since"]))
    return passed(*ok, *scoped, *notes.values())
