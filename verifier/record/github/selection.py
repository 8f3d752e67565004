"""Which repository files a bundle needs, resolved in three rounds from what the PR touches.

Round 1 (from the tree listings alone): every changed file on the side where it exists, the policy
files by logical name in both layouts (CODEOWNERS, checklist, MODELS.md, thresholds, changelog,
master configs, runners), every waiver and every shared srt-recipes block.
Round 2 (after reading the master configs and the changelog): the affected config keys; their
recipes on both sides; recipes of sibling keys on the same runner and framework (context, capped);
their golden AL curves and vendor overview; legacy launch scripts for keys without recipes.
Round 3 (after reading those recipes and shared blocks): setup scripts and the benchmark scripts
that their commands run (`/infmax-workspace/<path>`).

Everything is parsed with verifier.core.yamlio (untrusted input); a file that does not parse is simply
not followed further, and the checks report on it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from verifier.configs.master import master_file_data
from verifier.configs.points import parse_recipe_ref
from verifier.core.errors import InputError
from verifier.core.layout import FORMER_PATHS, POLICY_PATHS, Layout, policy_path, repo_relative
from verifier.core.model import ChangedFile
from verifier.core.yaml11 import parse_yaml11_shared
from verifier.core.yamlio import decode_text

Files = Mapping[str, bytes]

ROUND1_NAMES = ("codeowners", "checklist", "checklist_zh", "models_md", "thresholds", "changelog", "changelog_gate",
                "agents", "nvidia_master", "amd_master", "runners")
MASTERS = {"nvidia_master": "nvidia", "amd_master": "amd"}
_WORKSPACE = re.compile(r"/infmax-workspace/([\w./-]{1,300})")
_RECIPE_KEYS = ("srt-recipe", "eval-srt-recipe")
_DRAFT_KEYS = ("speculative-draft-model-path", "speculative_draft_model_path", "speculative-draft-model",
               "speculative_model", "speculative_model_dir", "draft-model")


def detect_layout(paths: Iterable[str]) -> Layout:
    """'new' when the tree keeps InferenceX under inferencex-e2e/."""
    return "new" if any(p.startswith("inferencex-e2e/") for p in paths) else "old"


def _both_layouts(name: str) -> tuple[str, ...]:
    old, new = POLICY_PATHS[name]
    # and where an old-layout file lived before (FORMER_PATHS: master configs and runners.yaml under
    # .github/configs/ until 2026-07-02), so an older tree's files are selected too
    return (*((old, new) if old != new else (old,)), *FORMER_PATHS.get(name, ()))


def _located(files: Files, name: str, layout: Layout) -> str:
    """The path of a logical file in a side's files: the current one, else a former one it holds."""
    current = policy_path(name, layout)
    if current in files or layout != "old":
        return current
    return next((p for p in FORMER_PATHS.get(name, ()) if p in files), current)


def _parse(data: bytes | None, path: str) -> Any:
    """Plain data of a YAML file, or None when it does not parse (parsed once per content)."""
    if data is None:
        return None
    return _parse_cached(path, data)


@lru_cache(maxsize=128)
def _parse_cached(path: str, data: bytes) -> Any:
    # YAML 1.1 with libyaml (as InferenceX reads these files; ~40x faster than the round-trip loader
    # on a real master config), with the node budget that refuses alias bombs; the parse is the one
    # the verdict's readers of the same text share (parse_yaml11_shared)
    try:
        return parse_yaml11_shared(decode_text(data, path), path).data
    except (InputError, RecursionError, ValueError):
        return None


@lru_cache(maxsize=16)
def _master_data(path: str, data: bytes) -> Any:
    """A master config's plain data, or None when it does not parse: as `_parse`, but read from the
    parses of its entries that the verdict uses too (verifier.configs.master.master_file_data)."""
    try:
        return master_file_data(decode_text(data, path), path)
    except (InputError, RecursionError, ValueError):
        return None


def _walk(node: Any) -> Iterator[tuple[Any, Any]]:
    """(key, value) of every mapping entry and (None, item) of every list item, depth first."""
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            for k, v in cur.items():
                yield k, v
                stack.append(v)
        elif isinstance(cur, list):
            for v in cur:
                yield None, v
                stack.append(v)


