"""`--format sarif`: FAIL and WARN rows as SARIF 2.1.0 results for GitHub code scanning.

What GitHub's ingestion reads (docs: "SARIF support for code scanning"), and what we put there:

* **Rules**: one `reportingDescriptor` per check, all 19 in `checks.ALL_CHECKS` order whatever ran
  (ruleId `check-<id>-<slug>`, e.g. `check-13-draft-precision`; `ruleIndex` is the position).
  `shortDescription` is the registry name (policies/checks.yaml), `fullDescription` the check's
  `Rule:` paragraph (at most 1,024 characters, GitHub's limit), `help` the whole docstring rule
  (`Rule:`, `Why:`, `Evidence:`, ... as `verify-pr explain N` prints it) in text and Markdown. A rule
  carries nothing of one PR, so it is the same in every upload; no `helpUri` (the text is the help).
  The tool's `informationUri` is the review checklist at the PR's base commit, when the base holds it.
* **Results**: one per location, so every repository file a FAIL/WARN row's evidence names is an
  alert of its own (GitHub uses only a result's first location). A location is the path the
  evidence links carry (the `inferencex-e2e/` prefix included), relative to the repository root,
  with `region.startLine` only when the evidence has a line that is right on the assessed head.
  Files the PR's head does not hold (bundle-only copies of pages, runs and checkpoints, removed
  files, files fetched from other repositories) are not locations.
* **Rows that name no repository file** still get one result (code scanning shows nothing without
  a location), anchored, in this order, on: the master-config entry a finding names (with that
  entry's line), a changed file the row names, the master config the PR changes, the PR's first
  changed file, the head's master config. The anchor is said in the location's message and the
  result's `properties.anchored`; never a made-up line. A row with no candidate at all (a head that
  holds none of them) has no result and is named in the run's `properties.rowsWithoutLocation`.
* **Fingerprints**: GitHub only uses `partialFingerprints.primaryLocationLineHash`, and the upload
  action computes it only for a file checked out in the workflow (the verify job does not check the
  PR out); a value we set is kept. Ours is `sha256(check id, message id, path, line)[:16]:1`: the
  same finding at the same place is the same alert from run to run and commit to commit.
* **Category**: `automationDetails.id` is `codeowner-signoff-verify/` for every PR (category
  `codeowner-signoff-verify`, as the example workflow's upload `category`), so each PR ref's alerts
  are replaced by its next verdict; a partial verdict (`--only`/`--skip`) uploads as
  `codeowner-signoff-verify-partial/`, so it never closes the alerts of checks it did not run.
* **Limits**: at most `MAX_RESULTS` results (GitHub displays 5,000 of the 25,000 it accepts; the
  rest are counted in the run's `properties.resultsLeftOut`), one location each.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

from verifier.core.layout import repo_relative, short_path
from verifier.core.model import Bundle
from verifier.core.results import FileEvidence, Finding, Status
from verifier.core.runner import Report, Row, registry_row
from verifier.render.evidence import evidence_url
from verifier.render.markdown import repository_paths
from verifier.render.text import render_summary

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "infx-verifier"
CATEGORY = "codeowner-signoff-verify/"
PARTIAL_CATEGORY = "codeowner-signoff-verify-partial/"
LEVEL = {Status.FAIL: "error", Status.WARN: "warning"}
# Paths that name bundle-only copies (pages, run logs, Hugging Face checkpoint files), not repository files.
NOT_IN_REPOSITORY = ("checkpoints/", "pages/", "runs/")
MAX_LINKS = 20
MAX_RESULTS = 5000
MAX_DESCRIPTION = 1024  # GitHub's limit for shortDescription.text and fullDescription.text
SRCROOT = "%SRCROOT%"
MASTER_CONFIGS = ("nvidia_master", "amd_master")
_CODE = re.compile(r"(`[^`]*`)")
_HEADING = re.compile(r"^(?P<name>[A-Z][A-Za-z/ ]{0,30}):(?:\s+|$)(?P<rest>.*)$")


# -- rules --------------------------------------------------------------------------------------------------


def _slugs() -> dict[int, str]:
    return {int(module.ID): _slug(module) for module in _modules()}


def _modules() -> tuple[ModuleType, ...]:
    from checks import ALL_CHECKS

    return ALL_CHECKS


def _slug(module: ModuleType) -> str:
    name = module.__name__.rsplit(".", 1)[-1]
    prefix, _, slug = name.partition("_")
    return slug.replace("_", "-") if prefix.startswith("c") and slug else name


def rule_id(check_id: int, slugs: Mapping[int, str]) -> str:
    """The SARIF ruleId of a check: `check-<id>-<slug>`."""
    slug = slugs.get(check_id)
    return f"check-{check_id}-{slug}" if slug else f"check-{check_id}"


def module_docstring(module: ModuleType) -> str:
    """A check module's docstring; read from its source when Python runs without docstrings (`-OO`)."""
    if module.__doc__:
        return module.__doc__
    source = getattr(module, "__file__", None)
    if not source:
        return ""
    try:
        return ast.get_docstring(ast.parse(Path(source).read_text(encoding="utf-8")), clean=False) or ""
    except (OSError, SyntaxError, ValueError):
        return ""


