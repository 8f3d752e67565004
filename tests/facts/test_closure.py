"""The executed closure of a point (verifier.launch.closure) and what it makes of a PR's changes
(verifier.facts.producers): on the approved PR 4524 case, the shipped fixture, and clones of the case
whose base tree holds a benchmark workflow, a runner, its library, the golden-AL injector and a
Python client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.test_closure import (
    BENCH_MAIN,
    BENCH_RUN,
    CLIENT,
    CLIENT_TEXT,
    INJECTOR,
    INJECTOR_BACKEND,
    ROOT,
    RUNNER,
    _both,
    _harness,
    _put,
    _sync_files,
)
from tests.kit import CASES, FIXTURES, clone_bundle, replace_text
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.facts import producers
from verifier.launch.closure import PointClosure, changed_members, point_closures

APPROVED = CASES / "pr4524-approved"
TP4 = ROOT + "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml"
TP2 = ROOT + "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic-tp2.yaml"
BLOCK = ROOT + "configs/srt-recipes/agentic-single.yaml"
WORKFLOW = ".github/workflows/benchmark-tmpl.yml"

WORKFLOW_TEXT = """name: Template - Benchmark (test copy)
on:
  workflow_call:
    inputs:
      runner: {type: string}
jobs:
  benchmark:
    runs-on: ${{ inputs.runner }}
    steps:
      - uses: ./.github/actions/prepare
      - name: Launch job script
        env:
          RUNNER_NAME: ${{ runner.name }}
        run: |
          bash ./runners/launch_${RUNNER_NAME%%_*}.sh
      - name: Process result
        run: |
          python3 utils/process_result.py
          python3 -m utils.agentic.validate results/
