"""`perf-changelog.yaml`: entries (FORMATS.md §5.1) and the byte-level append-only rules (§5.2).

The file is "not ordinary YAML": history is byte-immutable, new entries are appended at the end,
separated by exactly one empty line, and the file ends with exactly one newline. This module parses
entries with their line numbers, finds the entries a PR appends, and returns every rule violation as
a `ChangelogViolation(rule, line, message, params)` so that checks 12, 15 and 18 can report them.

Which of them bind a PR is the PR gate's to say (`gate_ruling`, GATE_FUNCTIONS): InferenceX's own
validator, read from the base tree (never run), applied the byte rules to PRs only in some eras. A rule
the gate did not apply is listed apart (`ChangelogReport.waived`), and a PR's new entries are then the
head's entries the base does not hold, wherever they stand.

Rule ids: `not-utf8`, `contains-nul`, `contains-cr`, `contains-tab`, `missing-final-newline`,
`extra-final-newline`, `invalid-yaml`, `top-level-not-list`, `duplicate-key`, `entry-count-mismatch`,
`history-modified`, `entries-deleted`, `pr-link-correction-invalid`, `pr-link-correction-mixed`,
`bad-separator`, `entries-not-separated`, `entry-schema`, `entry-unknown-key`, `entry-flag-conflict`,
`pr-link-mismatch`, `config-key-unknown`, `base-unreadable`.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.core import processcache
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.yaml11 import parse_yaml11_shared

ENTRY_START = "- config-keys:"
PR_LINK_RE = re.compile(r"https://github\.com/SemiAnalysisAI/InferenceX/pull/\d+")
PLACEHOLDERS = ("XXX", "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX")
SCENARIO_TYPES = ("fixed-seq-len", "agentic-coding")
KNOWN_KEYS = frozenset({
    "config-keys", "scenario-type", "description", "pr-link", "evals-only", "all-evals", "no-evals",
    "append-only", "eval-min-prefill-ep",
})
MAX_BYTES = 16 * 1024 * 1024

# The gate rules of §5.2 (history byte-immutable, new entries at the end one blank line apart, one final
# newline, pr-link corrections on their own, a new entry linking this PR) bind a PR when InferenceX's PR
# gate applies them: run-sweep.yml runs the validator (GATE_DOCUMENT, a logical path of
# verifier.core.layout) on every PR, and the functions its entry point reaches decide (GATE_FUNCTIONS:
# which rules each applies). That changed with the eras: the old layout had no validator before
# InferenceX #1821 (2026-06-18); #1821's `main` applied them all (`validate_changelog`); from #1853 the
# same day to the end of the old layout it checks only the final newline and that the sweep's changelog
# processor accepts the diff (`validate_matrix_compatible_change`), the byte rules staying with the
# merge tooling. The current layout's contract is §5.2 as written. The other rules (valid UTF-8 YAML, a
# list, the entry schema, known config keys) are the sweep processor's, which reads the changelog in
# every era.
GATE_DOCUMENT = "changelog_gate"
GATE_ENTRY = "main"
_HISTORY = ("history-modified", "entries-deleted", "pr-link-correction-invalid", "pr-link-correction-mixed")
GATE_FUNCTIONS: dict[str, tuple[str, ...]] = {
    # the file-level checks of the gate's own parse (PyYAML, which the sweep processor reads with, takes
    # tabs, CRs and repeated keys; invalid YAML, a non-list and non-UTF-8 stop the processor in any era)
    "parse_changelog": ("missing-final-newline", "contains-cr", "contains-tab", "contains-nul", "duplicate-key",
                        "entry-count-mismatch"),
    "validate_matrix_compatible_change": ("missing-final-newline",),
    "compare_entries": (*_HISTORY, "pr-link-mismatch"),
    "validate_added_pr_link": ("pr-link-mismatch",),
    "validate_raw_change": (*_HISTORY, "bad-separator", "entries-not-separated", "extra-final-newline"),
}
GATE_RULES = frozenset(rule for rules in GATE_FUNCTIONS.values() for rule in rules)
GATE_IN_FORCE_LAYOUTS = ("new",)
GATE_MAX_BYTES = 1 << 20


@dataclass(frozen=True, eq=False, repr=False)
class ChangelogEntry:
    """One changelog entry with the 1-based line where it starts (`- config-keys:`)."""

    index: int
    line: int
    data: dict[str, Any] = field(repr=False)
    lines: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def config_keys(self) -> tuple[str, ...]:
        """The entry's config-keys patterns (exact keys or `*` wildcards)."""
        value = self.data.get("config-keys")
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    @property
    def scenario_types(self) -> tuple[str, ...]:
        """scenario-type values (empty when absent)."""
        value = self.data.get("scenario-type")
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    @property
    def description(self) -> tuple[str, ...]:
        """description items."""
        value = self.data.get("description")
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    @property
    def pr_link(self) -> str | None:
        """pr-link as written."""
        value = self.data.get("pr-link")
        return None if value is None else str(value)

    def flag(self, name: str) -> bool:
        """A boolean modifier (`evals-only`, `all-evals`, `no-evals`, `append-only`)."""
        return self.data.get(name) is True

    def field_line(self, name: str) -> int:
        """Line of a field of the entry (the entry's first line when absent)."""
        return self.lines.get(name, self.line)


