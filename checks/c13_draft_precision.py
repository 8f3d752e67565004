"""Check 13: Draft precision.

Rule: Verified that every draft model and draft head is served as it ships: the draft that ships
    with the served checkpoint, at its stored precision, through the pinned upstream image's
    default handling. No submission-side quantization, dtype override, checkpoint substitution, or
    patch may lower draft precision below that default, regardless of eval results or AL.
    SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE is not enabled in the effective recipe, including inherited
    settings; enabling it is prohibited going forward.
Why: the draft's precision sets the acceptance a real deployment gets; a draft cut below how it
    ships (a draft-only FP8 KV cache, a quantized draft, a cast NextN MoE) buys throughput no
    customer running the shipped checkpoint would see. A sign-off note (e.g. "confirmed offline")
    is not an exception, and waivers do not cover draft precision.
Evidence: for every affected spec-decode launch, resolved with the pinned image's SGLang parser
    (aliases, `=` forms, prefix abbreviations, restated defaults): the recipe file and line of each
    offending flag or variable, the target's effective KV dtype and where it comes from
    (`--kv-cache-dtype`, a model hook, the checkpoint's KV quantization or its torch_dtype), the
    draft's default KV dtype (the same launch without the draft-KV flag: the bar, unless one
    upstream-supported dtype is set on target and draft alike), the
    draft checkpoint's stored precision (checkpoints/<repo>/.../config.json), and the measured
    run's server.log (environment, launch command, server_args, `KV Cache is allocated` and
    `Load weight end` lines). An explicit draft path other than where the draft ships (the served
    checkpoint's `dspark/` folder or the checkpoint itself) or a PoR draft that MODELS.md's engine
    submission table names for the model is a substituted checkpoint. Without a resolvable command
    line, the server log's `server_args` and KV pools still name a draft-only KV cut.
    Where the base's checklist template asks the sign-off to record the shipped and effective draft
    precision in its additional detail section, a sign-off without that record (a detail block
    labelled draft precision stating both) FAILs naming the template item; a base template that
    predates the item does not require it.
N/A when: no affected config runs a speculative-decoding benchmark.
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
Unverifiable when: the checkpoint metadata of the target or draft is missing, a launch cannot be
    resolved from its recipe, the image's SGLang version is unknown, SGLang would reject the
    command line, or the target's effective KV dtype cannot be established.
Policy: prohibited_settings (draft_precision: prohibited_env, off_values, draft_quantization_args,
    draft_config_keys, draft_kv_dest, target_kv_dest, draft_quantization_dest,
    target_quantization_dest, online_quantization_methods, neutral_values, non_exception_phrases,
    atom_online_quant_args, atom_draft_layer_markers), patches (scan_paths, skip_paths),
    signoff_records (draft_precision_record); MODELS.md "Agreed draft model(s) (PoR)" column (bundle tree),
    ci (the runs that measured the points, via verifier.facts.ci),
    launch, multinode (the affected configs and their launches, via verifier.configs / verifier.launch;
    multinode: a multi-node agentic point's DRAM budget)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from verifier.configs import master_entries, points
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.layout import short_path
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    Finding,
    MissingEvidence,
    RunEvidence,
    failed,
    finding,
    not_applicable,
    passed,
)
from verifier.core.yamlio import decode_text
from verifier.documents.rules import rule_document
from verifier.documents.signoff_records import draft_precision_record, precision_record_item
from verifier.engines import Engine, default_engine, engine_or_generic
from verifier.engines.argspec.parsing import EngineArgError, UnknownEngineVersion
from verifier.engines.draft_precision import (
    Checkpoint,
    DraftIssue,
    draft_repo_path,
    env_issues,
    env_text_issues,
    load_checkpoint,
    lowers,
    por_drafts,
    sglang_issues,
    short_dtype,
    substituted_draft,
)
from verifier.engines.sglang import effective_kv_dtypes
from verifier.engines.versioned import VersionDependent, shell_launched
from verifier.facts.runlogs import PointLog, point_logs
from verifier.launch import Launch, LaunchError, launches
from verifier.launch.affected import affected_keys
from verifier.launch.reported import reported_by_check18
from verifier.launch.scope import affected_files, scan_texts

ID = 13
MAX_FILES = 6
LOG_POOLS = "server.log KV pools"
# Raw args that name a non-SGLang draft checkpoint (else it sits in the speculative config).
DRAFT_MODEL_ARGS = ("speculative-model", "speculative-draft-model", "draft-model", "speculative-model-dir")


@dataclass(eq=False, repr=False)
class _Group:
    """One issue (kind, flag, value) across launches: where it is written and which points run it."""

    issue: DraftIssue
    keys: dict[str, None] = field(default_factory=dict)
    places: dict[tuple[str, int | None], None] = field(default_factory=dict)
    points: dict[str, None] = field(default_factory=dict)
    targets: dict[str, None] = field(default_factory=dict)
    sources: dict[str, None] = field(default_factory=dict)
    runs: dict[tuple[int, str], None] = field(default_factory=dict)
    spellings: dict[str, None] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class _State:
    groups: dict[tuple[str, str, str], _Group] = field(default_factory=dict)
    unverifiable: list[Finding] = field(default_factory=list)
    shipped: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)  # key -> (draft, stored, target kv)
    checkpoint_evidence: dict[str, FileEvidence] = field(default_factory=dict)
    logs_seen: dict[int, int] = field(default_factory=dict)
    log_pools: dict[str, str] = field(default_factory=dict)
    log_draft_quant: dict[str, str] = field(default_factory=dict)
    target_ckpt: dict[str, str] = field(default_factory=dict)
    rejected: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    draft_method: dict[str, str | None] = field(default_factory=dict)
    substituted: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (chosen repo, shipped repo)
    separate_draft: set[str] = field(default_factory=set)  # keys whose draft is its own checkpoint
    kv_from_recipe: set[str] = field(default_factory=set)  # keys whose draft KV issue was resolved from the recipe
    unknown_images: dict[tuple[str, str], dict[str, None]] = field(default_factory=dict)  # (key, image) -> points
    # (key, image) -> (versions that accept the command line, dests they read differently, points)
    version_dependent: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...], dict[str, None]]] = field(
        default_factory=dict)
    # (key, flag, value text, file, line) -> points: a needed value known only at run time
    runtime: dict[tuple[str, str, str, str | None, int | None], dict[str, None]] = field(default_factory=dict)
    independent: dict[str, tuple[str, ...]] = field(default_factory=dict)  # image -> versions that agree
    # keys whose launches set nothing that changes draft precision: key -> (image, launches)
    by_construction: dict[str, tuple[str, int]] = field(default_factory=dict)
    spec_points: int = 0


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.replace(".post", ".").split("."))


def _place(path: str | None, line: int | None) -> str:
    if not path:
        return ""
    return short_path(path) + (f":{line}" if line else "")


def _add(state: _State, issue: DraftIssue, launch: Launch | None, source: str = "",
         run: tuple[int, str] | None = None) -> None:
    name = issue.name.lstrip("-")
    gkey = (issue.kind, name if issue.kind == "prohibited-env" else name.split("=")[0], issue.value)
    group = state.groups.setdefault(gkey, _Group(issue))
    if launch is not None:
        group.keys[launch.key] = None
        group.points[launch.exp_name] = None
    if issue.path:
        group.places[(issue.path, issue.line)] = None
    if issue.written:
        group.spellings[issue.written] = None
    if issue.target:
        group.targets[issue.target] = None
    if source:
        group.sources[source] = None
    if run is not None:
        group.runs[run] = None


def _origin_of(launch: Launch) -> Any:
    def origin(flag: str) -> tuple[str | None, int | None]:
        name = flag.lstrip("-").split("=", 1)[0]
        found = launch.arg_origin(name)
        if found is None:
            for written, o in launch.arg_origins.items():
                if written.split("=", 1)[0] in (name, name.replace("_", "-")):
                    found = (o.path, o.line)
                    break
        return found if found is not None else (launch.recipe_path, None)

    return origin


def _env_origin(launch: Launch) -> Any:
    def origin(name: str) -> tuple[str | None, int | None]:
        found = launch.env_origin(name)
        return found if found is not None else (launch.recipe_path, None)

    return origin


def _target_source(kv: Any) -> str:
    step = next((s for s in reversed(kv.reasons) if s.side == "target" and s.rule != "default-auto"), None)
    return step.rule if step is not None else "unknown"


def _por(ctx: CheckContext) -> dict[str, tuple[tuple[str, ...], int]]:
    """MODELS.md PoR draft repositories per model-prefix: the base's (a rule document, verifier.documents.rules),
    plus the head's only for a model the base does not list (a new model added by the PR)."""
    def compute() -> dict[str, tuple[tuple[str, ...], int]]:
        doc = rule_document(ctx, "models_md")
        merged: dict[str, tuple[tuple[str, ...], int]] = {}
        for raw in (doc.head, doc.base):  # the base is applied last, so its rows win
            if raw is None:
                continue
            try:
                merged.update(por_drafts(decode_text(raw, doc.path)))
            except InputError:
                continue
        return merged

    return ctx.memo("c13.por_drafts", compute)


