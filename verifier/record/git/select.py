"""Which files of the two trees a git-recorded bundle holds.

The same rounds as the live recorder (verifier.record.github.selection: changed files, policy documents,
waivers, shared recipe blocks, master configs; then the affected keys' recipes, golden AL curves,
overviews and legacy launch scripts; then setup and benchmark scripts the recipes run), plus two
rounds a local clone makes cheap: every old-layout launch script of an affected key's model
prefix (so a check that lists the candidates sees all of them), and the shell libraries those
scripts `source` (followed transitively, resolved statically, never run).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping

from verifier.core.layout import Layout, policy_path, repo_relative
from verifier.core.model import ChangedFile
from verifier.record.github.selection import affected_keys, round1, round2, round3

Files = dict[str, bytes]
Fetch = Callable[[str, Iterable[str]], None]

WAIVERS = 200
CONTEXT_RECIPES = 12
MAX_SOURCE_DEPTH = 4
# `source ARG` (also `bash ARG`, `sh ARG`): ARG a run of double-quoted parts (which may hold
# `$(dirname "$0")` with its own quotes), single-quoted parts, `$(...)` and bare characters
_SOURCE = re.compile(r"""^[ \t]*(?:source|\.|bash|sh)[ \t]+(?:-\w+[ \t]+)*((?:"(?:\$\([^()\n]*\)|[^"\n])*"|'[^'\n]*'|\$\([^()\n]*\)|[^\s;|&])+)""",
                     re.MULTILINE)
# how launch scripts spell the directory they live in and the repository root
_SCRIPT_DIR = re.compile(r"^\$\(\s*dirname\s+\"?\$(?:0|\{BASH_SOURCE\[0\]\}|BASH_SOURCE)\"?\s*\)/?")
_ROOTS = ("/workspace/", "/infmax-workspace/", "$INFERENCEX_ROOT/", "${INFERENCEX_ROOT}/",
          "$INFMAX_CONTAINER_WORKSPACE/", "${INFMAX_CONTAINER_WORKSPACE}/")


def sourced_path(script: str, target: str, layout: Layout) -> str | None:
    """The repository path a `source` line of a script names, or None when it needs run-time values."""
    rel = _SCRIPT_DIR.sub("", target)
    if rel != target:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(script), rel))
        return None if path.startswith("..") else path
    for root in _ROOTS:
        if target.startswith(root):
            return repo_relative(target[len(root):], layout)
    return None


def _unquote(arg: str) -> str:
    """A shell word without its outer quotes, and `$(dirname "$0")` written without its inner ones."""
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "\"'":
        arg = arg[1:-1]
    return re.sub(r'\$\(\s*dirname\s+"([^"]*)"\s*\)', r"$(dirname \1)", arg)


def _sources(files: Mapping[str, bytes], paths: Iterable[str], layout: Layout) -> set[str]:
    out: set[str] = set()
    for path in paths:
        data = files.get(path)
        if data is None or not path.endswith((".sh", ".bash")):
            continue
        for m in _SOURCE.finditer(data.decode("utf-8", "replace")):
            found = sourced_path(path, _unquote(m.group(1)).replace('"', '').replace("'", ''), layout)
            if found:
                out.add(found)
    return out


def _launch_scripts(entries: Iterable[Mapping[str, object]], listing: set[str], layout: Layout) -> set[str]:
    """Every launch script of the entries' model prefixes (the same prefixes on both sides, so a
    script absent from one side's bundle really is absent from that tree)."""
    bench = policy_path("benchmarks_dir", layout)
    prefixes = {f"{e.get('model-prefix')}_" for e in entries if e.get("model-prefix")}
    return {p for p in listing if p.startswith(bench) and p.endswith(".sh")
            and any(posixpath.basename(p).startswith(pre) for pre in prefixes)}


def select_files(
    listing: Mapping[str, set[str]], changed: tuple[ChangedFile, ...], layout: Layout, fetch: Fetch,
    got: Mapping[str, Files],
) -> None:
    """Fill `got` (side -> files) with every file the checks read, calling fetch(side, paths) per round."""

    def take(want: Mapping[str, set[str]]) -> None:
        for side, paths in want.items():
            fresh = [p for p in paths if p in listing[side] and p not in got[side]]
            if fresh:
                fetch(side, fresh)

    take(round1(listing["base"], listing["head"], changed, waivers=WAIVERS))
    affected = affected_keys(got["base"], got["head"], changed, layout)
    take(round2(got["base"], got["head"], listing, affected, layout, context_recipes=CONTEXT_RECIPES))
    take(round3(got, listing, layout))
    entries = [e for sides in affected.entries.values() for e in sides.values()]
    take({side: _launch_scripts(entries, listing[side], layout) for side in ("base", "head")})
    for _ in range(MAX_SOURCE_DEPTH):
        want = {side: _sources(got[side], list(got[side]), layout) - set(got[side]) for side in ("base", "head")}
        want = {side: paths & listing[side] for side, paths in want.items()}
        if not any(want.values()):
            break
        take(want)
    # Every golden AL curve (a dozen small files): the verifier may judge a key the recorder's
    # affected-key estimate left out (a recipe's own script changed), and its curve must be there.
    golden = policy_path("golden_al_dir", layout)
    take({side: {p for p in listing[side] if p.startswith(golden) and "/" not in p[len(golden):]}
          for side in ("base", "head")})
    # Both trees hold the same selection: a file fetched on one side is fetched on the other where
    # it exists there, so that comparing the two trees (changed files, affected keys) sees only
    # what the PR changed, never a file read on one side only.
    take({side: set(got[other]) - set(got[side]) for side, other in (("base", "head"), ("head", "base"))})