def rule_sections(doc: str) -> dict[str, str]:
    """The headed sections of a check docstring (`Rule:`, `Why:`, `Evidence:`, ...), each one paragraph.

    A heading starts a line at the left margin; the indented lines below it continue it. The
    title line (`Check 13: Draft precision.`) is under the key `""`.
    """
    sections: dict[str, list[str]] = {}
    current = ""
    for line in doc.strip("\n").splitlines():
        heading = _HEADING.match(line) if line[:1].strip() else None
        if heading and not line.startswith("Check "):
            current = heading.group("name")
            sections[current] = [heading.group("rest")]
        elif line.strip():
            sections.setdefault(current, []).append(line.strip())
    return {name: " ".join(" ".join(parts).split()) for name, parts in sections.items()}


def clip_text(text: str, limit: int) -> str:
    """At most `limit` characters: cut after the last whole sentence (else word) that fits, marked `…`."""
    if len(text) <= limit:
        return text
    head = text[: limit - 2]
    sentence = max(head.rfind(". "), head.rfind("; "))
    if sentence > limit // 2:
        return head[: sentence + 1] + " …"
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip() + " …"


def docstring_markdown(text: str) -> str:
    """Docstring text as Markdown: `<` outside code spans escaped (`checkpoints/<repo>/...` is no HTML tag)."""
    return "".join(part if part.startswith("`") else part.replace("<", "&lt;") for part in _CODE.split(text))


def _help(check_id: int, name: str, sections: Mapping[str, str]) -> dict[str, str]:
    named = [(heading, text) for heading, text in sections.items() if heading and text]
    text = "\n\n".join(f"{heading}: {body}" for heading, body in named)
    markdown = "\n\n".join(f"**{heading}:** {docstring_markdown(body)}" for heading, body in named)
    tail = f"`verify-pr explain {check_id}` prints this rule."
    return {
        "text": f"Check {check_id}: {name}\n\n{text}\n\n{tail.replace('`', '')}",
        "markdown": f"### Check {check_id}: {name}\n\n{markdown}\n\n{tail}",
    }


def registry_names(report: Report) -> dict[int, tuple[str, bool]]:
    """(name, advisory) of every check: the registry rows of the report, else policies/checks.yaml.

    A row whose check renamed itself for the PR (`CheckResult.name`) does not rename the rule: a
    rule is the same in every upload.
    """
    from verifier.core.policy import load_policies

    policies = load_policies()
    found: dict[int, tuple[str, bool]] = {}
    for check_id in policies["checks"]["checks"]:
        name, advisory = registry_row(policies, int(check_id))
        found[int(check_id)] = (" ".join(name.split()), advisory)
    for row in report.rows:
        if row.result.name is None:
            found[row.id] = (" ".join(row.name.split()), row.advisory)
    return found


def sarif_rules(report: Report) -> list[dict[str, Any]]:
    """One reportingDescriptor per registered check, in `checks.ALL_CHECKS` order."""
    names = registry_names(report)
    rules = []
    for module in _modules():
        check_id = int(module.ID)
        name, advisory = names.get(check_id, (f"Check {check_id}", False))
        sections = rule_sections(module_docstring(module))
        rule_text = sections.get("Rule") or sections.get("") or f"Check {check_id}: {name}."
        rules.append({
            "id": f"check-{check_id}-{_slug(module)}",
            "name": _slug(module),
            "shortDescription": {"text": clip_text(f"Check {check_id}: {name}", MAX_DESCRIPTION)},
            "fullDescription": {"text": clip_text(rule_text, MAX_DESCRIPTION)},
            "help": _help(check_id, name, sections),
            "defaultConfiguration": {"level": "warning" if advisory else "error"},
            "properties": {
                "tags": ["infx-verifier", "advisory" if advisory else "blocking"],
                "problem.severity": "warning" if advisory else "error",
            },
        })
    return rules


