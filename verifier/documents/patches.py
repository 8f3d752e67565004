"""Engine-patch signatures in scripts, recipes and patch files (Check 10).

A patch is anything that changes the inference engine or serving stack inside the pinned image:
a `.patch` file, `git apply` / `patch`, `sed -i` or a heredoc writing into site-packages or engine
paths, an inline program that locates the engine and rewrites its files, sitecustomize hooks,
`pip install` of engine packages, wheels or git forks, and recipe setup scripts. Signatures are
data (`policies/patches.yaml`); this module only applies them to text, line by line, so every hit
names its file and 1-based line. Harness and eval dependencies are not patches.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from verifier.core import shellwords
from verifier.core.layout import short_path

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b(.*)", re.IGNORECASE)
_PROGRAMS = re.compile(r"\b(python3?|bash|sh|perl|ruby|node)\b")
_WRITERS = re.compile(r"\b(cat|tee)\b")


@dataclass(frozen=True)
class PatchHit:
    """One patch signature found in one file."""

    path: str
    line: int | None
    text: str
    signature: str
    side: str = "head"

    @property
    def basename(self) -> str:
        """The file's base name."""
        return self.path.rsplit("/", 1)[-1]


@lru_cache(maxsize=256)
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def is_scanned(path: str, policy: Mapping[str, Any]) -> bool:
    """True when Check 10 scans this repository path (layout-neutral patterns of the policy)."""
    rel = short_path(path)
    if any(fnmatch.fnmatch(rel, pat) for pat in policy["skip_paths"]):
        return False
    if is_patch_file(rel, policy):
        return True
    if any(fnmatch.fnmatch(rel, pat) for pat in policy.get("not_serving_stack") or ()):
        return False
    return any(fnmatch.fnmatch(rel, pat) for pat in policy["scan_paths"])


def is_patch_file(path: str, policy: Mapping[str, Any]) -> bool:
    """True for `.patch` / `.diff` files."""
    return any(path.lower().endswith(sfx) for sfx in policy["patch_file_suffixes"])


def _pip_is_harness(line: str, policy: Mapping[str, Any]) -> bool:
    match = _PIP_INSTALL.search(line)
    if match is None:
        return False
    try:
        words = shellwords.split(match.group(1).split("&&")[0].split(";")[0], comments=True)
    except ValueError:
        words = match.group(1).split()
    packages = []
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        if word in ("-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
                    "-f", "--find-links", "--target", "-t", "--prefix", "--root"):
            if word in ("-r", "--requirement", "-c", "--constraint"):
                return False  # a requirements file may hold anything
            skip_next = True
            continue
        if word.startswith("-"):
            continue
        packages.append(re.split(r"[<>=!~\[@ ;]", word, maxsplit=1)[0].lower())
    harness = {p.lower() for p in policy["harness_packages"]}
    return bool(packages) and all(p in harness for p in packages)


