"""benchmarks/many_scripts.py, the memory series of a PR that brings many large launch scripts: its
bundle is one the installed verifier judges whole, in a process of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.kit import PROJECT, judge
from tests.render_cli.support import needs_script, verify_pr

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


def test_a_verdict_reads_a_bounded_amount_of_launch_files_and_names_the_first_it_refuses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launches of one verdict read at most MAX_LAUNCH_READ bytes of files
    (verifier.launch.job): a file past the bound is not read, and the point it was read for does
    not resolve, its error naming the file. Bounded just below what the launches read, exactly the
    last file they read is refused; every other launch resolves as before."""
    from verifier.core.bundle import read_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch import job, launches
    from verifier.render.json import render_json

    many_scripts = _benchmark()
    folder = many_scripts.build(tmp_path / "bundle", 3, 2)
    bundle = read_bundle(folder)
    keys = [f"minimaxm31flash{k}-fp4-b300-sglang-agentic-dspark" for k in range(3)]
    free = CheckContext(bundle, load_policies())
    unbounded = launches(free, "head", keys)
    tally = free.memo(job.READ_TALLY, lambda: None)
    assert tally is not None and not unbounded.fatal_errors

    monkeypatch.setattr(job, "MAX_LAUNCH_READ", tally.total - 1)
    bounded = launches(CheckContext(bundle, load_policies()), "head", keys)
    refused = {(e.file, e.kind) for e in bounded.errors if "not read: the launches of one verdict read at most" in e.message}
    assert len(refused) == 1, [str(e) for e in bounded.errors]
    (path, kind), = refused
    assert kind == "input" and ("head", path) in tally.seen
    assert {e.key for e in bounded.fatal_errors} < set(keys)
    kept = {(la.key, la.role, la.recipe_path) for la in bounded.launches}
    assert kept < {(la.key, la.role, la.recipe_path) for la in unbounded.launches}

    # the verdict: a check that needs the launch fails, naming the file in both languages
    verdict = json.loads(render_json(judge(folder)))
    named = [row for row in verdict["checks"] if row["status"] == "FAIL"
             and all(path.rsplit("/", 1)[-1] in row["summary"][lang] for lang in ("en", "zh"))]
    assert verdict["verdict"] == "REJECTED" and named, verdict["checks"]


@needs_script
def test_the_console_script_fails_closed_on_a_pr_whose_launches_read_past_the_bound(tmp_path: Path) -> None:
    """`verify-pr --bundle` on a PR whose configs are started by nine scripts of some 460 KB each
    (mostly comment, so cheap to read): the launches reach MAX_LAUNCH_READ before the last script,
    which is not read. The verdict is REJECTED, and a failing row names that script and the bound in
    both languages."""
    from tests.hostile.generator import sync_files
    from verifier.launch.job import MAX_LAUNCH_READ

    many_scripts = _benchmark()
    bundle = many_scripts.build(tmp_path / "bundle", 9, 1)
    scripts = sorted((bundle / "tree/head/benchmarks/single_node/agentic").glob("minimaxm31flash*_fp4_b300_sglang_mtp.sh"))
    padding = "".join(f"# {k:07d} {'x' * 60}\n" for k in range(MAX_LAUNCH_READ // len(scripts) // 70 + 100))
    for script in scripts:
        shebang, _, rest = script.read_text(encoding="utf-8").partition("\n")
        script.write_text(f"{shebang}\n{padding}{rest}", encoding="utf-8")
    assert sum(p.stat().st_size for p in scripts) > MAX_LAUNCH_READ
    sync_files(bundle)
    done = verify_pr("--bundle", bundle, "--format", "json")
    verdict = json.loads(done.stdout)
    assert verdict["verdict"] == "REJECTED", done.stderr
    bound = f"{MAX_LAUNCH_READ:,}"
    named = [row["id"] for row in verdict["checks"] if row["status"] == "FAIL"
             and all(bound in row["summary"][lang] and any(p.name in row["summary"][lang] for p in scripts)
                     for lang in ("en", "zh"))]
    assert named, [row["summary"]["en"][:300] for row in verdict["checks"] if row["status"] == "FAIL"]


# a line put after the first line of the benchmark scripts -> what the failing row names of it
FAILS_CLOSED = {
    # a trap between commands (verifier.shell.unmodelled)
    "a trap between commands": ("trap 'SGLANG_EXTRA=1' DEBUG", ("DEBUG",)),
    # a download piped into a shell (verifier.shell.builtins.run_shell)
    "a download piped into a shell": ("curl -fsSL https://example.com/setup.sh | bash",
                                      ("standard input", "curl -fsSL https://example.com/setup.sh")),
}


@needs_script
@pytest.mark.parametrize("name", sorted(FAILS_CLOSED))
def test_the_console_script_fails_closed_on_a_line_no_walker_reads_past(tmp_path: Path, name: str) -> None:
    """`verify-pr --bundle` on a PR whose benchmark scripts hold such a line: the launch is not
    resolved, the verdict is REJECTED, and a failing row names the construct and the script's line
    in both languages."""
    from tests.hostile.generator import sync_files

    line, words = FAILS_CLOSED[name]
    bundle = _benchmark().build(tmp_path / "bundle", 1, 1)
    scripts = sorted((bundle / "tree/head/benchmarks/single_node/agentic").glob("minimaxm31flash*_fp4_b300_sglang_mtp.sh"))
    for script in scripts:
        shebang, _, rest = script.read_text(encoding="utf-8").partition("\n")
        script.write_text(f"{shebang}\n{line}\n{rest}", encoding="utf-8")
    sync_files(bundle)
    done = verify_pr("--bundle", bundle, "--format", "json")
    verdict = json.loads(done.stdout)
    assert verdict["verdict"] == "REJECTED", done.stderr
    named = [row["id"] for row in verdict["checks"] if row["status"] == "FAIL"
             and all(all(word in row["summary"][lang] for word in words)
                     and any(f"{p.name}:2" in row["summary"][lang] for p in scripts) for lang in ("en", "zh"))]
    assert named, [row["summary"]["en"][:300] for row in verdict["checks"] if row["status"] == "FAIL"]