def round1(base: Iterable[str], head: Iterable[str], changed: Iterable[ChangedFile], *, waivers: int) -> dict[str, set[str]]:
    """Paths to fetch before anything is parsed, per side."""
    listing = {"base": set(base), "head": set(head)}
    want: dict[str, set[str]] = {"base": set(), "head": set()}
    for f in changed:
        if f.status != "removed":
            want["head"].add(f.path)
        before = f.previous_path or f.path
        if f.status != "added":
            want["base"].add(before)
    for side, paths in listing.items():
        for name in ROUND1_NAMES:
            for candidate in _both_layouts(name):
                if candidate in paths:
                    want[side].add(candidate)
                    if name == "models_md":
                        zh = candidate.removesuffix(".md") + "_zh.md"
                        if zh in paths:
                            want[side].add(zh)
        for name, limit, suffixes in (("waiver_dir", waivers, (".md",)), ("srt_shared_dir", 50, (".yaml", ".yml"))):
            for prefix in _both_layouts(name):
                found = sorted(p for p in paths if p.startswith(prefix) and "/" not in p[len(prefix):]
                               and p.endswith(suffixes))
                want[side].update(found[:limit])
        want[side] &= paths
    return want


@dataclass
class Affected:
    """Config keys the PR affects and what they point at."""

    keys: set[str] = field(default_factory=set)
    # key -> (side -> entry) for affected keys
    entries: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    vendor: dict[str, str] = field(default_factory=dict)


def _masters(files: Files, layout: Layout) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    entries: dict[str, dict[str, Any]] = {}
    vendor: dict[str, str] = {}
    for name, vend in MASTERS.items():
        path = _located(files, name, layout)
        raw = files.get(path)
        doc = None if raw is None else _master_data(path, raw)
        if isinstance(doc, dict):
            for key, entry in doc.items():
                if isinstance(entry, dict):
                    entries[str(key)] = entry
                    vendor[str(key)] = vend
    return entries, vendor


def entry_recipes(entry: Mapping[str, Any], layout: Layout) -> set[str]:
    """Repository paths of every recipe an entry names (srt-recipe, eval-srt-recipe, CONFIG_FILE=)."""
    out: set[str] = set()
    recipe_dir = entry.get("srt-recipe-dir") if isinstance(entry.get("srt-recipe-dir"), str) else None
    for key, value in _walk(entry):
        if key in _RECIPE_KEYS and isinstance(value, str) and value.strip():
            out.add(parse_recipe_ref(value, str(key), layout, recipe_dir, entry.get("multinode") is True).path)
        elif key is None and isinstance(value, str) and "=" in value:
            name, _, ref = value.partition("=")
            if name in ("CONFIG_FILE", "EVAL_CONFIG_FILE") and ref.strip():
                out.add(parse_recipe_ref(ref, name, layout, recipe_dir, entry.get("multinode") is True).path)
    return out


def _changelog_keys(base: Files, head: Files, layout: Layout) -> set[str]:
    """Config keys of changelog entries the PR appends (entries past the base file's count)."""
    path = policy_path("changelog", layout)
    before, after = _parse(base.get(path), path), _parse(head.get(path), path)
    if not isinstance(after, list):
        return set()
    start = len(before) if isinstance(before, list) else 0
    keys: set[str] = set()
    for item in after[start:]:
        if isinstance(item, dict) and isinstance(item.get("config-keys"), list):
            keys.update(str(k) for k in item["config-keys"])
    return keys


def affected_keys(base: Files, head: Files, changed: Iterable[ChangedFile], layout: Layout) -> Affected:
    """Keys added, removed or changed in a master config, whose recipes changed, or that the changelog appends."""
    base_entries, base_vendor = _masters(base, layout)
    head_entries, head_vendor = _masters(head, layout)
    changed_paths = {f.path for f in changed} | {f.previous_path for f in changed if f.previous_path}
    out = Affected()
    for key in set(base_entries) | set(head_entries):
        b, h = base_entries.get(key), head_entries.get(key)
        recipes = entry_recipes(b or {}, layout) | entry_recipes(h or {}, layout)
        if b != h or recipes & changed_paths:
            out.keys.add(key)
    out.keys |= _changelog_keys(base, head, layout) & (set(base_entries) | set(head_entries))
    for key in out.keys:
        sides = {}
        if key in base_entries:
            sides["base"] = base_entries[key]
        if key in head_entries:
            sides["head"] = head_entries[key]
        out.entries[key] = sides
        out.vendor[key] = head_vendor.get(key) or base_vendor.get(key, "nvidia")
    return out


