"""Which repository files a PR's benchmarks run: changed files plus everything affected configs read.

Checks 8, 10, 11 and 13 scan files for settings and patch signatures. The scope is: every file the PR
adds or modifies, and for every affected config (verifier.configs.affected_keys) the recipes its
rows name, the lane's shared recipe block, the scripts those run through `/infmax-workspace/...`,
and setup scripts named by `setup_script` (FORMATS.md §4.1: files in
`benchmarks/multi_node/srt-slurm-recipes/configs/`). `required` lists the files an affected
config runs; a bundle that lacks one cannot be judged (BUNDLE.md: the bundle holds them).

`scan_texts(ctx, path)` is what those checks read of a scoped file: its whole head text, except for
a master config, of which only the submitted entries' text is scanned (the entries the PR affects,
not the hundred others the file holds), each with its line offset in the file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.configs import ConfigEntry, launch_policy, master_configs, master_entries, points
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.layout import repo_relative
from verifier.core.yamlio import text_or_none
from verifier.documents.patches import is_scanned
from verifier.launch.affected import submitted_entries

_WORKSPACE = re.compile(r"/infmax-workspace/([\w./-]+)")
SETUP_DIR = "benchmarks/multi_node/srt-slurm-recipes/configs/"
SETUP_KEYS = ("setup_script", "setup-script")


@dataclass(frozen=True, eq=False, repr=False)
class Scope:
    """Files to scan on the head side, and what affected configs need."""

    files: tuple[str, ...]
    required: tuple[str, ...]
    recipes: tuple[str, ...]
    keys: tuple[str, ...]
    changed: tuple[str, ...]
    setup_scripts: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    launch_line: str | None = None

    @property
    def runs(self) -> set[str]:
        """The files an affected config runs: its recipes, shared blocks, scripts and setup scripts."""
        return set(self.required) | set(self.setup_scripts)

    def scanned(self, patches_policy: Mapping[str, Any]) -> list[str]:
        """The files a scanner of the serving stack reads: every file an affected config runs
        (`runs`) wherever it lives, a `tests/` or `docs/` folder included, and the other changed
        files the policy's scan paths choose."""
        runs = self.runs
        return [p for p in self.files if p in runs or is_scanned(p, patches_policy)]


def _text(ctx: CheckContext, path: str) -> str | None:
    return text_or_none(ctx.bundle.head.read(path), path)


def _setup_scripts(ctx: CheckContext, path: str, layout: str) -> dict[str, tuple[str, int | None]]:
    """setup_script values of a recipe: script repo path -> (recipe path, line)."""
    from verifier.launch.recipes.files import recipe_doc

    out: dict[str, tuple[str, int | None]] = {}
    try:
        doc = recipe_doc(ctx, "head", path)
    except InputError:
        return out
    if doc is None:
        return out
    for p, line in doc.lines.items():
        if p and p[-1] in SETUP_KEYS:
            value = doc.get(*p)
            if isinstance(value, str) and value:
                out[setup_script_path(value, layout)] = (path, line)
    return out


def setup_script_path(value: str, layout: str) -> str:
    """The repository path of a recipe's `setup_script` value (a bare name lives in SETUP_DIR)."""
    name = value.strip().removeprefix("/infmax-workspace/")
    return repo_relative(name if "/" in name else SETUP_DIR + name, layout)


