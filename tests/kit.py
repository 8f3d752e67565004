"""Test helpers: locate bundles, clone one into a temp dir, edit its files, judge it."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

PROJECT = Path(__file__).resolve().parents[1]
SHARED = (PROJECT / ".." / "shared").resolve()
CASES = SHARED / "cases"
REFERENCE_DATA = SHARED / "reference" / "data"
FIXTURES = PROJECT / "fixtures"


def clone_bundle(src: Path, dst: Path) -> Path:
    """Copy a bundle directory into dst (a tmp_path) so a test can edit it; returns the copy."""
    target = dst / src.name
    shutil.copytree(src, target)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    target.chmod(0o755)
    return target


def read_yaml(path: Path) -> Any:
    """Load a YAML file round-trip (comments and order preserved)."""
    yaml = YAML(typ="rt")
    return yaml.load(path.read_text(encoding="utf-8"))


def write_yaml(path: Path, data: Any) -> None:
    """Write YAML round-trip."""
    yaml = YAML(typ="rt")
    yaml.width = 4096
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)


def edit_yaml(path: Path, change: Callable[[Any], Any]) -> None:
    """Load, change (in place or by returning a new document), and write back a YAML file."""
    data = read_yaml(path)
    result = change(data)
    write_yaml(path, data if result is None else result)


def replace_text(path: Path, old: str, new: str, count: int = -1) -> None:
    """Replace text in a file, asserting that the old text is there."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def judge(bundle_dir: Path, only: set[int] | None = None) -> Any:
    """Read and judge a bundle; returns the runner's Report."""
    from checks import judge, select
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies

    return judge(read_bundle(bundle_dir), load_policies(), select(only=only))


def row(report: Any, check_id: int) -> Any:
    """The row of one check in a report."""
    return next(r for r in report.rows if r.id == check_id)


def row_summary(r: Any, sep: str = "\n") -> str:
    """A report row's rendered summary: English, then Chinese, joined by sep."""
    from verifier.render.text import render_summary

    return render_summary(r.id, r.result, "en") + sep + render_summary(r.id, r.result, "zh")


def list_tree_changes(bundle_dir: Path) -> list[str]:
    """Add to pr.yaml `files` every path both trees hold with different bytes that the list lacks.

    Mutation tests edit one tree of a copied bundle to model a PR that changes that file; BUNDLE.md
    requires `files` to agree with the diff (Check 0 fails a list that hides a change), so the
    mutated PR lists it too. pr.yaml is edited as text (only when something is added), so its
    formatting is kept. Returns the paths added.
    """
    from verifier.core.bundle import read_bundle

    bundle = read_bundle(bundle_dir)
    listed = {f.path for f in bundle.pr.files} | {f.previous_path for f in bundle.pr.files if f.previous_path}
    base, head = bundle.base.files, bundle.head.files
    added = sorted(p for p in base.keys() & head.keys() if p not in listed and base[p] != head[p])
    if added:
        pr = bundle_dir / "pr.yaml"
        text = pr.read_text(encoding="utf-8")
        marker = "\nfiles:\n"
        assert marker in text, "pr.yaml has no block-style files list"
        after = text.split(marker, 1)[1]
        indent = after[: len(after) - len(after.lstrip(" "))] if after.lstrip(" ").startswith("- ") else "  "
        entries = "".join(f"{indent}- {{path: {p}, status: modified}}\n" for p in added)
        pr.write_text(text.replace(marker, marker + entries, 1), encoding="utf-8")
    return added


def call_events(fn: Callable[[], Any]) -> int:
    """Python and C call events while fn runs: a deterministic count of the work done (tests of
    linear cost compare counts, never timings)."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count