def _checkpoints(ctx: CheckContext, launch: Launch, draft_path: str | None, state: _State,
                 flag: tuple[str, str | None] = ("speculative-draft-model-path", None)
                 ) -> tuple[Checkpoint | None, Checkpoint | None]:
    """Target and draft config.json; a substituted draft path is an issue, a missing config unverifiable.

    `flag`: (the declared option that set the draft path, its spelling when abbreviated).
    """
    model = launch.point.model or ""
    files = ctx.bundle.checkpoints
    target = load_checkpoint(files, model) if model else None
    method = launch.spec.method if launch.spec else None
    row = _por(ctx).get(launch.point.model_prefix or "")
    if draft_path:  # a local directory the launch script downloads a Hugging Face repository into
        draft_path = launch.checkpoints.get(str(draft_path).rstrip("/"), draft_path)
    swap = substituted_draft(model, launch.model_path, draft_path, method, target, row[0] if row else None)
    if swap is not None:
        path, line = _origin_of(launch)("--" + (flag[1] or flag[0]))
        _add(state, DraftIssue("draft-checkpoint-substituted", flag[0], str(draft_path), path, line, detail=swap[1],
                               written=flag[1]), launch)
        state.substituted.setdefault(launch.key, swap)
    repo = draft_repo_path(model, launch.model_path, draft_path, method, target)
    draft = load_checkpoint(files, repo) if repo else None
    for ckpt, what, role in ((target, model, "target"), (draft, repo, "draft")):
        if ckpt is None:
            if role == "draft" and swap is not None:
                return None, None  # the substitution is the finding; its config cannot change that
            missing = f"checkpoints/{what}/config.json"
            state.unverifiable.append(finding("checkpoint-missing", MissingEvidence(what=missing), key=launch.key,
                                              missing=missing, is_target=role == "target"))
            return None, None
    return target, draft


