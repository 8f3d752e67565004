"""The spec dumper and its CLI, without the real sglang (a toy parser stands in)."""

from __future__ import annotations

import argparse
import json

import pytest

from verifier.engines.argspec.parsing import RaisingParser, parse_with
from verifier.engines.sglang import dump as dump_mod
from verifier.engines.sglang import sglang_spec_main
from verifier.engines.sglang.argspec import ArgSpec
from verifier.engines.sglang.dump import spec_json, spec_of_parser


def human_readable_int(value: str) -> int:  # same name as SGLang's: the rebuild maps it by name
    return int(value.rstrip("k")) * (1000 if value.endswith("k") else 1)


def toy_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sglang serve")
    p.add_argument("--model-path", "--model", dest="model_path", required=True)
    p.add_argument("--tp-size", "--tensor-parallel-size", dest="tp_size", type=int, default=1)
    p.add_argument("--kv-cache-dtype", choices=["auto", "fp8_e4m3"], default="auto")
    p.add_argument("--sampling-backend", choices={"flashinfer", "pytorch"}, default=None)
    p.add_argument("--enable-x", action="store_true")
    p.add_argument("--enable-y", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--bs", type=int, nargs="+", default=(1, 2))
    p.add_argument("--ctx", type=human_readable_int, default="4k")
    p.add_argument("--cfg", type=json.loads, default=None)
    return p


def test_spec_of_parser_is_json_safe_and_rebuilds() -> None:
    spec = spec_of_parser(toy_parser(), "9.9.9")
    text = spec_json(spec)
    assert json.loads(text) == spec
    assert spec["allow_abbrev"] is True and spec["sglang_version"] == "9.9.9"
    by_dest = {a["dest"]: a for a in spec["actions"]}
    assert by_dest["sampling_backend"]["choices"] == ["flashinfer", "pytorch"]  # sets are sorted
    assert by_dest["bs"]["default"] == {"$tuple": [1, 2]}
    assert by_dest["enable_y"]["option_strings"] == ["--enable-y", "--no-enable-y"]
    assert "help" not in by_dest

    rebuilt = ArgSpec("9.9.9", spec).build_parser()
    argv = ["--model", "/m", "--tp", "4", "--bs", "8", "16", "--ctx", "2k", "--cfg", '{"a": 1}', "--no-enable-y"]
    real_p = toy_parser()
    real_p.__class__ = RaisingParser
    assert parse_with(rebuilt, argv) == parse_with(real_p, argv)
    ns, _ = parse_with(rebuilt, ["--model", "/m"])
    assert ns["bs"] == (1, 2) and ns["ctx"] == 4000  # string defaults go through the type, as in argparse


def test_cli_image_without_docker(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(dump_mod.shutil, "which", lambda name: None)
    assert dump_mod.main(["--image", "lmsysorg/sglang:v0.5.16-cu130"]) == 2
    err = capsys.readouterr().err
    assert "docker" in err and err.count("\n") == 1


def test_cli_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert sglang_spec_main([]) == 2
    assert sglang_spec_main(["bogus"]) == 2
    assert "sglang-spec dump" in capsys.readouterr().err


def test_cli_reports_a_missing_sglang(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def boom() -> dict:
        raise ImportError("sglang is not installed in this Python environment")

    monkeypatch.setattr(dump_mod, "dump_spec", boom)
    assert sglang_spec_main(["dump"]) == 2
    assert "not installed" in capsys.readouterr().err


def test_cli_writes_the_spec(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(dump_mod, "dump_spec", lambda: spec_of_parser(toy_parser(), "9.9.9"))
    out = tmp_path / "spec.json"
    assert sglang_spec_main(["dump", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["sglang_version"] == "9.9.9"


def test_stub_finder_serves_dummy_modules() -> None:
    finder = dump_mod._StubFinder({"infx_fake_vision": "0.29.1"})
    spec = finder.find_spec("infx_fake_vision.io")
    module = finder.create_module(spec)
    assert module.__version__ == "0.29.1"
    assert module.decode_jpeg.NEAREST_EXACT is not None  # attribute chains resolve to dummies
    assert finder.find_spec("os") is None