@dataclass(frozen=True, eq=False, repr=False)
class ChangelogViolation:
    """One broken rule, with the 1-based head line it concerns (None for whole-file rules)."""

    rule: str
    line: int | None
    message: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False, repr=False)
class GateRuling:
    """Which of the PR gate's rules (GATE_RULES) bind this PR, and why."""

    rules: frozenset[str]  # the gate rules in force
    path: str  # the gate's repository path (the validator InferenceX runs on every PR)
    # layout: the layout's contract; read: what the base's entry point reaches; absent: the base commit
    # has no gate; unread / unparsed: the bundle does not hold it / it cannot be read (every rule binds)
    why: str
    entry: str = ""
    line: int | None = None  # the entry point's line in the base file
    calls: tuple[str, ...] = ()  # the file's functions the entry point reaches, in the order reached

    @property
    def waived(self) -> frozenset[str]:
        """The gate rules not in force."""
        return GATE_RULES - self.rules

    @staticmethod
    def applied_by(rules: Collection[str]) -> list[str]:
        """The gate's functions that apply any of these rules (GATE_FUNCTIONS order)."""
        return [name for name, applied in GATE_FUNCTIONS.items() if not set(rules).isdisjoint(applied)]


@dataclass(eq=False, repr=False)
class ChangelogReport:
    """The result of validating a PR's changelog change."""

    path: str
    base_count: int  # entries in the base file (lines starting '- config-keys:')
    appended: list[ChangelogEntry]
    violations: list[ChangelogViolation]
    changed: bool  # head bytes differ from base bytes
    present: bool  # the head tree has the file
    # rules the change breaks that were not in force for the PR (`gate_ruling`), and that ruling
    waived: list[ChangelogViolation] = field(default_factory=list)
    gate: GateRuling | None = None

    @property
    def ok(self) -> bool:
        """True when no rule is broken."""
        return not self.violations

    def appended_keys(self) -> list[str]:
        """Config-keys patterns of the appended entries, in order, deduplicated."""
        return list(dict.fromkeys(k for e in self.appended for k in e.config_keys))


def key_pattern(pattern: str) -> re.Pattern[str]:
    """A config-keys pattern as the planner reads it: `*` is `.*`, the rest literal, full match.

    Each literal piece but the last is taken at its first place after the one before (an atomic
    group, never tried again: the most room for the rest, so the key matches exactly when this
    does), the last at the key's end. With `.*` tried again at every length, a pattern of many `*`s
    took exponential time (`*a*a*a*a*a*a*a*a*b` against a key of 60 `a`s: 26 s)."""
    pieces = [re.escape(p) for p in pattern.split("*")]
    if len(pieces) == 1:
        return re.compile(f"^{pieces[0]}$")
    middle = "".join(f"(?>.*?{p})" for p in pieces[1:-1])
    return re.compile(f"^{pieces[0]}{middle}.*{pieces[-1]}$")


