"""Check 3: Upstream recipe.

Rule: Every affected vLLM/SGLang production serving configuration is documented upstream (SGLang
    cookbook or vLLM recipes): the sign-off's additional detail section links the upstream pull
    request (MERGED, with a merge time) and/or the published page, and the published launch commands
    cover every production-useful setting of every affected recipe variant and role.
Why: InferenceX results are only useful to users who can reproduce them with documented upstream
    commands; an unmerged or incomplete recipe hides the settings that produced the numbers.
Evidence: links in the sign-off's detail section (allowlisted repositories and hosts only);
    github.yaml `upstream_prs` (state, merged_at, files) and `pages`; the stored pages' fenced launch
    commands, parsed with the same SGLang parser as the recipe (`resolve_sglang`); each affected
    variant's launch argv/env (`verifier.launch`), compared by resolved namespace. Paths differ
    (cluster mount vs documented path) and are compared by presence; per-point sizing
    (max-running-requests, CUDA-graph batch sizes) by presence; InferenceX harness-only settings
    are informational. Each variant is judged against the page command that documents it: the one
    with the fewest differences either way (production settings the variant needs but the command
    lacks, plus ones the command sets that the variant does not run), then the one with the
    point's own sizing. A sign-off that links only merged PRs is judged on the published page the
    evidence records for them (github.yaml pages). When no SGLang parser is known for the image,
    recipe and page are both read flag by flag.
N/A when: no vLLM/SGLang production serving config (policy `upstream.frameworks`) is affected.
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
Unverifiable when: a linked PR has no recorded facts, a linked page is not stored (or only PRs are
    linked and no published page with commands is recorded), the affected
    configs cannot be read, or a command cannot be parsed for the image's SGLang version. A point whose
    launch does not resolve is Check 18's finding (verifier.launch.reported): listed here, not repeated.
Policy: upstream,
    launch (the affected configs and their launches, via verifier.configs / verifier.launch)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    Finding,
    UrlEvidence,
    failed,
    finding,
    not_applicable,
    passed,
    unverifiable,
)
from verifier.documents.upstream import (
    Link,
    PageCommand,
    classify_dest,
    classify_env,
    classify_url,
    detail_section,
    extract_links,
    page_text,
    parse_page,
)
from verifier.engines import engine_or_generic
from verifier.engines.common import flag_namespace
from verifier.launch import Launch, launches
from verifier.launch.affected import affected_keys, submitted_entries
from verifier.launch.reported import reported_by_check18

ID = 3
MAX_REPORTED = 6
MAX_LISTED = 8


@dataclass(eq=False, repr=False)
class _Resolved:
    """A command line read as a namespace: values by dest, and the dests written on it."""

    namespace: Mapping[str, Any]
    given: frozenset[str]
    error: str | None = None
    flags: Mapping[str, str] = field(default_factory=dict)  # dest -> the declared option that set it
    parser: str = "pinned"  # "pinned" (the version's parser), "flags" (no parser known: flag reading)

    def flag(self, dest: str) -> str | None:
        """The option string written for a dest on this command line (declared long form)."""
        return self.flags.get(dest)


@dataclass(eq=False, repr=False)
class _Coverage:
    """How one launch compares with the best page command."""

    launch: Launch
    command: PageCommand | None
    missing: list[tuple[str, str, str, str]] = field(default_factory=list)  # (setting, category, want, page)
    informational: list[tuple[str, str]] = field(default_factory=list)  # (setting, category)
    extras: int = 0  # production settings the page command sets to a value this variant does not run
    sizing_matches: int = 0  # per-point sizing values the page command states exactly

    def rank(self) -> tuple[int, int, int]:
        """Lower is the command that documents this variant: fewest differences either way, then the
        command with this point's own sizing, then fewest settings the variant needs but lacks."""
        return (len(self.missing) + self.extras, 0 if self.sizing_matches else 1, len(self.missing))


def _signoff_evidence(ctx: CheckContext) -> CommentEvidence:
    s = ctx.bundle.signoff
    return CommentEvidence(id=s.id, url=s.url, author=s.author)