def _engine_of(launch: Launch) -> Engine:
    """The engine of a launch; one that names none is read as the default engine's."""
    return engine_or_generic(launch.engine) if launch.engine else default_engine()


def _judge_sglang(ctx: CheckContext, launch: Launch, policy: Mapping[str, Any], state: _State) -> None:
    engine = _engine_of(launch)
    needed = engine.draft_precision_dests
    try:
        resolved = engine.resolve(launch.argv, launch.image, needed=needed, runtime=shell_launched(launch))
    except VersionDependent as exc:
        entry = state.version_dependent.setdefault((launch.key, launch.image or ""), (exc.versions, exc.dests, {}))
        entry[2][launch.exp_name] = None
        return
    except UnknownEngineVersion:
        state.unknown_images.setdefault((launch.key, launch.image or ""), {})[launch.exp_name] = None
        return
    except EngineArgError as exc:
        state.rejected.setdefault((launch.key, launch.recipe_path, str(exc)[:200]), []).append(launch.variant or "base")
        return
    late = [dest for dest in needed if dest in resolved.runtime]
    if late:
        for dest in late:
            flag = dest.replace("_", "-")
            path, line = _origin_of(launch)("--" + flag)
            state.runtime.setdefault((launch.key, flag, resolved.runtime[dest], path, line), {})[launch.exp_name] = None
        return
    if len(resolved.versions) > 1:
        state.independent.setdefault(launch.image or "", resolved.versions)
    draft_dest = "speculative_draft_model_path"
    draft_path = resolved.value(draft_dest)
    use = resolved.use_for(draft_dest)
    flag = (use.option_string.removeprefix("--"), use.written.removeprefix("--") if use.abbreviated else None) \
        if use is not None else (draft_dest.replace("_", "-"), None)
    if not draft_path and not _sglang_touches_draft(resolved, policy):
        _default_by_construction(launch, state)
        return
    target, draft = _checkpoints(ctx, launch, draft_path, state, flag)
    if target is None or draft is None:
        return
    kv = effective_kv_dtypes(resolved, target.config, draft.config if draft is not target else None, resolved.version)
    if kv.target is None:
        state.unverifiable.append(finding("target-kv-unknown", FileEvidence(path=target.path),
                                          MissingEvidence(what="the target's effective KV dtype"), key=launch.key,
                                          detail="; ".join(kv.uncertain) or "unresolved",
                                          missing="the target's effective KV dtype"))
        return
    source = _target_source(kv)
    state.target_ckpt.setdefault(launch.key, target.path)
    # the framework's default for the draft: the same launch without the draft-KV flag
    unflagged = {**resolved.namespace, policy["draft_kv_dest"]: None}
    default_kv = effective_kv_dtypes(unflagged, target.config, draft.config if draft is not target else None,
                                     resolved.version).draft
    issues = sglang_issues(resolved, _origin_of(launch), policy, target_kv=kv.target, target_setting=kv.target_setting,
                           draft_quant_method=draft.quant_method,
                           draft_stored_unquantized=draft.quant_method is None and draft is not target,
                           draft_default_kv=default_kv)
    for issue in issues:
        _add(state, issue, launch, source)
        if issue.kind in ("draft-kv-below-target", "draft-kv-below-default"):
            state.kv_from_recipe.add(launch.key)
    state.draft_method.setdefault(launch.key, draft.quant_method)
    if draft is not target:
        state.separate_draft.add(launch.key)
    state.checkpoint_evidence.setdefault(launch.key, FileEvidence(path=draft.path, line=None,
                                                                  text=f"stored {draft.stored}"))
    draft_kv = kv.draft if not resolved.is_given(policy["draft_kv_dest"]) else resolved.value(policy["draft_kv_dest"])
    state.shipped.setdefault(launch.key, (draft.path.removeprefix("checkpoints/").removesuffix("/config.json"),
                                          draft.stored, short_dtype(kv.target)))
    if draft_kv:
        state.log_pools.setdefault(launch.key, short_dtype(draft_kv))


