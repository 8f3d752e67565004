"""Policy overrides: InferenceX changes some of our policy data from its own repository, read from the base.

A threshold, a SKU list, an image organisation, a prohibited setting or a check's severity is data
in `policies/<topic>.yaml`; without this module only a new verifier release could change it.
InferenceX may instead commit `<topic>.yaml` under `.github/infx-verifier/` (verifier.core.layout
`policy_overrides_dir`, the same path in both layouts), and every verdict is then given under our
policies with InferenceX's overrides laid over them.

* **Base tree only.** An override is a rule document (verifier.documents.rules): it is read from the
  PR's base tree (`tree/base`), never from the head, so a PR cannot relax the rules it is judged by.
  A PR that adds, edits or removes an override file is judged by the base's files, and the verdict
  names the change (`rule-changed-by-pr`, the change never obeyed), as the checklist template's is.
* **Allowlist.** policies/overrides.yaml `topics` lists the topics an override may change and, for
  each, the keys it may set (paths of keys joined by "/", `*` for any one key: `checks/*/severity`
  lets a check's severity change but not its name or rule ids). Any other topic or key is refused.
* **Merge rule** (verifier.core.policy.merge_policy): a mapping merges key by key, a list or a scalar
  replaces ours whole, nothing is deleted. The merged document must validate against our schema for
  the topic (policies/schema/<topic>.schema.json), the one `load_policies` holds our file to.
* **Fail closed.** An override that cannot be applied (not UTF-8, not YAML, not a mapping, over
  `max_file_bytes`, a topic or key not on the allowlist, a merged document its schema refuses, a
  `.yml` name) is not applied (that topic stays ours) and the verdict cannot be APPROVED: the row
  of policies/overrides.yaml `owner_check` (Check 5, the check that holds a sign-off to the rules
  the base tree states) FAILs with `input-unreadable` naming the file, the line and the reason.
  `PolicyOverrides.settle(report)` does that to the runner's report, so it holds whatever the
  checks found and whichever checks were selected.
* **Named in the verdict.** `policies_for` returns what it applied (each file, the base commit, the
  file's git blob id, the keys it set), what it refused and what the PR changes;
  `PolicyOverrides.as_dict()` is the verdict's `policy_overrides` field.

Recorders fetch the override files of both trees (`override_files`); a bundle carries them in its
trees like any other file. A bundle recorded before overrides existed holds none, and is judged by
our policies alone.

API: `policies_for(bundle, policies) -> (policies, PolicyOverrides)`, `PolicyOverrides.settle(report)`,
`PolicyOverrides.as_dict()`, `override_files(listing, layout)`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

from verifier.core.errors import InputError, PolicyError
from verifier.core.layout import Layout, policy_path
from verifier.core.model import Bundle
from verifier.core.policy import field_name, freeze, json_keys, merge_policy, schema_problem, thaw
from verifier.core.results import CheckResult, FileEvidence, Finding, Status, finding
from verifier.core.runner import Report, Row, verdict_of
from verifier.core.yamlio import decode_text, load_yaml_lines
from verifier.documents.rules import RuleDocument

Policies = Mapping[str, Mapping[str, Any]]

TOPIC = "overrides"  # policies/overrides.yaml: the allowlist
DIRECTORY = "policy_overrides_dir"  # verifier.core.layout logical name
SUFFIX = ".yaml"
OTHER_SUFFIXES = (".yml",)  # refused, so that a misnamed override never goes silently unread
DEFAULT_OWNER = 5
DEFAULT_MAX_BYTES = 65536


@dataclass(frozen=True, eq=False, repr=False)
class AppliedOverride:
    """One base-tree override file laid over our policy topic."""

    topic: str
    path: str
    blob: str  # the file's git blob id (`git hash-object`), so the exact bytes can be found again
    keys: tuple[str, ...]  # the keys it sets, "a/b/c"


@dataclass(frozen=True, eq=False, repr=False)
class RefusedOverride:
    """One base-tree override file that could not be applied, and why."""

    topic: str
    path: str
    reason: str
    line: int | None = None


@dataclass(frozen=True)
class ChangedOverride:
    """An override file the PR changes (never obeyed: the base's version, or none, applies)."""

    path: str
    change: Literal["modified", "added", "removed"]


@dataclass(frozen=True, eq=False, repr=False)
class PolicyOverrides:
    """What `policies_for` did with one bundle's override files."""

    base_sha: str
    directory: str
    owner_check: int = DEFAULT_OWNER
    owner_name: str = ""
    applied: tuple[AppliedOverride, ...] = ()
    refused: tuple[RefusedOverride, ...] = ()
    changed_by_pr: tuple[ChangedOverride, ...] = ()

    @property
    def present(self) -> bool:
        """True when the base has an override file or the PR changes one (the verdict names them)."""
        return bool(self.applied or self.refused or self.changed_by_pr)

    @property
    def fails_closed(self) -> bool:
        """True when an override was refused: the verdict cannot be APPROVED."""
        return bool(self.refused)

    def refusal_findings(self) -> tuple[Finding, ...]:
        """One `input-unreadable` finding per refused override, naming the file, line and reason."""
        short = self.base_sha[:7]
        return tuple(
            finding("input-unreadable", FileEvidence(path=r.path, line=r.line, side="base"), missing=r.path,
                    reason=f"policy override at base {short} refused: {r.reason}")
            for r in self.refused
        )

    def change_findings(self) -> tuple[Finding, ...]:
        """One `rule-changed-by-pr` note per override file the PR adds, edits or removes."""
        return tuple(finding("rule-changed-by-pr", FileEvidence(path=c.path, side="head"), file=c.path,
                             change=c.change, detail=None)
                     for c in self.changed_by_pr)

    def settle(self, report: Report) -> Report:
        """The report with the overrides' findings on the owner check's row.

        A refused override makes that row FAIL (blocking whatever severity the registry gives it,
        and even when the check was left out of the run), its findings first; the PR's changes to
        override files are appended to the row as notes. The verdict is recomputed.
        """
        refusals, notes = self.refusal_findings(), self.change_findings()
        if self.present:
            report = replace(report, policy_overrides=self.as_dict())
        if not refusals and not notes:
            return report
        rows: list[Row] = []
        found = False
        for row in report.rows:
            if row.id == self.owner_check:
                found = True
                row = self._settled(row, refusals, notes)
            rows.append(row)
        if not found and refusals:
            result = CheckResult(status=Status.FAIL, findings=refusals + notes)
            rows.append(Row(self.owner_check, self.owner_name or f"Check {self.owner_check}", False, result, 0.0))
            rows.sort(key=lambda r: r.id)
        return replace(report, rows=tuple(rows), verdict=verdict_of(rows))

    @staticmethod
    def _settled(row: Row, refusals: tuple[Finding, ...], notes: tuple[Finding, ...]) -> Row:
        findings = (*refusals, *row.result.findings, *notes)
        if not refusals:
            return replace(row, result=row.result.model_copy(update={"findings": findings}))
        result = row.result.model_copy(update={"status": Status.FAIL, "findings": findings})
        return replace(row, result=result, advisory=False, not_run=None)

    def as_dict(self) -> dict[str, Any]:
        """The verdict's `policy_overrides` field (JSON)."""
        return {
            "base_commit": self.base_sha,
            "directory": self.directory,
            "applied": [{"topic": a.topic, "file": a.path, "blob": a.blob, "keys": list(a.keys)} for a in self.applied],
            "refused": [{"topic": r.topic, "file": r.path, "line": r.line, "reason": r.reason} for r in self.refused],
            "changed_by_pr": [{"file": c.path, "change": c.change} for c in self.changed_by_pr],
        }


def _candidates(paths: Iterable[str], directory: str) -> set[str]:
    """The files directly in the overrides directory that are (or are named like) overrides."""
    out = set()
    for path in paths:
        rest = path[len(directory):] if path.startswith(directory) else None
        if rest and "/" not in rest and rest.endswith((SUFFIX, *OTHER_SUFFIXES)):
            out.add(path)
    return out


def override_files(listing: Mapping[str, Iterable[str]], layout: Layout) -> dict[str, set[str]]:
    """For a recorder: the override files each side's tree listing holds (side -> paths), to fetch
    on both sides so that a PR's change to one is seen."""
    directory = policy_path(DIRECTORY, layout)
    return {side: _candidates(paths, directory) for side, paths in listing.items()}


def git_blob_id(data: bytes) -> str:
    """The id git gives a file's bytes (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    return len(pattern) == len(path) and all(p in ("*", k) for p, k in zip(pattern, path, strict=True))


class _Refused(Exception):
    """Why an override cannot be applied, and the path of keys of the field at fault (if any)."""

    def __init__(self, reason: str, path: tuple[str, ...] = (), line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.line = line


def _allowed_keys(node: Mapping[str, Any], patterns: tuple[tuple[str, ...], ...], allowed: str,
                  prefix: tuple[str, ...] = ()) -> list[str]:
    """The keys an override sets ("a/b/c"), each on the allowlist; raises _Refused at the first that is not."""
    keys: list[str] = []
    for key, value in node.items():
        path = (*prefix, key)
        if any(_matches(p, path) for p in patterns):
            keys.append("/".join(path))
        elif any(len(p) > len(path) and _matches(p[: len(path)], path) for p in patterns):
            if not isinstance(value, dict):
                raise _Refused(f"key {field_name(path)} must be a mapping of the keys to change below it "
                               f"({allowed})", path)
            keys += _allowed_keys(value, patterns, allowed, path)
        else:
            raise _Refused(f"key {field_name(path)} may not be overridden ({allowed})", path)
    return keys


def _line(lines: Mapping[tuple[str, ...], int], path: tuple[str, ...]) -> int | None:
    """The line of the deepest key of `path` the override file names."""
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


@dataclass(frozen=True, eq=False, repr=False)
class _Rules:
    topics: Mapping[str, tuple[tuple[str, ...], ...]]
    max_bytes: int
    owner: int

    @classmethod
    def of(cls, policies: Policies) -> _Rules:
        conf = policies.get(TOPIC)
        if conf is None:  # a policy set without the allowlist allows nothing
            return cls({}, DEFAULT_MAX_BYTES, DEFAULT_OWNER)
        topics = {str(t): tuple(tuple(str(p).split("/")) for p in keys) for t, keys in conf["topics"].items()}
        return cls(topics, int(conf["max_file_bytes"]), int(conf["owner_check"]))


def _apply(topic: str, path: str, raw: bytes, ours: Mapping[str, Any] | None, rules: _Rules) -> tuple[Any, list[str]]:
    """The merged plain document and the keys it sets; raises _Refused (reason, field, line)."""
    if path.endswith(OTHER_SUFFIXES):
        raise _Refused(f"an override is named <topic>{SUFFIX}; rename it to {topic}{SUFFIX}")
    if topic not in rules.topics or ours is None:
        listed = ", ".join(sorted(rules.topics)) or "none"
        raise _Refused(f"topic '{topic}' may not be overridden (policies/{TOPIC}.yaml topics: {listed})")
    if len(raw) > rules.max_bytes:
        raise _Refused(f"{len(raw)} bytes, over the {rules.max_bytes}-byte limit for an override")
    try:
        data, raw_lines = load_yaml_lines(decode_text(raw, path), path)
    except InputError as exc:
        raise _Refused(str(exc.reason)) from None
    if not isinstance(data, dict):
        what = "an empty document" if data is None else f"a {type(data).__name__}"
        raise _Refused(f"an override is a mapping of the keys it changes, not {what}")
    data = json_keys(data)
    lines = {tuple(str(k) for k in key): line for key, line in raw_lines.items()}
    allowed = f"policies/{TOPIC}.yaml topics.{topic}: " + ", ".join("/".join(p) for p in rules.topics[topic])
    try:
        keys = _allowed_keys(data, rules.topics[topic], allowed)
        merged = merge_policy(thaw(ours), data)
        try:
            problem = schema_problem(topic, merged)
        except PolicyError as exc:
            raise _Refused(str(exc)) from None
        if problem is not None:
            where, message = problem
            raise _Refused(f"field {field_name(where)}: {message} (merged, policies/schema/{topic}.schema.json)",
                           where)
    except _Refused as exc:
        raise _Refused(exc.reason, exc.path, _line(lines, exc.path)) from None
    return merged, keys


def _changes(bundle: Bundle, directory: str) -> tuple[ChangedOverride, ...]:
    listed = {p for f in bundle.pr.files for p in (f.path, f.previous_path) if p}
    paths = _candidates(bundle.base.paths(directory), directory) | _candidates(bundle.head.paths(directory), directory)
    paths |= _candidates(listed, directory)
    out = []
    for path in sorted(paths):
        doc = RuleDocument(name=path, path=path, base=bundle.base.read(path), head=bundle.head.read(path),
                           listed=path in listed)
        change = doc.change
        if change == "modified" or change == "added" or change == "removed":
            out.append(ChangedOverride(path, change))
    return tuple(out)


def policies_for(bundle: Bundle, policies: Policies) -> tuple[Policies, PolicyOverrides]:
    """`policies` with the bundle's base-tree overrides laid over them, and what was done.

    Never raises for an override's content: a refused override is left out and recorded (the
    caller's `settle` makes the verdict fail closed). Without override files, `policies` itself is
    returned.
    """
    directory = bundle.path(DIRECTORY)
    rules = _Rules.of(policies)
    registry = policies.get("checks", {}).get("checks", {})
    owner = registry.get(str(rules.owner))
    result = PolicyOverrides(base_sha=bundle.base.sha, directory=directory,
                             owner_check=rules.owner, owner_name=str(owner["name"]) if owner else "")
    files = sorted(_candidates(bundle.base.paths(directory), directory))
    changed = _changes(bundle, directory)
    if not files and not changed:
        return policies, result
    merged: dict[str, Mapping[str, Any]] = {}
    applied: list[AppliedOverride] = []
    refused: list[RefusedOverride] = []
    for path in files:
        raw = bundle.base.read(path) or b""
        topic = path[len(directory):].rsplit(".", 1)[0]
        try:
            document, keys = _apply(topic, path, raw, policies.get(topic), rules)
        except _Refused as exc:
            refused.append(RefusedOverride(topic, path, exc.reason, exc.line))
            continue
        merged[topic] = freeze(document)
        applied.append(AppliedOverride(topic, path, git_blob_id(raw), tuple(keys)))
    result = replace(result, applied=tuple(applied), refused=tuple(refused), changed_by_pr=changed)
    if not merged:
        return policies, result
    return MappingProxyType({**policies, **merged}), result
