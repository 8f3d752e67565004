"""Check 17: Metrics publication.

Rule: Every affected Dynamo TRT-LLM entry (framework dynamo-trt) collects and publishes iteration
    and KV-cache metrics under its effective settings: `publish_events_and_metrics` is never false,
    an iteration-metrics control and a KV-cache-metrics control are on (KV events are not required),
    and the sign-off's additional detail section records the installed Dynamo version.
Why: Dynamo TRT-LLM results are published together with the engine's iteration and KV-cache
    metrics; a run that switches them off, or whose Dynamo version is unknown, cannot be audited.
Evidence: the effective (merged and bound) recipe of every launch of the affected dynamo-trt keys
    (`verifier.launch`: role args, engine config, extra_args, environment), by file and line; the
    version in the sign-off's detail section.
N/A when: no affected config key uses a framework in policy `metrics.frameworks` (dynamo-trt).
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
    The effective settings are those of the launch model only when every changed file in the
    points' executed closure is read by it (verifier.launch.closure, verifier.facts.producers
    `unread_changes`): a changed runner, client, injector or Python module, or a recipe command that
    is not a plain file call, FAILs the row naming the file and construct.
Unverifiable when: an affected dynamo-trt key generates no launch at all. A point whose launch cannot
    be resolved is reported by Check 18 (verifier.launch.reported) and listed here; the others are judged,
    and with none left the row is N/A.
Policy: metrics,
    ci (result_producers: the executed closure, via verifier.facts.producers),
    launch, multinode (the affected configs and their launches, via verifier.configs / verifier.launch;
    multinode: a multi-node agentic point's DRAM budget)
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    Finding,
    failed,
    finding,
    not_applicable,
    passed,
    unverifiable,
)
from verifier.documents.upstream import detail_section
from verifier.engines import engine_or_generic
from verifier.facts import producers
from verifier.launch import Launch, launches
from verifier.launch.affected import submitted_entries
from verifier.launch.reported import reported_by_check18

ID = 17


def _norm(name: str) -> str:
    return str(name).strip().lstrip("-").lower().replace("-", "_")


def _settings(launch: Launch, ignored: set[str]) -> Iterator[tuple[str, Any, tuple[Any, ...]]]:
    """(normalized name, value, recipe path) of every setting of the effective config, plus argv and env
    (the launch's engine reads them: verifier.engines)."""
    return engine_or_generic(launch.engine).metrics(launch, ignored)


def _truth(value: Any, policy: Mapping[str, Any]) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    text = str(value).strip().lower()
    if text in policy["true_values"]:
        return True
    if text in policy["false_values"]:
        return False
    return None


def _yaml(value: Any) -> str:
    """A value as the recipe spells it (booleans in YAML/JSON lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _evidence(launch: Launch, path: tuple[Any, ...], name: str, value: Any) -> FileEvidence:
    if path and path[0] == "env":
        origin = launch.env_origin(str(path[1]))
    elif path and path[0] == "argv":
        origin = launch.arg_origin(name)
    else:
        found = launch.origins.get(path)
        origin = (found.path, found.line) if found is not None else None
    if origin is None:
        return FileEvidence(path=launch.recipe_path, text=f"{name}: {_yaml(value)}")
    return FileEvidence(path=origin[0], line=origin[1], text=f"{name}: {_yaml(value)}")


def _judge_launch(launch: Launch, policy: Mapping[str, Any]) -> tuple[list[Finding], dict[str, set[str]]]:
    """(problems, {group: control that is on}) for one launch."""
    problems: list[Finding] = []
    disabling = {_norm(s) for s in policy["disabling_settings"]}
    groups = {"iteration": {_norm(s) for s in policy["iteration_metrics"]},
              "kv-cache": {_norm(s) for s in policy["kv_cache_metrics"]}}
    on: dict[str, set[str]] = {}
    off: dict[str, tuple[str, FileEvidence]] = {}
    for name, value, path in _settings(launch, set(policy["ignored_sections"])):
        truth = _truth(value, policy)
        if name in disabling and truth is False:
            problems.append(finding("metrics-publication-disabled", _evidence(launch, path, name, value),
                                    key=launch.key, variant=launch.variant_name, setting=name, value=_yaml(value),
                                    assignment=f"{name}: {_yaml(value)}",
                                    where=_where(_evidence(launch, path, name, value))))
        for group, names in groups.items():
            if name in names:
                if truth is True:
                    on.setdefault(group, set()).add(name)
                elif truth is False:
                    off.setdefault(group, (name, _evidence(launch, path, name, value)))
    for group in groups:
        if group not in on:
            if group in off:
                name, ev = off[group]
                problems.append(finding("metrics-group-off", ev, key=launch.key, variant=launch.variant_name,
                                        group=group, setting=name, where=_where(ev)))
            else:
                problems.append(finding("metrics-group-unset", FileEvidence(path=launch.recipe_path),
                                        key=launch.key, variant=launch.variant_name, group=group,
                                        controls=sorted(groups[group])))
    return problems, on


def _where(ev: FileEvidence) -> str:
    name = ev.path.rsplit("/", 1)[-1]
    return f"{name}:{ev.line}" if ev.line else name


def check(ctx: CheckContext) -> CheckResult:
    """Dynamo TRT-LLM entries publish iteration and KV-cache metrics, with the Dynamo version recorded."""
    policy = ctx.policy("metrics")
    try:
        head = submitted_entries(ctx)
    except InputError as exc:
        return unverifiable("affected-configs-unreadable", FileEvidence(path=exc.path), missing=exc.path)
    keys = [k for k, entry in head.items() if entry.framework in policy["frameworks"]]
    if not keys:
        frameworks = sorted({str(entry.framework) for entry in head.values()})
        return not_applicable(finding("no-dynamo-trt-config", frameworks=frameworks,
                                      wanted=list(policy["frameworks"])))
    try:
        launch_set = launches(ctx, "head", keys)
    except InputError as exc:
        return unverifiable("launches-unresolved", FileEvidence(path=exc.path), missing=exc.path, error=exc.reason)
    # unresolved launches are Check 18's; the points that resolve are judged here
    scoped = reported_by_check18(launch_set.fatal_errors)
    if not launch_set.launches and not scoped:
        return unverifiable("launches-unresolved", missing="launches of " + ", ".join(keys),
                            error="no point has a launch")
    problems: list[Finding] = []
    controls: dict[str, set[str]] = {"iteration": set(), "kv-cache": set()}
    for launch in launch_set.launches:
        found, on = _judge_launch(launch, policy)
        for item in found:
            if item not in problems:
                problems.append(item)
        for group, names in on.items():
            controls[group].update(names)

    signoff = ctx.bundle.signoff
    sign_ev = CommentEvidence(id=signoff.id, url=signoff.url, author=signoff.author)
    section = detail_section(signoff.body)
    match = re.search(str(policy["version_pattern"]), section.text) if section else None
    if match is None:
        problems.append(finding("dynamo-version-unrecorded", sign_ev, keys=keys))
    unread = producers.unread_changes(ctx, keys)
    if unread:
        # the launch model is not what runs: a changed closure file (runner, client, recipe command) is not read
        problems.insert(0, finding("closure-unread", *(producers.file_evidence(ctx, u.path, u.line) for u in unread[:8]),
                                   files=[u.path for u in unread[:8]], constructs=[u.construct for u in unread[:8]],
                                   count=len(unread), keys=keys))
    if problems:
        return failed(*problems[:8], *scoped)
    if not launch_set.launches:
        return not_applicable(*scoped)
    routers = sorted({str(r.get("version")) for k in keys
                      if isinstance(r := head[k].get("router"), Mapping) and r.get("version")})
    return passed(
        finding("metrics-published", FileEvidence(path=launch_set.launches[0].recipe_path), keys=keys,
                launches=len(launch_set.launches), iteration=sorted(controls["iteration"]),
                kv_cache=sorted(controls["kv-cache"])),
        finding("dynamo-version-recorded", sign_ev, version=match.group(1) if match else "",
                routers=routers),
        *scoped,
    )
