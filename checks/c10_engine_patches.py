"""Check 10: Engine patches.

Rule: Verified that this PR does not patch the inference engine or serving stack — the pinned image
    must run as shipped. This covers .patch files / git apply / patch, inline patches embedded in
    benchmark scripts (e.g. a python3/sed heredoc that rewrites installed engine sources before
    serving), in-place edits of site-packages, monkey-patching, overwriting container files, and
    installing forked/rebuilt engine wheels on top of the pinned image. The only exception is a patch
    covered by a filled-out waiver at docs/waiver/<PR_NUMBER>.md, filed in that same PR, which the
    sign-off links.
Why: a benchmark of a patched engine measures something no customer can run; results must come
    from the pinned upstream image as shipped.
Evidence: every patch signature with its file and line (changed files of the PR, and the recipes,
    shared blocks, setup scripts and benchmark scripts of every affected config), the recipe line
    of a setup script whose content the bundle lacks (fetched from another repository at run time;
    github.yaml upstream_files facts included: such a setup script with no waiver is a patch whatever
    it contains), and the waiver file and sign-off link that cover it. A setup script kept in the
    repository runs in the serving container before the engine starts, so each of its commands must
    be a benign operation of the policy's allowlist (echo, mkdir, exports of non-engine variables, a
    pinned pip install of an allowed client package, ...): any other command, and anything the shell
    reader cannot read (a computed command name, a pipe into an interpreter, a command substitution
    it cannot see into), is named with its line and why. A repository program a scanned script runs
    (`python3 patch_x.py`, `python3 -m pkg.mod`, `bash fix.sh`) is followed into the scan (a shell
    script a setup script runs is a setup script too; a Python program is read with `ast` for
    monkeypatching of engine modules). An engine repository's source at a ref that is not a release
    (`git clone`/`fetch`/`checkout` of a branch, commit or pull-request ref, `pip install
    git+URL@REF`) and the fetch of an unmerged pull-request ref of the srt-slurm harness are named
    with their line and ref. A waiver is filled out when each required section (what is patched, why
    the shipped image cannot run it, an upstream issue or PR link, removal plan) has content of its
    own; a waiver that only carries the section names does not count.
N/A when: never (a PR that touches no benchmark file PASSes with nothing to scan). A PR whose
    appended changelog entries select no config re-runs nothing: a patch already on the base branch
    (in the file, or in the file it was moved from) is not judged (named in the row).
    Also N/A when the base's checklist template has no item stating the rule (verifier.documents.in_force:
    the rule was not yet in force for the PR; the row names the document and the item).
Unverifiable when: a script or shared block an affected config runs is missing from the bundle, or
    the affected configs cannot be resolved. A missing recipe leaves its launch unresolved, which
    Check 18 reports (verifier.launch.reported); this row scans what is present and lists it.
Policy: patches (scan_paths, skip_paths, patch_file_suffixes, signatures, engine_locators,
    write_markers, engine_path_markers, setup_keys, harness_packages, waiver_sections,
    waiver_not_in_force, programs, upstream_refs, setup_allowlist),
    launch, multinode (the affected configs and their launches, via verifier.configs / verifier.launch;
    multinode: a multi-node agentic point's DRAM budget)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.layout import short_path
from verifier.core.results import (
    CheckResult,
    CommentEvidence,
    FileEvidence,
    Finding,
    MissingEvidence,
    failed,
    finding,
    passed,
    unverifiable,
)
from verifier.core.yamlio import text_or_none
from verifier.documents import patches as P
from verifier.launch import launches
from verifier.launch.affected import affected_keys
from verifier.launch.recipes.files import recipe_doc
from verifier.launch.reported import reported_by_check18
from verifier.launch.scope import affected_files, scan_texts, scanned_entries, setup_script_path

ID = 10
MAX_LISTED = 6


@dataclass(frozen=True, eq=False, repr=False)
class _Waiver:
    path: str
    side: Literal["head", "base"]
    text: str
    added_in_pr: bool
    problems: tuple[str, ...]
    linked: bool


def _read(ctx: CheckContext, side: str, path: str) -> str | None:
    tree = ctx.bundle.head if side == "head" else ctx.bundle.base
    return text_or_none(tree.read(path), path)


def _signoff_links(ctx: CheckContext, path: str) -> bool:
    body = ctx.bundle.signoff.body
    rel = short_path(path)
    name = rel.rsplit("/", 1)[-1]
    pattern = re.compile(r"waiver/" + re.escape(name) + r"\b")
    return bool(pattern.search(body))


def _waivers(ctx: CheckContext) -> list[_Waiver]:
    """Waivers on the base branch and waivers this PR adds, with their state."""
    policy = ctx.policy("patches")
    directory = ctx.bundle.path("waiver_dir")
    added = {f.path for f in ctx.bundle.pr.files if f.status in ("added", "copied", "renamed")}
    out: list[_Waiver] = []
    sides: tuple[tuple[Literal["head", "base"], Any], ...] = (("base", ctx.bundle.base), ("head", ctx.bundle.head))
    for side, tree in sides:
        for path in tree.paths(directory):
            if not path.endswith(".md") or path.endswith("_zh.md"):
                continue
            if side == "head" and ctx.bundle.base.has(path):
                continue
            text = _read(ctx, side, path) or ""
            out.append(_Waiver(path, side, text, side == "head" and path in added,
                               P.waiver_problems(text, policy), _signoff_links(ctx, path)))
    return out


def _covers(waiver: _Waiver, hit: P.PatchHit, subject: str) -> bool:
    text = waiver.text
    return subject in text or hit.basename in text


def _subject(hit: P.PatchHit) -> str:
    """What a waiver has to name: the setup script for a setup key, else the file that patches."""
    if hit.signature in ("setup-script", "upstream-setup-script"):
        value = hit.text.split(":", 1)[-1].strip()
        return value.rsplit("/", 1)[-1] or hit.basename
    return hit.basename


def _scan(ctx: CheckContext, path: str, policy: Mapping[str, Any]) -> list[P.PatchHit]:
    """Patch signatures in what the head side runs of one file (a master config: its submitted entries)."""
    pieces = scan_texts(ctx, path)
    hits: list[P.PatchHit] = []
    for text, offset in pieces:
        found = P.scan_text(path, text, policy, "head")
        hits += [replace(h, line=h.line + offset) if offset and h.line else h for h in found]
    if pieces and path.endswith((".yaml", ".yml")):
        try:
            entries = scanned_entries(ctx, path)
            if entries is not None:  # a master config's submitted entries, parsed once for every check
                docs = [({e.key: e.data}, e.doc_lines()) for e in entries]
            else:
                doc = recipe_doc(ctx, "head", path)
                docs = [(doc.data, doc.lines)] if doc is not None else []
        except InputError:
            return hits
        seen = {h.line for h in hits}
        for data, lines in docs:
            hits += [h for h in P.setup_script_hits(path, data, lines, policy, "head") if h.line not in seen]
    return hits


def _is_shell(path: str, text: str) -> bool:
    return path.endswith((".sh", ".bash")) or (text.startswith("#!") and "sh" in text.split("\n", 1)[0])


def _followed_hits(ctx: CheckContext, targets: list[str], setup_scripts: set[str], runs: set[str],
                   policy: Mapping[str, Any]) -> list[P.PatchHit]:
    """What reading scripts as commands finds beyond the line signatures: setup-script commands that
    are not benign, engine sources at non-release refs, and the repository programs scripts run,
    followed (each file read once per role, at most P.MAX_FOLLOWED of them) and scanned in turn. A
    Python program is read for monkeypatching when something runs it (a followed program, or a file
    an affected config runs); a changed Python file nothing runs is scanned by its lines only."""
    has = ctx.bundle.head.has
    root = ctx.bundle.path("root")
    queue: list[tuple[str, bool, bool]] = [(p, p in setup_scripts, False) for p in targets]
    done: set[tuple[str, bool]] = set()
    line_scanned = set(targets)
    python_read: set[str] = set()
    followed = 0
    hits: list[P.PatchHit] = []
    while queue:
        path, setup, via_program = queue.pop(0)
        read_python = path.endswith(".py") and (via_program or path in runs) and path not in python_read
        if (path, setup) in done and not read_python:
            continue
        done.add((path, setup))
        text = _read(ctx, "head", path)
        if text is None:
            continue
        if via_program and path not in line_scanned:
            line_scanned.add(path)
            hits += P.scan_text(path, text, policy, "head")  # a followed program: its line signatures
        if path.endswith(".py"):
            if read_python:
                python_read.add(path)
                hits += P.python_patch_hits(path, text, policy)
            continue
        if not _is_shell(path, text):
            continue
        hits += P.upstream_ref_hits(path, text, policy)
        if setup:
            found, programs = P.setup_script_reading(path, text, policy, has, root)
            hits += found
        else:
            programs = P.programs_run(path, text, has, root, policy)
        for program in programs:
            role = setup and program.kind == "shell"
            if (program.path, role) in done and program.path not in python_read and program.kind == "python":
                queue.append((program.path, role, True))  # scanned by its lines already; now read as a program
                continue
            if (program.path, role) in done:
                continue
            if followed >= P.MAX_FOLLOWED:  # not read is not shown clean: the command is named
                hits.append(P.PatchHit(path, program.line, f"{program.text} (runs {short_path(program.path)}, "
                                       f"beyond the {P.MAX_FOLLOWED} programs followed)"[:300],
                                       "program-not-followed", "head", program.text))
                continue
            followed += 1
            queue.append((program.path, role, True))
    return hits


def _merge(line_hits: list[P.PatchHit], more: list[P.PatchHit]) -> list[P.PatchHit]:
    """One hit per file line: a line signature first, then what reading commands found; but an
    engine source at a non-release ref replaces the line's `pip install git+...` signature, as it
    names the repository and the ref."""
    at: dict[tuple[str, int], int] = {}
    out: list[P.PatchHit] = []
    for hit in [*line_hits, *more]:
        key = (hit.path, hit.line or 0)
        if hit.line and key in at:
            if hit.signature == "upstream-ref" and out[at[key]].signature == "pip-install-engine":
                out[at[key]] = hit
            continue
        if hit.line:
            at[key] = len(out)
        out.append(hit)
    return sorted(out, key=lambda h: (h.path, h.line or 0))


def _upstream_hits(ctx: CheckContext, scanned: set[str]) -> list[P.PatchHit]:
    """Setup scripts the launcher fetches from another repository (github.yaml upstream_files)."""
    hits = []
    for source in ctx.bundle.github.upstream_files:
        used_by = source.used_by
        users = [used_by] if isinstance(used_by, str) else list(used_by or ())
        relevant = [u for u in users if any(short_path(s).endswith(short_path(u)) or
                                            short_path(u).endswith(short_path(s)) for s in scanned)]
        if users and not relevant:
            continue
        for item in source.files:
            kind = item.facts.get("kind") if isinstance(item.facts, dict) else None
            if item.absent or kind == "recipe":  # a fetched recipe is what runs, not a setup script
                continue
            where = relevant[0] if relevant else f"{source.repo}/{item.path}"
            hits.append(P.PatchHit(where, None, f"setup_script: {item.path} ({source.repo})",
                                   "upstream-setup-script"))
    return hits


# signature -> the flag a row's template reads to say what kind of change it is (flags, not strings:
# string params reach templates as code spans)
_KINDS = {"setup-script-unreadable": "unreadable", "setup-command-not-allowed": "setup",
          "setup-runs-program": "runs_program", "upstream-ref": "unreleased", "python-monkeypatch": "monkeypatch",
          "program-not-followed": "not_followed"}


def _on_base(ctx: CheckContext, path: str, hit: P.PatchHit,
             cache: dict[str, tuple[str, frozenset[str]] | None]) -> bool:
    """Whether the base branch already holds the line a hit names (at `path`): one set of the base
    file's stripped lines, built once per file, so judging every hit stays linear (a text that spans
    lines, an unreadable script, is compared whole)."""
    if path not in cache:
        text = _read(ctx, "base", path)
        cache[path] = None if text is None else \
            (text, frozenset(line.strip()[:300] for line in text.split("\n")))
    got = cache[path]
    if got is None:
        return False
    text, lines = got
    written = hit.written
    return written == text if "\n" in written else written.strip()[:300] in lines


def _hit_params(hit: P.PatchHit) -> dict[str, Any]:
    return {"file": short_path(hit.path) + (f":{hit.line}" if hit.line else ""),
            "signature": hit.signature, "text": hit.text,
            **{flag: hit.signature == signature for signature, flag in _KINDS.items()}}


def check(ctx: CheckContext) -> CheckResult:
    """FAIL on any engine patch not covered by a filled-out, linked waiver filed in its PR."""
    policy = ctx.policy("patches")
    try:
        scope = affected_files(ctx)
    except (InputError, LookupError, ValueError) as exc:
        return unverifiable("patch-scope-unresolved", missing="affected configs", error=str(exc)[:200])
    missing = [p for p in scope.required if not ctx.bundle.head.has(p)]
    # a recipe absent from the bundle leaves its launch unresolved, which Check 18 reports; the
    # files that are present are still scanned
    recipes = set(scope.recipes)
    missing_recipes = [p for p in missing if p in recipes]
    # one alternation of the missing recipes' names: a message names one when it holds one of them
    named = re.compile("|".join(re.escape(short_path(p).rsplit("/", 1)[-1]) for p in missing_recipes))
    unresolved = [e for e in launches(ctx, "head").fatal_errors
                  if e.file in missing_recipes or named.search(e.message)] if missing_recipes else []
    scoped = reported_by_check18(unresolved)
    missing = [p for p in missing if not (p in scope.recipes and scoped)]
    # the policy's scan paths choose among the changed files; a file an affected config runs (its
    # recipes, shared blocks, scripts and setup scripts) is scanned wherever it lives
    targets = sorted({p for p in scope.scanned(policy) if ctx.bundle.head.has(p)})
    runs = scope.runs
    hits: list[P.PatchHit] = []
    for path in targets:
        hits += _scan(ctx, path, policy)
    setup_scripts = {p for p in scope.setup_scripts if p in targets}
    hits = _merge(hits, _followed_hits(ctx, targets, setup_scripts, runs, policy))
    # a fetched setup script is used by the fetched recipe that names it: the launches' files
    launch_files = {f for launch in launches(ctx, "head").launches for f in launch.files}
    hits += _upstream_hits(ctx, set(targets) | launch_files)
    # A setup script kept in the repository is scanned like every script the launch runs: its own
    # lines are the patch signatures (a dependency install is not an engine patch). Only a setup
    # script whose content the bundle lacks (fetched from srt-slurm at run time) counts as a patch
    # by its recipe key (BUNDLE.md upstream_files).
    in_tree = {h: setup_script_path(h.text.split(":", 1)[-1], ctx.bundle.layout)
               for h in hits if h.signature == "setup-script"}
    in_tree = {h: path for h, path in in_tree.items() if path in targets}
    hits = [h for h in hits if h not in in_tree]
    setup_notes = [finding("setup-script-scanned", FileEvidence(path=h.path, line=h.line, text=h.text[:200]),
                           script=short_path(path), **_hit_params(h))
                   for h, path in list(in_tree.items())[:MAX_LISTED]]
    if missing and not hits:
        first = missing[0]
        return unverifiable("patch-file-missing", MissingEvidence(what=short_path(first)),
                            missing=short_path(first), files=[short_path(p) for p in missing[:MAX_LISTED]])

    # A PR whose appended changelog entries re-run no config benchmarks nothing: a patch already on
    # the base (at the file's path, or the path it moves from) is not part of any of its submissions.
    not_rerun: list[P.PatchHit] = []
    base_lines: dict[str, tuple[str, frozenset[str]] | None] = {}
    if not affected_keys(ctx).changelog_keys:
        moved = {f.path: f.previous_path for f in ctx.bundle.pr.files if f.previous_path}
        for hit in list(hits):
            if hit.signature != "upstream-setup-script" and _on_base(ctx, moved.get(hit.path) or hit.path, hit, base_lines):
                not_rerun.append(hit)
        hits = [h for h in hits if h not in not_rerun]
    notes = [finding("preexisting-patches-not-rerun", count=len(not_rerun),
                     files=sorted({short_path(h.path) for h in not_rerun})[:MAX_LISTED])] if not_rerun else []
    waivers = _waivers(ctx)
    pr_waiver = next((w for w in waivers if w.path.endswith(f"/{ctx.bundle.pr.number}.md")
                      or w.path == f"{ctx.bundle.pr.number}.md"), None)
    uncovered: list[Finding] = []
    covered: list[Finding] = []
    for hit in hits:
        preexisting = hit.signature != "upstream-setup-script" and _on_base(ctx, hit.path, hit, base_lines)
        subject = _subject(hit)
        candidates = [w for w in waivers if _covers(w, hit, subject)]
        if not preexisting:
            candidates = [w for w in candidates if w is pr_waiver]
        good = [w for w in candidates if (w.added_in_pr or preexisting) and not w.problems and w.linked]
        ev = FileEvidence(path=hit.path, line=hit.line, text=hit.text[:200]) \
            if hit.signature != "upstream-setup-script" or hit.path.count("/") > 1 else MissingEvidence(what=hit.text)
        if good:
            w = good[0]
            covered.append(finding("patch-waived", ev, FileEvidence(path=w.path, side=w.side, line=1),
                                   CommentEvidence(id=ctx.bundle.signoff.id, url=ctx.bundle.signoff.url,
                                                   author=ctx.bundle.signoff.author),
                                   waiver=short_path(w.path), **_hit_params(hit)))
            continue
        reason = "no-waiver"
        detail: list[str] = []
        waiver_path = ""
        if candidates:
            w = candidates[0]
            waiver_path = short_path(w.path)
            if w.problems:
                reason, detail = "waiver-incomplete", list(w.problems)
            elif not w.linked:
                reason = "waiver-not-linked"
            else:
                reason = "waiver-not-filed-in-pr"
        elif pr_waiver is not None:
            reason, waiver_path = "waiver-does-not-cover", short_path(pr_waiver.path)
        extra = [FileEvidence(path=candidates[0].path, side=candidates[0].side, line=1)] if candidates else []
        uncovered.append(finding(f"engine-patch-{reason}", ev, *extra, waiver=waiver_path,
                                 problems=detail, preexisting=preexisting, **_hit_params(hit)))
    if uncovered:
        shown = uncovered[:MAX_LISTED]
        more = len(uncovered) - len(shown)
        tail = [finding("more-patches", count=more)] if more else []
        return failed(*shown, *tail, *covered[:2], *notes, *setup_notes, *scoped)
    if missing:
        first = missing[0]
        return unverifiable("patch-file-missing", MissingEvidence(what=short_path(first)),
                            missing=short_path(first), files=[short_path(p) for p in missing[:MAX_LISTED]])
    if covered:
        return passed(*covered[:MAX_LISTED], *notes, *setup_notes, *scoped)
    return passed(finding("no-engine-patches", files=len(targets), launch=scope.launch_line or "",
                          recipes=[short_path(p) for p in scope.recipes[:MAX_LISTED]]), *setup_notes, *notes,
                  *scoped)
