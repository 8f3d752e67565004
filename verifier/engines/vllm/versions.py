"""Which vLLM version (and so which arg spec) a container image runs: policies/vllm.yaml.

Rules, in order (the same shapes as policies/sglang.yaml):

* `images.exact`: the whole reference decides (`#` read as `/`, Docker Hub's registry ignored).
* `images.tags`: for the listed repositories a regular expression on the tag captures the
  release (`v0.25.1`, `v0.20.1-ubuntu2404`, `vllm-x86_64-cu13-0.25.1-7a33ba9`); a digest is ignored.

Anything else raises `UnknownVllmVersion`. `candidate_versions(image)` is the looser question the
version-independent reading asks (verifier.engines.versioned): the one version when it is known,
else every committed spec (a nightly by commit, a custom build), so that a check can use an answer
only when all of them agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from verifier.core.resources import POLICY_DIR
from verifier.engines.argspec.parsing import UnknownEngineVersion
from verifier.engines.images import hub_reference, parse_image, version_by_image_rules
from verifier.engines.vllm.argspec import UnknownVllmVersion, available_versions

POLICY_FILE = POLICY_DIR / "vllm.yaml"


@cache
def vllm_policy() -> Mapping[str, Any]:
    """policies/vllm.yaml, validated against its schema (loaded once per process)."""
    from verifier.core.policy import load_policy_file  # noqa: PLC0415 - jsonschema only when needed

    return load_policy_file(POLICY_FILE)


def version_for_image(image: str, policy: Mapping[str, Any] | None = None) -> str:
    """The vLLM version an image runs, by policies/vllm.yaml; UnknownVllmVersion otherwise."""
    pol = policy if policy is not None else vllm_policy()
    try:
        ref = hub_reference(parse_image(image))
    except UnknownEngineVersion as exc:
        raise UnknownVllmVersion(str(exc).replace("SGLang", "vLLM"), image=image) from None
    found = version_by_image_rules(ref, pol.get("images", {}), ignore_digest=True)
    if found is not None:
        return found
    raise UnknownVllmVersion(f"unknown vLLM version for image {ref.normalized} (no rule in policies/vllm.yaml)",
                             image=image)


def candidate_versions(image: str | None, policy: Mapping[str, Any] | None = None) -> tuple[tuple[str, ...], str]:
    """(versions to parse with, how they were chosen): `("0.25.1",), "image"` for a known release;
    every committed spec and "unknown-image" otherwise."""
    if image:
        try:
            return (version_for_image(image, policy),), "image"
        except UnknownVllmVersion:
            pass
    return tuple(available_versions()), "unknown-image"