def match_config_keys(pattern: str, keys: Iterable[str]) -> list[str]:
    """Config keys a pattern selects (exact key or `*` wildcard), in the given order."""
    if "*" not in pattern:
        return [k for k in keys if k == pattern]
    regex = key_pattern(pattern)
    return [k for k in keys if regex.match(k)]


def _entry_lines(text: str, first_line: int = 1) -> list[int]:
    return [first_line + i for i, ln in enumerate(text.split("\n")) if ln.startswith(ENTRY_START)]


_PARSED: processcache.ByText[tuple[str, str, int], tuple[tuple[ChangelogEntry, ...], tuple[ChangelogViolation, ...]]] = \
    processcache.ByText("changelog.entries", 64)


def parse_entries(text: str, path: str, first_line: int = 1) -> tuple[list[ChangelogEntry], list[ChangelogViolation]]:
    """Parse changelog text (the whole file or an appended suffix starting at `first_line`).

    Once per process for the same text (the recording pass's contexts and the verdict all read the
    changelog; its history holds thousands of entries): the entries are shared, the lists are new."""
    key = (path, text, first_line)
    hit = _PARSED.get(key)
    if hit is None:
        found, violations = _parse_entries(text, path, first_line)
        hit = _PARSED.put(key, (tuple(found), tuple(violations)))
    return list(hit[0]), list(hit[1])


def _parse_entries(text: str, path: str, first_line: int) -> tuple[list[ChangelogEntry], list[ChangelogViolation]]:
    violations: list[ChangelogViolation] = []
    try:
        doc = parse_yaml11_shared(text, path, line_offset=first_line - 1)
    except InputError as exc:
        return [], [ChangelogViolation("invalid-yaml", None, exc.reason)]
    data = doc.data
    if data is None:
        data = []
    if not isinstance(data, list):
        return [], [ChangelogViolation("top-level-not-list", first_line, "the top level is not a list of entries")]
    for dup_path, line in doc.duplicates:
        violations.append(ChangelogViolation("duplicate-key", line, f"duplicate key {dup_path[-1]!r}",
                                             {"key": str(dup_path[-1])}))
    starts = _entry_lines(text, first_line)
    if len(starts) != len(data):
        violations.append(ChangelogViolation(
            "entry-count-mismatch", first_line,
            f"{len(starts)} lines start with '{ENTRY_START}' but {len(data)} entries parse",
            {"lines": len(starts), "entries": len(data)},
        ))
    fields: dict[int, dict[str, int]] = {}
    for p, ln in doc.lines.items():
        if len(p) == 2 and isinstance(p[0], int):
            fields.setdefault(p[0], {})[str(p[1])] = ln
    entries = []
    for i, item in enumerate(data):
        line = doc.line(i) or (starts[i] if i < len(starts) else first_line)
        entries.append(ChangelogEntry(i, line, item if isinstance(item, dict) else {}, fields.get(i, {})))
        if not isinstance(item, dict):
            violations.append(ChangelogViolation("entry-schema", line, "entry is not a mapping"))
    return entries, violations


