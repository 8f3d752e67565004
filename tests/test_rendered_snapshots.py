"""Golden snapshots of the rendered rows of every bundle, so that a wording change shows in review.

For each bundle directory under fixtures/ (a directory holding pr.yaml) and each public case under
../shared/cases/*/ (skipped when ../shared is absent), the bundle is judged and every row is
written as one block: `## <id> <status> <name>`, then its `en:` and `zh:` summaries (taken from
the JSON verdict, `verifier.render.json.render_json`). Timings (`Row.seconds`) are not part of it.
The text is compared with the committed file tests/snapshots/rendered/<name>.txt, where <name> is
the bundle's path with `/` turned into `--` (`fixtures--c13--fail-draft-kv-fp8`,
`shared--cases--pr4524`).

A mismatch fails with a unified diff. After an intended change of wording or status, rewrite the
snapshots and review the diff of tests/snapshots/rendered/ like any other change:

    UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q tests/test_rendered_snapshots.py

With UPDATE_SNAPSHOTS=1 the tests write (create or rewrite) every snapshot that differs and remove
every snapshot whose bundle is gone, and pass. Without it, a bundle lacking its snapshot and a
snapshot lacking its bundle both fail.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, FIXTURES, PROJECT, SHARED

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "rendered"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS", "") not in ("", "0")
SHARED_PREFIX = "shared--"
DIFF_LINES = 60


def _bundle_dirs(root: Path) -> list[Path]:
    """Directories under root holding pr.yaml, excluding any nested inside another such directory."""
    found = sorted(p.parent for p in root.rglob("pr.yaml") if p.is_file())
    outer: list[Path] = []
    for path in found:
        if not any(path.is_relative_to(o) for o in outer):
            outer.append(path)
    return outer


def _snapshot_name(bundle: Path) -> str:
    """A stable file stem for a bundle: its path from the project (or from shared/'s parent), `/` as `--`."""
    base = SHARED.parent if bundle.is_relative_to(SHARED) else PROJECT
    return "--".join(bundle.relative_to(base).parts)


FIXTURE_BUNDLES = _bundle_dirs(FIXTURES) if FIXTURES.is_dir() else []
CASE_BUNDLES = sorted(p for p in CASES.glob("*") if (p / "pr.yaml").is_file()) if CASES.is_dir() else []
BUNDLES = FIXTURE_BUNDLES + CASE_BUNDLES


@pytest.fixture(scope="session")
def policies() -> Mapping[str, Mapping[str, Any]]:
    from verifier.core.policy import load_policies

    return load_policies()


def _line(text: str) -> str:
    # Summaries are single-line already; keep a snapshot one line per field regardless.
    return text.replace("\r", "\\r").replace("\n", "\\n")


def render_rows(bundle_dir: Path, policies: Mapping[str, Mapping[str, Any]]) -> str:
    """The snapshot text of a bundle: the verdict, then one block per row (id, status, name, en, zh)."""
    from checks import judge
    from verifier.core.bundle import read_bundle
    from verifier.render.json import render_json

    doc = json.loads(render_json(judge(read_bundle(bundle_dir), policies)))
    text = f"verdict: {doc['verdict']}\n"
    for row in doc["checks"]:
        text += (
            f"\n## {row['id']:02d} {row['status']} {_line(row['name'])}\n"
            f"en: {_line(row['summary']['en'])}\n"
            f"zh: {_line(row['summary']['zh'])}\n"
        )
    # The bundle's location on this machine is not part of the wording.
    for root, marker in ((str(bundle_dir), "<bundle>"), (str(SHARED), "<shared>"), (str(PROJECT), "<project>")):
        text = text.replace(root, marker)
    return text


@pytest.mark.parametrize("bundle", BUNDLES, ids=_snapshot_name)
def test_rendered_rows_match_snapshot(bundle: Path, policies: Mapping[str, Mapping[str, Any]]) -> None:
    got = render_rows(bundle, policies)
    path = SNAPSHOTS / f"{_snapshot_name(bundle)}.txt"
    want = path.read_text(encoding="utf-8") if path.is_file() else None
    if got == want:
        return
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    rel = path.relative_to(PROJECT)
    if want is None:
        pytest.fail(f"no snapshot {rel} for bundle {bundle}: run with UPDATE_SNAPSHOTS=1 to create it",
                    pytrace=False)
    diff = list(difflib.unified_diff(want.splitlines(), got.splitlines(), f"{rel} (committed)",
                                     f"{rel} (rendered now)", lineterm=""))
    shown = "\n".join(diff[:DIFF_LINES]) + (f"\n... ({len(diff) - DIFF_LINES} more diff lines)"
                                           if len(diff) > DIFF_LINES else "")
    pytest.fail(f"rendered rows of {bundle} differ from {rel} "
                f"(UPDATE_SNAPSHOTS=1 rewrites it if the change is intended):\n{shown}", pytrace=False)


def test_every_snapshot_has_a_bundle() -> None:
    expected = {_snapshot_name(b) for b in BUNDLES}
    kept = sorted(SNAPSHOTS.glob("*.txt")) if SNAPSHOTS.is_dir() else []
    # Without ../shared, its cases' snapshots are neither checked nor orphaned.
    orphans = [p for p in kept if p.stem not in expected
               and not (p.stem.startswith(SHARED_PREFIX) and not CASES.is_dir())]
    if UPDATE:
        for path in orphans:
            path.unlink()
        return
    assert not orphans, (
        "snapshots without a bundle (the bundle was moved or removed; UPDATE_SNAPSHOTS=1 removes them): "
        + ", ".join(str(p.relative_to(PROJECT)) for p in orphans)
    )
