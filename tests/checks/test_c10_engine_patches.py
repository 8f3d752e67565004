"""Check 10 (Engine patches): fixtures, the canonical cases and the signature scanner."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import c10_engine_patches as c10
from tests.checks.fixture_runner import assert_fixture, file_lines, fixture_dirs, params, run_one
from tests.kit import CASES
from verifier.core.policy import load_policies
from verifier.documents.patches import is_scanned, scan_text, setup_script_hits

POLICY = load_policies()["patches"]


@pytest.mark.parametrize("bundle", fixture_dirs(10), ids=lambda p: p.name)
def test_fixture(bundle: Path) -> None:
    assert_fixture(bundle, 10)


def _fx(name: str) -> Path:
    return next(p for p in fixture_dirs(10) if p.name == name)


def test_docstring_and_identity() -> None:
    assert (c10.ID, load_policies()["checks"]["checks"][str(c10.ID)]["name"]) == (10, "Engine patches")
    for heading in ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:"):
        assert heading in (c10.__doc__ or "")


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_cases_pass(case: str) -> None:
    result = run_one(CASES / case, 10)
    assert result.status.value == "PASS"
    assert params(result, "no-engine-patches")["files"] >= 3


def test_waiver_not_linked_fails_and_linked_passes() -> None:
    result = run_one(_fx("fail-waiver-not-linked"), 10)
    assert result.findings[0].message_id == "engine-patch-waiver-not-linked"
    assert ("inferencex-e2e/benchmarks/single_node/quill-fix.sh", 2) in file_lines(result)
    ok = run_one(_fx("pass-waiver"), 10)
    assert {f.message_id for f in ok.findings} == {"patch-waived"}


def test_setup_script_names_recipe_line() -> None:
    result = run_one(_fx("fail-setup-script"), 10)
    p = params(result, "engine-patch-no-waiver")
    assert p["signature"] == "setup-script" and p["file"].endswith("agentic.yaml:13")


# A shell script as text (never executed): one line per signature, plus harmless look-alikes.
END = "E" + "OF"
SCRIPT = "\n".join([
    "#!/bin/bash",
    "git apply /tmp/fix.patch",
    "pip install aiperf==0.3 lm-eval",
    "pip install vllm-benchmarks",
    "pip install sglang==0.5.9",
    "pip install https://example.com/x.whl",
    "sed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/sglang/srt/x.py",
    "sed -i 's/a/b/' results.txt",
    f"python3 - <<'{END}'",
    "import importlib.util, pathlib",
    "p = pathlib.Path(importlib.util.find_spec('sglang').origin).parent / 'srt/x.py'",
    "p.write_text(p.read_text().replace('a', 'b'))",
    END,
    f"python3 - <<{END}",
    "print('hello')",
    END,
    f"cat > /sgl-workspace/sglang/python/sglang/srt/foo.py <<{END}",
    "x = 1",
    END,
    f"cat > results.json <<{END}",
    "{}",
    END,
    "patch -p1 < fix.diff",
    'echo "no patch here"',
    "",
])


def test_scan_text_signatures() -> None:
    hits = [(h.line, h.signature) for h in scan_text("a.sh", SCRIPT, POLICY)]
    assert hits == [(2, "git-apply"), (5, "pip-install-engine"), (6, "pip-install-engine"),
                    (7, "sed-in-place-engine"), (9, "inline-program-rewrites-engine"),
                    (17, "heredoc-into-engine"), (23, "patch-command")]


def test_patch_file_and_setup_key() -> None:
    assert [h.signature for h in scan_text("x/fix.patch", "--- a\n+++ b\n", POLICY)] == ["patch-file"]
    hits = setup_script_hits("r.yaml", {"base": {"setup_script": "s.sh"}}, {("base", "setup_script"): 7}, POLICY)
    assert [(h.line, h.signature) for h in hits] == [(7, "setup-script")]


@pytest.mark.parametrize(("path", "scanned"), [
    ("inferencex-e2e/benchmarks/single_node/x.sh", True), ("inferencex-e2e/docs/waiver/5101.md", False),
    ("benchmarks/fix.patch", True), ("inferencex-e2e/perf-changelog.yaml", False), ("README.md", False)])
def test_scope_of_scan(path: str, scanned: bool) -> None:
    assert is_scanned(path, POLICY) is scanned


def test_serving_stack_only() -> None:
    """Tests and tooling are not the serving stack; a patch file is scanned wherever it is."""
    from verifier.core.policy import load_policies
    from verifier.documents import patches as P

    policy = load_policies()["patches"]
    assert not P.is_scanned("utils/test_process_result.py", policy)
    assert not P.is_scanned("runners/test_slurm_utils.py", policy)
    assert not P.is_scanned("inferencex-e2e/utils/matrix_logic/validation.py", policy)
    assert P.is_scanned("utils/fix.patch", policy)
    assert P.is_scanned("benchmarks/benchmark_lib.sh", policy)


def test_harness_git_apply_and_torchvision_uninstall_are_not_engine_patches() -> None:
    from verifier.core.policy import load_policies
    from verifier.documents import patches as P

    policy = load_policies()["patches"]
    srtctl = "git show 22d46ba --format= -- src/srtctl/core/ip_utils/get_node_ip.sh | git apply - || exit 1\n"
    assert P.scan_text("runners/launch_b300-nv.sh", srtctl, policy) == []
    assert P.scan_text("benchmarks/benchmark_lib.sh", "python3 -m pip uninstall -y torchvision 2>/dev/null || true\n",
                       policy) == []
    assert [h.signature for h in P.scan_text("x.sh", "pip uninstall -y sglang\n", policy)] == ["pip-uninstall-engine"]
    assert [h.signature for h in P.scan_text("x.sh", "git apply /tmp/sglang-fix.patch\n", policy)] == ["git-apply"]


def test_sourced_libraries_are_resolved_statically() -> None:
    from verifier.launch.recipes.legacy_script import sourced_libraries

    text = '#!/bin/bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\nsource /etc/profile\n'
    assert sourced_libraries("benchmarks/single_node/fixed_seq_len/x.sh", text) == [("benchmarks/benchmark_lib.sh", 2)]


def test_sitecustomize_of_a_harness_package_is_not_an_engine_patch() -> None:
    from verifier.core.policy import load_policies
    from verifier.documents import patches as P

    policy = load_policies()["patches"]
    harness = ('cat > "$d/sitecustomize.py" <<\'PY\'\nfrom lm_eval.filters import extraction as ex\n'
               'ex.X = 1\nPY\ncp "$(_eval_patches_dir)/lm_eval_sitecustomize.py" "$d/sitecustomize.py"\n')
    assert P.scan_text("benchmarks/benchmark_lib.sh", harness, policy) == []
    engine = 'cat > "$d/sitecustomize.py" <<\'PY\'\nimport sglang.srt.models.x as m\nm.Y = 2\nPY\n'
    assert [h.signature for h in P.scan_text("benchmarks/x.sh", engine, policy)] == ["sitecustomize"]


def test_a_base_patch_of_a_config_the_pr_does_not_rerun_is_not_judged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """InferenceX PRs 2096 and 2263 edited master entries (a renamed field, removed 1k1k scenarios)
    whose recipes already ran `setup_script: rebuild-deepep.sh`, and appended no changelog entry:
    nothing is re-run, so that base-branch patch is not part of the PR's submission."""
    from tests.checks.fixture_runner import run_one
    from tests.minibundle import BASE_ARGS, BASE_ENV, CHANGELOG_BASE, RECIPE, build, master_text, recipe_text

    recipe = recipe_text(BASE_ARGS, BASE_ENV, setup_script="rebuild-deepep.sh")
    edited = master_text().replace("dram-utilization: 0.8", "dram-utilization: 0.75")
    quiet = build(tmp_path / "quiet", master=edited, base_files={RECIPE: recipe}, head_files={
        RECIPE: recipe, "perf-changelog.yaml": CHANGELOG_BASE}, change_recipe=False)
    result = run_one(quiet, 10)
    assert result.status.value == "PASS", [(f.message_id, f.params) for f in result.findings]
    assert [f.message_id for f in result.findings][-1] == "preexisting-patches-not-rerun"
    rerun = build(tmp_path / "rerun", master=edited, base_files={RECIPE: recipe}, head_files={RECIPE: recipe},
                  change_recipe=False)  # the minibundle appends a changelog entry naming the key
    assert run_one(rerun, 10).findings[0].message_id == "engine-patch-no-waiver"


