"""Check 11: Golden AL.

Rule: For agentic workloads: verified that speculative-decoding configs (EAGLE / MTP / draft models)
    run with simulated synthetic acceptance, with the acceptance-length value taken from the
    committed golden AL curve in infx/golden_al_distribution/ for that model, thinking mode, and
    draft length. A submission may choose any supported draft length, but it may not substitute a
    different acceptance target. The target is the base tree's curve cell: a PR that edits a cell
    is judged by the base value (the edit is reported); a cell the base lacks (a curve for a new
    model, a newly measured draft length) is a target the PR sets for itself and FAILs, naming the
    cell, unless policy golden_al `added_cells` names it (then it is taken from the PR and named as
    its addition). The curve is the served model's: the model-prefix picks the curve file, and the
    checkpoint it was measured on (its top-level key) must be the model the config serves (the
    master `model:` HF id, quantization words and a release revision of them dropped, or a served
    model policy golden_al `checkpoint_aliases` names for it); a different model's checkpoint FAILs against the borrowed
    curve.
Why: acceptance length drives spec-decode throughput; one committed golden value per (model,
    thinking mode, draft length) keeps every engine's results comparable.
Evidence: per affected agentic spec-decode point, the spec parameters (method, draft length / DSpark
    block size) and the golden cell (curve file and line) the connector injects, the simulated
    acceptance variables in the measured run's server.log, and the file and line of any
    acceptance length hard-coded in a recipe or script; synthetic-acceptance knobs on non-agentic
    configs.
    A point's own server log is the effective evidence and outranks what the recipe construction
    implies: a log whose worker environment (the generation worker: decode, else agg) carries no
    synthetic-acceptance knob, and whose command sets none either, shows a point that ran with real
    acceptance (its `accept len` lines give the measured value); it FAILs, naming the point.
    A point without a server log is judged by its effective launch: the launcher's injected
    synthetic acceptance (Launch.synthetic) or a knob the recipe or script sets itself; a launch
    with neither FAILs, naming its file (a script that never enables simulated acceptance), when
    every harness file of the point's executed closure (workflow, runner, libraries: where the
    golden-AL injector is run) was read; one the bundle lacks leaves the point unverified, naming
    that file. The runner's injection counts when the base's harness (the trusted one) and the
    head's (what the PR's own run executes) both run the injector.
    A draft length without a committed golden cell FAILs unless one block of the sign-off's
    detail section states where its AL comes from (a link to a run or PR of the repository plus
    golden, AL and source words such as a pending golden-curve collection run; policy
    signoff_records.golden_source); then it passes, naming the statement.
N/A when: no affected config runs an agentic spec-decode point and no non-agentic config sets
    synthetic-acceptance knobs.
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
Unverifiable when: an agentic spec-decode point cannot be resolved from its recipe (other than a
    missing golden cell, which FAILs), or the checkpoint its golden curve was measured on or the
    model it serves cannot be read, or a log-less point's runner is not in the bundle.
Policy: prohibited_settings (simulated_acceptance: env, side_env, args, json_keys, offsets,
    default_thinking_mode, tolerance), signoff_records (golden_source),
    golden_al (checkpoint_qualifiers, checkpoint_revisions, checkpoint_aliases, added_cells),
    ci (the runs that measured the points, via verifier.facts.ci),
    launch, multinode (the affected configs and their launches, via verifier.configs / verifier.launch;
    multinode: a multi-node agentic point's DRAM budget),
    patches (which files a launch runs, via verifier.launch.scope)
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from verifier.configs import points
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.layout import short_path
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    Finding,
    MissingEvidence,
    UrlEvidence,
    failed,
    finding,
    not_applicable,
    passed,
)
from verifier.documents.rules import addition_finding
from verifier.documents.signoff_records import golden_source_statement
from verifier.engines import engine_or_generic
from verifier.engines.common import format_al
from verifier.facts.runlogs import PointLog, point_logs
from verifier.launch import Launch, LaunchError, launches
from verifier.launch.closure import HARNESS_ROLES, head_harness_injects, point_closures
from verifier.launch.recipes.golden import GoldenAL, GoldenRule, curve_doc, golden_al, golden_rule
from verifier.launch.reported import reported_by_check18
from verifier.launch.scope import affected_files, scan_texts

ID = 11
GOLDEN_MISSING = "missing golden AL"
# Args that set the draft length (SGLang DSpark block size / num steps, vLLM and ATOM speculative config).
LENGTH_ARGS = ("speculative-dspark-block-size", "speculative-num-steps", "num-speculative-tokens",
               "speculative-config", "speculative_config")


def _knobs(policy: Mapping[str, Any]) -> list[str]:
    return [*policy["env"], *policy["args"], *policy["json_keys"]]


def _knob_rx(policy: Mapping[str, Any]) -> re.Pattern[str]:
    names = "|".join(re.escape(n) for n in sorted(_knobs(policy), key=len, reverse=True))
    return re.compile(r"""["']?\b(?P<name>""" + names + r""")\b["']?\s*[=:]\s*["']?(?P<value>-?[0-9]+(?:\.[0-9]+)?)""")


