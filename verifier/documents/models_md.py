"""MODELS.md: deprecation notices, the Scenarios table and the model support matrix.

Deprecations are data with dates: a dated notice names the LAST day a scenario runs (deprecated
after it), a Scenarios row says `Deprecated since YYYY-MM-DD`, and the support matrix lists each
model's active and deprecated scenarios, `None (...)` for a retired model.

Arms: a `| Model | Deprecated arm | Published arm |` table (and a support-matrix Deprecated cell such as
"Agentic coding non-DSpark arm (deprecated from day 0)") deprecates one arm of a model's scenario:
the arm that does not run a named speculative method ("non-DSpark"). A row in force from day 0 says so
("deprecated from day 0"); the other rows are in force only once the table's status paragraph says
"Enacted on YYYY-MM-DD" ("not yet enacted" leaves them out). The wording is policy data (models.arm_rules).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.core.context import CheckContext
from verifier.core.yamlio import decode_text
from verifier.documents.rules import rule_document

_HEADING_DATE = re.compile(r"^###\s+\w+,\s+(\w+\s+\d{1,2},\s+\d{4})\s*$")
_ISO = re.compile(r"(\d{4}-\d{2}-\d{2})")
# What datetime.strptime(text, "%B %d %Y") reads (under the C locale a verdict runs in), without loading
# strptime's locale machinery, a few ms of every cold verdict: its own pattern for those directives.
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_NOTICE_DAY = re.compile(r"(?P<B>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) +
                         r")\s+(?P<d>3[01]|[12]\d|0[1-9]|[1-9]| [1-9])\s+(?P<Y>\d\d\d\d)", re.IGNORECASE)
_PREFIX = re.compile(r"`([^`]+)`")
_SCENARIO_WORDS = {
    "agentic coding": "agentic-coding",
    "single-turn 8k1k": "8k1k",
    "single-turn 1k1k": "1k1k",
    "single-turn 1k8k": "1k8k",
}
SCENARIO_NAMES = {sid: words[0].upper() + words[1:] for words, sid in _SCENARIO_WORDS.items()}
_LAST_DAY = re.compile(r"\bis the last day for\b", re.IGNORECASE)
_PRECISION = (re.compile(r"\*\*(\w+)\*\*\s+recipes"), re.compile(r"\ball (\w+) recipes", re.IGNORECASE))


@dataclass(frozen=True, eq=False, repr=False)
class TableRow:
    """A Markdown table row: its cells and its 1-based line."""

    cells: tuple[str, ...]
    line: int


@dataclass(frozen=True, eq=False, repr=False)
class Deprecation:
    """One deprecation: which model (None = all models), scenario or precision, from when, and where."""

    scenario: str | None  # agentic-coding | 8k1k | 1k1k | 1k8k | None (every scenario)
    prefix: str | None
    precision: str | None
    effective: dt.date  # deprecated on and after this date
    line: int
    text: str
    notice: str | None = None  # the dated notice heading ("Tuesday, September 8, 2026"), if any


@dataclass(frozen=True, eq=False, repr=False)
class ArmDeprecation:
    """A deprecated arm: the points of a model's scenario that do not run `method` (e.g. non-DSpark)."""

    prefix: str
    scenario: str
    method: str  # lower-case method the published arm runs (dspark, mtp, eagle3, ...)
    arm: str  # the arm as MODELS.md names it ("non-DSpark")
    effective: dt.date  # in force on and after this date (date.min: from day 0, the model's first day)
    line: int
    text: str


@dataclass(frozen=True, eq=False, repr=False)
class ModelRow:
    """A row of the model support matrix."""

    name: str
    prefixes: tuple[str, ...]
    date_added: dt.date | None
    active: str
    deprecated: str
    line: int

    @property
    def retired(self) -> bool:
        """A model whose Active scenarios cell starts with 'None' no longer runs anything."""
        return self.active.strip().lower().startswith("none")

    def active_scenarios(self) -> set[str]:
        """Scenario ids named in the Active scenarios cell."""
        return scenarios_in(self.active)


@dataclass(eq=False, repr=False)
class ModelsDoc:
    """The parsed MODELS.md."""

    path: str
    models: dict[str, ModelRow] = field(default_factory=dict)
    scenario_rows: dict[str, TableRow] = field(default_factory=dict)
    deprecations: list[Deprecation] = field(default_factory=list)
    arm_deprecations: list[ArmDeprecation] = field(default_factory=list)

    def model(self, prefix: str) -> ModelRow | None:
        """The support-matrix row of a model prefix."""
        return self.models.get(prefix)


def scenarios_in(text: str) -> set[str]:
    """Scenario ids (agentic-coding, 8k1k, 1k1k, 1k8k) a cell of prose names."""
    low = re.sub(r"\([^)]*\)", "", text.lower())
    return {sid for words, sid in _SCENARIO_WORDS.items() if words in low}