def entry_violations(entry: ChangelogEntry, pr_number: int | None, *, on_main: bool = False,
                     keys: Iterable[str] | None = None) -> list[ChangelogViolation]:
    """Schema (ChangelogEntry, extra="forbid") and pr-link rules for one new entry."""
    out: list[ChangelogViolation] = []
    data = entry.data

    def bad(rule: str, name: str, message: str, **params: Any) -> None:
        out.append(ChangelogViolation(rule, entry.field_line(name), message, {"field": name, **params}))

    for name in data:
        if name not in KNOWN_KEYS:
            bad("entry-unknown-key", str(name), f"unknown field {name!r}")
    for name in ("config-keys", "description"):
        value = data.get(name)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            bad("entry-schema", name, f"{name} must be a non-empty list of strings")
    scen = data.get("scenario-type")
    if scen is not None and (not isinstance(scen, list) or not scen or any(s not in SCENARIO_TYPES for s in scen)):
        bad("entry-schema", "scenario-type", f"scenario-type must list values from {', '.join(SCENARIO_TYPES)}")
    for name in ("evals-only", "all-evals", "no-evals", "append-only"):
        if name in data and not isinstance(data[name], bool):
            bad("entry-schema", name, f"{name} must be true or false")
    if "eval-min-prefill-ep" in data:
        value = data["eval-min-prefill-ep"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            bad("entry-schema", "eval-min-prefill-ep", "eval-min-prefill-ep must be an integer >= 1")
    eval_mods = [n for n in ("evals-only", "all-evals") if data.get(n) is True]
    if "eval-min-prefill-ep" in data:
        eval_mods.append("eval-min-prefill-ep")
    for name in ("no-evals", "append-only"):
        if data.get(name) is True and eval_mods:
            bad("entry-flag-conflict", name, f"{name} cannot be combined with {', '.join(eval_mods)}")
    link = data.get("pr-link")
    if not isinstance(link, str) or not link:
        bad("entry-schema", "pr-link", "pr-link is required")
    else:
        canonical = f"https://github.com/SemiAnalysisAI/InferenceX/pull/{pr_number}" if pr_number else None
        allowed = {canonical} if on_main else {canonical, *PLACEHOLDERS}
        if link.strip() not in allowed:
            bad("pr-link-mismatch", "pr-link", f"pr-link {link} is not this PR's link", link=link,
                expected=canonical or "")
    if keys is not None and isinstance(data.get("config-keys"), list):
        known = list(keys)
        for pattern in data["config-keys"]:
            if isinstance(pattern, str) and not match_config_keys(pattern, known):
                bad("config-key-unknown", "config-keys", f"config key {pattern!r} matches no master config",
                    pattern=pattern)
    return out


def _byte_violations(raw: bytes, path: str) -> tuple[str | None, list[ChangelogViolation]]:
    out: list[ChangelogViolation] = []
    if len(raw) > MAX_BYTES:
        return None, [ChangelogViolation("not-utf8", None, f"file is {len(raw)} bytes, over the limit")]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [ChangelogViolation("not-utf8", line, "not UTF-8 text")]
    for rule, char in (("contains-nul", "\x00"), ("contains-cr", "\r"), ("contains-tab", "\t")):
        pos = text.find(char)
        if pos >= 0:
            out.append(ChangelogViolation(rule, text.count("\n", 0, pos) + 1, f"contains a {rule[9:].upper()} byte"))
    if text and not text.endswith("\n"):
        out.append(ChangelogViolation("missing-final-newline", text.count("\n") + 1, "file must end with a newline"))
    elif text.endswith("\n\n"):
        out.append(ChangelogViolation("extra-final-newline", text.count("\n"), "file must end with exactly one newline"))
    return text, out


def _history_violations(base: str, head: str) -> tuple[bool, list[ChangelogViolation]]:
    """(history intact, violations) for a head that does not start with the base bytes."""
    base_lines = base.split("\n")
    head_lines = head.split("\n")
    out: list[ChangelogViolation] = []
    corrections = 0
    for i, old in enumerate(base_lines):
        if i >= len(head_lines):
            out.append(ChangelogViolation("entries-deleted", len(head_lines), "history lines were deleted"))
            return False, out
        new = head_lines[i]
        if new == old:
            continue
        if old.startswith("  pr-link:") and new.startswith("  pr-link:"):
            link = new.split(":", 1)[1].strip().strip("'\"")
            if not PR_LINK_RE.fullmatch(link):
                out.append(ChangelogViolation("pr-link-correction-invalid", i + 1,
                                              f"corrected pr-link {link} is not a PR link", {"link": link}))
            corrections += 1
            continue
        out.append(ChangelogViolation("history-modified", i + 1, "a history line was changed (existing entries are byte-immutable)",
                                      {"base": old[:200], "head": new[:200]}))
        return False, out
    if corrections and len(head_lines) > len(base_lines):
        out.append(ChangelogViolation("pr-link-correction-mixed", len(base_lines) + 1,
                                      "pr-link corrections cannot be mixed with new entries"))
    return not out, out


def _suffix_violations(base: str, suffix: str, first_line: int) -> list[ChangelogViolation]:
    out: list[ChangelogViolation] = []
    if not suffix:
        return out
    want = ENTRY_START if base.endswith("\n\n") or not base else "\n" + ENTRY_START
    if not suffix.startswith(want):
        out.append(ChangelogViolation(
            "bad-separator", first_line,
            "new entries must follow the history after exactly one blank line, starting with '- config-keys:'",
        ))
    lines = suffix.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith(ENTRY_START)]
    for i in starts[1:]:  # the first new entry's separation is the bad-separator rule
        before = lines[i - 1]
        two_before = lines[i - 2] if i >= 2 else None
        if before != "" or (two_before is not None and two_before.strip() == ""):
            out.append(ChangelogViolation(
                "entries-not-separated", first_line + i,
                "consecutive new entries must be separated by exactly one blank line",
            ))
    return out