def _sglang_touches_draft(resolved: Any, policy: Mapping[str, Any]) -> bool:
    """Whether a resolved SGLang command line sets anything that can change draft precision: an
    explicit draft KV dtype, a draft quantization, or a target quantization method SGLang applies
    online (it reaches a draft that sets none). The complete list of what sglang_issues judges."""
    neutral = {str(v).lower() for v in policy["neutral_values"]}
    kv = resolved.value(policy["draft_kv_dest"]) if resolved.is_given(policy["draft_kv_dest"]) else None
    if kv is not None and str(kv).lower() not in neutral:
        return True
    quant = resolved.value(policy["draft_quantization_dest"]) \
        if resolved.is_given(policy["draft_quantization_dest"]) else None
    if quant is not None and str(quant).lower() not in neutral:
        return True
    method = resolved.value(policy["target_quantization_dest"]) \
        if resolved.is_given(policy["target_quantization_dest"]) else None
    online = {m.lower() for m in policy["online_quantization_methods"]}
    return method is not None and str(method).lower() in online


def _default_by_construction(launch: Launch, state: _State) -> None:
    """A launch that sets nothing changing draft precision serves the draft through the image's
    default handling by construction: no checkpoint metadata is needed to judge it."""
    image, count = state.by_construction.get(launch.key, (launch.image or "", 0))
    state.by_construction[launch.key] = (image, count + 1)


