"""Container image references and the image -> version rules engine policies share.

`parse_image` splits `registry/repository:tag@digest` (srt-slurm's `registry#repository` too);
`version_by_image_rules` applies an engine policy's `images` rules (policies/sglang.yaml,
policies/vllm.yaml) to a reference; `enablement_model` recognises a model-enablement tag (Check 6).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from verifier.engines.argspec.parsing import UnknownEngineVersion

MAX_IMAGE_LEN = 512


@dataclass(frozen=True, eq=False, repr=False)
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
        raise UnknownEngineVersion(f"not a container image reference: {image[:80]!r}", image=image)
    text = text.replace("#", "/", 1)  # FORMATS §13: the first `#` is the registry separator
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
    tag = None
    last = text.rsplit("/", 1)[-1]
    if ":" in last:
        text, tag = text.rsplit(":", 1)
    return ImageRef(raw=image, repository=text, tag=tag, digest=digest)


_DOCKER_HUB = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def hub_reference(ref: ImageRef) -> ImageRef:
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
        want = hub_reference(parse_image(entry["image"])).normalized
        if want == ref.normalized or (ignore_digest and want == ref.without_digest):
            return str(entry["version"])
    for rule in images.get("tags", ()):
        if ref.repository not in rule["repositories"] or ref.tag is None:
            continue
        m = re.fullmatch(rule["tag"], ref.tag)
        if m:
            return str(rule.get("version") or m.group("version"))
    return None


def _alnum(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def model_spellings(identity: str) -> set[str]:
    """The spellings a tag may use for one model identity (a MODELS.md name, a prefix, an HF repo's name):
    the whole identity's letters and digits, and each run of its leading words of two or more words
    (`DeepSeek-V4-Pro` -> `deepseekv4pro`, `deepseekv4`). A word keeps its dots (`M3.1` is one word,
    `m31`), so `MiniMax-M3.1-Flash` never yields `minimaxm3`."""
    name = identity
    words = [w for w in (_alnum(w) for w in re.split(r"[-_\s/]+", name)) if w]
    out = {_alnum(name)} if _alnum(name) else set()
    for end in range(2, len(words)):
        out.add("".join(words[:end]))
    return out


def enablement_model(tag: str | None, identities: Iterable[str], marker: str,
                     qualifiers: Iterable[str]) -> str | None:
    """The model identity a tag names when it is a model-enablement tag, else None.

    MODELS.md defines a model-enablement image as one "the engine maintainers publish for" a model
    (`lmsysorg/sglang:dev-<model>`; day-0 builds such as `lmsysorg/sglang:minimax-m3` or
    `vllm/vllm-openai:deepseekv4-cu129` alike). The tag is split at `-`; words that are only build
    qualifiers (policy `enablement_tag_qualifiers`: `dev`, CUDA / ROCm / arch suffixes, versions,
    dates; full-match regexes, case-insensitive) are dropped, and what remains must spell the model
    (`model_spellings`). A tag with the enablement `marker` (`^dev-`) also counts when what remains
    contains the model's whole name (`dev-quill2flash-fix2`)."""
    if not tag:
        return None
    compiled = [re.compile(q, re.I) for q in qualifiers]
    kept = [w for w in tag.split("-") if w and not any(rx.fullmatch(w) for rx in compiled)]
    core = _alnum("".join(kept))
    if not core:
        return None
    marked = re.search(marker, tag, re.I) is not None
    for identity in identities:
        if not identity:
            continue
        if core in model_spellings(identity):
            return identity
        whole = _alnum(identity)
        if marked and len(whole) >= 4 and whole in core:
            return identity
    return None
