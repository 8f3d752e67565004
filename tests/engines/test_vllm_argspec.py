"""verifier.engines.vllm: the spec parser, vLLM's command-line rewriting, launchers and the versions policy."""

from __future__ import annotations

import json

import pytest

from verifier.engines import engine_for
from verifier.engines.vllm import (
    UnknownVllmVersion,
    VllmArgError,
    available_versions,
    resolve_vllm,
    split_launcher,
)
from verifier.engines.vllm.argspec import human_readable_int, load_argspec, preprocess
from verifier.engines.vllm.versions import candidate_versions, version_for_image

NEWEST = available_versions()[-1]
FEATURES = load_argspec(NEWEST).features


def test_committed_versions_cover_the_inferencex_release_tags() -> None:
    have = set(available_versions())
    for version in ("0.17.0", "0.19.1", "0.20.1", "0.21.0", "0.22.0", "0.23.0", "0.24.0", "0.25.0", "0.25.1",
                    "0.26.0", "0.27.1"):
        assert version in have, version


@pytest.mark.parametrize(("image", "version"), [
    ("vllm/vllm-openai:v0.25.1", "0.25.1"),
    ("vllm/vllm-openai:v0.20.1-ubuntu2404", "0.20.1"),
    ("vllm/vllm-openai-rocm:v0.22.0", "0.22.0"),
    ("docker.io/vllm/vllm-openai:v0.24.0@sha256:" + "a" * 64, "0.24.0"),
    ("vllm/vllm-openai:vllm-x86_64-cu13-0.25.1-7a33ba9", "0.25.1"),
])
def test_release_tags_name_the_version(image: str, version: str) -> None:
    assert version_for_image(image) == version


@pytest.mark.parametrize("image", ["vllm/vllm-openai:nightly-93d8f834dd8acf33eb0e2a75b2711b628cb6e226",
                                   "vllm/vllm-openai:minimax-m3", "vllm/vllm-openai:vllm-minimax-m3-perf-x86_64-13.0.1-8b00f41",
                                   "vllm/vllm-openai", "not an image"])
def test_other_tags_are_unknown_and_read_across_versions(image: str) -> None:
    with pytest.raises(UnknownVllmVersion):
        version_for_image(image)
    versions, how = candidate_versions(image)
    assert how == "unknown-image" and versions == tuple(available_versions())


def test_preprocess_rewrites_like_flexible_argument_parser() -> None:
    assert preprocess(["--tensor_parallel_size", "2", "--kv_cache_dtype=fp8"], FEATURES) == [
        "--tensor-parallel-size", "2", "--kv-cache-dtype=fp8"]
    out = preprocess(["m", "--speculative_config.method", "mtp", "--speculative-config.num_speculative_tokens=2"],
                     FEATURES)
    assert out[:1] == ["m"] and out[1] == "--speculative-config"
    assert json.loads(out[2]) == {"method": "mtp", "num_speculative_tokens": 2}
    assert preprocess(["-O3"], FEATURES) == ["--optimization-level", "3"]
    assert preprocess(["-O", "3"], FEATURES) == ["--optimization-level", "3"]
    assert json.loads(preprocess(["--hf-overrides.a+", "x,y"], FEATURES)[1]) == {"a": ["x", "y"]}
    with pytest.raises(VllmArgError, match="YAML file"):
        preprocess(["--config", "c.yaml"], FEATURES)


def test_human_readable_int() -> None:
    assert human_readable_int("2k") == 2000 and human_readable_int("2K") == 2048 and human_readable_int("25.6k") == 25600
    with pytest.raises(Exception, match="Decimals"):
        human_readable_int("1.5K")


