"""Conformance corpus: every launch kind today's InferenceX (`inferencex-e2e/` layout) runs resolves.

Each case under `fixtures/conformance/<case>/` is a bundle built from real InferenceX files
(`fixtures/conformance/README.md` cites them). For each case the console script judges the bundle
(`verify-pr --bundle DIR --format json`, a subprocess, as a reviewer runs it) and the test asserts:

* Check 18 reports no point that does not generate (`generation-error`) and no unresolved launch;
* Checks 8, 9, 13 and 17 have no "Not judged here" (launch unresolved) sentence;
* the content rows (6-11, 13, 16-18) have the statuses of the case's `expected.yaml`;
* in process, every point of the case's config key resolves to at least one launch, of the kind
  `expected.yaml` names, without a fatal launch error.

`pytest -s tests/conformance` prints the table (kind, key, resolved points, content rows).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[2]
CORPUS = PROJECT / "fixtures" / "conformance"
CLI = PROJECT / ".venv" / "bin" / "verify-pr"
CONTENT = (6, 7, 8, 9, 10, 11, 13, 16, 17, 18)
LAUNCH_ROWS = (8, 9, 13, 17)
NOT_JUDGED = "Not judged here"
GENERATION = ("does not generate", "no resolvable launch")
TABLE: list[tuple[str, str, str, str, str]] = []


def _cases() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if (p / "expected.yaml").is_file())


def _judge(case: Path) -> dict[str, Any]:
    command = [str(CLI) if CLI.exists() else sys.executable, "--bundle", str(case), "--format", "json"]
    if not CLI.exists():
        command[1:1] = ["-m", "verifier.app"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=PROJECT, check=False)
    assert done.stdout.strip(), f"verify-pr printed nothing (rc {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(done.stdout)


def _resolved(case: Path, key: str) -> tuple[int, int, set[str], list[str]]:
    """(points, points with a launch, launch kinds, fatal launch errors) of the key on the head side."""
    from verifier.configs import points
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch import launches

    ctx = CheckContext(read_bundle(case), load_policies())
    pts = points(ctx, "head", key)
    result = launches(ctx, "head", [key])
    # a fixed-seq-len point's exp-name carries neither TP nor concurrency: count points by identity
    launched = {launch.point.identity for launch in result.launches}
    kinds = {launch.kind for launch in result.launches}
    return len({p.identity for p in pts}), len(launched), kinds, [str(e) for e in result.fatal_errors]


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_case_resolves_and_matches_expected(case: Path) -> None:
    expected = yaml.safe_load((case / "expected.yaml").read_text(encoding="utf-8"))
    report = _judge(case)
    rows = {row["id"]: row for row in report["checks"]}
    for check in LAUNCH_ROWS:
        text = rows[check]["summary"]["en"]
        assert NOT_JUDGED not in text, f"Check {check} did not judge a launch: {text}"
    c18 = rows[18]["summary"]["en"]
    assert not any(marker in c18 for marker in GENERATION), f"Check 18 reports an unresolved point: {c18}"
    total, resolved, kinds, errors = _resolved(case, expected["key"])
    assert total > 0, f"{expected['key']} has no points in {case.name}"
    assert not errors, f"fatal launch errors: {errors}"
    assert resolved == total, f"{resolved} of {total} points resolved"
    assert kinds == set(expected["launch-kinds"]), f"launch kinds {sorted(kinds)}"
    statuses = {check: rows[check]["status"] for check in CONTENT}
    want = {int(k): v for k, v in expected["statuses"].items()}
    TABLE.append((expected["kind"], expected["key"], f"{resolved}/{total} ({', '.join(sorted(kinds))})",
                  " ".join(f"{c}:{statuses[c]}" for c in CONTENT), case.name))
    assert statuses == want, "content rows differ from expected.yaml:\n" + "\n".join(
        f"  Check {c}: {statuses[c]} (expected {want.get(c)}): {rows[c]['summary']['en'][:400]}"
        for c in CONTENT if statuses[c] != want.get(c))


def teardown_module() -> None:
    """The corpus table (`pytest -s` shows it)."""
    if not TABLE:
        return
    print("\n\nConformance corpus")
    print(f"{'case':38} {'key':66} {'resolved points':40} content rows")
    for kind, key, resolved, content, name in sorted(TABLE, key=lambda row: row[4]):
        print(f"{name:38} {key:66} {resolved:40} {content}")
        print(f"{'':38} {kind}")
