"""Which SGLang version (and so which arg spec) a container image or recipe identity runs.

The table is data: policies/sglang.yaml. Rules, in order:

* `images.exact`: the whole reference decides, digest included (`#` is read as `/`, so
  `lmsysorg#sglang:…` and `lmsysorg/sglang:…` are the same image).
* `images.tags`: for the listed repositories, a regular expression on the tag decides; here an
  `@sha256:` digest is ignored, because the policy says the tag names the release.
* `frameworks`: a recipe's `identity.frameworks.sglang` (a release `0.5.23`, or an exact dev
  build string the policy maps to the spec it parses like).

Anything else is `UnknownEngineVersion`: the layer never guesses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from verifier.core.resources import POLICY_DIR
from verifier.engines.argspec.parsing import UnknownEngineVersion
from verifier.engines.images import hub_reference, parse_image, version_by_image_rules

POLICY_FILE = POLICY_DIR / "sglang.yaml"


@cache
def sglang_policy() -> Mapping[str, Any]:
    """policies/sglang.yaml, validated against its schema (loaded once per process, from the
    validated policy set the verdict uses, which the content-addressed cache keeps)."""
    from verifier.core.policy import load_policies, load_policy_file  # noqa: PLC0415 - loaded only when needed

    policies = load_policies(POLICY_FILE.parent)
    return policies["sglang"] if "sglang" in policies else load_policy_file(POLICY_FILE)


def _policy(policy: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return policy if policy is not None else sglang_policy()


def version_for_image(image: str, policy: Mapping[str, Any] | None = None) -> str:
    """The SGLang version an image runs, by policies/sglang.yaml; UnknownEngineVersion otherwise."""
    pol = _policy(policy)
    ref = hub_reference(parse_image(image))
    found = version_by_image_rules(ref, pol.get("images", {}))
    if found is not None:
        return found
    raise UnknownEngineVersion(
        f"unknown SGLang version for image {ref.normalized} (no rule in policies/sglang.yaml)", image=image
    )


def version_for_framework(value: str, policy: Mapping[str, Any] | None = None) -> str:
    """The version a recipe's `identity.frameworks.sglang` names; UnknownEngineVersion otherwise."""
    pol = _policy(policy).get("frameworks", {})
    text = str(value).strip()
    exact = pol.get("exact", {})
    if text in exact:
        return str(exact[text])
    release = pol.get("release")
    if release:
        m = re.fullmatch(release, text)
        if m:
            return m.group("version")
    raise UnknownEngineVersion(f"unknown SGLang version for identity.frameworks.sglang {text!r}", version=text)


def normalize_version(version: str) -> str:
    """`v0.5.23` -> `0.5.23`."""
    text = str(version).strip()
    return text[1:] if text[:1] in ("v", "V") and text[1:2].isdigit() else text


def pick_version(
    *,
    image: str | None = None,
    version: str | None = None,
    framework: str | None = None,
    policy: Mapping[str, Any] | None = None,
) -> str:
    """The version to parse with: explicit `version`, else the image's, else the recipe identity's.

    An image the policy does not know is an error even when `framework` is given, unless
    `framework` itself resolves: the identity then decides (it names the build the recipe ran).
    """
    if version:
        return normalize_version(version)
    image_error: UnknownEngineVersion | None = None
    if image:
        try:
            return version_for_image(image, policy)
        except UnknownEngineVersion as exc:
            image_error = exc
    if framework:
        return version_for_framework(framework, policy)
    if image_error is not None:
        raise image_error
    raise UnknownEngineVersion("no SGLang version, image or identity.frameworks.sglang was given")