def validate_changelog(
    base_raw: bytes | None,
    head_raw: bytes | None,
    path: str,
    pr_number: int | None,
    *,
    on_main: bool = False,
    keys: Iterable[str] | None = None,
    waived: Collection[str] = (),
) -> ChangelogReport:
    """Apply §5.2 to a PR's change of perf-changelog.yaml (base = trusted history). The rules in
    `waived` were not in force: what breaks them is listed apart, and when the history is not kept
    byte for byte the new entries are the head's entries the base does not hold (`_new_entries`)."""
    violations: list[ChangelogViolation] = []
    if head_raw is None:
        return ChangelogReport(path, 0, [], [], changed=base_raw is not None, present=False)
    head, found = _byte_violations(head_raw, path)
    violations += found
    base: str | None = None
    if base_raw is not None:
        try:
            base = base_raw.decode("utf-8")
        except UnicodeDecodeError:
            violations.append(ChangelogViolation("base-unreadable", None, "the base changelog is not UTF-8"))
    if head is None:
        return ChangelogReport(path, 0, [], violations, changed=True, present=True)
    base_text = base or ""
    changed = head != base_text
    if head.startswith(base_text):
        first_line = base_text.count("\n") + 1
        suffix = head[len(base_text):]
        violations += _suffix_violations(base_text, suffix, first_line)
        appended, found = parse_entries(suffix, path, first_line) if suffix.strip() else ([], [])
        violations += found
        base_count = len(_entry_lines(base_text))
        appended = [ChangelogEntry(base_count + e.index, e.line, e.data, e.lines) for e in appended]
    else:
        intact, found = _history_violations(base_text, head)
        violations += found
        head_entries, found = parse_entries(head, path)
        violations += found
        base_entries, base_broken = parse_entries(base_text, path) if base_raw is not None else ([], [])
        base_count = len(base_entries)
        if base_broken:
            # the base's own entries cannot be told apart from the head's: what a PR adds is known
            # only from the bytes (a PR that mends a broken history is judged by them, as before)
            waived = frozenset(waived) - frozenset(_HISTORY)
        if intact:
            appended = head_entries[len(base_entries):]
        elif "history-modified" in waived:
            appended = _new_entries(head_entries, base_entries)
        else:
            appended = []
        if len(head_entries) < len(base_entries):
            violations.append(ChangelogViolation(
                "entries-deleted", None, f"{len(base_entries) - len(head_entries)} entries were deleted",
                {"deleted": len(base_entries) - len(head_entries)}))
    key_list = list(keys) if keys is not None else None
    for entry in appended:
        violations += entry_violations(entry, pr_number, on_main=on_main, keys=key_list)
    return ChangelogReport(path, base_count, appended, [v for v in violations if v.rule not in waived],
                           changed=changed, present=True, waived=[v for v in violations if v.rule in waived])


def _new_entries(head: list[ChangelogEntry], base: list[ChangelogEntry]) -> list[ChangelogEntry]:
    """The head's entries the base does not hold (equal data, counted), in the head's order: what a
    PR adds when its history is not the base's byte for byte (a branch that merged the default branch
    after appending, an entry moved or reformatted)."""
    left = Counter(_canonical(e.data) for e in base)
    out: list[ChangelogEntry] = []
    for entry in head:
        key = _canonical(entry.data)
        if left[key]:
            left[key] -= 1
        else:
            out.append(entry)
    return out


