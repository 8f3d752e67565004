"""Every committed SGLang arg spec loads, rebuilds a parser, is reached by its release tags, and parses recipes sanely.

The specs in policies/sglang-argspec/ were dumped with `verify-pr sglang-spec dump` from the PyPI
wheels (see that directory's README). These tests pin which releases are committed, that each one's
release-image tags resolve to exactly that spec (post releases to their own spec, never to a
neighbour), and that the reference recipes parse under each release into a namespace that says what
the command line says, with the version boundaries where SGLang's flag set changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.kit import REFERENCE_DATA
from tests.sglang.corpus import RECIPE_GLOB, recipe_variants, sglang_argv
from verifier.core.yamlio import decode_text, load_yaml, plain
from verifier.engines.argspec.parsing import EngineArgError, UnknownEngineVersion
from verifier.engines.sglang import (
    available_versions,
    load_argspec,
    pick_version,
    resolve_sglang,
    version_for_framework,
    version_for_image,
)
from verifier.engines.sglang.argspec import spec_path
from verifier.engines.sglang.dump import SPEC_FORMAT, spec_json

# Release -> number of argparse actions (help excluded) in its dumped parser.
RELEASES: dict[str, int] = {
    "0.5.8": 328, "0.5.8.post1": 328, "0.5.9": 331, "0.5.10": 354, "0.5.10.post1": 354,
    "0.5.11": 374, "0.5.12": 387, "0.5.12.post1": 387, "0.5.13": 406, "0.5.13.post1": 406,
    "0.5.14": 420, "0.5.15": 437, "0.5.15.post1": 437, "0.5.16": 460, "0.5.17": 474,
    "0.5.18": 488, "0.5.19": 503, "0.5.20": 494, "0.5.21": 512, "0.5.22": 521, "0.5.23": 531,
}
DIGEST = "@sha256:" + "ab" * 32


def vkey(version: str) -> tuple[int, ...]:
    """Sort key: 0.5.8 < 0.5.8.post1 < 0.5.9 < 0.5.10."""
    return tuple(int(x) for x in re.findall(r"\d+", version))


def tp_dest(version: str) -> str:
    """Through 0.5.13 argparse stores --tp-size in `tensor_parallel_size` (from_cli_args copies it to tp_size)."""
    return "tensor_parallel_size" if vkey(version) <= vkey("0.5.13.post1") else "tp_size"


def test_parallel_size_dests_by_release() -> None:
    for version in RELEASES:
        spec = load_argspec(version)
        assert spec.action_for("--tp-size")["dest"] == tp_dest(version), version
        assert spec.action_for("--tensor-parallel-size")["dest"] == tp_dest(version), version
        dp = spec.action_for("--dp-size")["dest"]
        assert dp == ("data_parallel_size" if tp_dest(version) == "tensor_parallel_size" else "dp_size"), version


def test_every_release_is_committed() -> None:
    have = set(available_versions())
    assert set(RELEASES) <= have, sorted(set(RELEASES) - have, key=vkey)
    for version in have:  # file names are release versions, nothing else
        assert re.fullmatch(r"\d+\.\d+\.\d+(\.post\d+)?", version), version


@pytest.mark.parametrize("version", sorted(available_versions(), key=vkey))
def test_spec_loads_and_builds(version: str) -> None:
    text = spec_path(version).read_text(encoding="utf-8")
    assert spec_json(json.loads(text)) == text  # the dumper's canonical form, byte for byte
    spec = load_argspec(version)
    data = spec.data
    assert data["format"] == SPEC_FORMAT and data["sglang_version"] == version
    assert data["allow_abbrev"] is True and data["prefix_chars"] == "-" and data["prog"] == "sglang serve"
    assert '"$repr"' not in text  # every default/const/choice is data
    if version in RELEASES:
        assert len(spec.actions) == RELEASES[version]
    spec.build_parser()
    assert not spec.unknown_types  # every custom argparse type is re-implemented

    r = resolve_sglang(["python3", "-m", "sglang.launch_server", "--model-path", "/m", "--tp-size", "4",
                        "--kv-cache-dtype", "fp8_e4m3", "--mem-fraction-static", "0.8"], version=version)
    assert r.version == version and r.mode == "argspec"
    ns = r.namespace
    tp = tp_dest(version)
    assert (ns["model_path"], ns[tp], ns["kv_cache_dtype"], ns["mem_fraction_static"]) == (
        "/m", 4, "fp8_e4m3", 0.8)
    assert r.given == {"model_path", tp, "kv_cache_dtype", "mem_fraction_static"}
    assert ns["port"] == 30000 and ns["trust_remote_code"] is False
    with pytest.raises(EngineArgError, match="unrecognized arguments"):
        resolve_sglang(["--model-path", "/m", "--no-such-flag-anywhere"], version=version)


def test_post_releases_have_their_own_spec() -> None:
    for post in (v for v in RELEASES if ".post" in v):
        base = post.split(".post")[0]
        assert spec_path(post) != spec_path(base)
        assert load_argspec(post).data["sglang_version"] == post


def _images(version: str) -> Iterator[str]:
    yield f"lmsysorg/sglang:v{version}"
    yield f"lmsysorg/sglang:v{version}-cu130"
    yield f"lmsysorg/sglang:v{version}-cu130-amd64"
    yield f"lmsysorg/sglang:v{version}-cu129-arm64"
    yield f"lmsysorg/sglang:v{version}-cu130{DIGEST}"
    yield f"lmsysorg#sglang:v{version}-cu130"
    yield f"docker.io/lmsysorg/sglang:v{version}-cu130"
    yield f"lmsysorg/sglang-rocm:v{version}-rocm720-mi35x-20260811"


@pytest.mark.parametrize("version", sorted(RELEASES, key=vkey))
def test_release_tags_resolve_to_their_spec(version: str) -> None:
    for image in _images(version):
        assert version_for_image(image) == version, image
        assert resolve_sglang(["--model-path", "/m"], image=image).version == version, image
    assert version_for_framework(version) == version
    assert version_for_framework(f"v{version}") == version
    assert pick_version(image=f"lmsysorg/sglang:v{version}-cu130", framework="0.5.23") == version


@pytest.mark.parametrize(
    "image",
    [
        "lmsysorg/sglang:v0.5.7-cu130",  # older than any committed spec
        "lmsysorg/sglang:v0.5.6.post2-cu129",
        "lmsysorg/sglang:v0.5.8.post2-cu130",  # a post release never borrows its base's spec
        "lmsysorg/sglang:v0.5.16.post1-cu130",
        "lmsysorg/sglang:v0.5.24-cu130",  # newer than any committed spec
        "lmsysorg/sglang:v0.6.0",
    ],
)
def test_release_without_spec_is_unknown(image: str) -> None:
    wanted = image.split(":v", 1)[1].split("-", 1)[0]
    assert version_for_image(image) == wanted  # the tag names the release ...
    with pytest.raises(UnknownEngineVersion, match=re.escape(f"version {wanted} ")):
        resolve_sglang(["--model-path", "/m"], image=image)  # ... and no neighbour stands in


@pytest.mark.parametrize("tag", ["v0.5.8rc1", "v0.5.8.post1.dev0", "0.5.8", "v0.5", "v0.5.8-", "v0.5.8_cu130"])
def test_malformed_release_tags_are_unknown(tag: str) -> None:
    with pytest.raises(UnknownEngineVersion):
        version_for_image(f"lmsysorg/sglang:{tag}")


# --------------------------------------------------------------------------- reference recipes


@cache
def reference_argvs() -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """Recipe file (relative to the reference data) -> [(selector, argv)] of its SGLang variants."""
    out: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for path in sorted(REFERENCE_DATA.glob(RECIPE_GLOB)):
        doc = plain(load_yaml(decode_text(path.read_bytes(), str(path)), str(path)))
        if not isinstance(doc, dict):
            continue
        for selector, recipe in recipe_variants(doc):
            argv = sglang_argv(recipe)
            if argv is not None:
                out.setdefault(str(Path(path).relative_to(REFERENCE_DATA)), []).append((selector, argv))
    return out


_CONVERT = {None: str, "str": str, "int": int, "float": float}
_VALUED = {"argparse._StoreAction", "sglang.srt.arg_groups.argparse_actions.DeprecatedAliasStoreAction"}


def _assert_sane(version: str, argv: tuple[str, ...], r: Any) -> int:
    """The namespace says what the command line says; returns how many values were compared."""
    ns = r.namespace
    assert ns["model_path"] == "/model" and ns["host"] == "0.0.0.0" and ns["port"] == 30000
    assert r.given <= set(ns)
    spec = load_argspec(version)
    counted = 0
    dests = [u.dest for u in r.uses]
    for use in r.uses:
        assert use.dest in r.given
        if dests.count(use.dest) != 1:
            continue
        record = spec.action_for(use.option_string)
        assert record is not None and record["dest"] == use.dest
        if record["action"] == "argparse._StoreTrueAction":
            assert ns[use.dest] is True
            counted += 1
        elif record["action"] in _VALUED and record["nargs"] is None and record["type"] in _CONVERT:
            raw = use.explicit_value if use.explicit_value is not None else argv[argv.index(use.written) + 1]
            value = _CONVERT[record["type"]](raw)
            assert ns[use.dest] == value, (use.written, raw)
            if record["choices"] is not None:
                assert value in record["choices"]
            counted += 1
    return counted


@pytest.mark.parametrize("version", sorted(RELEASES, key=vkey))
def test_reference_recipes_parse_sanely(version: str) -> None:
    recipes = reference_argvs()
    assert len(recipes) >= 3
    parsed = compared = 0
    for argvs in recipes.values():
        for _selector, argv in argvs:
            r = resolve_sglang(argv, version=version, raise_errors=False)
            if r.error is not None:  # recipes written for a newer/older flag set: refused, never half-parsed
                assert r.error.version == version
                assert r.error.kind in ("unrecognized", "ambiguous", "invalid-choice", "invalid-value"), r.error
                continue
            parsed += 1
            compared += _assert_sane(version, tuple(argv[3:]), r)
    if parsed:
        assert compared >= 5 * parsed


def _outcomes(recipe_suffix: str, version: str) -> tuple[int, int, set[str]]:
    """(parsed, total, error messages) of one reference recipe's variants under one version."""
    (argvs,) = [v for k, v in reference_argvs().items() if k.endswith(recipe_suffix)]
    ok, errors = 0, set()
    for _selector, argv in argvs:
        r = resolve_sglang(argv, version=version, raise_errors=False)
        if r.error is None:
            ok += 1
        else:
            errors.add(r.error.message)
    return ok, len(argvs), errors


