"""The committed fixtures/cNN bundles of checks 6, 8, 9, 10, 11 and 13 equal what tests/minibundle.py writes.

Edit the builder (tests/minibundle.py), then run `python -m tests.minibundle` to rewrite them.
"""

from __future__ import annotations

from pathlib import Path

from tests.kit import FIXTURES
from tests.minibundle import FIXTURES_SPEC, write_fixtures
from verifier.core.bundle import read_bundle


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_committed_fixtures_are_current(tmp_path: Path) -> None:
    write_fixtures(tmp_path)
    for check, table in FIXTURES_SPEC.items():
        committed = sorted(p.name for p in (FIXTURES / check).iterdir() if p.is_dir())
        assert committed == sorted(table), f"fixtures/{check} differs from FIXTURES_SPEC"
        for name in table:
            fresh, kept = _files(tmp_path / check / name), _files(FIXTURES / check / name)
            assert fresh == kept, f"fixtures/{check}/{name} is stale: run python -m tests.minibundle"


def test_every_fixture_is_a_valid_bundle() -> None:
    for check, table in FIXTURES_SPEC.items():
        for name in table:
            bundle = read_bundle(FIXTURES / check / name)
            listed = {f.path for f in bundle.pr.files}
            changed = {p for p in set(bundle.base.files) | set(bundle.head.files)
                       if bundle.base.files.get(p) != bundle.head.files.get(p)}
            assert listed == changed, (check, name)