# -- locations ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """Where one result is shown: a repository path, its line when known, and why it is there."""

    path: str
    line: int | None
    message_id: str
    anchor: str | None = None  # None for evidence; else what the row names that the site stands for


def repository_locations(row: Row, bundle: Bundle) -> Iterator[tuple[str, int]]:
    """(repository path, line) of each file evidence of a row that points into the assessed head.

    Base-side evidence counts only when the head holds the same bytes, so the line is right on
    the commit the annotation is shown on. (The Action's `::error` annotations.)
    """
    seen: set[tuple[str, int]] = set()
    for item in row.result.evidence:
        if not isinstance(item, FileEvidence) or not item.line or item.line < 1:
            continue
        if item.path.startswith(NOT_IN_REPOSITORY):
            continue
        if item.side == "base" and bundle.head.read(item.path) != bundle.base.read(item.path):
            continue
        key = (item.path, int(item.line))
        if key not in seen:
            seen.add(key)
            yield key


def _head_path(path: str, bundle: Bundle) -> str | None:
    """The head-tree path a file evidence names (a layout-neutral path gets its prefix), or None."""
    if path.startswith(NOT_IN_REPOSITORY) or path.startswith("/"):
        return None
    if bundle.head.has(path):
        return path
    full = repo_relative(path, bundle.layout)
    return full if full != path and bundle.head.has(full) and not bundle.base.has(path) else None


def evidence_sites(row: Row, bundle: Bundle) -> list[Site]:
    """A site for each repository file of the head that the row's file evidence names, in finding order.

    The line is kept when it is right on the head (head-side evidence, or base-side evidence of a
    file the head holds unchanged); a file named without such a line is a file-level site, unless
    the same file also has a line.
    """
    lines: dict[tuple[str, int], Site] = {}
    files: dict[str, Site] = {}
    for item in row.result.findings:
        for evidence in item.evidence:
            if not isinstance(evidence, FileEvidence):
                continue
            path = _head_path(evidence.path, bundle)
            if path is None:
                continue
            line = evidence.line if evidence.line and evidence.line >= 1 else None
            if line and evidence.side == "base" and bundle.head.read(path) != bundle.base.read(path):
                line = None
            if line:
                lines.setdefault((path, line), Site(path, line, item.message_id))
            else:
                files.setdefault(path, Site(path, None, item.message_id))
    with_lines = {path for path, _ in lines}
    return [*lines.values(), *(site for path, site in files.items() if path not in with_lines)]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings(item)


class Anchors:
    """What a row that names no repository line is shown on (one per verdict: master configs read once)."""

    def __init__(self, bundle: Bundle) -> None:
        self.bundle = bundle
        self.changed = [f.path for f in bundle.pr.files if f.status != "removed" and bundle.head.has(f.path)]
        self.masters = list(dict.fromkeys(
            path for name in MASTER_CONFIGS if bundle.head.has(path := bundle.side_path(name, "head"))))
        self._keys: dict[str, dict[str, int]] = {}

    def config_keys(self, path: str) -> dict[str, int]:
        """Top-level keys of a master config of the head -> their 1-based line."""
        if path not in self._keys:
            keys: dict[str, int] = {}
            data = self.bundle.head.read(path) or b""
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if line[:1].strip() and not line.startswith(("#", "-")) and ":" in line:
                    keys.setdefault(line.split(":", 1)[0].strip().strip("'\""), number)
            self._keys[path] = keys
        return self._keys[path]

    def site(self, row: Row, text: str) -> Site | None:
        """The one site of a row without evidence sites, or None when the head holds no candidate."""
        findings: list[Finding] = list(row.result.findings)
        first = findings[0].message_id if findings else "no-finding"
        for item in findings:
            for value in _strings(item.params):
                for path in self.masters:
                    line = self.config_keys(path).get(value)
                    if line:
                        return Site(path, line, item.message_id, f"the master-config entry `{value}`")
        for path in self.changed:
            for item in findings:
                if any(value in (path, short_path(path)) for value in _strings(item.params)):
                    return Site(path, None, item.message_id, "the changed file the row names")
            if path in text:
                return Site(path, None, first, "the changed file the row names")
        for path in self.masters:
            if path in self.changed:
                return Site(path, None, first, "the master config the PR changes")
        if self.changed:
            return Site(self.changed[0], None, first, "the PR's first changed file (the row names no file)")
        if self.masters:
            return Site(self.masters[0], None, first, "the master config (the row names no file)")
        return None


