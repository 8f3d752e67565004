"""The arg-spec parser: argparse behaviour SGLang launch commands depend on (SGLANG.md §4)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.kit import PROJECT
from verifier.engines.argspec.parsing import EngineArgError, UnknownEngineVersion
from verifier.engines.sglang import available_versions, load_argspec, resolve_sglang, split_launcher
from verifier.engines.sglang.argspec import ArgSpec, human_readable_int, spec_path
from verifier.engines.sglang.dump import spec_of_parser

V23, V16 = "0.5.23", "0.5.16"


def parse(*argv: str, version: str = V23):
    return resolve_sglang(["--model-path", "/m", *argv], version=version)


def error(*argv: str, version: str = V23) -> EngineArgError:
    with pytest.raises(EngineArgError) as info:
        parse(*argv, version=version)
    return info.value


def test_committed_specs() -> None:
    assert {V16, V23} <= set(available_versions())  # every version: tests/sglang/test_specs_versions.py
    for version, count in ((V23, 531), (V16, 460)):
        spec = load_argspec(version)
        assert spec.data["sglang_version"] == version
        assert spec.data["allow_abbrev"] is True
        assert len(spec.actions) == count
        spec.build_parser()
        assert not spec.unknown_types  # every custom type is re-implemented


@pytest.mark.parametrize("version", [V16, V23])
def test_rebuilt_parser_redumps_to_the_committed_spec(version: str) -> None:
    """Rebuild from JSON, dump the rebuilt parser again: every field but class/type names survives."""
    spec = load_argspec(version)
    again = spec_of_parser(spec.build_parser(), version)
    keys = ("option_strings", "dest", "nargs", "const", "default", "choices", "required")
    assert [{k: a[k] for k in keys} for a in again["actions"]] == [{k: a[k] for k in keys} for a in spec.actions]
    for mine, committed in zip(again["actions"], spec.actions, strict=True):
        for extra in ("new_flag", "const_value", "error_message"):
            assert mine.get(extra) == committed.get(extra)


def test_aliases_share_a_dest() -> None:
    a = resolve_sglang(["--model", "/m", "--tensor-parallel-size", "4", "--ep", "2"], version=V23)
    b = resolve_sglang(["--model-path", "/m", "--tp-size", "4", "--expert-parallel-size", "2"], version=V23)
    assert a.namespace == b.namespace
    assert a.namespace["tp_size"] == 4 and a.namespace["ep_size"] == 2
    assert a.flag_for("tp_size") == "--tensor-parallel-size"
    assert a.flag_for("model_path") == "--model"
    assert parse("--enable-hicache").namespace["enable_hierarchical_cache"] is True


def test_equals_forms() -> None:
    r = resolve_sglang(["--model-path=/m", "--tp-size=8", "--kv-cache-dtype=fp8_e4m3"], version=V23)
    assert r.namespace["tp_size"] == 8 and r.namespace["kv_cache_dtype"] == "fp8_e4m3"
    use = r.use_for("tp_size")
    assert use and use.explicit_value == "8" and use.written == "--tp-size" and not use.abbreviated


def test_prefix_abbreviations_are_accepted_and_reported() -> None:
    r = parse("--tp", "8", "--mem-frac=0.8")
    assert r.namespace["tp_size"] == 8 and r.namespace["mem_fraction_static"] == 0.8
    assert r.flag_for("tp_size") == "--tp"
    assert {(u.written, u.option_string) for u in r.abbreviated} == {
        ("--tp", "--tp-size"), ("--mem-frac", "--mem-fraction-static")}


def test_ambiguous_prefix_023_rejects_cuda_graph_max_bs() -> None:
    err = error("--cuda-graph-max-bs", "64")
    assert err.kind == "ambiguous" and err.flag == "--cuda-graph-max-bs"
    assert err.message == ("ambiguous option: --cuda-graph-max-bs could match "
                           "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill")
    assert err.version == V23 and err.mode == "argspec"


def test_016_accepts_cuda_graph_max_bs_as_deprecated_alias() -> None:
    r = parse("--cuda-graph-max-bs", "64", version=V16)
    assert r.namespace["cuda_graph_max_bs_decode"] == 64
    (use,) = r.deprecated
    assert use.written == "--cuda-graph-max-bs" and use.new_flag == "--cuda-graph-max-bs-decode"
    assert "cuda_graph_max_bs_decode" in r.given


def test_restated_default_is_given_but_default_is_not() -> None:
    restated = parse("--kv-cache-dtype", "auto")
    plain = parse()
    assert restated.namespace == plain.namespace
    assert restated.is_given("kv_cache_dtype") and not plain.is_given("kv_cache_dtype")
    assert plain.flag_for("kv_cache_dtype") is None
    assert plain.given == frozenset({"model_path"})


@pytest.mark.parametrize(
    ("argv", "kind", "fragment"),
    [
        (("--hf-overrides", "{}"), "unrecognized", "unrecognized arguments: --hf-overrides {}"),
        (("--kv_cache_dtype", "fp8_e4m3"), "unrecognized", "unrecognized arguments: --kv_cache_dtype"),
        (("--enable-hierarchical-cache", "true"), "unrecognized", "unrecognized arguments: true"),
        (("--kv-cache-dtype", "fp8"), "invalid-choice", "invalid choice: 'fp8'"),
        (("--schedule-policy", "LPM"), "invalid-choice", "invalid choice: 'LPM'"),
        (("--speculative-draft-kv-cache-dtype", "fp8"), "invalid-choice", "argument --speculative-draft-kv-cache-dtype"),
        (("--hicache-size", "1.5"), "invalid-value", "invalid int value: '1.5'"),
        (("--context-length", "1.5Ki"), "invalid-value", "Decimals are not allowed with IEC suffixes"),
        (("--tp-size",), "missing-value", "expected one argument"),
        (("--trust-remote-code=yes",), "unexpected-value", "ignored explicit argument 'yes'"),
        (("--cuda-graph-config", '{"decode": {"backend": "tc_piecewise"}}'), "invalid-value", "tc_piecewise was removed"),
        (("--cuda-graph-config", '{"decode": {"bogus": 1}}'), "invalid-value", "unknown key 'bogus'"),
        (("-h",), "help", "help requested"),
    ],
)
def test_errors_carry_argparse_messages(argv: tuple[str, ...], kind: str, fragment: str) -> None:
    err = error(*argv)
    assert err.kind == kind, err.message
    assert fragment in err.message


def test_missing_required_model_path() -> None:
    with pytest.raises(EngineArgError) as info:
        resolve_sglang(["--tp", "2"], version=V23)
    assert info.value.kind == "required"
    assert info.value.message == "the following arguments are required: --model-path/--model"


def test_raise_errors_false_returns_the_error() -> None:
    r = resolve_sglang(["--model-path", "/m", "--bogus"], version=V23, raise_errors=False)
    assert not r.ok and r.error and r.error.kind == "unrecognized" and not r.namespace


def test_custom_types() -> None:
    r = parse("--context-length", "128k", "--max-total-tokens", "25.6k")
    assert r.namespace["context_length"] == 128000 and r.namespace["max_total_tokens"] == 25600
    assert parse("--context-length", "128Ki").namespace["context_length"] == 131072
    assert human_readable_int(" 7 ") == 7
    assert parse("--quantization-param-path", "None").namespace["quantization_param_path"] is None
    assert parse("--quantization-param-path", "").namespace["quantization_param_path"] is None
    assert parse("--quantization-param-path", "/q").namespace["quantization_param_path"] == "/q"
    assert parse("--forward-hooks", "[1, 2]").namespace["forward_hooks"] == [1, 2]
    assert "Invalid JSON list: nope" in error("--forward-hooks", "nope").message
    assert "Invalid JSON list" in error("--forward-hooks", "[NaN]").message  # orjson is strict
    assert parse("--default-chat-template-kwargs", '{"t": true}').namespace["default_chat_template_kwargs"] == {"t": True}
    assert "invalid loads value" in error("--default-chat-template-kwargs", "{x").message
    r = parse("--cuda-graph-config", '{"decode": {"backend": "full", "max_bs": 8}}')
    assert r.namespace["cuda_graph_config"] == {"decode": {"backend": "full", "max_bs": 8}}
    assert parse("--json-model-override-args", '{"a": 1}').namespace["json_model_override_args"] == '{"a": 1}'
    lora = parse("--lora-paths", "a=/x", '{"lora_name": "b", "lora_path": "/y"}').namespace["lora_paths"]
    assert lora == ["a=/x", {"lora_name": "b", "lora_path": "/y"}]


def test_016_cuda_graph_config_accepts_tc_piecewise() -> None:
    r = parse("--cuda-graph-config", '{"decode": {"backend": "tc_piecewise"}}', version=V16)
    assert r.namespace["cuda_graph_config"] == {"decode": {"backend": "tc_piecewise"}}


def test_nargs_plus_and_last_one_wins() -> None:
    r = parse("--cuda-graph-bs-decode", "1", "2", "4", "--max-running-requests", "64", "--max-running-requests", "128")
    assert r.namespace["cuda_graph_bs_decode"] == [1, 2, 4]
    assert r.namespace["max_running_requests"] == 128
    assert [u.index for u in r.uses if u.dest == "max_running_requests"] == [6, 8]


def test_boolean_optional_action() -> None:
    assert parse().namespace["enable_tf32_matmul"] is None
    assert parse("--no-enable-tf32-matmul").namespace["enable_tf32_matmul"] is False
    assert parse("--enable-tf32-matmul").namespace["enable_tf32_matmul"] is True
    assert parse().namespace["dllm_fdfo"] is True
    # 0.5.16: still a store_true with default False
    assert parse(version=V16).namespace["enable_tf32_matmul"] is False


def test_deprecated_flags_023() -> None:
    r = parse("--disable-cuda-graph", "--enable-dp-attention", "--monokernel-backend", "amd")
    assert r.namespace["disable_cuda_graph"] is True and r.namespace["enable_dp_attention"] is True
    assert r.namespace["enable_amd_monokernel"] is True
    assert {u.written for u in r.deprecated} == {"--disable-cuda-graph", "--enable-dp-attention", "--monokernel-backend"}
    assert all(u.new_flag for u in r.deprecated if u.written == "--disable-cuda-graph")


def test_016_retired_flags_error() -> None:
    spec = load_argspec(V16)
    retired = [a for a in spec.actions if a["action"].endswith(".DeprecatedAction")]
    assert retired
    for record in retired:
        if record.get("error_message"):
            err = error(record["option_strings"][0], version=V16)
            assert err.message == record["error_message"]


def test_launcher_prefix_is_stripped() -> None:
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "2"]
    r = resolve_sglang(argv, version=V23)
    assert r.launcher == ("python3", "-m", "sglang.launch_server")
    assert r.argv == ("--model-path", "/m", "--tp", "2")
    assert split_launcher(["sglang", "serve", "--x"]) == (("sglang", "serve"), ("--x",))
    assert split_launcher(["--x"]) == ((), ("--x",))
    with pytest.raises(EngineArgError):
        resolve_sglang(["bash", "-c", "x", "--model-path", "/m"], version=V23)


def test_unknown_image_and_version() -> None:
    with pytest.raises(UnknownEngineVersion):
        resolve_sglang(["--model-path", "/m"], image="lmsysorg/sglang:dev-something-new")
    with pytest.raises(UnknownEngineVersion, match="no SGLang arg spec is committed for version 0.5.7"):
        resolve_sglang(["--model-path", "/m"], image="lmsysorg/sglang:v0.5.7-cu130")
    with pytest.raises(UnknownEngineVersion):
        resolve_sglang(["--model-path", "/m"])
    assert resolve_sglang(["--model-path", "/m"], image="lmsysorg/sglang:v0.5.16-cu130").version == V16


def test_real_mode_refuses_a_different_installed_version() -> None:
    from verifier.engines.argspec.parsing import EngineUnavailable

    with pytest.raises(EngineUnavailable):
        resolve_sglang(["--model-path", "/m"], version=V16, mode="real")


def test_hostile_argv_limits() -> None:
    with pytest.raises(EngineArgError):
        resolve_sglang(["--model-path", "/m"] + ["--tp", "1"] * 3000, version=V23)
    with pytest.raises(EngineArgError):
        resolve_sglang(["--model-path", "x" * (2 << 20)], version=V23)


def test_malformed_spec_is_refused(tmp_path) -> None:
    from verifier.engines.argspec.parsing import ArgSpecError
    from verifier.engines.sglang.argspec import load_argspec as load

    data = json.loads(spec_path(V23).read_text())
    data["actions"][0]["action"] = "some.UnknownAction"
    with pytest.raises(ArgSpecError, match="UnknownAction"):
        ArgSpec(V23, data).build_parser()
    (tmp_path / "sglang-9.9.9.argspec.json").write_text("{not json")
    with pytest.raises(ArgSpecError):
        load("9.9.9", tmp_path)
    (tmp_path / "sglang-9.9.8.argspec.json").write_text(json.dumps({"sglang_version": "1.0.0", "actions": []}))
    with pytest.raises(ArgSpecError, match="records sglang_version"):
        load("9.9.8", tmp_path)


def test_import_does_not_load_torch_or_sglang() -> None:
    code = (
        "import sys, verifier.engines.sglang, verifier.documents.serverlog, verifier.engines.atom.answers\n"
        "verifier.engines.sglang.resolve_sglang(['--model-path', '/m'], image='lmsysorg/sglang:v0.5.16-cu130')\n"
        "bad = sorted(m for m in ('torch', 'sglang', 'triton', 'numpy') if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, check=True)
    assert out.stdout.strip() == ""
