"""Image / recipe identity -> SGLang version (policies/sglang.yaml)."""

from __future__ import annotations

import pytest

from verifier.core.policy import load_policy_file
from verifier.core.resources import POLICY_DIR
from verifier.engines.argspec.parsing import UnknownEngineVersion
from verifier.engines.images import parse_image
from verifier.engines.sglang import pick_version, version_for_framework, version_for_image

PR4524 = "lmsysorg/sglang:dev-minimax-m31-flash@sha256:614b1509f63adaffb3c13cdea7eded07ea96bbf8eb05491a719b3c4f6b8895d5"


def test_policy_validates() -> None:
    policy = load_policy_file(POLICY_DIR / "sglang.yaml")
    assert set(policy) == {"images", "frameworks", "kv_cache"}


@pytest.mark.parametrize(
    ("image", "version"),
    [
        (PR4524, "0.5.23"),
        (PR4524.replace("/", "#", 1), "0.5.23"),
        ("lmsysorg/sglang:v0.5.16-cu130", "0.5.16"),
        ("lmsysorg#sglang:v0.5.16-cu130", "0.5.16"),
        ("lmsysorg/sglang:v0.5.16-cu130@sha256:" + "ab" * 32, "0.5.16"),
        ("lmsysorg/sglang:v0.5.23", "0.5.23"),
        ("lmsysorg/sglang-rocm:v0.5.17-rocm720-mi35x-20260811", "0.5.17"),
        ("lmsysorg/sglang-rocm:v0.5.15.post1-rocm720-mi35x-20260719", "0.5.15.post1"),
        ("lmsysorg/sglang:nightly-dev-cu13-20261004-295a53c9@sha256:"
         "7cfd4dd8e0e902d2a3c0560565963c4e172091e1586aaed15ff5a0a131394d34", "0.5.23"),
    ],
)
def test_known_images(image: str, version: str) -> None:
    assert version_for_image(image) == version


@pytest.mark.parametrize(
    "image",
    [
        "lmsysorg/sglang:dev-minimax-m31-flash",  # moving dev tag: only the pinned digest is known
        "lmsysorg/sglang:dev-minimax-m31-flash@sha256:" + "00" * 32,
        "lmsysorg/sglang:nightly-dev-cu13-20261004-295a53c9",
        "lmsysorg/sglang:latest",
        "lmsysorg/sglang",
        "rocm/sgl-dev:v0.5.16",
        "ghcr.io#someone/sglang:v0.5.16-cu130",
        "vllm/vllm-openai:v0.10.0",
        "lmsysorg/sglang:v0.5.16 extra",
        "",
    ],
)
def test_unknown_images_are_never_guessed(image: str) -> None:
    with pytest.raises(UnknownEngineVersion):
        version_for_image(image)


def test_parse_image() -> None:
    ref = parse_image("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc23.post1")
    assert ref.repository == "nvcr.io/nvidia/tensorrt-llm/release" and ref.tag == "1.3.0rc23.post1"
    ref = parse_image("localhost:5000/x/y@sha256:abc")
    assert (ref.repository, ref.tag, ref.digest) == ("localhost:5000/x/y", None, "sha256:abc")
    assert parse_image(PR4524).without_digest == "lmsysorg/sglang:dev-minimax-m31-flash"


def test_frameworks() -> None:
    assert version_for_framework("0.5.23") == "0.5.23"
    assert version_for_framework("v0.5.16") == "0.5.16"
    assert version_for_framework("0.0.0.dev1+g295a53c90") == "0.5.23"
    for bad in ("0.0.0.dev1+gdeadbeef", "latest", "0.5"):
        with pytest.raises(UnknownEngineVersion):
            version_for_framework(bad)


def test_pick_version_precedence() -> None:
    assert pick_version(version="v0.5.16", image=PR4524) == "0.5.16"
    assert pick_version(image=PR4524, framework="0.5.16") == "0.5.23"
    assert pick_version(image="lmsysorg/sglang:dev-x", framework="0.5.16") == "0.5.16"
    with pytest.raises(UnknownEngineVersion, match="dev-x"):
        pick_version(image="lmsysorg/sglang:dev-x")
    with pytest.raises(UnknownEngineVersion):
        pick_version()