def _al_of(name: str, value: float, policy: Mapping[str, Any]) -> float:
    return value - float(policy["offsets"].get(name, 0))


def _launch_knobs(launch: Launch, policy: Mapping[str, Any]) -> dict[str, str]:
    """Synthetic-acceptance knobs a launch sets (env and args)."""
    found = {n: launch.env[n] for n in (*policy["env"], *policy["side_env"]) if n in launch.env}
    for name in policy["args"]:
        value = launch.arg(name)
        if value is not None:
            found[name] = str(value)
    text = " ".join(launch.argv)
    for key in policy["json_keys"]:
        match = re.search(r'"' + re.escape(key) + r'"\s*:\s*([0-9.]+)', text)
        if match:
            found[key] = match.group(1)
    return found


def _logged_knobs(la: Launch, log: PointLog, policy: Mapping[str, Any]) -> dict[str, str] | None:
    """Synthetic-acceptance knobs the point's own log shows it ran with; None when the log shows
    neither a worker environment nor a command (it cannot tell)."""
    sl = log.log
    worker = sl.generation_worker
    if worker is None or (not worker.env and worker.command is None):
        return None
    found = {n: worker.env[n] for n in policy["env"] if n in worker.env}
    command = list(worker.command or ())
    found.update(engine_or_generic(la.engine).logged_synthetic(command))
    for name in policy["args"]:
        flag = "--" + name
        for i, token in enumerate(command):
            if token == flag and i + 1 < len(command):
                found[name] = command[i + 1]
            elif token.startswith(flag + "="):
                found[name] = token.split("=", 1)[1]
    return found


def _not_simulated(ctx: CheckContext, la: Launch, log: PointLog, golden: Any) -> Finding:
    """A point whose own log shows real acceptance instead of the golden AL."""
    sl = log.log
    worker = sl.generation_worker
    accept = sl.accept_lens
    measured = sorted({f"{a.value:g}" for a in accept})
    line = accept[0].line if accept else (worker.command_line if worker is not None else None)
    where = log.evidence(ctx).model_copy(update={"path": log.file, "line": line,
                                                 "text": f"accept len: {measured[0]}" if measured else None})
    cell = {"golden": golden.text, "curve": short_path(golden.file or ""), "mode": golden.thinking_mode,
            "length": golden.draft_length or 0} if golden is not None else {}
    return finding("point-not-simulated", where, key=la.key, point=la.exp_name, run=log.run_id,
                   worker=worker.name if worker is not None else "", accept=measured[:4], **cell)


def _stated_sources(ctx: CheckContext, missing_cells: list[Finding]) -> list[Finding] | None:
    """Pass findings for missing golden cells whose AL source the sign-off states; None without a statement."""
    if not missing_cells:
        return []
    statement = golden_source_statement(ctx, ctx.policy("signoff_records")["golden_source"])
    if statement is None:
        return None
    signoff = ctx.bundle.signoff
    comment = CommentEvidence(id=signoff.id, url=signoff.url, author=signoff.author)
    out = []
    for cell in missing_cells:
        p = cell.params
        out.append(finding("golden-source-stated", *cell.evidence, comment, UrlEvidence(url=statement.link or "",
                                                                                      text=statement.quote),
                           key=p.get("key", ""), point=p.get("point", ""), length=p.get("length"),
                           method=p.get("method"), link=statement.link or "", statement=statement.quote))
    return out


def _hardcoded(ctx: CheckContext, policy: Mapping[str, Any], files: list[str]) -> list[tuple[str, int, str, float]]:
    """(path, line, knob, AL it pins) for acceptance lengths written in recipes and scripts."""
    rx = _knob_rx(policy)
    out = []
    for path in files:
        pieces = scan_texts(ctx, path)
        for number, line in ((n, ln) for text, offset in pieces for n, ln in enumerate(text.split("\n"), 1 + offset)):
            if line.lstrip().startswith("#"):
                continue
            for match in rx.finditer(line):
                out.append((path, number, match.group("name"), _al_of(match.group("name"), float(match.group("value")),
                                                                      policy)))
    return out