def _canonical(data: Mapping[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)


def gate_ruling(ctx: CheckContext) -> GateRuling:
    """Which of the changelog's gate rules (GATE_RULES) bind this PR: all of them in a layout whose
    contract they are; where the base holds the validator, those of the functions its entry point
    reaches (GATE_FUNCTIONS); none where the base commit has no validator (its recorded listing
    lacks it); all of them when the bundle does not hold it or it cannot be read (fail closed). The
    PR's own copy is never read. Memoized."""

    def compute() -> GateRuling:
        path = ctx.bundle.path(GATE_DOCUMENT)
        if ctx.bundle.layout in GATE_IN_FORCE_LAYOUTS:
            return GateRuling(GATE_RULES, path, "layout")
        raw = ctx.bundle.base.read(path)
        if raw is None:
            absent = ctx.bundle.base.absent(path)
            return GateRuling(frozenset() if absent else GATE_RULES, path, "absent" if absent else "unread")
        reached = _reached(raw, GATE_ENTRY) if len(raw) <= GATE_MAX_BYTES else None
        if reached is None:
            return GateRuling(GATE_RULES, path, "unparsed", GATE_ENTRY)
        line, calls = reached
        rules = frozenset(rule for name in calls for rule in GATE_FUNCTIONS.get(name, ()))
        return GateRuling(rules, path, "read", GATE_ENTRY, line, calls)

    return ctx.memo("changelog.gate", compute)


def _reached(raw: bytes, entry: str) -> tuple[int, tuple[str, ...]] | None:
    """The line of a Python file's top-level function `entry` and the file's top-level functions it
    reaches by calling them by name, directly or through each other (None: the file does not parse or
    has no such function). Parsed only, never run."""
    try:
        tree = ast.parse(raw.decode("utf-8"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    start = functions.get(entry)
    if start is None:
        return None
    reached = [entry]  # breadth first: each function's calls are looked at once, in the order found
    seen = {entry}
    for name in reached:
        for node in ast.walk(functions[name]):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                callee = node.func.id
                if callee in functions and callee not in seen:
                    seen.add(callee)
                    reached.append(callee)
    return start.lineno, tuple(reached[1:])


def changelog_report(ctx: CheckContext) -> ChangelogReport:
    """The PR's changelog report (head vs base, this PR's number, head master keys). Memoized."""

    def compute() -> ChangelogReport:
        from verifier.configs.master import master_entries

        path = ctx.bundle.path("changelog")
        keys: list[str] | None
        try:
            keys = list(master_entries(ctx, "head"))
        except InputError:
            keys = None
        gate = gate_ruling(ctx)
        waived = gate.waived
        report = validate_changelog(ctx.bundle.base.read(path), ctx.bundle.head.read(path), path,
                                    ctx.bundle.pr.number, keys=keys, waived=waived)
        report.gate = gate
        return report

    return ctx.memo("changelog.report", compute)


def appended_entries(ctx: CheckContext) -> list[ChangelogEntry]:
    """The entries this PR appends to perf-changelog.yaml."""
    return changelog_report(ctx).appended


def entries(ctx: CheckContext, side: str = "head") -> list[ChangelogEntry]:
    """Every entry of one side's changelog (full parse; memoized)."""

    def compute() -> list[ChangelogEntry]:
        path = ctx.bundle.path("changelog")
        tree = ctx.bundle.base if side == "base" else ctx.bundle.head
        raw = tree.read(path)
        if raw is None:
            return []
        from verifier.core.yamlio import decode_text

        parsed, _ = parse_entries(decode_text(raw, path, limit=MAX_BYTES), path)
        return parsed

    return ctx.memo(f"changelog.entries.{side}", compute)


def selected_keys(entries_: Iterable[ChangelogEntry], keys: Iterable[str]) -> dict[str, list[str]]:
    """pattern -> config keys it selects, over the given entries."""
    known = list(keys)
    out: dict[str, list[str]] = {}
    for entry in entries_:
        for pattern in entry.config_keys:
            out.setdefault(pattern, match_config_keys(pattern, known))
    return out


def as_mapping(entry: ChangelogEntry) -> Mapping[str, Any]:
    """The entry's raw mapping (read-only use)."""
    return entry.data