def fingerprint(check_id: int, message_id: str, path: str, line: int | None) -> str:
    """The result's `primaryLocationLineHash`: a stable hash of check id, message id, path and line."""
    key = "\0".join((f"check-{check_id}", message_id, path, str(line or "")))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16] + ":1"


def _location(site: Site) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": quote(site.path), "uriBaseId": SRCROOT}}
    if site.line:
        physical["region"] = {"startLine": site.line}
    location: dict[str, Any] = {"physicalLocation": physical}
    if site.anchor:
        location["message"] = {"text": f"This row's evidence names no line of the repository; shown on {site.anchor}."}
    return location


# -- results ------------------------------------------------------------------------------------------------


def _message(row: Row, bundle: Bundle) -> str:
    summary = repository_paths(render_summary(row.id, row.result, "en"), bundle)
    return f"Check {row.id} ({' '.join(row.name.split())}): {row.status.value} — {summary}"


def _results(report: Report, rules: list[dict[str, Any]], unlocated: list[int]) -> Iterator[dict[str, Any]]:
    """One result per site of each FAIL/WARN row; the ids of rows with no site go to `unlocated`.

    Code scanning displays no result without a location, so a row with nowhere to be shown (no
    evidence site, no anchor in the head) has no result; the comment and the job summary carry it,
    and the run's `properties.rowsWithoutLocation` names it.
    """
    bundle = report.bundle
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    slugs = _slugs()
    anchors = Anchors(bundle)
    for row in report.rows:
        if row.status not in LEVEL:
            continue
        text = _message(row, bundle)
        sites = evidence_sites(row, bundle)
        if not sites:
            anchor = anchors.site(row, text)
            sites = [anchor] if anchor else []
        if not sites:
            unlocated.append(row.id)
            continue
        urls = list(dict.fromkeys(u for u in (evidence_url(e, bundle) for e in row.result.evidence) if u))
        if urls:
            # links (runs, comments, pages) have no file location; code scanning shows them in the message
            text += " Evidence: " + " ".join(urls[:MAX_LINKS]) + (" …" if len(urls) > MAX_LINKS else "")
        rid = rule_id(row.id, slugs)
        for site in sites:
            yield {
                "ruleId": rid,
                "ruleIndex": index[rid],
                "level": LEVEL[row.status],
                "message": {"text": text},
                "locations": [_location(site)],
                "partialFingerprints": {
                    "primaryLocationLineHash": fingerprint(row.id, site.message_id, site.path, site.line)},
                "properties": {"check": row.id, "status": row.status.value, "messageId": site.message_id,
                               "anchored": site.anchor is not None},
            }


def _information_uri(bundle: Bundle) -> str | None:
    """The review checklist the rules come from, at the PR's base commit (a page that exists), if held."""
    path = bundle.side_path("checklist", "base")
    if not bundle.base.has(path) or not re.fullmatch(r"[\w.-]+/[\w.-]+", bundle.pr.repo):
        return None
    return f"https://github.com/{bundle.pr.repo}/blob/{bundle.pr.base_sha}/{quote(path)}"


def sarif_document(report: Report) -> dict[str, Any]:
    """The SARIF log as a dict."""
    from verifier import __version__

    bundle = report.bundle
    rules = sarif_rules(report)
    unlocated: list[int] = []
    results = list(_results(report, rules, unlocated))
    left_out = max(0, len(results) - MAX_RESULTS)
    del results[MAX_RESULTS:]
    driver: dict[str, Any] = {"name": TOOL_NAME, "version": __version__}
    uri = _information_uri(bundle)
    if uri:
        driver["informationUri"] = uri
    driver["rules"] = rules
    properties: dict[str, Any] = {"verdict": report.verdict.value, "signoff": bundle.signoff.key,
                                  "pullRequest": bundle.pr.number}
    if left_out:
        properties["resultsLeftOut"] = left_out
    if unlocated:
        properties["rowsWithoutLocation"] = unlocated
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": driver},
                "automationDetails": {"id": PARTIAL_CATEGORY if report.partial else CATEGORY},
                "versionControlProvenance": [
                    {"repositoryUri": f"https://github.com/{bundle.pr.repo}", "revisionId": bundle.pr.head_sha}
                ],
                "properties": properties,
                "results": results,
            }
        ],
    }


def render_sarif(report: Report) -> str:
    """The SARIF log as JSON text."""
    return json.dumps(sarif_document(report), ensure_ascii=False, indent=2) + "\n"