def _legacy_golden(ctx: CheckContext, la: Any) -> Any:
    """The golden AL a legacy shell-script launch (which pins its own AL) must equal."""
    spec = la.spec
    if spec is None or not spec.speculating or not la.point.model_prefix:
        return None
    return golden_al(ctx, "head", la.point.model_prefix, spec.method, spec.draft_length,
                     draft_model=spec.draft_model, sample_method=spec.sample_method)


def _change_note(rule: GoldenRule) -> Finding:
    """The row's note that the PR edits (judged by the base) or adds (judged by it) a golden cell."""
    head = rule.head
    if rule.change == "added":
        return addition_finding(head.file or "", f"golden cell {rule.detail}", head.line)
    return finding("rule-changed-by-pr", FileEvidence(path=head.file or "", line=head.line, side="head"),
                   FileEvidence(path=rule.golden.file or "", line=rule.golden.line, side="base"),
                   file=head.file or "", change="modified", detail=f"golden cell {rule.detail}")


def _words(name: str, qualifiers: Sequence[re.Pattern[str]], revisions: Sequence[re.Pattern[str]] = ()) -> str:
    """A checkpoint name's letters and digits without its quantization / packaging words (policy
    golden_al checkpoint_qualifiers), without a release revision of such a word (checkpoint_revisions:
    `NVFP4-V2`, only right after a qualifier) and without an HF organisation."""
    base = name.strip().rsplit("/", 1)[-1]
    kept: list[str] = []
    after_qualifier = False
    for word in (w for w in re.split(r"[-_\s]+", base) if w):
        if any(q.fullmatch(word) for q in qualifiers):
            after_qualifier = True
        elif not (after_qualifier and any(r.fullmatch(word) for r in revisions)):
            kept.append(word)
            after_qualifier = False
    return re.sub(r"[^a-z0-9]", "", "".join(kept).lower())


def _curve_checkpoint(ctx: CheckContext, golden: GoldenAL, side: Literal["base", "head"]
                      ) -> tuple[str, int | None] | None:
    """(the checkpoint a curve was measured on: its single top-level key, line) or None when unread."""
    if not golden.curve:
        return None
    try:
        doc = curve_doc(ctx, side, golden.curve)
    except InputError:
        return None
    data = doc.data if doc is not None else None
    if not isinstance(data, dict) or len(data) != 1:
        return None
    (name,) = data
    return str(name), doc.line(name) if doc is not None else None


def _identity(ctx: CheckContext, la: Launch, golden: GoldenAL, side: Literal["base", "head"],
              own: Mapping[str, Any]) -> Finding | None:
    """A finding when the served model is not the checkpoint the golden curve was measured on (the
    curve is chosen by the config's model-prefix; a different model must not borrow it), None when it is."""
    qualifiers = [re.compile(str(q), re.IGNORECASE) for q in own["checkpoint_qualifiers"]]
    revisions = [re.compile(str(r), re.IGNORECASE) for r in own.get("checkpoint_revisions") or ()]
    curve = _curve_checkpoint(ctx, golden, side)
    origin = la.origins.get(("identity", "model", "repo"))
    model_ev = FileEvidence(path=origin.path if origin else la.point.file,
                            line=origin.line if origin else la.point.line, text=f"model: {la.point.model}")
    curve_ev = FileEvidence(path=golden.file or "", line=curve[1] if curve else None, side=side,
                            text=f"{curve[0]}:" if curve else None)
    if curve is None or not la.point.model:
        missing = f"{short_path(golden.file or '')}: the checkpoint the curve was measured on" if curve is None \
            else f"{la.key}: model"
        return finding("golden-identity-unknown", curve_ev, model_ev, MissingEvidence(what=missing), key=la.key,
                       curve=short_path(golden.file or ""), model=la.point.model or "", missing=missing)
    served = _words(la.point.model, qualifiers, revisions)
    aliases = [str(a) for a in (own.get("checkpoint_aliases") or {}).get(curve[0], ())]
    if served and any(served == _words(name, qualifiers, revisions) for name in (curve[0], *aliases)):
        return None
    return finding("golden-curve-other-model", model_ev, curve_ev, key=la.key, model=la.point.model,
                   checkpoint=curve[0], curve=short_path(golden.file or ""), prefix=la.point.model_prefix or "")


