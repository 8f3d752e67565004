"""Engine names live only in verifier/engines/: everything else asks the engine registry.

Every string literal (read from the syntax tree: docstrings, f-string parts and constants alike) of
every module under verifier/ (but verifier/engines/, the registry, and verifier/shell/, whose
launcher recognition is being moved separately) and under checks/ is compared, stripped and lower
case, with the names an engine goes by: the registered names, their display labels, the master
configs' framework names (policies/launch.yaml `engines`) and the other words for engines (`trt`,
`dynamo`). A hit is a module branching on an engine by name; ask `engine_for` / `engine_or_generic`
/ `engine_named` / `default_engine` / `engines()` instead, or put the knowledge in an engine's
answers or in policy data. A deliberate exception is listed in ALLOWED with its reason.

The second half pins the registry answers that replaced those literals.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import pytest

from verifier.core.policy import load_policies
from verifier.engines import (
    DEFAULT_ENGINE,
    GENERIC,
    default_engine,
    engine_for,
    engine_named,
    engine_or_generic,
    engines,
)

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("verifier", "checks")
SKIPPED = ("verifier/engines/", "verifier/shell/")
OTHER_WORDS = ("trt", "dynamo")  # the master configs' TRT-LLM framework; NVIDIA Dynamo (frontend, frameworks)
# (path relative to the repository, literal as written) -> why it stays. Keep it empty when possible.
ALLOWED: dict[tuple[str, str], str] = {}


@cache
def engine_words() -> frozenset[str]:
    """Every word that names an engine, lower case."""
    words = {engine.name for engine in engines()} | {engine.label.lower() for engine in engines()}
    words |= {str(framework).lower() for framework in load_policies()["launch"]["engines"]}
    return frozenset(words | set(OTHER_WORDS))


def scanned_files() -> Iterator[Path]:
    """The modules the rule covers."""
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith(SKIPPED):
                yield path


def engine_literals(path: Path) -> Iterator[tuple[int, str]]:
    """(line, literal) of every string literal of a module that is an engine's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and node.value.strip().lower() in engine_words():
            yield node.lineno, node.value


def test_the_scan_covers_the_layers_and_knows_every_engine() -> None:
    files = {p.relative_to(ROOT).as_posix() for p in scanned_files()}
    assert "verifier/launch/recipes/bind.py" in files and "checks/c13_draft_precision.py" in files
    assert "verifier/app/hook.py" in files and "verifier/launch/frontend.py" in files
    assert not any(f.startswith(SKIPPED) for f in files)
    assert {"sglang", "vllm", "trtllm", "atom", "tilert", "trt", "dynamo", "dynamo-sglang"} <= engine_words()


def test_no_engine_name_outside_the_engines() -> None:
    found: list[str] = []
    seen: set[tuple[str, str]] = set()
    for path in scanned_files():
        relative = path.relative_to(ROOT).as_posix()
        for line, literal in engine_literals(path):
            seen.add((relative, literal))
            if (relative, literal) not in ALLOWED:
                found.append(f"{relative}:{line}: {literal!r}")
    assert not found, "engine names outside verifier/engines/ (ask the engine registry):\n" + "\n".join(found)
    stale = sorted(set(ALLOWED) - seen)
    assert not stale, f"ALLOWED lists literals that are gone: {stale}"