def _judge_other(ctx: CheckContext, launch: Launch, policy: Mapping[str, Any], state: _State) -> None:
    draft_model = launch.spec.draft_model if launch.spec else None
    written = next((k for k in DRAFT_MODEL_ARGS if launch.arg(k) is not None), "speculative-config")
    if not draft_model and not engine_or_generic(launch.engine).draft_issues(launch, _origin_of(launch), policy):
        _default_by_construction(launch, state)
        return
    target, draft = _checkpoints(ctx, launch, draft_model, state, (written, None))
    if target is None or draft is None:
        return
    for issue in engine_or_generic(launch.engine).draft_issues(launch, _origin_of(launch), policy,
                                                               draft_quant_method=draft.quant_method):
        _add(state, issue, launch)
    state.shipped.setdefault(launch.key, (draft.path.removeprefix("checkpoints/").removesuffix("/config.json"),
                                          draft.stored, None))


def _logged_kv_issue(launch: Launch, args: Mapping[str, Any], policy: Mapping[str, Any], draft: str,
                     target: str) -> DraftIssue:
    """A draft KV pool below the target's seen only in a server log (the launch could not be resolved).

    Names the flag the server_args line records (and the recipe line when the recipe spells it
    exactly), else the pools alone.
    """
    dest = policy["draft_kv_dest"]
    setting = args.get(dest)
    target_setting = str(args.get(policy["target_kv_dest"]) or "auto")
    if setting in (None, "", "None", "auto"):
        return DraftIssue("draft-kv-pool-below-target", "KV Cache is allocated", draft, None, None, target=target,
                          target_setting=target_setting)
    name = dest.replace("_", "-")
    path, line = _origin_of(launch)("--" + name) if launch.arg(name) is not None else (None, None)
    return DraftIssue("draft-kv-below-target", name, str(setting), path, line, target=target,
                      target_setting=target_setting)


def _judge_log(ctx: CheckContext, launch: Launch, log: PointLog, policy: Mapping[str, Any], state: _State) -> None:
    run = (log.run_id, log.artifact)
    state.logs_seen[log.run_id] = state.logs_seen.get(log.run_id, 0) + 1
    sl = log.log

    def env_origin(name: str) -> tuple[str | None, int | None]:
        return f"{log.artifact}/{log.file}", sl.env_lines.get(name)

    for issue in env_issues(sl.env, env_origin, policy):
        _add(state, DraftIssue(issue.kind, issue.name, issue.value, None, None, detail=issue.detail), launch,
             run=run)
        state.groups[(issue.kind, issue.name, issue.value)].runs[run] = None
    target_pool, draft_pool = sl.target_kv, sl.draft_kv
    args = sl.server_args or {}
    if target_pool is not None and draft_pool is not None and lowers(draft_pool.dtype, target_pool.dtype):
        if launch.key in state.kv_from_recipe:
            for group in state.groups.values():
                if group.issue.kind == "draft-kv-below-target" and launch.key in group.keys:
                    group.runs[run] = None
                    group.points[launch.exp_name] = None
        else:
            _add(state, _logged_kv_issue(launch, args, policy, short_dtype(draft_pool.dtype),
                                         short_dtype(target_pool.dtype)), launch, LOG_POOLS, run)
    if target_pool is not None and draft_pool is not None:
        state.log_pools[launch.key] = f"{short_dtype(draft_pool.dtype)}/{short_dtype(target_pool.dtype)}"
    quant = args.get(policy["draft_quantization_dest"])
    restated = quant is not None and str(quant).lower() == str(state.draft_method.get(launch.key)).lower()
    if quant not in (None, "", "None") and not restated and \
            str(quant).lower() not in {v.lower() for v in policy["neutral_values"]}:
        found = [g for g in state.groups.values() if g.issue.kind == "draft-quantization" and launch.key in g.keys]
        for group in found:
            group.runs[run] = None
            group.points[launch.exp_name] = None
        if not found:
            name = policy["draft_quantization_dest"].replace("_", "-")
            path, line = _origin_of(launch)("--" + name) if launch.arg(name) is not None else (None, None)
            _add(state, DraftIssue("draft-quantization", name, str(quant), path, line), launch, run=run)
    load = sl.draft_load
    if load is not None and load.quant:
        state.log_draft_quant.setdefault(launch.key, load.quant)
        _judge_draft_load(launch, log, load, policy, state)