def _added_allowed(own: Mapping[str, Any], rule: GoldenRule) -> Mapping[str, Any] | None:
    """The policy's named exception for a golden cell the PR adds (golden_al added_cells), or None."""
    head = rule.head
    return next((e for e in own["added_cells"] if e["curve"] == head.curve and e["mode"] == head.thinking_mode
                 and e["length"] == head.draft_length), None)


def _synthetic_in_launch(la: Launch, policy: Mapping[str, Any]) -> bool:
    """True when the effective launch runs with simulated acceptance: the launcher injected the golden
    AL (srt-slurm's synthetic-acceptance connector, Launch.synthetic), or the recipe or script sets a
    synthetic-acceptance knob itself (a legacy script, a complete recipe)."""
    syn = la.synthetic
    if syn is not None and syn.active and syn.injected:
        return True
    # a knob whose value the engine derives from the AL (ATOM's acceptance rate = (AL - 1) / tokens)
    # shows simulation is on even when its value is computed at run time
    if any(la.has_flag(name) or la.arg(name) is not None for name in policy.get("presence_args", ())):
        return True
    return bool(_launch_knobs(la, policy))


def _simulated_points(launches_: list[Launch], policy: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    """(key, exp-name, world) of the points with simulated acceptance in any of their role launches
    (a disaggregated point pins it on the decode workers, which generate; its prefill launch shows
    nothing)."""
    return {(la.key, la.exp_name, la.world) for la in launches_ if _synthetic_in_launch(la, policy)}


def _injected_by_runner(ctx: CheckContext) -> tuple[set[tuple[str, str]], dict[tuple[str, str], str]]:
    """(key, exp-name) of the head points whose executed closure (from the base tree's workflow and
    runner) runs the golden-AL injector: the launch of a complete recipe does not show that injection
    by itself; and, for the other points, why the harness could not be read whole: the first harness
    file (runner first, then libraries and workflows) the bundle does not hold, or `""` when the base
    tree has no runner script for the point's runner label. "No injection" is a finding only when
    the whole harness was read."""
    closures = point_closures(ctx, "head")
    by_name = {(key, p.exp_name): p for key in {c.key for c in closures} for p in points(ctx, "head", key)}
    # the trusted harness injects, and the PR's own run (the head's harness) still does
    injected = {(c.key, c.exp_name) for c in closures if c.harness_injects and (c.key, c.exp_name) in by_name
                and head_harness_injects(ctx, by_name[(c.key, c.exp_name)])}
    unread: dict[tuple[str, str], str] = {}
    base = ctx.bundle.base
    for c in closures:
        if (c.key, c.exp_name) in injected:
            continue
        harness = sorted((m for m in c.members if m.role in HARNESS_ROLES and not m.folder),
                         key=lambda m: m.role != "runner")
        missing = next((m.path for m in harness if m.path not in base.files and not base.absent(m.path)), None)
        if missing is not None:
            unread[(c.key, c.exp_name)] = missing
        elif not any(m.role == "runner" and m.path in base.files for m in harness):
            unread[(c.key, c.exp_name)] = ""
    return injected, unread


def check(ctx: CheckContext) -> CheckResult:
    """FAIL when an agentic spec-decode point's acceptance target is not its golden AL."""
    policy = ctx.policy("prohibited_settings")["simulated_acceptance"]
    tol = float(policy["tolerance"])
    launch_set = launches(ctx, "head")
    agentic = [la for la in launch_set.launches if la.point.is_agentic and la.spec is not None and la.spec.speculating]
    fails: list[Finding] = []
    unknown: list[Finding] = []
    missing_cells: list[Finding] = []
    unresolved: list[LaunchError] = []
    # computed on the first point without a log
    injected: set[tuple[str, str]] | None = None
    harness_unread: dict[tuple[str, str], str] = {}
    simulated: set[tuple[str, str, str]] = set()
    for error in launch_set.fatal_errors:
        point = next((p for p in points(ctx, "head", error.key) if p.exp_name == error.exp_name), None)
        if point is not None and (not point.is_agentic or point.spec_decoding == "none"):
            continue
        if error.message.startswith(GOLDEN_MISSING):
            missing_cells.append(finding("golden-cell-missing", FileEvidence(path=error.file, line=error.line),
                                         key=error.key, point=error.exp_name or "", detail=error.message[:240]))
        else:
            unresolved.append(error)
    scoped = reported_by_check18(unresolved)
    # synthetic-acceptance knobs on configs that are not agentic spec-decode points
    for la in launch_set.launches:
        if la.point.is_agentic:
            continue
        knobs = _launch_knobs(la, policy)
        if knobs:
            name = next(iter(knobs))
            where = la.env_origin(name) or la.arg_origin(name) or (la.recipe_path, None)
            fails.append(finding("knobs-on-non-agentic", FileEvidence(path=where[0], line=where[1]), key=la.key,
                                 point=la.exp_name, knob=name, value=knobs[name]))
    if not agentic and not fails and not unknown and not missing_cells:
        return not_applicable(*(scoped or [finding("no-agentic-spec-decode")]))

    logs = point_logs(ctx)
    golden_by_recipe: dict[str, set[float]] = {}
    groups: dict[tuple[str, str, int | None, str, float | None], dict[str, Any]] = {}
    missing: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    notes: dict[str, Finding] = {}
    own = ctx.policy("golden_al")
    identities: dict[tuple[str, str, str], Finding | None] = {}
    added: dict[str, Finding] = {}
    for la in agentic:
        syn = la.synthetic
        golden = syn.golden if syn is not None else _legacy_golden(ctx, la)
        if golden is not None and golden.ok:
            spec = syn.spec if syn is not None else la.spec
            rule = golden_rule(ctx, golden, spec.draft_model if spec else None, spec.sample_method if spec else None)
            golden = rule.golden  # the base curve's cell is the target, whatever the PR's curve says
            if rule.change == "added" and _added_allowed(own, rule) is None:
                # a cell only the PR's own curve has: a target the PR set for itself (policy added_cells)
                if rule.detail not in added:
                    head = rule.head
                    added[rule.detail] = finding(
                        "golden-cell-added-by-pr", FileEvidence(path=head.file or "", line=head.line, side="head",
                                                                text=f"{head.draft_length}: {head.text}"),
                        key=la.key, point=la.exp_name, cell=rule.detail, curve=short_path(head.file or ""),
                        mode=head.thinking_mode, length=head.draft_length or 0, golden=head.text)
                continue
            if rule.change is not None and rule.detail not in notes:
                notes[rule.detail] = _change_note(rule)
            curve_side: Literal["base", "head"] = "head" if rule.change == "added" else "base"
            ident = (la.point.model or "", str(golden.file), curve_side)
            if ident not in identities:
                identities[ident] = _identity(ctx, la, golden, curve_side, own)
            if identities[ident] is not None:
                continue
        if golden is None or not golden.ok or golden.value is None:
            spec = syn.spec if syn is not None else la.spec
            length = spec.draft_length if spec is not None else None
            field = next((f for f in LENGTH_ARGS if la.arg(f) is not None), "")
            where = (la.arg_origin(field) if field else None) or (la.recipe_path, None)
            cell = missing.setdefault((la.key, str(spec.method if spec else ""), str(length), where[0]), {
                "where": where, "golden": golden, "length": length, "field": field, "points": []})
            cell["points"].append(la.exp_name)
            log = logs.get(la.exp_name)
            if log is not None and _logged_knobs(la, log, policy) == {}:
                fails.append(_not_simulated(ctx, la, log, None))
            continue
        golden_by_recipe.setdefault(la.recipe_path, set()).add(golden.value)
        gkey = (la.key, golden.method, golden.draft_length, golden.thinking_mode, golden.value)
        group = groups.setdefault(gkey, {"golden": golden, "points": [], "logged": {}, "runs": set(), "launch": la})
        group["points"].append(la.exp_name)
        log = logs.get(la.exp_name)
        if log is None:
            # no server log at hand: the effective launch is the evidence (InferenceX PR 2488: a script
            # that never enables simulated acceptance must not pass for want of a log)
            if injected is None:
                injected, harness_unread = _injected_by_runner(ctx)
                simulated = _simulated_points(agentic, policy)
            if (la.key, la.exp_name, la.world) not in simulated and (la.key, la.exp_name) in harness_unread:
                harness = harness_unread[(la.key, la.exp_name)]
                label = la.point.runner or ""
                what = f"{short_path(harness)} (base tree)" if harness else \
                    f"the runner script of runner label {label} (base tree)"
                unknown.append(finding("launch-injection-unread", FileEvidence(path=la.recipe_path),
                                       MissingEvidence(what=what), key=la.key, point=la.exp_name,
                                       file=short_path(la.recipe_path), harness=short_path(harness) or None,
                                       label=label, golden=golden.text))
            elif (la.key, la.exp_name, la.world) not in simulated and (la.key, la.exp_name) not in injected:
                fails.append(finding("launch-not-simulated", FileEvidence(path=la.recipe_path), key=la.key,
                                     point=la.exp_name, file=short_path(la.recipe_path), kind=la.kind or "",
                                     golden=golden.text, curve=short_path(golden.file or ""),
                                     mode=golden.thinking_mode, length=golden.draft_length or 0))
            continue
        if _logged_knobs(la, log, policy) == {}:
            fails.append(_not_simulated(ctx, la, log, golden))
            continue
        worker = log.log.generation_worker
        env = worker.env if worker is not None else {}
        for name in policy["env"]:
            if name not in env:
                continue
            try:
                logged = _al_of(name, float(env[name]), policy)
            except ValueError:
                logged = float("nan")
            group["runs"].add(log.run_id)
            group["logged"][name] = env[name]
            if not abs(logged - golden.value) <= tol:
                fails.append(finding("logged-al-differs", log.evidence(ctx), key=la.key, point=la.exp_name,
                                     knob=name, value=env[name], golden=golden.text, run=log.run_id,
                                     curve=short_path(golden.file or ""), mode=golden.thinking_mode,
                                     length=golden.draft_length or 0))
        # FORMATS 4.8: vLLM carries the AL inside the logged speculative-config
        for knob, text in engine_or_generic(la.engine).logged_synthetic(list(log.log.command or ())).items():
            al = float(text)
            group["runs"].add(log.run_id)
            group["logged"][knob] = f"{al:g}"
            if not abs(al - golden.value) <= tol:
                fails.append(finding("logged-al-differs", log.evidence(ctx), key=la.key, point=la.exp_name,
                                     knob=knob, value=f"{al:g}", golden=golden.text, run=log.run_id,
                                     curve=short_path(golden.file or ""), mode=golden.thinking_mode,
                                     length=golden.draft_length or 0))
        side = {n: env[n] for n in policy["side_env"] if n in env}
        group["logged"].update(side)

    for (key, method, _, _), cell in missing.items():
        golden, (path, line) = cell["golden"], cell["where"]
        evidence: list[Any] = [FileEvidence(path=path, line=line)]
        if golden is not None and golden.file:
            evidence.append(FileEvidence(path=golden.file, line=golden.line))
        missing_cells.append(finding("golden-cell-missing", *evidence, key=key, point=cell["points"][0],
                             points=len(cell["points"]), method=method, length=cell["length"] or 0,
                             flag=cell["field"] or None, file=short_path(path) + (f":{line}" if line else ""),
                             mode=golden.thinking_mode if golden else "",
                             curve=short_path(golden.file) if golden and golden.file else None,
                             detail=(golden.missing if golden else "no golden lookup") or ""))
    stated = _stated_sources(ctx, missing_cells)
    if stated is None:
        fails.extend(missing_cells)
    fails.extend(added.values())
    fails.extend(f for f in identities.values() if f is not None)
    try:
        scope_files = affected_files(ctx).scanned(ctx.policy("patches"))
    except (InputError, LookupError, ValueError):
        scope_files = sorted(golden_by_recipe)
    for path, line, knob, al in _hardcoded(ctx, policy, sorted(set(scope_files) | set(golden_by_recipe))):
        goldens = golden_by_recipe.get(path) or {v for s in golden_by_recipe.values() for v in s}
        if goldens and all(abs(al - g) > tol for g in goldens):
            fails.append(finding("hardcoded-al-differs", FileEvidence(path=path, line=line), knob=knob,
                                 file=f"{short_path(path)}:{line}", value=format_al(al),
                                 golden=sorted(format_al(g) for g in goldens)))
    if fails:
        return failed(*fails, *unknown, *notes.values(), *scoped)
    if unknown:
        return failed(*unknown, *notes.values(), *scoped)
    out = []
    for (key, method, length, mode, _), group in groups.items():
        golden = group["golden"]
        ev = [FileEvidence(path=golden.file, line=golden.line, text=f"{length}: {golden.text}")]
        logged = group["logged"]
        out.append(finding("golden-al-matches", *ev, key=key, method=method, length=length or 0, mode=mode,
                           golden=golden.text, curve=short_path(golden.file or ""), points=len(group["points"]),
                           logged=[f"{k}={v}" for k, v in logged.items()], runs=sorted(group["runs"])))
    return passed(*(stated or []), *out, *notes.values(), *scoped)
