"""A recorded tree listing proves a file absent from a commit; without one, a missing file is unread.

InferenceX had no checklist template before 2026-06-22: a PR of that era was bound by none of its
rules, so every check the template governs is N/A naming the document. A bundle that merely does
not hold the template (no listing) is judged fail-closed, as before.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.kit import CASES, clone_bundle

BASE = CASES / "pr4524-approved"
CHECKLIST = "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md"
TEMPLATE_GOVERNED = {1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17}


def _verdict(bundle: Path) -> tuple[int, dict, str]:
    proc = subprocess.run([sys.executable, "-m", "verifier", "--bundle", str(bundle), "--format", "json"],
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, (json.loads(proc.stdout) if proc.stdout.strip() else {}), proc.stderr


def _without_template(tmp: Path, listing: bool) -> Path:
    bundle = clone_bundle(BASE, tmp / "b")
    for side in ("base", "head"):
        tree = bundle / "tree" / side
        for name in ("PR_REVIEW_CHECKLIST.md", "PR_REVIEW_CHECKLIST_zh.md"):
            (tree / "inferencex-e2e/docs" / name).unlink(missing_ok=True)
        if listing:
            paths = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())
            (bundle / "tree" / f"{side}.listing").write_text("".join(f"{p}\n" for p in paths))
    return bundle


def test_a_template_the_base_commit_lacks_binds_no_rule(tmp_path: Path) -> None:
    rc, doc, err = _verdict(_without_template(tmp_path, listing=True))
    assert rc in (0, 1), err
    rows = {c["id"]: c for c in doc["checks"]}
    for cid in sorted(TEMPLATE_GOVERNED):
        assert rows[cid]["status"] == "N/A", (cid, rows[cid]["summary"]["en"])
        assert CHECKLIST in rows[cid]["summary"]["en"] and "尚未生效" in rows[cid]["summary"]["zh"]
    assert rows[0]["status"] == "PASS"  # CODEOWNERS governs Check 0, and the base has it


def test_a_template_the_bundle_does_not_hold_is_unread_not_absent(tmp_path: Path) -> None:
    rc, doc, err = _verdict(_without_template(tmp_path, listing=False))
    assert rc == 1, err
    rows = {c["id"]: c for c in doc["checks"]}
    assert rows[5]["status"] == "FAIL" and CHECKLIST in rows[5]["summary"]["en"]
    assert doc["verdict"] == "REJECTED"


def test_a_listing_must_name_every_file_the_bundle_holds(tmp_path: Path) -> None:
    bundle = clone_bundle(BASE, tmp_path / "b")
    (bundle / "tree" / "base.listing").write_text("inferencex-e2e/README.md\n")
    rc, doc, err = _verdict(bundle)
    assert rc == 2 and "tree/base.listing" in err and "Traceback" not in err, err


def test_recorders_write_the_listing(tmp_path: Path) -> None:
    """A bundle written by the recorder keeps the listing; reading it back gives the same paths."""
    from verifier.core.bundle import read_bundle
    from verifier.record.github.record import write_bundle

    src = _without_template(tmp_path, listing=True)
    bundle = read_bundle(src)
    assert bundle.base.listing is not None and bundle.base.absent(CHECKLIST)
    out = tmp_path / "rewritten"
    write_bundle(bundle, out)
    again = read_bundle(out)
    assert again.base.listing == bundle.base.listing
    shutil.rmtree(out)