def _judge_draft_load(launch: Launch, log: PointLog, load: Any, policy: Mapping[str, Any], state: _State) -> None:
    """The point's own log: a draft loaded with a quantization its checkpoint does not store.

    Judged per point (one point's log must not be vouched for by the others); a recipe flag that
    already explains it (draft or target quantization) is the finding instead.
    """
    if launch.key not in state.separate_draft:
        return
    quant = str(load.quant)
    stored = state.draft_method.get(launch.key)
    neutral = {str(v).lower() for v in policy["neutral_values"]}
    if quant.lower() in neutral or quant.lower() == str(stored).lower():
        return
    explained = [g for g in state.groups.values() if launch.key in g.keys and g.issue.kind in (
        "draft-quantization", "target-quantization-reaches-draft")]
    if explained:
        for group in explained:
            group.runs[(log.run_id, log.artifact)] = None
        return
    issue = DraftIssue("draft-loaded-quantized", "Load weight end quant", quant, None, None,
                       detail=f"{log.artifact}/{log.file} line {load.line}")
    _add(state, issue, launch, run=(log.run_id, log.artifact))


def _scan_texts(ctx: CheckContext, state: _State) -> None:
    """Prohibited variables enabled in scripts and recipes the affected configs run."""
    try:
        scope = affected_files(ctx)
    except (InputError, LookupError, ValueError):
        return
    patches_policy = ctx.policy("patches")
    policy = ctx.policy("prohibited_settings")["draft_precision"]
    for path in scope.scanned(patches_policy):
        issues = [replace(i, line=i.line + offset) if offset and i.line else i
                  for text, offset in scan_texts(ctx, path) for i in env_text_issues(path, text, policy)]
        for issue in issues:
            known = any(g.issue.kind == "prohibited-env" and g.issue.name == issue.name and
                        any(p == issue.path for p, _ in g.places) for g in state.groups.values())
            if not known:
                _add(state, issue, None)


def _exception_claims(ctx: CheckContext, policy: Mapping[str, Any]) -> list[str]:
    body = ctx.bundle.signoff.body.lower()
    return [p for p in policy["non_exception_phrases"] if p.lower() in body]


def _issue_finding(ctx: CheckContext, group: _Group, state: _State) -> Finding:
    issue = group.issue
    places = [p for p in group.places if p[0]]
    evidence: list[Any] = [FileEvidence(path=path, line=line) for path, line in places[:MAX_FILES]]
    evidence += [ctx_run_evidence(ctx, rid, art) for rid, art in list(group.runs)[:2]]
    files = [_place(path, line) for path, line in places[:MAX_FILES]]
    params: dict[str, Any] = {
        "configs": list(group.keys), "flag": issue.name, "value": issue.value, "files": files,
        "points": len(group.points), "runs": sorted({rid for rid, _ in group.runs}),
        "written": list(group.spellings),
    }
    if issue.kind == "draft-checkpoint-substituted":
        chosen = {state.substituted[k][0] for k in group.keys if k in state.substituted}
        params.update(repo=", ".join(sorted(chosen)), shipped=issue.detail)
    if issue.kind == "draft-loaded-quantized":
        params.update(named=list(group.points)[:MAX_FILES], line=issue.detail)
    if issue.kind in ("draft-quantization", "target-quantization-reaches-draft", "draft-loaded-quantized"):
        stored = {state.shipped[k][1] for k in group.keys if k in state.shipped}
        params["stored"] = ", ".join(sorted(stored)) or None
    if issue.kind in ("draft-kv-below-target", "draft-kv-below-default", "draft-kv-pool-below-target"):
        ckpts = list(dict.fromkeys(state.target_ckpt[k] for k in group.keys if k in state.target_ckpt))
        evidence += [FileEvidence(path=c) for c in ckpts[:2]]
        sources = list(group.sources)
        from_flag = sources == ["flag"]  # an explicit --kv-cache-dtype: the checkpoint played no part
        params.update(target=", ".join(group.targets) or (issue.target or ""), target_setting=issue.target_setting
                      or "auto", sources=["--kv-cache-dtype"] if from_flag else sources,
                      checkpoints=[] if from_flag else ckpts[:2])
    return finding(issue.kind, *evidence, **params)