def round2(
    base: Files, head: Files, listing: Mapping[str, set[str]], affected: Affected, layout: Layout, *, context_recipes: int
) -> dict[str, set[str]]:
    """Recipes, golden curves, overviews and legacy scripts of the affected keys (and sibling context)."""
    want: dict[str, set[str]] = {"base": set(), "head": set()}
    for sides in affected.entries.values():
        for entry in sides.values():
            for path in entry_recipes(entry, layout):
                for side in ("base", "head"):
                    want[side].add(path)
    # sibling context: recipes of other keys on the same runner and framework, head side
    head_entries, _ = _masters(head, layout)
    base_entries, _ = _masters(base, layout)
    families = {
        (str(e.get("runner")), str(e.get("framework")))
        for sides in affected.entries.values()
        for e in sides.values()
    }
    siblings: list[str] = []
    for key in sorted(set(head_entries) - affected.keys):
        entry = head_entries[key]
        if (str(entry.get("runner")), str(entry.get("framework"))) in families:
            siblings.extend(sorted(entry_recipes(entry, layout)))
    for path in list(dict.fromkeys(siblings))[:context_recipes]:
        want["head"].add(path)
        if path in listing["base"] and base_entries:
            want["base"].add(path)
    golden_dir = policy_path("golden_al_dir", layout)
    overview_dir = policy_path("overview_dir", layout)
    # the golden curves of each side, found once (not once per affected key in the whole listing)
    scripts: dict[str, list[tuple[str, str]]] = {}  # each side's benchmark scripts (`_bench_scripts`), once
    golden = {side: [(posixpath.basename(path), path) for path in paths
                     if path.startswith(golden_dir) and "/" not in path[len(golden_dir):]]
              for side, paths in listing.items()}
    for key, sides in affected.entries.items():
        for side, entry in sides.items():
            prefix = str(entry.get("model-prefix") or "")
            if prefix:
                for name, path in golden[side]:
                    if name.startswith(prefix + "_") or name.startswith(prefix + ".") or name == "README.md":
                        want[side].add(path)
            vendor = affected.vendor.get(key, "nvidia")
            for name in (f"{vendor}.md", f"{vendor}_zh.md"):
                want[side].add(overview_dir + name)
            if not entry_recipes(entry, layout):
                if side not in scripts:
                    scripts[side] = _bench_scripts(listing[side], layout)
                want[side].update(_legacy_scripts(entry, scripts[side]))
                harness = _harness_files(entry, base if side == "base" else head, layout)
                for other in ("base", "head"):  # the same harness files on both sides
                    want[other].update(harness)
    for side in want:
        want[side] &= listing[side]
    return want


WORKFLOW = ".github/workflows/benchmark-tmpl.yml"
RUNNER_SCRIPT = "runners/launch_{cluster}.sh"


def _harness_files(entry: Mapping[str, Any], files: Files, layout: Layout) -> set[str]:
    """The workflow and runner scripts that start a recipe-less row's benchmark script: the runner
    label's machines (`configs/runners.yaml` labels) name their clusters' `runners/launch_<cluster>.sh`."""
    out = {WORKFLOW}
    runners_path = _located(files, "runners", layout)
    runners = _parse(files.get(runners_path), runners_path)
    labels = runners.get("labels") if isinstance(runners, dict) and isinstance(runners.get("labels"), dict) else \
        runners if isinstance(runners, dict) else {}  # the oldest format: `label: [machine, ...]` at the top
    label = str(entry.get("runner") or "")
    machines = labels.get(label) if isinstance(labels.get(label), list) else [label] if label else []
    for machine in machines:
        cluster = str(machine).split("_", 1)[0]
        if re.fullmatch(r"[\w.-]{1,64}", cluster):
            out.add(repo_relative(RUNNER_SCRIPT.format(cluster=cluster), layout))
    return out


def _bench_scripts(paths: set[str], layout: Layout) -> list[tuple[str, str]]:
    """(file name, path) of every shell script under the benchmarks folder, in path order."""
    bench = policy_path("benchmarks_dir", layout)
    return [(posixpath.basename(p), p) for p in sorted(paths) if p.startswith(bench) and p.endswith(".sh")]