def test_qwen35_recipe_cuda_graph_max_bs_boundary() -> None:
    """`--cuda-graph-max-bs` is accepted through 0.5.19 and ambiguous from 0.5.20 on."""
    for version in RELEASES:
        ok, total, errors = _outcomes("qwen3.5/sglang/b300-fp8-mtp/8k1k.yaml", version)
        if vkey(version) <= vkey("0.5.19"):
            assert ok == total, (version, errors)
        else:
            assert ok == 0 and all("ambiguous option: --cuda-graph-max-bs" in e for e in errors), (version, errors)
    r = resolve_sglang(reference_argvs()[next(k for k in reference_argvs() if "qwen3.5" in k)][0][1], version="0.5.8")
    assert r.namespace["cuda_graph_max_bs"] is not None and "cuda_graph_max_bs" in r.given
    r = resolve_sglang(reference_argvs()[next(k for k in reference_argvs() if "qwen3.5" in k)][0][1], version="0.5.19")
    assert r.namespace["cuda_graph_max_bs_decode"] is not None and "cuda_graph_max_bs_decode" in r.given


def test_dsv4_and_dsv41flash_recipes_by_release() -> None:
    ok, total, _ = _outcomes("dsv4/sglang/b300-fp4-mtp/agentic.yaml", "0.5.19")
    assert ok == total > 0
    for version in RELEASES:
        ok, total, errors = _outcomes("dsv41flash/sglang/b300-fp4-mtp/agentic.yaml", version)
        if vkey(version) >= vkey("0.5.21"):
            assert ok == total, (version, errors)
        else:
            assert ok == 0, version
        if version in ("0.5.19", "0.5.20"):  # --swa-prefix-tails arrived in 0.5.21
            assert all(re.fullmatch(r"unrecognized arguments: --swa-prefix-tails \d+", e) for e in errors), errors
