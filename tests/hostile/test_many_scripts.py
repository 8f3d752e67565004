"""benchmarks/many_scripts.py, the memory series of a PR that brings many large launch scripts: its
bundle is one the installed verifier judges whole, in a process of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.kit import PROJECT, judge

BENCHMARK = PROJECT / "benchmarks" / "many_scripts.py"


def test_the_benchmark_prints_a_verdict_and_a_peak_for_each_count(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCHMARK), "--counts", "1,2", "--kib", "4"], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[2:]]
    assert [row[0] for row in rows] == ["1", "2"]
    assert all(row[4] == "REJECTED" and int(row[2]) > 0 for row in rows), done.stdout


def _benchmark() -> ModuleType:
    """benchmarks/many_scripts.py, imported (its `build` makes the bundle)."""
    sys.path.insert(0, str(PROJECT / "benchmarks"))
    try:
        import many_scripts
    finally:
        sys.path.remove(str(PROJECT / "benchmarks"))
    return many_scripts


def test_each_added_config_is_started_by_its_own_script(tmp_path: Path) -> None:
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch import launches

    many_scripts = _benchmark()
    bundle = many_scripts.build(tmp_path / "bundle", 3, 2)
    ctx = CheckContext(read_bundle(bundle), load_policies())
    keys = [f"minimaxm31flash{k}-fp4-b300-sglang-agentic-dspark" for k in range(3)]
    found = launches(ctx, "head", keys)
    assert not found.fatal_errors, [str(e) for e in found.errors]
    started = {(la.key, la.recipe_path.rsplit("/", 1)[-1]) for la in found.launches}
    assert started == {(key, f"minimaxm31flash{k}_fp4_b300_sglang_mtp.sh") for k, key in enumerate(keys)}


def test_emptying_the_process_caches_midway_changes_nothing_of_the_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_PARSED_TEXT characters parsed, every process cache is emptied before the next parse
    (verifier.shell.parser): what they kept is computed again, the same. A verdict that empties them
    before nearly every parse renders the same JSON as one that never does."""
    from verifier.core import processcache
    from verifier.render.json import render_json
    from verifier.shell import parser

    many_scripts = _benchmark()
    bundle = many_scripts.build(tmp_path / "bundle", 3, 2)
    processcache.clear_all()
    calm = render_json(judge(bundle))
    emptied = []
    monkeypatch.setattr(parser, "MAX_PARSED_TEXT", 1_000)
    monkeypatch.setattr(processcache, "clear_all", lambda real=processcache.clear_all: (emptied.append(1), real())[1])
    processcache.clear_all()
    stormy = render_json(judge(bundle))
    assert len(emptied) > 10 and stormy == calm