def _resolve(ctx: CheckContext, engine: str, argv: Sequence[str], image: str | None) -> _Resolved:
    """Resolve a command line (SGLang: the version's real parser spec; vLLM: flag reading)."""

    def compute() -> _Resolved:
        found = engine_or_generic(engine)
        if not found.reads_upstream_with_parser:
            namespace, given, _ = flag_namespace(argv)
            return _Resolved(namespace, frozenset(given), flags={d: "--" + d.replace("_", "-") for d in given})
        from verifier.engines.argspec.parsing import EngineArgsError, UnknownEngineVersion

        try:
            resolved = found.resolve(argv, image)
        except UnknownEngineVersion:
            # No parser is known for this image: recipe and page are both read flag by flag, the same way.
            namespace, given, _ = flag_namespace(argv)
            return _Resolved(namespace, frozenset(given), flags={d: "--" + d.replace("_", "-") for d in given},
                             parser="flags")
        except EngineArgsError as exc:
            return _Resolved({}, frozenset(), f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
        flags = {use.dest: use.option_string for use in resolved.uses}
        return _Resolved(resolved.namespace, resolved.given, flags=flags)

    joined = "\x1f".join(argv)
    return ctx.memo(f"c03.resolve.{engine}.{image}.{joined}", compute)


def _same(a: Any, b: Any) -> bool:
    if a == b:
        return True
    if isinstance(a, str | int | float) and isinstance(b, str | int | float) and not isinstance(a, bool):
        try:
            return float(str(a)) == float(str(b))
        except ValueError:
            return str(a) == str(b)
    return False


def _normalized(dest: str, value: Any, policy: Mapping[str, Any]) -> Any:
    """A JSON-object string as a dict (key order and spacing are not settings), without the keys the
    connector injects into it (policy `settings.injected_json_keys`, e.g. vLLM synthetic acceptance)."""
    if not isinstance(value, str) or not value.lstrip().startswith("{"):
        return value
    try:
        data = json.loads(value)
    except ValueError:
        return value
    if not isinstance(data, dict):
        return value
    injected = (policy["settings"].get("injected_json_keys") or {}).get(dest) or ()
    return {k: v for k, v in data.items() if k not in injected}


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    if value is True:
        return "set"
    if value is None or value is False:
        return "unset"
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


def _compare(ctx: CheckContext, launch: Launch, recipe: _Resolved, command: PageCommand, page: _Resolved,
             exports: Mapping[str, str], policy: Mapping[str, Any]) -> _Coverage:
    result = _Coverage(launch, command)
    for dest in sorted(recipe.given):
        category, mode = classify_dest(dest, policy)
        want = _normalized(dest, recipe.namespace.get(dest), policy)
        got = _normalized(dest, page.namespace.get(dest), policy)
        name = recipe.flag(dest) or dest
        if mode == "informational":
            result.informational.append((name, category))
            continue
        if dest not in page.given:
            # a restated default is covered by a page that leaves the default in place
            if mode == "value" and dest in page.namespace and _same(got, want):
                continue
            default = got
            shown = "unset" if default is None or default is False else f"{_show(default)} (default)"
            result.missing.append((name, category, _show(want), shown))
            continue
        if mode == "value" and not _same(got, want):
            result.missing.append((name, category, _show(want), _show(got)))
        elif mode == "presence" and category == "per-point sizing" and _same(got, want):
            result.sizing_matches += 1
    for dest in sorted(page.given - recipe.given):
        # a production setting the page command adds that this variant does not run: the command
        # documents another variant (used only to pick the command that documents this one)
        _category, mode = classify_dest(dest, policy)
        if mode == "value" and not _same(_normalized(dest, page.namespace.get(dest), policy),
                                         _normalized(dest, recipe.namespace.get(dest), policy)):
            result.extras += 1
    env = {**exports, **command.env}
    for name, value in sorted(launch.env.items()):
        if classify_env(name, policy) == "informational":
            result.informational.append((name, "harness"))
            continue
        if name not in env:
            result.missing.append((name, "environment", value, "unset"))
        elif str(env[name]) != str(value):
            result.missing.append((name, "environment", value, str(env[name])))
    return result


def _link_findings(ctx: CheckContext, links: list[Link], policy: Mapping[str, Any]) -> tuple[
        list[Finding], list[Finding], CheckResult | None]:
    """(failures, passes, unverifiable result) for the linked pull requests."""
    bad: list[Finding] = []
    good: list[Finding] = []
    facts = ctx.bundle.github.upstream_prs
    for link in (x for x in links if x.kind == "pr"):
        key = link.pr_key or ""
        fact = facts.get(key)
        ev = UrlEvidence(url=link.url, text=key)
        if fact is None:
            return bad, good, unverifiable("upstream-pr-unrecorded", ev, _signoff_evidence(ctx),
                                           missing=f"github.yaml upstream_prs {key}", pr=key)
        if str(fact.state).upper() != "MERGED" or fact.merged_at is None:
            bad.append(finding("upstream-pr-not-merged", ev, _signoff_evidence(ctx), pr=key,
                               state=str(fact.state).upper(), merged=fact.merged_at is not None))
            continue
        paths = tuple(policy["upstream_repos"][link.repo]["paths"]) if link.repo else ()
        if paths and fact.files and not any(f.startswith(p) for f in fact.files for p in paths):
            bad.append(finding("upstream-pr-outside-docs", ev, pr=key, paths=list(paths),
                               files=list(fact.files[:MAX_REPORTED])))
            continue
        if paths and not fact.files:
            return bad, good, unverifiable("upstream-pr-files-unrecorded", ev, missing=f"files of {key}", pr=key)
        good.append(finding("upstream-pr-merged", ev, pr=key, date=fact.merged_at.date().isoformat()))
    return bad, good, None


def _recorded_pages(ctx: CheckContext, engines: set[str | None], policy: Mapping[str, Any]) -> list[Link]:
    """Stored published pages (allowlisted hosts of the linked PRs' engines) that hold launch commands."""
    found: list[Link] = []
    for url in ctx.bundle.github.pages:
        link = classify_url(str(url), policy)
        if link is None or link.kind != "page" or link.engine not in engines:
            continue
        _rel, text = page_text(ctx.bundle, link.url)
        if text is not None and parse_page(text, policy["launchers"]).commands:
            found.append(link)
    return found


def check(ctx: CheckContext) -> CheckResult:
    """Links merged upstream, published commands cover every affected production variant."""
    policy = ctx.policy("upstream")
    try:
        affected = affected_keys(ctx)
        head = submitted_entries(ctx)
    except InputError as exc:
        return unverifiable("affected-configs-unreadable", FileEvidence(path=exc.path), missing=exc.path)
    serving = [k for k, entry in head.items() if entry.framework in policy["frameworks"]]
    if not serving:
        frameworks = sorted({str(entry.framework) for entry in head.values()})
        return not_applicable(finding("no-production-serving-config", keys=list(affected.keys),
                                      frameworks=frameworks))

    section = detail_section(ctx.bundle.signoff.body)
    if section is None:
        return failed(finding("detail-section-missing", _signoff_evidence(ctx)))
    links = extract_links(section, policy)
    pages = [x for x in links if x.kind == "page"]
    prs = [x for x in links if x.kind == "pr"]
    legacy = [x for x in links if x.kind == "legacy"]
    if not pages and not prs:
        findings = [finding("no-upstream-link", _signoff_evidence(ctx), keys=serving)]
        if legacy:
            findings.append(finding("legacy-link-needs-page", UrlEvidence(url=legacy[0].url), link=legacy[0].url))
        return failed(*findings)

    bad, good, unknown = _link_findings(ctx, links, policy)
    if unknown is not None:
        return unknown
    if bad:
        return failed(*bad, *good)

    # published commands
    commands: list[tuple[Link, str, PageCommand]] = []
    exports: dict[str, str] = {}
    notes: list[Finding] = []
    if not pages:
        # The merged PR satisfies the link requirement; its content is judged on the published page
        # the evidence recorded for it (github.yaml pages), when there is one with launch commands.
        pages = _recorded_pages(ctx, {p.engine for p in prs}, policy)
        if not pages:
            return unverifiable("published-page-not-linked", *(UrlEvidence(url=p.url) for p in prs),
                                _signoff_evidence(ctx), missing="published page of " + ", ".join(
                                    p.pr_key or p.url for p in prs), prs=[p.pr_key or p.url for p in prs])
        notes.append(finding("page-recorded-not-linked", *(UrlEvidence(url=p.url) for p in pages),
                             pages=[p.url for p in pages], prs=[p.pr_key or p.url for p in prs]))
    for page in pages:
        rel, text = page_text(ctx.bundle, page.url)
        if text is None:
            return unverifiable("page-not-stored", UrlEvidence(url=page.url), missing=rel or f"github.yaml pages {page.url}",
                                url=page.url)
        parsed = parse_page(text, policy["launchers"])
        exports.update(parsed.exports)
        commands += [(page, rel or page.url, c) for c in parsed.commands]

    try:
        launch_set = launches(ctx, "head", serving)
    except InputError as exc:
        return unverifiable("launches-unresolved", FileEvidence(path=exc.path), missing=exc.path, error=exc.reason)
    # unresolved launches are Check 18's (it names file, line and construct); the points that resolve
    # are compared here, the others listed. Check 18 FAILs on them, so the verdict cannot be APPROVED.
    scoped = reported_by_check18(launch_set.fatal_errors)
    if not launch_set.launches:
        if scoped:
            return not_applicable(*good, *notes, *scoped)
        return unverifiable("launches-unresolved", missing="launches of " + ", ".join(serving),
                            error="no point of the affected keys has a launch")
    notes.extend(scoped)

    engines = policy["engines"]
    gaps: list[_Coverage] = []
    covered: list[_Coverage] = []
    informational: set[tuple[str, str]] = set()
    unparsed: set[str] = set()
    for launch in launch_set.launches:
        engine = engines.get(str(launch.point.framework), launch.engine or "")
        recipe = _resolve(ctx, engine, launch.argv, launch.image)
        if recipe.error:
            return unverifiable("recipe-command-unparsable", FileEvidence(path=launch.recipe_path),
                                missing=f"SGLang parse of {launch.exp_name}", variant=launch.variant_name,
                                error=recipe.error)
        if recipe.parser == "flags" and launch.image:
            unparsed.add(launch.image)
        candidates = [(link, rel, c) for link, rel, c in commands if c.engine == engine]
        best: _Coverage | None = None
        parse_error: str | None = None
        for _link, _rel, command in candidates:
            page_ns = _resolve(ctx, engine, command.argv, launch.image)
            if page_ns.error:
                parse_error = parse_error or f"line {command.line}: {page_ns.error}"
                continue
            result = _compare(ctx, launch, recipe, command, page_ns, exports, policy)
            if best is None or result.rank() < best.rank():
                best = result
            if not result.missing and not result.extras:
                break
        if best is None:
            page_side = f"none parses ({parse_error})" if parse_error else "none"
            best = _Coverage(launch, None, [("launch command", "command", engine, page_side)])
        informational.update(best.informational)
        (covered if not best.missing else gaps).append(best)

    if unparsed:
        notes.append(finding("read-without-parser", images=sorted(unparsed)))
    page_rel = {c: rel for _link, rel, c in commands}
    page_url = {c: link.url for link, _rel, c in commands}
    if gaps:
        groups: dict[tuple[tuple[str, str, str, str], ...], list[_Coverage]] = {}
        for gap in gaps:
            groups.setdefault(tuple(gap.missing), []).append(gap)
        findings: list[Finding] = []
        for missing, members in list(groups.items())[:MAX_REPORTED]:
            settings = [m[0] for m in missing]
            details = [f"{m[0]} ({m[1]}): recipe {m[2]}, page {m[3]}" for m in missing[:MAX_REPORTED]]
            evidence: list[Any] = []
            seen_files: set[str] = set()
            for gap in members:
                launch = gap.launch
                if launch.recipe_path in seen_files:
                    continue
                seen_files.add(launch.recipe_path)
                origin = launch.arg_origin(settings[0]) or launch.env_origin(settings[0])
                evidence.append(FileEvidence(path=origin[0], line=origin[1]) if origin
                                else FileEvidence(path=launch.recipe_path))
            first = members[0]
            if first.command is not None:
                evidence.append(FileEvidence(path=page_rel[first.command], line=first.command.line,
                                             text=first.command.text[:200]))
                evidence.append(UrlEvidence(url=page_url[first.command]))
            variants = [f"{g.launch.recipe_path.rsplit('/', 1)[-1]}:{g.launch.variant or 'base'}"
                        + (f" (conc {g.launch.point.conc})" if g.launch.point.conc is not None else "") for g in members]
            findings.append(finding(
                "page-misses-settings", *evidence, keys=sorted({g.launch.key for g in members}),
                variants=variants[:MAX_LISTED], more=max(0, len(variants) - MAX_LISTED), count=len(members),
                roles=sorted({g.launch.role for g in members}), settings=settings, details=details,
                page_line=first.command.line if first.command else 0,
            ))
        if len(groups) > MAX_REPORTED:
            findings.append(finding("more-variants-missing", count=sum(
                len(m) for m in list(groups.values())[MAX_REPORTED:])))
        return failed(*findings, *good, *notes)

    variants = sorted({(c.launch.recipe_path.rsplit("/", 1)[-1], c.launch.variant or "base") for c in covered})
    roles = sorted({c.launch.role for c in covered})
    used = sorted({c.command.line for c in covered if c.command is not None})
    evidence = [UrlEvidence(url=p.url) for p in pages]
    result = [
        *good,
        *notes,
        finding("page-covers-variants", *evidence, points=len(covered), variants=len(variants),
                roles=roles, commands=len(used), total_commands=len(commands),
                pages=[p.url for p in pages], lines=used,
                resolved=all(engine_or_generic(c.launch.engine).reads_upstream_with_parser for c in covered)),
    ]
    harness = sorted(name for name, category in informational if category == "harness")
    other = sorted(name for name, category in informational if category != "harness")
    if harness:
        result.append(finding("harness-settings-excluded", settings=harness))
    if other:
        result.append(finding("uncategorized-settings-informational", settings=other))
    return passed(*result)