def test_a_setup_script_kept_in_the_repository_is_judged_by_its_lines(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """InferenceX PR 2404's Kimi-K3 recipes run `setup_script: kimik3-dspark-config-compat.sh`, kept in
    benchmarks/multi_node/srt-slurm-recipes/configs/: it is scanned like any script the launch runs.
    A setup script the bundle does not hold (fetched from srt-slurm) stays a patch by its key."""
    from tests.checks.fixture_runner import run_one
    from tests.minibundle import build

    script = "benchmarks/multi_node/srt-slurm-recipes/configs/quill-deps.sh"
    clean = build(tmp_path / "clean", setup_script="quill-deps.sh",
                  head_files={script: "#!/usr/bin/env bash\npip install msgpack\n"})
    result = run_one(clean, 10)
    assert result.status.value == "PASS", [(f.message_id, f.params) for f in result.findings]
    assert any(f.message_id == "setup-script-scanned" for f in result.findings)
    rewrite = build(tmp_path / "rewrite", setup_script="quill-deps.sh", head_files={
        script: "#!/usr/bin/env bash\nsed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/sglang/srt/x.py\n"})
    bad = run_one(rewrite, 10)
    assert bad.findings[0].message_id == "engine-patch-no-waiver"
    assert bad.findings[0].params["file"] == "benchmarks/multi_node/srt-slurm-recipes/configs/quill-deps.sh:2"
    fetched = run_one(build(tmp_path / "fetched", setup_script="quill-deps.sh"), 10)
    assert fetched.findings[0].params["signature"] == "setup-script"