def ctx_run_evidence(ctx: CheckContext, run_id: int, artifact: str) -> RunEvidence:
    """RunEvidence for a run artifact (the run's URL when the bundle records it)."""
    run = ctx.bundle.runs.get(run_id)
    url = run.url if run is not None and run.url else f"{ctx.bundle.pr.url.rsplit('/pull/', 1)[0]}/actions/runs/{run_id}"
    return RunEvidence(run_id=run_id, url=url, artifact=artifact)


def check(ctx: CheckContext) -> CheckResult:
    """FAIL when any affected draft runs below how it ships, or when that cannot be verified."""
    policy = ctx.policy("prohibited_settings")["draft_precision"]
    affected = affected_keys(ctx)
    launch_set = launches(ctx, "head")
    state = _State()
    spec = [la for la in launch_set.launches if la.spec is not None and la.spec.speculating]
    failed_points: list[Finding] = []

    def not_speculating(error: LaunchError) -> bool:
        point = next((p for p in points(ctx, "head", error.key) if p.exp_name == error.exp_name), None)
        return point is not None and point.spec_decoding == "none"

    # unresolved launches are Check 18's; the static scan of the PR's files below still runs
    scoped = reported_by_check18(launch_set.fatal_errors, skip=not_speculating)
    if not spec:
        if not scoped:
            return not_applicable(finding("no-spec-decode-benchmark", affected=len(affected.keys)))
        _scan_texts(ctx, state)
        if not state.groups:
            return not_applicable(*scoped)
    state.spec_points = len({la.exp_name for la in spec})
    logs = point_logs(ctx)
    for launch in spec:
        for issue in env_issues(launch.env, _env_origin(launch), policy):
            _add(state, issue, launch)
        if _engine_of(launch).models_kv_dtypes:
            _judge_sglang(ctx, launch, policy, state)
        else:
            _judge_other(ctx, launch, policy, state)
        log = logs.get(launch.exp_name)
        if log is not None:
            _judge_log(ctx, launch, log, policy, state)
    _scan_texts(ctx, state)
    for (key, recipe, error), variants in state.rejected.items():
        state.unverifiable.append(finding("command-line-rejected", FileEvidence(path=recipe),
                                          MissingEvidence(what="a command line SGLang accepts"), key=key,
                                          variants=variants[:MAX_FILES], error=error,
                                          missing="a command line SGLang accepts"))
    head = master_entries(ctx, "head")
    for (key, image), names in state.unknown_images.items():
        entry = head.get(key)
        where = FileEvidence(path=entry.file, line=entry.field_line("image") or entry.line, text=f"image: {image}") \
            if entry is not None else MissingEvidence(what=key)
        state.unverifiable.append(finding("image-version-unknown", where,
                                          MissingEvidence(what=f"the SGLang version of {image}"), key=key,
                                          image=image, points=len(names), missing="SGLang version"))

    for (key, image), (versions, dests, names) in state.version_dependent.items():
        entry = head.get(key)
        where = FileEvidence(path=entry.file, line=entry.field_line("image") or entry.line, text=f"image: {image}") \
            if entry is not None else MissingEvidence(what=key)
        state.unverifiable.append(finding("image-versions-disagree", where,
                                          MissingEvidence(what=f"the SGLang version of {image}"), key=key,
                                          image=image, points=len(names), versions=list(versions),
                                          dests=[d.replace("_", "-") for d in dests], missing="SGLang version"))
    for (key, flag, text, path, line), names in state.runtime.items():
        state.unverifiable.append(finding("value-at-run-time", FileEvidence(path=path or "", line=line, text=text[:200]),
                                          MissingEvidence(what=f"the value of --{flag}"), key=key, flag=flag,
                                          value=text[:200], file=_place(path, line), points=len(names),
                                          missing=f"the value of --{flag}"))
    notes = [finding("parsed-version-independent", images=sorted(state.independent),
                     versions=sorted({v for vs in state.independent.values() for v in vs}, key=_version_key))] \
        if state.independent else []
    signoff = CommentEvidence(id=ctx.bundle.signoff.id, url=ctx.bundle.signoff.url, author=ctx.bundle.signoff.author)
    unverifiable: list[Finding] = []
    for item in failed_points + state.unverifiable:
        if item not in unverifiable:
            unverifiable.append(item)
    record_missing, recorded = _precision_record(ctx, signoff)
    if state.groups:
        order = ["draft-checkpoint-substituted", "draft-kv-below-target", "draft-kv-below-default",
                 "draft-kv-pool-below-target", "draft-quantization", "draft-loaded-quantized", "target-quantization-reaches-draft",
                 "draft-config-quantization", "atom-quantization-reaches-draft", "prohibited-env"]
        groups = sorted(state.groups.values(), key=lambda g: order.index(g.issue.kind))
        findings = [_issue_finding(ctx, g, state) for g in groups]
        if any(g.issue.kind in ("draft-kv-below-target", "draft-kv-below-default", "draft-kv-pool-below-target")
               for g in groups):
            findings.append(finding("fix-draft-kv"))
        claims = _exception_claims(ctx, policy)
        if claims:
            findings.append(finding("signoff-note-not-exception", signoff, phrase=claims[0]))
        findings += _shipped_findings(state, policy, weights_only=True)
        return failed(*findings, *record_missing, *unverifiable, *notes, *scoped)
    if record_missing or unverifiable:
        return failed(*record_missing, *unverifiable, *notes, *scoped)
    return passed(*_shipped_findings(state, policy, weights_only=False), *_construction_findings(state),
                  *recorded, *notes, *scoped)