def _cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in line.strip().strip("|").split("|"))


def _tables(lines: list[str]) -> list[tuple[tuple[str, ...], list[TableRow], int]]:
    """Every table: header cells, body rows, and the index of the header line."""
    out = []
    i = 0
    while i < len(lines) - 1:
        if lines[i].lstrip().startswith("|") and re.match(r"^\s*\|?\s*:?-{3,}", lines[i + 1]):
            header = _cells(lines[i])
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append(TableRow(_cells(lines[j]), j + 1))
                j += 1
            out.append((header, rows, i))
            i = j
        else:
            i += 1
    return out


def _date(text: str) -> dt.date | None:
    m = _ISO.search(text)
    return dt.date.fromisoformat(m.group(1)) if m else None


def _notice_day(text: str) -> dt.date:
    """`dt.datetime.strptime(text, "%B %d %Y").date()`: ValueError where that raises."""
    m = _NOTICE_DAY.match(text)
    if m is None or m.end() != len(text):
        raise ValueError(f"not a Month D YYYY date: {text!r}")
    return dt.date(int(m["Y"]), _MONTHS.index(m["B"].lower()) + 1, int(m["d"]))


def _heading_date(lines: list[str], index: int) -> tuple[dt.date, str] | None:
    """The date and text of the dated notice heading (### Weekday, Month D, YYYY) above a line."""
    for k in range(index, -1, -1):
        m = _HEADING_DATE.match(lines[k].strip())
        if m:
            try:
                day = _notice_day(m.group(1).replace(",", ""))
            except ValueError:
                return None
            return day, lines[k].strip().lstrip("#").strip()
        if lines[k].startswith("## ") or lines[k].startswith("### "):
            return None
    return None


def _precision(text: str) -> str | None:
    for pattern in _PRECISION:
        m = pattern.search(text)
        if m:
            return m.group(1).lower()
    return None


def _prose_deprecations(lines: list[str], table_lines: set[int]) -> list[Deprecation]:
    """Dated notices written as prose: "**<date>** is the last day for the **<scenario>** scenario on
    **<model>** (`prefix`)." A sentence that names neither a scenario, a model nor a precision refers
    to the notice's table, which is read separately."""
    out: list[Deprecation] = []
    for index, line in enumerate(lines):
        if index + 1 in table_lines or line.lstrip().startswith("|"):
            continue
        m = _LAST_DAY.search(line)
        if m is None:
            continue
        dated = _heading_date(lines, index)
        if dated is None:
            continue
        last_day, notice = dated
        rest = line[m.end():]
        end = re.search(r"\.(?:\s|$)", rest)
        sentence = rest[: end.start()] if end else rest
        scenarios = scenarios_in(sentence)
        prefixes = _PREFIX.findall(sentence)
        precision = _precision(sentence)
        if not scenarios and not prefixes and precision is None:
            continue
        for prefix in prefixes or [None]:
            for scenario in sorted(scenarios, key=str) or [None]:
                out.append(Deprecation(scenario, prefix, precision, last_day + dt.timedelta(days=1), index + 1,
                                       line.strip(), notice))
    return out


def _status_after(lines: list[str], index: int, rules: Mapping[str, Any]) -> dt.date | None:
    """The enactment date the status paragraph after a table gives (None: not enacted or unsaid)."""
    for line in lines[index:index + 12]:
        if line.startswith("#"):
            return None
        if any(m.lower() in line.lower() for m in rules["not_enacted"]):
            return None
        m = re.search(rules["enacted"], line)
        if m:
            return _date(m.group(0))
    return None


def _arm_rows(doc: ModelsDoc, lines: list[str], rows: list[TableRow], end: int, rules: Mapping[str, Any]) -> None:
    """Arm deprecations of a `| Model | Deprecated arm | Published arm |` table."""
    enacted = _status_after(lines, end, rules)
    for row in rows:
        if len(row.cells) < 2:
            continue
        _add_arms(doc, _PREFIX.findall(row.cells[0]), row.cells[1], row.line, rules, enacted)


def _add_arms(doc: ModelsDoc, prefixes: list[str], cell: str, line: int, rules: Mapping[str, Any],
              enacted: dt.date | None) -> None:
    day0 = any(m.lower() in cell.lower() for m in rules["day0"])
    if not day0 and enacted is None:
        return
    arm = re.search(rules["non_arm"], cell)
    if arm is None:
        return
    effective = dt.date.min if day0 else enacted
    assert effective is not None
    for prefix in prefixes:
        for scenario in sorted(scenarios_in(cell)):
            doc.arm_deprecations.append(ArmDeprecation(prefix, scenario, arm.group(1).lower(), arm.group(0),
                                                       effective, line, cell))