def compute_scope(ctx: CheckContext) -> Scope:
    """The scope (see module docstring); raises InputError when the master configs are unreadable."""
    from verifier.launch.kinds.srt_fetched import fetched_at_run_time
    from verifier.launch.legacy_scripts import legacy_script_path

    layout = ctx.bundle.layout
    keys = list(submitted_entries(ctx))
    changed = [f.path for f in ctx.bundle.pr.files if f.status != "removed"]
    files: dict[str, None] = dict.fromkeys(changed)
    required: dict[str, None] = {}
    recipes: dict[str, None] = {}
    setups: dict[str, tuple[str, int | None]] = {}
    policy = launch_policy(ctx)
    head_entries = master_entries(ctx, "head")
    fetched_keys: set[str] = set()
    for key in keys:
        for point in points(ctx, "head", key):
            for ref in (point.srt_recipe, point.eval_srt_recipe):
                if ref is None:
                    continue
                if fetched_at_run_time(ref, layout, ctx.bundle.head):
                    fetched_keys.add(key)
                else:
                    recipes[ref.path] = None
            if point.srt_recipe is None and not point.multinode and key in head_entries:
                # an old-layout per-config script is what the launch runs (the shared library it
                # sources is scanned when the PR changes it, like every changed benchmark file)
                script, _ = legacy_script_path(ctx, "head", head_entries[key], point)
                if script is not None:
                    required[script] = None
            lane = "multi" if point.multinode else "single"
            block = policy["shared-blocks"].get(point.scenario, {}).get(lane)
            if isinstance(block, str) and point.srt_recipe is not None:
                path = repo_relative(block, layout)
                # the old layout has no configs/srt-recipes/ shared blocks: its recipes are complete
                if layout != "old" or ctx.bundle.base.has(path) or ctx.bundle.head.has(path):
                    required[path] = None
    for recipe in list(recipes):
        required[recipe] = None
    if fetched_keys:
        # a recipe the runner fetches from srt-slurm is not an InferenceX file: what the launch
        # runs of the tree (the runner, the recipe folder it copies over the clone) is in its files
        from verifier.launch import launches

        for launch in launches(ctx, "head").launches:
            if launch.key in fetched_keys:
                for path in launch.files:
                    if ctx.bundle.head.has(path):
                        required[path] = None
                        if path.endswith((".yaml", ".yml")):
                            recipes[path] = None
    for path in list(required):
        text = _text(ctx, path)
        if text is None:
            continue
        for match in _WORKSPACE.finditer(text):
            target = repo_relative(match.group(1).rstrip("."), layout)
            if posixpath.splitext(target)[1] in (".sh", ".py", ".bash", ".jinja", ".yaml", ".yml", ".json"):
                required[target] = None
        if path.endswith((".yaml", ".yml")):
            for script, origin in _setup_scripts(ctx, path, layout).items():
                setups[script] = origin
    for path in required:
        files[path] = None
    for path in setups:
        files[path] = None
    return Scope(files=tuple(files), required=tuple(required), recipes=tuple(recipes), keys=tuple(keys),
                 changed=tuple(changed), setup_scripts=setups)


def affected_files(ctx: CheckContext) -> Scope:
    """The PR's scan scope, memoized per verdict."""
    return ctx.memo("scope.affected_files", lambda: compute_scope(ctx))


def scanned_entries(ctx: CheckContext, path: str) -> list[ConfigEntry] | None:
    """The submitted entries of a head master config that checks scan, or None when `path` is not a
    master config split into entries (then the whole file is scanned). Raises InputError when the
    head master configs are unreadable."""
    if path not in master_configs(ctx, "head").files.values():
        return None
    entries = [e for e in submitted_entries(ctx).values() if e.file == path]
    return None if any(not e.text for e in entries) else entries


def scan_texts(ctx: CheckContext, path: str) -> list[tuple[str, int]]:
    """The head text of one scoped file as (text, lines before it in the file) pieces; [] when the
    head lacks the file or it is not text. A master config gives the text of each submitted entry
    it holds (`scanned_entries`); any other file, or a master config the splitter could not cut
    into entries, is one piece. Memoized per verdict."""
    return ctx.memo(f"scope.scan_texts.{path}", lambda: _scan_texts(ctx, path))


def _scan_texts(ctx: CheckContext, path: str) -> list[tuple[str, int]]:
    text = _text(ctx, path)
    if text is None:
        return []
    try:
        entries = scanned_entries(ctx, path)
    except InputError:
        entries = None
    if entries is None:
        return [(text, 0)]
    return [(e.text, e.line - 1) for e in entries]
