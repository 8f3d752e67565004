"""InferenceX-like files built at run time from the real ones under ../shared/reference/data.

* `schema2_recipe()`: the reference GLM-5.2 NVFP4 B300 SGLang recipe (schema 2), as committed.
* `srtctl_recipe(roles)`: the same engine arguments and environment in an srtctl recipe of the old
  layout (SRT_SLURM.md section 2: `roles.<r>.args` is `backend.sglang_config.<mode>`, `env` is
  `backend.<mode>_environment`, `engine` is `backend.type`), one block per role.
* `benchmark_script()`: an old-layout single-node launcher (FORMATS.md 0.1,
  `benchmarks/single_node/{agentic,fixed_seq_len}/*.sh`) that starts the server with the same
  arguments, its speculative ones only when the point speculates.

The srtctl recipe and the script leave the target KV cache at its default (the reference sets
`kv-cache-dtype: fp8_e4m3`; without it SGLang's `auto` is the model dtype, bf16), so
`add_draft_kv` writes exactly the draft-only cut Check 13 FAILs. Nothing here runs a file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.kit import FIXTURES, REFERENCE_DATA

REF = REFERENCE_DATA / "inferencex-e2e"
GLM = "benchmarks/single_node/srt-slurm-recipes/glm5.2/sglang/b300-fp4-mtp/agentic.yaml"
SRTCTL = "benchmarks/multi_node/srt-slurm-recipes/glm5.2/sglang/gb300-fp4/disagg.yaml"
SCRIPT = "benchmarks/single_node/agentic/glm5.2_fp4_b300_sglang.sh"
DRAFT = "speculative-draft-kv-cache-dtype"
ANCHOR = "speculative-num-draft-tokens"  # the draft flag is written after this argument


def need_reference() -> None:
    """Skip when ../shared/reference is not beside the checkout."""
    if not (REF / GLM).is_file():
        pytest.skip("../shared/reference is not available")


def schema2_recipe() -> str:
    """The reference recipe, unchanged."""
    need_reference()
    return (REF / GLM).read_text(encoding="utf-8")


def _blocks() -> tuple[list[str], list[str], list[str]]:
    """(leading comment lines, the agg role's arg lines, its env lines) of the reference recipe."""
    lines = schema2_recipe().split("\n")
    header = []
    for line in lines:
        if not line.startswith("#"):
            break
        header.append(line)
    args_at, env_at, bench_at = lines.index("      args:"), lines.index("      env:"), lines.index("  benchmark:")
    args = [line for line in lines[args_at + 1:env_at] if not line.strip().startswith("kv-cache-dtype:")]
    return header, args, lines[env_at + 1:bench_at]


def srtctl_recipe(roles: tuple[str, ...] = ("prefill", "decode")) -> str:
    """An old-layout srtctl recipe whose roles run the reference arguments (target KV at auto)."""
    header, args, env = _blocks()
    data = yaml.safe_load(schema2_recipe())["base"]
    model = data["model"]
    out = [*header, f"name: {data['name']}-srtctl", "model:", "  path: glm5.2",
           f"  container: {model['container']}", f"  precision: {model['precision']}",
           "resources:", "  gpu_type: gb300", "  gpus_per_node: 4"]
    for role in roles:
        key = "agg" if role == "aggregated" else role
        out += [f"  {key}_nodes: 2", f"  {key}_workers: 1"]
    out += ["backend:", "  type: sglang"]
    for role in roles:
        out += [f"  {role}_environment:", *(line[4:] for line in env)]
    out += ["  sglang_config:"]
    for role in roles:
        out += [f"    {role}:", *(line[2:] for line in args)]
    out += ["benchmark:", "  type: custom", "  command: bash /infmax-workspace/benchmarks/srt_agentic.sh", ""]
    return "\n".join(out)


def benchmark_script() -> str:
    """An old-layout launcher starting the reference arguments (speculation only when SPEC_DECODING says so)."""
    data = yaml.safe_load(schema2_recipe())["base"]
    role = data["roles"]["agg"]
    words = []
    spec = []
    for key, value in role["args"].items():
        if key in ("kv-cache-dtype", "served-model-name", "tensor-parallel-size"):
            continue
        word = f"--{key}" if value is True else f"--{key} {value}"
        (spec if key.startswith("speculative-") else words).append(f"        {word}")
    exports = [f"export {k}={v}" for k, v in role["env"].items()]
    return "\n".join([
        "#!/usr/bin/env bash",
        "# GLM-5.2 NVFP4 AgentX on B300 with SGLang EAGLE off the checkpoint's nextn head.",
        "set -eo pipefail",
        'source "$(dirname "$0")/../../benchmark_lib.sh"',
        "check_env_vars MODEL TP CONC KV_OFFLOADING SPEC_DECODING",
        "",
        'SERVER_LOG="$RESULT_DIR/server.log"',
        *exports,
        "",
        "SPEC=()",
        'if [ "$SPEC_DECODING" != "none" ]; then',
        "    SPEC=(",
        *spec,
        "    )",
        "fi",
        "",
        "CMD=(",
        "    python3 -m sglang.launch_server",
        '        --model-path "$MODEL"',
        f"        --served-model-name {data['model']['path'].removeprefix('hf:')}",
        '        --tensor-parallel-size "$TP"',
        *words,
        '        "${SPEC[@]}"',
        "        --host 0.0.0.0",
        '        --port "$PORT"',
        ")",
        '"${CMD[@]}" > "$SERVER_LOG" 2>&1 &',
        "",
    ])


def add_draft_kv(text: str, *, role: str | None = None, spelling: str = "yaml") -> tuple[str, int]:
    """The text with a draft-only `speculative-draft-kv-cache-dtype fp8_e4m3` written after the
    draft-token count (of `role` in an srtctl recipe), and the line it is on.

    `spelling`: `yaml` (`key: value`), `argv` (`--flag value`) or `equals` (`--flag=value`).
    """
    lines = text.split("\n")
    start = lines.index(f"    {role}:") if role else 0
    at = next(i for i in range(start, len(lines)) if ANCHOR in lines[i])
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    written = {"yaml": f"{DRAFT}: fp8_e4m3", "argv": f"--{DRAFT} fp8_e4m3", "equals": f"--{DRAFT}=fp8_e4m3"}[spelling]
    lines.insert(at + 1, indent + written)
    return "\n".join(lines), at + 2


def comment_only_edit(text: str) -> str:
    """The same file with comments and blank lines added, a trailing comment and a comment inside
    the block that holds the draft flag: nothing a rule reads changes."""
    lines = text.split("\n")
    shebang = 1 if lines and lines[0].startswith("#!") else 0
    lines.insert(shebang, "# Retuned for the GB300 NVL72 racks; see the PR description.")
    at = next(i for i, line in enumerate(lines) if ANCHOR in line)
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, f"{indent}# the draft length the golden AL curve covers")
    lines[at + 1] += "  # three speculative tokens"
    lines.insert(at + 2, "")
    return "\n".join(lines)