@lru_cache(maxsize=32)
def _any_signature(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One alternation of every signature: a line none of them matches is skipped at C speed (None
    when the patterns cannot be joined, e.g. a backreference, and each is tried in turn)."""
    if any(re.search(r"\\[1-9]|\(\?P=", p) for p in patterns):
        return None
    try:
        return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
    except re.error:
        return None


def _line_hits(path: str, lines: list[str], policy: Mapping[str, Any], side: str) -> list[PatchHit]:
    hits: list[PatchHit] = []
    signatures = policy["signatures"]
    prefilter = _any_signature(tuple(signatures.values()))
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#") and not line.startswith("#!"):
            continue
        if prefilter is not None and prefilter.search(line) is None:
            continue
        for name, pattern in signatures.items():
            if _rx(pattern).search(line):
                if name == "pip-install-engine" and _pip_is_harness(line, policy):
                    continue
                if name == "git-apply" and any(t in line for t in policy.get("harness_patch_targets") or ()):
                    continue
                if name == "sitecustomize" and _patches_harness_only(line, _heredoc_body(lines, number), policy):
                    continue
                hits.append(PatchHit(path, number, line[:300], name, side))
                break
    return hits


_ENGINE_MODULES = re.compile(r"\b(sglang|vllm|tensorrt_llm|flashinfer|torch|triton|transformers)\b", re.IGNORECASE)


def _heredoc_body(lines: list[str], number: int) -> str:
    """The heredoc a 1-based line opens ("" when it opens none)."""
    match = _HEREDOC.search(lines[number - 1])
    if match is None:
        return ""
    body = []
    for line in lines[number:]:
        if line.strip() == match.group(2):
            break
        body.append(line)
    return "\n".join(body)


def heredoc_around(lines: list[str], number: int) -> list[str] | None:
    """The body lines of the heredoc that contains 1-based line `number`, or None outside one."""
    for opening, _line, body in _heredocs(lines):
        if opening < number <= opening + len(body):
            return body
    return None


def _patches_harness_only(line: str, body: str, policy: Mapping[str, Any]) -> bool:
    """True when a sitecustomize hook customizes only a harness package (lm-eval's filters, say):
    the line or its heredoc names a harness package and no engine module."""
    text = line + "\n" + body
    harness = {p.lower().replace("-", "_") for p in policy["harness_packages"]}
    names = {w.lower().replace("-", "_") for w in re.findall(r"[A-Za-z][\w-]*", text)}
    mentions_harness = bool(harness & names) or any(h in text.lower().replace("-", "_") for h in harness
                                                     if len(h) > 4)
    return mentions_harness and _ENGINE_MODULES.search(text) is None


def _heredocs(lines: list[str]) -> Iterable[tuple[int, str, list[str]]]:
    """(opening line number, opening line, body lines) for each heredoc in a shell text."""
    i = 0
    while i < len(lines):
        match = _HEREDOC.search(lines[i])
        if match is None:
            i += 1
            continue
        word = match.group(2)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != word:
            body.append(lines[j])
            j += 1
        yield i + 1, lines[i], body
        i = j + 1


def _program_rewrites(text: str, policy: Mapping[str, Any]) -> bool:
    locates = any(_rx(p).search(text) for p in policy["engine_locators"])
    writes = any(_rx(p).search(text) for p in policy["write_markers"])
    return locates and writes


def _heredoc_hits(path: str, lines: list[str], policy: Mapping[str, Any], side: str) -> list[PatchHit]:
    hits: list[PatchHit] = []
    for number, opener, body in _heredocs(lines):
        head = opener.split("<<", 1)[0]
        after = opener.split("<<", 1)[1] if "<<" in opener else ""
        text = "\n".join(body)
        if _WRITERS.search(head):
            target = (head + " " + after).split(">")[-1].strip().split(" ")[0] if ">" in opener else ""
            if any(m in target for m in policy["engine_path_markers"]) and \
                    not _patches_harness_only(opener, text, policy):
                hits.append(PatchHit(path, number, opener.strip()[:300], "heredoc-into-engine", side))
        elif _PROGRAMS.search(head) and _program_rewrites(text, policy):
            hits.append(PatchHit(path, number, opener.strip()[:300], "inline-program-rewrites-engine", side))
    return hits


def scan_text(path: str, text: str, policy: Mapping[str, Any], side: str = "head") -> list[PatchHit]:
    """Every patch signature in one file's text (a patch file is one hit at line 1)."""
    if is_patch_file(path, policy):
        first = text.split("\n", 1)[0] if text else ""
        return [PatchHit(path, 1, first[:300], "patch-file", side)]
    lines = text.split("\n")
    hits = _line_hits(path, lines, policy, side)
    seen = {(h.line, h.signature) for h in hits}
    for hit in _heredoc_hits(path, lines, policy, side):
        if (hit.line, hit.signature) not in seen and not any(h.line == hit.line for h in hits):
            hits.append(hit)
    code = "\n".join(ln for ln in lines if not ln.lstrip().startswith("#")) if path.endswith((".sh", ".bash")) \
        else text
    if path.endswith((".py", ".sh", ".bash")) and _program_rewrites(code, policy) and not hits:
        # A program or script that locates the installed engine (sglang.__file__, site-packages, ...)
        # and writes files (`sed -i "$SITE/..."`, open(..., "w")) rewrites engine sources.
        line = next((n for n, ln in enumerate(lines, 1) if not ln.lstrip().startswith("#")
                     and any(_rx(p).search(ln) for p in policy["engine_locators"])), None)
        hits.append(PatchHit(path, line, lines[line - 1].strip()[:300] if line else "", "program-rewrites-engine", side))
    return sorted(hits, key=lambda h: (h.line or 0, h.signature))


def setup_script_hits(path: str, doc: Any, lines: Mapping[tuple[Any, ...], int] | None,
                      policy: Mapping[str, Any], side: str = "head") -> list[PatchHit]:
    """Recipe keys that run a setup script in the serving container (any depth of the document)."""
    hits: list[PatchHit] = []
    keys = set(policy["setup_keys"])

    def walk(node: Any, prefix: tuple[Any, ...]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                here = (*prefix, key)
                if key in keys and value not in (None, False, ""):
                    line = (lines or {}).get(here)
                    hits.append(PatchHit(path, line, f"{key}: {value}", "setup-script", side))
                walk(value, here)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, (*prefix, i))

    walk(doc, ())
    return hits
