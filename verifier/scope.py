"""Which repository files a PR's benchmarks run: changed files plus everything affected configs read.

Checks 8 and 10 scan files for settings and patch signatures. The scope is: every file the PR
adds or modifies, and for every affected config (verifier.configs.affected_keys) the recipes its
rows name, the lane's shared recipe block, the scripts those run through `/infmax-workspace/...`,
and setup scripts named by `setup_script` (FORMATS.md §4.1: files in
`benchmarks/multi_node/srt-slurm-recipes/configs/`). `required` lists the files an affected
config runs; a bundle that lacks one cannot be judged (BUNDLE.md: the bundle holds them).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from verifier.configs import launch_policy, master_entries, points, submitted_entries
from verifier.configs.yaml11 import parse_yaml11
from verifier.context import CheckContext
from verifier.errors import InputError
from verifier.layout import repo_relative
from verifier.yamlio import text_or_none

_WORKSPACE = re.compile(r"/infmax-workspace/([\w./-]+)")
SETUP_DIR = "benchmarks/multi_node/srt-slurm-recipes/configs/"
SETUP_KEYS = ("setup_script", "setup-script")


@dataclass(frozen=True)
class Scope:
    """Files to scan on the head side, and what affected configs need."""

    files: tuple[str, ...]
    required: tuple[str, ...]
    recipes: tuple[str, ...]
    keys: tuple[str, ...]
    changed: tuple[str, ...]
    setup_scripts: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    launch_line: str | None = None


def _text(ctx: CheckContext, path: str) -> str | None:
    return text_or_none(ctx.bundle.head.read(path), path)


def _setup_scripts(path: str, text: str, layout: str) -> dict[str, tuple[str, int | None]]:
    """setup_script values of a recipe: script repo path -> (recipe path, line)."""
    out: dict[str, tuple[str, int | None]] = {}
    try:
        doc = parse_yaml11(text, path)
    except InputError:
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
    from verifier.launch import legacy_script_path

    layout = ctx.bundle.layout
    keys = list(submitted_entries(ctx))
    changed = [f.path for f in ctx.bundle.pr.files if f.status != "removed"]
    files: dict[str, None] = dict.fromkeys(changed)
    required: dict[str, None] = {}
    recipes: dict[str, None] = {}
    setups: dict[str, tuple[str, int | None]] = {}
    policy = launch_policy(ctx)
    head_entries = master_entries(ctx, "head")
    for key in keys:
        for point in points(ctx, "head", key):
            for ref in (point.srt_recipe, point.eval_srt_recipe):
                if ref is not None:
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
    for path in list(required):
        text = _text(ctx, path)
        if text is None:
            continue
        for match in _WORKSPACE.finditer(text):
            target = repo_relative(match.group(1).rstrip("."), layout)
            if posixpath.splitext(target)[1] in (".sh", ".py", ".bash", ".jinja", ".yaml", ".yml", ".json"):
                required[target] = None
        if path.endswith((".yaml", ".yml")):
            for script, origin in _setup_scripts(path, text, layout).items():
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