def value_edit(text: str) -> str:
    """The same file with one engine argument changed (something the rules read)."""
    assert "0.85" in text
    return text.replace("0.85", "0.84", 1)


def reference_tree() -> dict[str, bytes]:
    """A new-layout InferenceX tree of the reference files (master config and runners excerpts,
    checklist with the draft-precision record item, MODELS.md, waivers, recipes, golden AL curves,
    eval thresholds, changelog), plus the shared agentic block and client script the recipes
    run, which the reference does not carry (taken from this project's fixtures)."""
    need_reference()
    renamed = {"configs/nvidia-master.excerpt.yaml": "configs/nvidia-master.yaml",
               "configs/runners.excerpt.yaml": "configs/runners.yaml",
               "perf-changelog.excerpt.yaml": "perf-changelog.yaml"}
    files: dict[str, bytes] = {}
    for path in sorted(REF.rglob("*")):
        rel = path.relative_to(REF).as_posix()
        if path.is_file() and not rel.startswith("infx/evals/thresholds.variant"):
            files["inferencex-e2e/" + renamed.get(rel, rel)] = path.read_bytes()
    for path in sorted((REFERENCE_DATA / "golden_al_distribution").glob("*.yaml")):
        files[f"inferencex-e2e/infx/golden_al_distribution/{path.name}"] = path.read_bytes()
    files[".github/CODEOWNERS"] = (REFERENCE_DATA / ".github" / "CODEOWNERS").read_bytes()
    support = FIXTURES / "c13" / "pass-as-shipped" / "tree" / "base" / "inferencex-e2e"
    for rel in ("configs/srt-recipes/agentic-single.yaml", "benchmarks/srt_agentic.sh"):
        files["inferencex-e2e/" + rel] = (support / rel).read_bytes()
    return files


def write(root: Path, rel: str, text: str) -> Path:
    """Write a file under root (folders made)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