def test_the_scan_finds_a_name(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('if engine == "SGLang ":\n    pass\nx = f"{y}_trt"\nz = "trt"\n', encoding="utf-8")
    assert sorted(line for line, _ in engine_literals(module)) == [1, 4]


# --- the answers that replaced the literals -------------------------------------------------------


def point(tp: int | None = 4, ep: int = 1, dp_attn: bool = False, dcp_size: int = 1) -> SimpleNamespace:
    """The parallelism of a matrix point (verifier.engines.base.PointShape)."""
    return SimpleNamespace(tp=tp, ep=ep, dp_attn=dp_attn, dcp_size=dcp_size)


def test_engine_named_is_exact_and_default_engine_is_the_declared_one() -> None:
    assert engine_named("sglang") is engine_for("sglang")
    assert engine_named("SGLang") is GENERIC and engine_named(" sglang") is GENERIC and engine_named(None) is GENERIC
    assert engine_or_generic("SGLang") is engine_for("sglang")  # the checks' lookup folds case
    assert default_engine() is engine_for(DEFAULT_ENGINE) and default_engine() is not None


def test_every_engine_has_a_label() -> None:
    assert all(engine.label for engine in engines())
    assert GENERIC.label == ""


def test_dcp_is_answered_by_the_engines_that_run_it() -> None:
    from verifier.launch.recipes.bind import mismatches

    assert [engine.name for engine in engines() if engine.single_node_dcp] == ["vllm", "atom"]
    shape = SimpleNamespace(gpu_count=None, is_agentic=False, scenario="fixed-seq-len", framework="f", conc=4,
                            kv_offloading=None, pp=1, pcp_size=1, dcp_size=2, tp=4, ep=1, dp_attn=False,
                            spec_label="none", spec_decoding="none")
    policy: dict[str, dict[str, list[str]]] = {"spec": {"methods": []}}
    for engine, args in (("tilert", {}), ("foo", {}), ("vllm", {"tensor-parallel-size": 4}), ("atom", {})):
        data = {"engine": {"type": engine}, "roles": {"agg": {"args": args, "gpus": 4}},
                "benchmark": {"type": "custom", "command": "b.sh"}}
        dcp = "DCP is allowed only for vLLM and ATOM" in mismatches(data, shape, None, policy, 8)  # type: ignore[arg-type]
        assert dcp == (engine in ("tilert", "foo")), engine


@pytest.mark.parametrize(("engine", "args", "shape", "gpus", "issues"), [
    ("sglang", {"tensor-parallel-size": 4, "data-parallel-size": 4, "enable-dp-attention": True, "ep-size": 4},
     point(ep=4, dp_attn=True), 4, []),
    ("sglang", {"tensor-parallel-size": "8"}, point(ep=2), 8,
     ["tensor-parallel-size: recipe 8 != point 4", "expert-parallel-size: recipe 1 != point 2"]),
    ("sglang", {"tensor-parallel-size": 4, "expert-parallel-size": None, "ep-size": 2}, point(ep=2), 4,
     ["expert-parallel-size: recipe 1 != point 2"]),  # the first spelling written wins, even when empty
    ("trtllm", {"tensor_parallel_size": 4, "moe_expert_parallel_size": 4, "enable_attention_dp": True},
     point(ep=4, dp_attn=True), 4, []),
    ("trtllm", {}, point(dp_attn=True), 4,
     ["tensor_parallel_size: recipe 1 != point 4", "enable_attention_dp: recipe False != point True"]),
    ("vllm", {"tensor-parallel-size": 2, "data-parallel-size": 2, "enable-expert-parallel": True},
     point(ep=2, dp_attn=True), 4, []),
    ("vllm", {"tensor-parallel-size": 2}, point(ep=2), 4,
     ["tensor-parallel-size x data-parallel-size: recipe 2 != point 4", "enable-expert-parallel does not fit ep 2"]),
    ("atom", {}, point(), 8, ["gpus: recipe 8 != TP 4"]),
    ("tilert", {"anything": 1}, point(tp=8), 2, []),
])
def test_parallelism_issues(engine: str, args: dict[str, object], shape: SimpleNamespace, gpus: int,
                            issues: list[str]) -> None:
    assert engine_or_generic(engine).parallelism_issues(args, shape, gpus) == issues


def test_launch_facts_are_engine_answers() -> None:
    by_name = {engine.name: engine for engine in engines()}
    assert {n for n, e in by_name.items() if e.disaggregation_flag} == {"sglang"}
    assert by_name["sglang"].disaggregation_flag == "--disaggregation-mode"
    assert {n for n, e in by_name.items() if e.options_file_flags} == {"trtllm"}
    assert by_name["trtllm"].options_file_flags == ("config", "extra_llm_api_options", "extra-llm-api-options")
    assert {n: e.framework_aliases for n, e in by_name.items() if e.framework_aliases} == {"trtllm": ("trt",)}
    assert [n for n, e in by_name.items() if e.spec_dumper] == ["sglang", "vllm"]
    assert GENERIC.disaggregation_flag is None and GENERIC.options_file_flags == () and not GENERIC.spec_dumper
    with pytest.raises(NotImplementedError):
        GENERIC.dump_spec(None)


def test_recipe_versions_and_readings() -> None:
    sglang = engine_or_generic("sglang")
    versions = sglang.committed_versions()
    assert versions and list(versions) == sorted(versions, key=lambda v: [int(x) for x in v.split(".")
                                                                          if x.isdigit()], reverse=True)
    assert sglang.recipe_version({"model": {"container": "lmsysorg/sglang:v0.5.16-cu130"}}) is not None
    assert sglang.recipe_version({"model": {"container": "example.com/unknown:1"}}) is None
    resolved = sglang.resolve_version(["--model-path", "/m", "--kv-cache-dtype", "fp8_e4m3"], versions[0])
    assert resolved.value("kv_cache_dtype") == "fp8_e4m3"
    for name in ("vllm", "trtllm", "atom", "tilert"):
        other = engine_or_generic(name)
        assert other.committed_versions() == () and other.recipe_version({}) is None
        assert other.resolve_version(["--x"], "1") is None


def test_frontend_types_are_policy_data() -> None:
    from verifier.launch.frontend import frontend_process

    frontends = load_policies()["launch"]["launcher"]["frontends"]
    data = {"roles": {"prefill": {}, "decode": {}}, "frontend": {"type": "sglang", "args": {"policy": "rr"}}}
    router = frontend_process(data, {}, "", True, frontends)
    assert router is not None and router.module == "sglang_router.launch_router"
    assert router.argv == ("--pd-disaggregation", "--host", "0.0.0.0", "--port", "<frontend_port>", "--policy", "rr")
    data = {"roles": {"agg": {}}, "frontend": {"type": "else"}, "dynamo": {"request_plane": "tcp"}}
    default = frontend_process(data, {}, "", True, frontends)
    assert default is not None and default.type == "else" and default.module == "dynamo.frontend"
    assert default.argv == ("--http-port=<frontend_port>",) and default.env["DYN_REQUEST_PLANE"] == "tcp"