def _construction_findings(state: _State) -> list[Finding]:
    return [finding("draft-default-by-construction", key=key, image=image, launches=count)
            for key, (image, count) in state.by_construction.items() if key not in state.shipped]


def _precision_record(ctx: CheckContext, signoff: CommentEvidence) -> tuple[list[Finding], list[Finding]]:
    """(FAIL findings, pass findings) for the draft-precision record the base template may ask for."""
    policy = ctx.policy("signoff_records")["draft_precision_record"]
    item = precision_record_item(ctx, policy)
    if item is None:  # the base template predates the item (or Check 5 reports it missing)
        return [], []
    record = draft_precision_record(ctx, policy)
    if record is not None:
        return [], [finding("precision-recorded", signoff, quote=record.quote)]
    path = ctx.bundle.path("checklist")
    # the item's opening words and the words that ask for the record (the item is long)
    text = item.text if len(item.text) <= 120 else f"{item.text[:60].rstrip()} … {policy['template_phrase']}"
    return [finding("precision-record-missing", signoff, FileEvidence(path=path, line=item.line, side="base"),
                    checklist=short_path(path), line=item.line, item=text)], []


def _shipped_findings(state: _State, policy: Mapping[str, Any], *, weights_only: bool) -> list[Finding]:
    out: list[Finding] = []
    weight_kinds = ("draft-checkpoint-substituted", "draft-quantization", "draft-loaded-quantized", "target-quantization-reaches-draft", "draft-config-quantization",
                    "atom-quantization-reaches-draft", "prohibited-env")
    touched = {k for g in state.groups.values() if g.issue.kind in weight_kinds for k in g.keys}
    for key, (draft, stored, target_kv) in state.shipped.items():
        if key in touched:
            continue
        logged = state.log_draft_quant.get(key) or None
        if weights_only:
            out.append(finding("draft-weights-as-shipped", key=key, draft=draft, stored=stored, logged=logged))
        else:
            pools = state.log_pools.get(key) or None
            out.append(finding("draft-as-shipped", key=key, draft=draft, stored=stored, logged=logged,
                               target_kv=target_kv, pools=pools, points=state.spec_points))
    names = [item["name"] for item in policy["prohibited_env"]]
    enabled = {g.issue.name for g in state.groups.values() if g.issue.kind == "prohibited-env"}
    absent = [n for n in names if n not in enabled]
    if absent:
        out.append(finding("prohibited-env-not-enabled", names=absent, runs=sorted(state.logs_seen)))
    return out