"""


def _ctx(bundle: Path) -> CheckContext:
    return CheckContext(bundle=read_bundle(bundle), policies=load_policies())


def _by_point(closures: list[PointClosure]) -> dict[tuple[str, str], PointClosure]:
    return {(c.side, c.exp_name): c for c in closures}


@pytest.mark.parametrize("bundle", [APPROVED, FIXTURES / "pr4524"], ids=["approved-case", "fixture"])
def test_pr4524_closure_lists_what_each_point_runs(bundle: Path) -> None:
    closures = point_closures(_ctx(bundle))
    assert {c.side for c in closures} == {"base", "head"}
    for c in closures:
        assert not c.problems
        assert WORKFLOW in c.paths("workflow") and ".github/workflows/run-sweep.yml" in c.paths("workflow")
        assert c.paths("runner") == [RUNNER]  # label cluster:b300-dsxe
        assert c.paths("shared-block") == [BLOCK]
        assert c.paths("client") == [CLIENT]  # benchmark.command of the shared block
        assert INJECTOR in c.paths("injector") and ROOT + "runners/synthetic_injectors/" in c.paths("injector")
        recipes = c.paths("recipe")
        assert recipes == ([TP2] if "tp2" in c.exp_name else [TP4]), (c.exp_name, recipes)
        for m in c.members:
            assert m.why
            assert m.modelled == (m.role in ("recipe", "shared-block")), m
    by = _by_point(closures)
    assert ("head", "minimaxm31flash_tp2_conc48_kvdram-hicache_spec-draft_model") in by
    assert not any(k[0] == "base" and "tp2" in k[1] for k in by)  # the TP2 points are new


@pytest.mark.parametrize("bundle", [APPROVED, FIXTURES / "pr4524"], ids=["approved-case", "fixture"])
def test_pr4524_changes_nothing_that_produces_evidence(bundle: Path) -> None:
    ctx = _ctx(bundle)
    hits = changed_members(ctx)
    assert TP2 in [h.path for h in hits]  # the fixture also edits the TP4 recipe
    assert all(h.member.role == "recipe" and not h.member.producer for h in hits), hits
    assert producers.edited_producers(ctx) == []
    assert producers.unread_changes(ctx) == []


def _with_workflow(tmp_path: Path) -> Path:
    bundle = clone_bundle(APPROVED, tmp_path)
    _harness(bundle)
    _both(bundle, CLIENT, CLIENT_TEXT)
    _both(bundle, WORKFLOW, WORKFLOW_TEXT)
    _both(bundle, ".github/actions/prepare/action.yml", "runs: {using: composite, steps: []}\n")
    _both(bundle, ROOT + "utils/process_result.py", "import json\n")
    _both(bundle, ROOT + "utils/agentic/validate.py", "from utils.agentic import rules\n")
    _both(bundle, ROOT + "utils/agentic/rules.py", "LIMIT = 0.1\n")
    return bundle


def test_workflow_runner_library_injector_and_client_are_followed(tmp_path: Path) -> None:
    bundle = _with_workflow(tmp_path)
    _sync_files(bundle)
    c = next(c for c in point_closures(_ctx(bundle)) if c.side == "head")
    roles = {m.path: m.role for m in c.members}
    assert roles[".github/actions/prepare/action.yml"] == "action"
    assert roles[ROOT + "utils/process_result.py"] == "result-writer"
    assert roles[ROOT + "utils/"] == "python-module"  # `python3 -m utils.agentic.validate`: the package
    assert roles[ROOT + "utils/agentic/rules.py"] == "python-module"
    assert roles[RUNNER] == "runner"
    assert roles[ROOT + "runners/slurm_utils.sh"] == "library"  # sourced through $(dirname "${BASH_SOURCE[0]}")
    assert roles[INJECTOR] == "injector"  # named by the library through $GITHUB_WORKSPACE
    assert roles[INJECTOR_BACKEND] == "injector"
    assert roles[ROOT + "infx/"] == "python-module"  # the client runs `python3 -m infx.bench`
    assert roles[ROOT + "infx/bench/agentic/run.py"] == "python-module"
    lib = c.member(ROOT + "runners/slurm_utils.sh")
    assert lib is not None and lib.via == RUNNER and lib.line == 3


@pytest.mark.parametrize(("path", "role"), [
    (WORKFLOW, "workflow"),
    (ROOT + "utils/agentic/rules.py", "python-module"),
    (ROOT + "infx/bench/__main__.py", "python-module"),
    (INJECTOR_BACKEND, "injector"),
    (RUNNER, "runner"),
])
def test_an_edited_producer_is_named_with_its_role(tmp_path: Path, path: str, role: str) -> None:
    bundle = _with_workflow(tmp_path)
    target = bundle / "tree" / "head" / path
    target.write_text(target.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    _sync_files(bundle)
    edited = producers.edited_producers(_ctx(bundle))
    assert [(e.path, e.role) for e in edited][:1] == [(path, role)], edited
    assert edited[0].workflow == (role == "workflow")


def test_a_file_under_tests_reached_by_the_harness_is_a_producer(tmp_path: Path) -> None:
    """No floor glob matches tests/: the closure alone names it."""
    bundle = _with_workflow(tmp_path)
    _both(bundle, ROOT + "runners/slurm_utils.sh", "source \"$GITHUB_WORKSPACE/tests/helpers/rescale.sh\"\n")
    _both(bundle, ROOT + "tests/helpers/rescale.sh", "true\n")
    replace_text(bundle / "tree" / "head" / ROOT / "tests/helpers/rescale.sh", "true", "sed -i s/1/9/ result.json")
    _sync_files(bundle)
    edited = producers.edited_producers(_ctx(bundle))
    assert [(e.path, e.role, e.glob) for e in edited] == [(ROOT + "tests/helpers/rescale.sh", "library", "")]


def test_a_recipe_command_that_is_not_a_plain_call_is_an_uncovered_construct(tmp_path: Path) -> None:
    bundle = clone_bundle(APPROVED, tmp_path)
    replace_text(bundle / "tree" / "head" / TP2, "  benchmark:\n    env:\n",
                 "  benchmark:\n    command: bash -c 'bash /infmax-workspace/benchmarks/srt_agentic.sh; "
                 "sed -i s/1/9/ result.json'\n    env:\n", 1)
    _sync_files(bundle)
    ctx = _ctx(bundle)
    unread = producers.unread_changes(ctx)
    assert [(u.path, u.role) for u in unread] == [(TP2, "recipe")]
    assert "sed -i" in unread[0].construct and unread[0].line is not None
    assert producers.edited_producers(ctx) == []  # the recipe itself is modelled; Check 17 reads `unread`


def test_a_plain_recipe_command_joins_the_closure(tmp_path: Path) -> None:
    bundle = clone_bundle(APPROVED, tmp_path)
    replace_text(bundle / "tree" / "head" / TP2, "  benchmark:\n    env:\n",
                 "  benchmark:\n    command: python3 -m tools.agentx --fast\n    env:\n", 1)
    _put(bundle, "head", ROOT + "tools/agentx/__main__.py", "print('replay')\n")
    _sync_files(bundle)
    ctx = _ctx(bundle)
    assert producers.unread_changes(ctx) == [
        producers.Unread(ROOT + "tools/agentx/__main__.py", None, "python-module", "python-module file")]
    assert [e.path for e in producers.edited_producers(ctx)] == [ROOT + "tools/agentx/__main__.py"]


def test_floor_globs_still_apply_outside_the_closure(tmp_path: Path) -> None:
    bundle = clone_bundle(APPROVED, tmp_path)
    _put(bundle, "head", ROOT + "utils/unrelated_tool.py", "print(1)\n")
    _sync_files(bundle)
    edited = producers.edited_producers(_ctx(bundle))
    assert [(e.path, e.role, e.glob) for e in edited] == [(ROOT + "utils/unrelated_tool.py", "", "utils/**")]


def test_an_unreadable_changed_recipe_is_an_uncovered_construct(tmp_path: Path) -> None:
    bundle = clone_bundle(APPROVED, tmp_path)
    replace_text(bundle / "tree" / "head" / TP2, "base:\n", "base:\n  benchmark: {\n", 1)
    _sync_files(bundle)
    unread = producers.unread_changes(_ctx(bundle))
    assert [u.path for u in unread] == [TP2] and "not readable as YAML" in unread[0].construct


def test_rule_data_is_left_to_the_checks_that_read_it(tmp_path: Path) -> None:
    bundle = clone_bundle(APPROVED, tmp_path)
    path = bundle / "tree" / "head" / ROOT / "infx/golden_al_distribution/minimaxm31flash_dspark.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "\n# note\n", encoding="utf-8")
    _sync_files(bundle)
    assert producers.edited_producers(_ctx(bundle)) == []


def test_closure_cost_is_bounded_by_what_it_names(tmp_path: Path) -> None:
    """A runner naming thousands of files it does not hold adds members, never hangs."""
    bundle = _with_workflow(tmp_path)
    _both(bundle, RUNNER, "".join(f"bash ./gen/step_{i}.sh\n" for i in range(3000)))
    _sync_files(bundle)
    c = next(c for c in point_closures(_ctx(bundle)) if c.side == "base")
    assert sum(1 for m in c.members if m.path.startswith(ROOT + "gen/")) == 3000


def test_bench_texts_are_python() -> None:
    compile(BENCH_MAIN, "main", "exec")
    compile(BENCH_RUN, "run", "exec")


def test_a_change_the_file_list_hides_still_counts(tmp_path: Path) -> None:
    bundle = _with_workflow(tmp_path)
    _sync_files(bundle)  # the list matches the trees; now edit the runner without listing it
    replace_text(bundle / "tree" / "head" / RUNNER, "srtctl apply", "sed -i s/1/9/ result.json; srtctl apply")
    edited = producers.edited_producers(_ctx(bundle))
    assert [(e.path, e.role) for e in edited] == [(RUNNER, "runner")]
