"""perf-changelog.yaml: entries and the byte-level append-only rules (FORMATS.md §5.2)."""

from __future__ import annotations

import pytest

from tests.kit import REFERENCE_DATA
from tests.launch.helpers import case_ctx
from verifier.configs.changelog import (
    appended_entries,
    changelog_report,
    entries,
    match_config_keys,
    validate_changelog,
)

PATH = "perf-changelog.yaml"
LINK = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
BASE = (
    "- config-keys:\n    - a-key\n  description:\n    - \"first\"\n  pr-link: " + LINK + "1\n"
    "\n"
    "- config-keys:\n    - b-key\n  description:\n    - second\n  pr-link: " + LINK + "2\n"
)


def entry(key: str = "a-key", link: str = LINK + "7", extra: str = "") -> str:
    return f"- config-keys:\n    - {key}\n  description:\n    - new\n{extra}  pr-link: {link}\n"


def check(head: str, base: str = BASE, number: int = 7, **kw) -> list[str]:
    report = validate_changelog(base.encode(), head.encode(), PATH, number, **kw)
    return [v.rule for v in report.violations]


def test_good_append() -> None:
    head = BASE + "\n" + entry() + "\n" + entry("b-key", "XXX")
    report = validate_changelog(BASE.encode(), head.encode(), PATH, 7, keys=["a-key", "b-key"])
    assert report.ok and report.changed and report.base_count == 2
    assert [(e.index, e.line, e.config_keys) for e in report.appended] == [(2, 13, ("a-key",)), (3, 19, ("b-key",))]
    assert report.appended[0].field_line("pr-link") == 17
    assert report.appended_keys() == ["a-key", "b-key"]


@pytest.mark.parametrize(
    ("head", "rules"),
    [
        (BASE + entry(), ["bad-separator"]),
        (BASE + "\n\n" + entry(), ["bad-separator"]),
        (BASE + "\n" + entry() + entry("b-key"), ["entries-not-separated"]),
        (BASE + "\n" + entry() + "\n\n" + entry("b-key"), ["entries-not-separated"]),
        (BASE + "\n" + entry() + "\n", ["extra-final-newline"]),
        (BASE + "\n" + entry().rstrip("\n"), ["missing-final-newline"]),
        (BASE + "\n" + entry().replace("    - new", "\t- new"), ["contains-tab", "invalid-yaml"]),
        (BASE + "\n" + entry().replace("\n", "\r\n", 1), ["contains-cr"]),
        (BASE + "\n" + entry(link=LINK + "8"), ["pr-link-mismatch"]),
        (BASE + "\n" + entry(link=LINK + "XXX"), []),
        (BASE + "\n" + entry(extra="  evals-only: true\n  no-evals: true\n"), ["entry-flag-conflict"]),
        (BASE + "\n" + entry(extra="  colour: red\n"), ["entry-unknown-key"]),
        (BASE + "\n" + "- config-keys:\n    - a-key\n  pr-link: " + LINK + "7\n", ["entry-schema"]),
        (BASE + "\n" + "- description: [x]\n  config-keys: [a-key]\n  pr-link: " + LINK + "7\n",
         ["bad-separator", "entry-count-mismatch"]),
        (BASE + "\n" + entry(extra="  description: [dup]\n"), ["duplicate-key"]),
        (BASE + "\n" + entry("c-*"), ["config-key-unknown"]),
    ],
)
def test_violations(head: str, rules: list[str]) -> None:
    assert check(head, keys=["a-key", "b-key"]) == rules


def test_history_rules() -> None:
    assert check(BASE.replace("first", "changed") + "\n" + entry()) == ["history-modified"]
    report = validate_changelog(BASE.encode(), BASE.replace("first", "changed").encode(), PATH, 7)
    assert report.violations[0].line == 4 and report.violations[0].params["head"] == '    - "changed"'
    corrected = BASE.replace(LINK + "1", LINK + "11")
    assert check(corrected) == []
    assert check(corrected + "\n" + entry()) == ["pr-link-correction-mixed"]
    assert check(BASE.replace(LINK + "1", "https://example.com/1")) == ["pr-link-correction-invalid"]
    only_first = BASE.split("\n\n")[0] + "\n"
    assert check(only_first) == ["entries-deleted", "entries-deleted"]


def test_on_main_rejects_placeholders() -> None:
    assert check(BASE + "\n" + entry(link="XXX")) == []
    assert check(BASE + "\n" + entry(link="XXX"), on_main=True) == ["pr-link-mismatch"]


def test_nul_and_non_utf8() -> None:
    assert validate_changelog(BASE.encode(), (BASE + "\x00").encode(), PATH, 7).violations[0].rule == "contains-nul"
    report = validate_changelog(BASE.encode(), BASE.encode() + b"\n\xff\n", PATH, 7)
    assert [(v.rule, v.line) for v in report.violations] == [("not-utf8", 13)]


def test_wildcards() -> None:
    keys = ["dsv4-fp4-b300-sglang", "dsv4-fp4-b200-sglang", "dsv4.1-x"]
    assert match_config_keys("dsv4-fp4-*-sglang", keys) == ["dsv4-fp4-b300-sglang", "dsv4-fp4-b200-sglang"]
    assert match_config_keys("dsv4.*", keys) == ["dsv4.1-x"]  # '.' is literal
    assert match_config_keys("dsv4-fp4-b300-sglang", keys) == ["dsv4-fp4-b300-sglang"]


def test_history_with_whitespace_only_separators_is_accepted() -> None:
    base = (REFERENCE_DATA / "perf-changelog.tail-excerpt.yaml").read_text()
    assert any(line.strip() == "" and line for line in base.split("\n"))
    report = validate_changelog(base.encode(), (base + "\n" + entry()).encode(), PATH, 7)
    assert report.ok and len(report.appended) == 1


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_cases(case: str) -> None:
    ctx = case_ctx(case)
    report = changelog_report(ctx)
    assert report.ok
    [new] = appended_entries(ctx)
    assert new.config_keys == ("minimaxm31flash-fp4-b300-sglang-agentic-dspark",)
    assert new.line == 188 and new.pr_link == LINK + "4524"
    assert new.scenario_types == ("agentic-coding",) and len(new.description) == 4
    assert len(entries(ctx, "head")) == len(entries(ctx, "base")) + 1