def _legacy_scripts(entry: Mapping[str, Any], scripts: list[tuple[str, str]]) -> set[str]:
    """Old-layout launch scripts of an entry: benchmarks/**/<prefix>_<precision>_*<framework>*.sh
    (the first eight in path order; `scripts`: `_bench_scripts` of the side)."""
    prefix = str(entry.get("model-prefix") or "")
    precision = str(entry.get("precision") or "")
    framework = str(entry.get("framework") or "").split("-")[0]
    if not prefix:
        return set()
    start = f"{prefix}_{precision}_"
    found = [p for name, p in scripts if name.startswith(start) and framework in name]
    return set(found[:8])


def round3(files_by_side: Mapping[str, Files], listing: Mapping[str, set[str]], layout: Layout) -> dict[str, set[str]]:
    """Setup scripts and benchmark scripts named by the recipes and shared blocks already fetched."""
    want: dict[str, set[str]] = {"base": set(), "head": set()}
    configs_dir = repo_relative("benchmarks/multi_node/srt-slurm-recipes/configs/", layout)
    for side, files in files_by_side.items():
        for path, data in files.items():
            if not path.endswith((".yaml", ".yml")) or "srt-" not in path:
                continue
            doc = _parse(data, path)
            for key, value in _walk(doc):
                if not isinstance(value, str):
                    continue
                if key == "setup_script" and value.strip() and "/" not in value.strip():
                    want[side].add(configs_dir + value.strip())
                for m in _WORKSPACE.finditer(value):
                    want[side].add(repo_relative(m.group(1), layout))
    for side in want:
        want[side] &= listing[side]
    return want


@dataclass(frozen=True)
class CheckpointRef:
    """A checkpoint config to fetch: HF repo id, revision, file, and the bundle path it is stored at."""

    repo_id: str
    revision: str
    file: str

    @property
    def bundle_path(self) -> str:
        """Path under checkpoints/."""
        return f"{self.repo_id}/{self.file}"


_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}$")
_SUBDIR = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}(?:/[A-Za-z0-9][\w.-]{0,95}){0,3}$")


def checkpoint_refs(affected: Affected, head: Files, layout: Layout) -> list[CheckpointRef]:
    """config.json of each affected key's served checkpoint and of its draft (sub-folder or repo)."""
    refs: dict[str, CheckpointRef] = {}
    for sides in affected.entries.values():
        entry = sides.get("head")
        if not entry:
            continue
        model = str(entry.get("model") or "").removeprefix("hf:")
        if not _REPO_ID.match(model):
            continue
        revision = "main"
        drafts: set[str] = set()
        for path in sorted(entry_recipes(entry, layout)):
            doc = _parse(head.get(path), path)
            for key, value in _walk(doc):
                if key == "revision" and isinstance(value, str) and re.fullmatch(r"[\w.-]{1,100}", value):
                    revision = value
                if key in _DRAFT_KEYS and isinstance(value, str):
                    drafts.add(value.strip())
                if key in ("speculative-config", "speculative_config") and isinstance(value, str):
                    m = re.search(r'"model"\s*:\s*"([^"]{1,200})"', value)
                    if m:
                        drafts.add(m.group(1))
        main = CheckpointRef(model, revision, "config.json")
        refs[main.bundle_path] = main
        for draft in sorted(drafts):
            if draft.startswith("/model/"):
                sub = draft.removeprefix("/model/").strip("/")
                if _SUBDIR.match(sub):
                    ref = CheckpointRef(model, revision, f"{sub}/config.json")
                    refs[ref.bundle_path] = ref
            else:
                repo = draft.removeprefix("hf:")
                if _REPO_ID.match(repo) and not repo.startswith("/"):
                    ref = CheckpointRef(repo, "main", "config.json")
                    refs[ref.bundle_path] = ref
    return list(refs.values())


def baseline_prs(base: Files, layout: Layout, keys: Iterable[str], pr_number: int) -> dict[str, int]:
    """For each key, the PR of the last base changelog entry that lists it (its official run is the baseline)."""
    path = policy_path("changelog", layout)
    doc = _parse(base.get(path), path)
    out: dict[str, int] = {}
    if not isinstance(doc, list):
        return out
    wanted = set(keys)
    for item in doc:
        if not isinstance(item, dict) or not isinstance(item.get("config-keys"), list):
            continue
        m = re.search(r"/pull/(\d{1,9})", str(item.get("pr-link") or ""))
        if not m or int(m.group(1)) == pr_number:
            continue
        for key in item["config-keys"]:
            if str(key) in wanted:
                out[str(key)] = int(m.group(1))
    return out