def parse_models_md(text: str, path: str, arm_rules: Mapping[str, Any] | None = None) -> ModelsDoc:
    """Parse MODELS.md; tables that cannot be read are skipped, never guessed.

    `arm_rules`: policies/models.yaml `arm_rules` (without it, arm deprecations are not read).
    """
    lines = text.splitlines()
    doc = ModelsDoc(path=path)
    tables = _tables(lines)
    table_lines = {row.line for _, rows, _ in tables for row in rows}
    for header, rows, index in tables:
        names = [h.lower() for h in header]
        if names[:3] == ["model", "deprecated", "remains"]:
            dated = _heading_date(lines, index)
            if dated is None:
                continue
            last_day, notice = dated
            for row in rows:
                if len(row.cells) < 2:
                    continue
                prefixes = _PREFIX.findall(row.cells[0])
                cell = row.cells[1]
                precision = _precision(cell)
                scenarios = scenarios_in(cell)
                if not scenarios:
                    # Only a precision deprecation, or an explicit "every scenario"/"all", spans every
                    # scenario; a cell naming nothing recognizable deprecates nothing we can apply.
                    if precision is None and not re.search(r"\b(all|every|everything)\b", cell.lower()):
                        continue
                    scenarios = {None}
                for prefix in prefixes or [None]:
                    for scenario in sorted(scenarios, key=str):
                        doc.deprecations.append(Deprecation(scenario, prefix, precision,
                                                            last_day + dt.timedelta(days=1), row.line, cell, notice))
        elif names[:3] == ["scenario", "isl/osl", "status"]:
            for row in rows:
                sid = next(iter(scenarios_in(row.cells[0])), None)
                if sid is None:
                    continue
                doc.scenario_rows[sid] = row
                status = row.cells[2]
                if re.match(r"^(\*\*Deprecated for all models\*\*|Deprecated)\s+since", status):
                    since = _date(status)
                    if since is not None:
                        doc.deprecations.append(Deprecation(sid, None, None, since, row.line, status))
        elif arm_rules is not None and names[:len(arm_rules["table_header"])] == list(arm_rules["table_header"]):
            _arm_rows(doc, lines, rows, rows[-1].line if rows else index + 2, arm_rules)
        elif names and names[0].startswith("model architecture") and "prefix" in names:
            idx = {n: k for k, n in enumerate(names)}
            for row in rows:
                cells = row.cells
                if len(cells) < len(names):
                    continue
                prefixes = tuple(_PREFIX.findall(cells[idx["prefix"]]))
                model = ModelRow(
                    name=cells[0],
                    prefixes=prefixes,
                    date_added=_date(cells[idx.get("date added", 2)]),
                    active=cells[idx.get("active scenarios", 3)],
                    deprecated=cells[idx.get("deprecated scenarios", 4)],
                    line=row.line,
                )
                for prefix in prefixes:
                    doc.models[prefix] = model
                for alias in version_aliases(model.name, prefixes):
                    doc.models.setdefault(alias, model)
                if arm_rules is not None and model.deprecated:
                    _add_arms(doc, list(prefixes), model.deprecated, row.line, arm_rules, None)
    doc.deprecations.extend(_prose_deprecations(lines, table_lines))
    return doc


# "Kimi-K2.5/2.6/2.7-Code", "MiniMax-M2.5/2.7": one row names several versions of a model
_VERSIONS = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)((?:/\d+(?:\.\d+)?)+)(?![\d.])")


def version_aliases(name: str, prefixes: tuple[str, ...]) -> list[str]:
    """Prefixes a row covers without listing them: a row whose model name lists versions
    ("Kimi-K2.5/2.6/2.7-Code") and whose prefix carries the first (`kimik2.5`) also covers that
    prefix with each other version (`kimik2.6`, `kimik2.7`), as InferenceX's master configs spell
    them (`kimik2.6-fp4-b200-dynamo-vllm`)."""
    out: list[str] = []
    for match in _VERSIONS.finditer(name):
        first, others = match.group(1), match.group(2).split("/")[1:]
        for prefix in prefixes:
            if prefix.endswith(first):
                out += [prefix[: -len(first)] + other for other in others]
    return [p for p in dict.fromkeys(out) if p not in prefixes]


def models_doc(ctx: CheckContext, side: str = "base") -> ModelsDoc | None:
    """The parsed MODELS.md of one side of the PR (None when the tree does not hold it)."""

    def compute() -> ModelsDoc | None:
        doc = rule_document(ctx, "models_md")
        path = doc.path
        raw = doc.base if side == "base" else doc.head
        rules = ctx.policy("models").get("arm_rules")
        return None if raw is None else parse_models_md(decode_text(raw, path), path, rules)

    return ctx.memo(f"models_md:{side}", compute)