def test_resolve_reads_aliases_json_and_booleans() -> None:
    r = resolve_vllm(["vllm", "serve", "org/m", "-tp", "4", "--speculative-config",
                      '{"method": "mtp", "num_speculative_tokens": 2}', "--no-enable-prefix-caching", "-q", "fp8"],
                     version=NEWEST)
    assert r.launcher == ("vllm", "serve") and r.namespace["model"] == "org/m"
    assert r.namespace["tensor_parallel_size"] == 4 and r.flag_for("tensor_parallel_size") == "-tp"
    assert r.namespace["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 2}
    assert r.namespace["enable_prefix_caching"] is False and r.namespace["quantization"] == "fp8"
    assert r.namespace["kv_cache_dtype"] == "auto" and not r.is_given("kv_cache_dtype")


def test_serve_moves_model_option_to_the_positional() -> None:
    r = resolve_vllm(["vllm", "serve", "-tp", "2", "--model", "org/m"], version=NEWEST)
    assert r.namespace["model_tag"] == "org/m" and r.namespace["model"] == "org/m"
    assert split_launcher(["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"])[0] == (
        "python3", "-m", "vllm.entrypoints.openai.api_server")


def test_refusals_carry_argparse_messages() -> None:
    with pytest.raises(VllmArgError) as info:
        resolve_vllm(["m", "--kv-cache-dtype", "fp9"], version=NEWEST)
    assert info.value.kind == "invalid-choice" and info.value.flag == "--kv-cache-dtype"
    with pytest.raises(VllmArgError) as info:
        resolve_vllm(["m", "--model-path", "/model"], version=NEWEST)
    assert info.value.kind == "unrecognized"


def test_dataclass_arguments_are_kept_as_written_and_marked_unmodelled() -> None:
    r = resolve_vllm(["m", "--compilation-config", '{"cudagraph_mode": "FULL"}'], version=NEWEST)
    assert r.namespace["compilation_config"] == {"cudagraph_mode": "FULL"}
    assert "compilation_config" in r.unmodelled


def test_runtime_values_and_unknown_images_through_the_engine() -> None:
    argv = ("m", "--speculative-config", '{"method": "eagle3", "model": "$DRAFT", "num_speculative_tokens": 3}',
            "--kv-cache-dtype", "fp8")
    engine = engine_for("vllm")
    r = engine.resolve(argv, "vllm/vllm-openai:nightly-93d8f834dd8acf33eb0e2a75b2711b628cb6e226",
                       needed=("kv_cache_dtype", "speculative_config"))
    assert r.runtime == {"speculative_config": argv[2]} and r.namespace["kv_cache_dtype"] == "fp8"
    assert len(r.versions) == len(available_versions())
    assert engine.resolve(argv, "vllm/vllm-openai:v0.25.1", needed=("kv_cache_dtype",)).version == "0.25.1"


def test_spec_files_are_well_formed() -> None:
    for version in available_versions():
        spec = load_argspec(version)
        dests = [a["dest"] for a in spec.data["actions"]]
        assert {"kv_cache_dtype", "quantization", "speculative_config", "hf_overrides", "model"} <= set(dests)
        assert spec.features["underscore_flags"] and spec.features["dotted"]
        spec.build_parser()


def test_draft_issues_read_the_speculative_config_as_vllm_does() -> None:
    from tests.engines.test_registry import FakeLaunch

    policy = {"neutral_values": ["none", "auto"], "draft_quantization_args": {"vllm": []},
              "draft_config_keys": ["quantization", "dtype"], "atom_online_quant_args": [],
              "atom_draft_layer_markers": []}
    launch = FakeLaunch("vllm", image="vllm/vllm-openai:v0.25.0",
                        argv=("m", "--speculative-config.method", "mtp", "--speculative-config.quantization", "fp8"))
    found = engine_for("vllm").draft_issues(launch, lambda flag: ("recipes/r.yaml", None), policy)
    assert [(i.kind, i.name, i.value) for i in found] == [
        ("draft-config-quantization", "speculative-config.quantization", "fp8")]


def test_hostile_command_lines_are_refused_not_crashed() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    for argv in (["m", "--speculative-config", deep], ["m", "--hf-overrides." + "a." * 200 + "b", "1"],
                 ["m", "--hf-overrides.a", deep], ["m"] * 5000, ["m", "--kv-cache-dtype", "x" * (2 << 20)]):
        with pytest.raises(VllmArgError):
            resolve_vllm(argv, version=NEWEST)
