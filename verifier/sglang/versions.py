"""Which SGLang version (and so which arg spec) a container image or recipe identity runs.

The table is data: policies/sglang.yaml. Rules, in order:

* `images.exact`: the whole reference decides, digest included (`#` is read as `/`, so
  `lmsysorg#sglang:…` and `lmsysorg/sglang:…` are the same image).
* `images.tags`: for the listed repositories, a regular expression on the tag decides; here an
  `@sha256:` digest is ignored, because the policy says the tag names the release.
* `frameworks`: a recipe's `identity.frameworks.sglang` (a release `0.5.23`, or an exact dev
  build string the policy maps to the spec it parses like).

Anything else is `UnknownSGLangVersion`: the layer never guesses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from verifier.resources import POLICY_DIR
from verifier.sglang.parsing import UnknownSGLangVersion

POLICY_FILE = POLICY_DIR / "sglang.yaml"
MAX_IMAGE_LEN = 512


@cache
def sglang_policy() -> Mapping[str, Any]:
    """policies/sglang.yaml, validated against its schema (loaded once per process, from the
    validated policy set the verdict uses, which the content-addressed cache keeps)."""
    from verifier.policy import load_policies, load_policy_file  # noqa: PLC0415 - loaded only when needed

    policies = load_policies(POLICY_FILE.parent)
    return policies["sglang"] if "sglang" in policies else load_policy_file(POLICY_FILE)


@dataclass(frozen=True)
class ImageRef:
    """A container reference split into repository, tag and digest (the first `#` read as `/`)."""

    raw: str
    repository: str
    tag: str | None
    digest: str | None

    @property
    def normalized(self) -> str:
        """`repository[:tag][@digest]` with `/` separators."""
        out = self.repository
        if self.tag:
            out += f":{self.tag}"
        if self.digest:
            out += f"@{self.digest}"
        return out

    @property
    def without_digest(self) -> str:
        """`repository[:tag]`."""
        return self.repository + (f":{self.tag}" if self.tag else "")


def parse_image(image: str) -> ImageRef:
    """Split an image reference; `#` (srt-slurm's enroot spelling) counts as `/`."""
    text = image.strip()
    if not text or len(text) > MAX_IMAGE_LEN or any(c.isspace() for c in text):
        raise UnknownSGLangVersion(f"not a container image reference: {image[:80]!r}", image=image)
    text = text.replace("#", "/", 1)  # FORMATS §13: the first `#` is the registry separator
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
    tag = None
    last = text.rsplit("/", 1)[-1]
    if ":" in last:
        text, tag = text.rsplit(":", 1)
    return ImageRef(raw=image, repository=text, tag=tag, digest=digest)


def _policy(policy: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return policy if policy is not None else sglang_policy()


_DOCKER_HUB = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def _hub(ref: ImageRef) -> ImageRef:
    """The same reference without Docker Hub's explicit registry (`docker.io#lmsysorg/sglang` = `lmsysorg/sglang`)."""
    repo = ref.repository
    for prefix in _DOCKER_HUB:
        if repo.lower().startswith(prefix):
            repo = repo[len(prefix):]
            break
    return ImageRef(raw=ref.raw, repository=repo, tag=ref.tag, digest=ref.digest)


def version_by_image_rules(ref: ImageRef, images: Mapping[str, Any], *, ignore_digest: bool = False) -> str | None:
    """The version an engine policy's `images` rules give a (Docker Hub-normalised) reference, or None.

    `exact` entries match the whole reference (also without its digest when `ignore_digest`);
    `tags` rules match a regular expression on the tag of a listed repository and return the
    rule's `version` or the captured `version` group."""
    for entry in images.get("exact", ()):
        want = _hub(parse_image(entry["image"])).normalized
        if want == ref.normalized or (ignore_digest and want == ref.without_digest):
            return str(entry["version"])
    for rule in images.get("tags", ()):
        if ref.repository not in rule["repositories"] or ref.tag is None:
            continue
        m = re.fullmatch(rule["tag"], ref.tag)
        if m:
            return str(rule.get("version") or m.group("version"))
    return None


def version_for_image(image: str, policy: Mapping[str, Any] | None = None) -> str:
    """The SGLang version an image runs, by policies/sglang.yaml; UnknownSGLangVersion otherwise."""
    pol = _policy(policy)
    ref = _hub(parse_image(image))
    found = version_by_image_rules(ref, pol.get("images", {}))
    if found is not None:
        return found
    raise UnknownSGLangVersion(
        f"unknown SGLang version for image {ref.normalized} (no rule in policies/sglang.yaml)", image=image
    )


def version_for_framework(value: str, policy: Mapping[str, Any] | None = None) -> str:
    """The version a recipe's `identity.frameworks.sglang` names; UnknownSGLangVersion otherwise."""
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
    raise UnknownSGLangVersion(f"unknown SGLang version for identity.frameworks.sglang {text!r}", version=text)


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
    image_error: UnknownSGLangVersion | None = None
    if image:
        try:
            return version_for_image(image, policy)
        except UnknownSGLangVersion as exc:
            image_error = exc
    if framework:
        return version_for_framework(framework, policy)
    if image_error is not None:
        raise image_error
    raise UnknownSGLangVersion("no SGLang version, image or identity.frameworks.sglang was given")
