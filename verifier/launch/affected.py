"""Which config keys a PR affects, and why.

A key is affected when its master entry is added, changed (parsed data differs) or removed
between base and head, or when a file its launches read changed in the PR: a recipe its rows name
(`srt-recipe`, `eval-srt-recipe`, legacy `CONFIG_FILE`), the lane's shared block
(`configs/srt-recipes/*.yaml`), the benchmark script the shared block or the recipe runs, or a
legacy per-config benchmark script. The perf-changelog entries the PR appends name keys too
(`config-keys`, with `*` wildcards); those are reported separately (`changelog_keys`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.configs.master import ConfigEntry, candidate_entries, master_configs, master_entries
from verifier.configs.points import AGENTIC, FIXED, launch_policy, parse_recipe_ref
from verifier.core import processcache
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.layout import repo_relative, short_path
from verifier.launch.legacy_scripts import legacy_script_matches, legacy_script_stems, script_folder

_WORKSPACE_PATH = re.compile(r"/infmax-workspace/([\w./-]+)")


@dataclass(frozen=True)
class AffectedReason:
    """Why one key is affected: kind, the file (repository path), a line when known, a detail."""

    kind: str  # entry-added | entry-changed | entry-removed | recipe-changed | shared-block-changed |
    #            benchmark-script-changed | launcher-script-changed (the config's own legacy script)
    file: str
    line: int | None = None
    detail: str = ""


@dataclass(frozen=True)
class ChangelogKeys:
    """One config-keys pattern of an appended changelog entry and the keys it selects."""

    pattern: str
    line: int
    keys: tuple[str, ...]


@dataclass
class AffectedConfigs:
    """The PR's affected config keys with reasons."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    reasons: dict[str, list[AffectedReason]] = field(default_factory=dict)
    changed_fields: dict[str, list[str]] = field(default_factory=dict)
    changelog: list[ChangelogKeys] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Keys touched only through a shared recipe block or benchmark script, and not named by a new
    # changelog entry: their benchmarks change, but the PR does not submit them. Checks that judge a
    # submission (launches, images, docs) leave them out of `keys`; the changed shared files
    # themselves are still scanned (Checks 8 and 10) and judged inside every submitted launch.
    indirect: dict[str, list[AffectedReason]] = field(default_factory=dict)

    @property
    def keys(self) -> list[str]:
        """Every key affected by the diff (not the changelog), in first-reason order."""
        return list(self.reasons)

    @property
    def changelog_keys(self) -> list[str]:
        """Keys the appended changelog entries select (wildcards expanded over head keys)."""
        return list(dict.fromkeys(k for item in self.changelog for k in item.keys))

    @property
    def all_keys(self) -> list[str]:
        """Diff-affected keys, then changelog-selected keys."""
        return list(dict.fromkeys([*self.keys, *self.changelog_keys]))

    def add(self, key: str, reason: AffectedReason) -> None:
        """Record a reason (deduplicated)."""
        bucket = self.reasons.setdefault(key, [])
        if reason not in bucket:
            bucket.append(reason)

    def why(self, key: str) -> list[AffectedReason]:
        """The reasons one key is affected ([] when it is not)."""
        return self.reasons.get(key, [])


def _changed_paths(ctx: CheckContext) -> dict[str, str]:
    """Changed file path -> status, from pr.yaml files plus the tree diff (both must agree)."""
    out = {f.path: f.status for f in ctx.bundle.pr.files}
    for f in ctx.bundle.pr.files:
        if f.previous_path:
            out.setdefault(f.previous_path, "removed")
    base, head = ctx.bundle.base.files, ctx.bundle.head.files
    for path in base.keys() | head.keys():
        if path not in out and base.get(path) != head.get(path):
            out[path] = "added" if path not in base else "removed" if path not in head else "modified"
    return out


def _diff_fields(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    names = list(dict.fromkeys([*old, *new]))
    return [n for n in names if old.get(n, _MISSING) != new.get(n, _MISSING)]


_MISSING = object()


def first_difference(old: Any, new: Any, path: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    """The path of the first place two parsed values differ (deepest common container)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in dict.fromkeys([*new, *old]):
            if old.get(key, _MISSING) != new.get(key, _MISSING):
                if key in old and key in new:
                    return first_difference(old[key], new[key], (*path, key))
                return (*path, key) if key in new else path
        return path
    if isinstance(old, list) and isinstance(new, list):
        for i in range(min(len(old), len(new))):
            if old[i] != new[i]:
                return first_difference(old[i], new[i], (*path, i))
        return (*path, min(len(old), len(new))) if len(new) > len(old) else path
    return path


def _entry_recipes(entry: ConfigEntry, layout: str) -> Iterator[tuple[str, int | None, str]]:
    """(recipe repo path, row line, source) for every recipe a master entry's rows name."""
    recipe_dir = entry.get("srt-recipe-dir")
    recipe_dir = recipe_dir if isinstance(recipe_dir, str) else None
    for row in entry.rows:
        data = row.data
        for source in ("srt-recipe", "eval-srt-recipe"):
            if isinstance(data.get(source), str):
                yield parse_recipe_ref(data[source], source, layout, recipe_dir, entry.multinode).path, row.line, source
        for role in ("worker", "prefill", "decode"):
            worker = data.get(role)
            settings = worker.get("additional-settings") if isinstance(worker, dict) else None
            for item in settings if isinstance(settings, list) else ():
                if isinstance(item, str):
                    for source in ("CONFIG_FILE", "EVAL_CONFIG_FILE"):
                        if item.startswith(source + "="):
                            yield parse_recipe_ref(item.split("=", 1)[1], source, layout).path, row.line, source


def _lanes(entry: ConfigEntry) -> set[tuple[str, str]]:
    """(scenario, lane) pairs of an entry's srt-recipe rows."""
    lane = "multi" if entry.multinode else "single"
    return {(row.scenario, lane) for row in entry.rows
            if any(k in row.data for k in ("srt-recipe", "eval-srt-recipe"))}


def _legacy_scripts_of(ctx: CheckContext, entry: ConfigEntry, by_folder: Mapping[str, Mapping[str, str]],
                       conf: dict[str, Any],
                       chosen_cache: dict[tuple[str, str], tuple[bool, frozenset[str]]]) -> set[str]:
    """The paths among `by_folder` (folder -> script stem -> path) that are (or, on either side, may
    be) old-layout launcher scripts of `entry`.

    As the runners pick it (verifier.launch.legacy_scripts.legacy_script_path): in the folder the
    runners take a scenario the entry runs from (`script_folder`, on either side: a PR may move the
    scripts), the exact name the runner tries first; a looser name
    (`<prefix>_<precision>_<sku>_<framework>...`) only when no exact name exists in that folder.
    `chosen_cache` keeps what depends only on the entry and the folder; a PR may change hundreds of
    scripts in one folder, and each is looked up by name, not asked about every entry.
    """
    out: set[str] = set()
    listed = all(tree.listing is not None for tree in (ctx.bundle.base, ctx.bundle.head))
    for folder, scripts in by_folder.items():
        cache_key = (entry.key, folder)
        cached = chosen_cache.get(cache_key)
        if cached is None:
            cached = chosen_cache[cache_key] = _legacy_names_in(ctx, entry, folder, conf)
        runs_from_folder, chosen = cached
        if not runs_from_folder:
            continue
        if chosen:
            out.update(scripts[stem] for stem in chosen if stem in scripts)
        elif not listed:
            out.update(path for stem, path in scripts.items() if legacy_script_matches(entry, stem))
        # both commits are listed whole and none of the names the runner tries exists: no script is
        # the entry's (a looser name is another entry's script, which the runner would not start for it)
    return out


def _scenario_folders(ctx: CheckContext, scenario: str | None) -> frozenset[str]:
    """The folders the runners of either side take a scenario's scripts from (`script_folder`):
    asked for every row of every entry about every changed folder, found once per context."""

    def compute() -> frozenset[str]:
        where = [script_folder(ctx, side, scenario) for side in ("base", "head")]
        return frozenset(w.path for w in where if w is not None)

    return ctx.memo(f"launch.affected.scenario-folders.{scenario}", compute)


def _legacy_names_in(ctx: CheckContext, entry: ConfigEntry, folder: str,
                     conf: dict[str, Any]) -> tuple[bool, frozenset[str]]:
    """Whether the runners take some scenario of `entry` from `folder` (on either side), and the
    script names they take there on either side (the first of its names that exists). A multi-node
    entry's points are started by the chain its runner follows (verifier.launch.kinds.multinode_script),
    never by a script of these names (its name without the framework is a single-node script's)."""
    if entry.multinode:
        return False, frozenset()
    rows = []
    here = folder + "/"
    for r in entry.rows:
        if here in _scenario_folders(ctx, r.scenario):
            rows.append(r)
    if not rows:
        return False, frozenset()
    specs = sorted({str(r.data.get("spec-decoding") or "none") for r in rows})
    chosen: set[str] = set()
    for tree in (ctx.bundle.base, ctx.bundle.head):
        for spec in specs:
            names = legacy_script_stems(entry, entry.framework, spec, conf)
            first = next((n for n in names if tree.has(f"{folder}/{n}.sh") or
                          tree.listing is not None and f"{folder}/{n}.sh" in tree.listing), None)
            if first is not None:
                chosen.add(first)
    return True, frozenset(chosen)


def compute_affected(ctx: CheckContext) -> AffectedConfigs:
    """Compute the affected keys (see module docstring)."""
    result = AffectedConfigs()
    layout = ctx.bundle.layout
    try:
        base = master_configs(ctx, "base").entries
        head = master_configs(ctx, "head").entries
    except InputError as exc:
        result.errors.append(str(exc))
        return result
    for key, entry in head.items():
        old = base.get(key)
        if old is None:
            result.added.append(key)
            result.add(key, AffectedReason("entry-added", entry.file, entry.line))
            continue
        if old.text and old.text == entry.text:
            continue
        try:
            fields = _diff_fields(old.data, entry.data)
        except InputError as exc:
            result.errors.append(str(exc))
            fields = ["(unparsable)"]
        if fields or old.file != entry.file:
            result.changed.append(key)
            result.changed_fields[key] = fields
            line = entry.line
            if fields and fields[0] != "(unparsable)":
                where = first_difference(old.data, entry.data)
                while where and entry.field_line(*where) is None:
                    where = where[:-1]
                line = entry.field_line(*where) if where else entry.line
            result.add(key, AffectedReason("entry-changed", entry.file, line, ", ".join(fields) or "moved"))
    for key, entry in base.items():
        if key not in head:
            result.removed.append(key)
            result.add(key, AffectedReason("entry-removed", entry.file, entry.line))

    changed = _changed_paths(ctx)
    interesting = {p: s for p, s in changed.items() if not _is_master_or_meta(ctx, p)}
    if interesting:
        _file_reasons(ctx, result, head, base, interesting, layout)
    _changelog(ctx, result, head)
    _set_aside_indirect(result)
    return result


_INDIRECT = frozenset({"shared-block-changed", "benchmark-script-changed"})


def _set_aside_indirect(result: AffectedConfigs) -> None:
    """Move keys affected only through shared files (and not named by the changelog) out of `keys`.

    Shared files: the lane's shared recipe block and benchmark script, and a script that recipes of
    several keys run through /infmax-workspace/ (the AgentX client `benchmarks/multi_node/agentic_srt.sh`).
    """
    changelog_named = set(result.changelog_keys)
    users: dict[str, set[str]] = {}
    for key, reasons in result.reasons.items():
        for r in reasons:
            if r.kind == "recipe-script-changed":
                users.setdefault(r.file, set()).add(key)

    def shared(r: AffectedReason) -> bool:
        return r.kind in _INDIRECT or (r.kind == "recipe-script-changed" and len(users.get(r.file, ())) > 1)

    for key, reasons in list(result.reasons.items()):
        if key not in changelog_named and reasons and all(shared(r) for r in reasons):
            result.indirect[key] = result.reasons.pop(key)


def _is_master_or_meta(ctx: CheckContext, path: str) -> bool:
    from verifier.core.layout import FORMER_PATHS

    former = {p for name in ("nvidia_master", "amd_master", "runners") for p in FORMER_PATHS.get(name, ())}
    return path in {ctx.bundle.path("nvidia_master"), ctx.bundle.path("amd_master"), ctx.bundle.path("changelog"),
                    *former}


def _file_reasons(
    ctx: CheckContext, result: AffectedConfigs, head: dict[str, ConfigEntry], base: dict[str, ConfigEntry],
    changed: dict[str, str], layout: str,
) -> None:
    policy = launch_policy(ctx)
    # Text a row must contain to name a changed file: its path from the InferenceX root, or the
    # legacy `recipes/...` form; rows relative to an srt-recipe-dir are always parsed.
    needles: set[str] = set()
    for path in changed:
        short = short_path(path)
        needles.add(short)
        legacy = "benchmarks/multi_node/srt-slurm-recipes/"
        if short.startswith(legacy):
            needles.add("recipes/" + short.removeprefix(legacy))
    needles.add("srt-recipe-dir")
    names_one = _any_needle(frozenset(needles))

    def candidates(pool: dict[str, ConfigEntry]) -> Iterator[ConfigEntry]:
        for entry in pool.values():
            text = entry.text
            if not text or names_one(text):
                yield entry

    # 1. recipe files named by rows (either side: a removed or renamed recipe affects base rows too)
    for pool in (head, base):
        for entry in candidates(pool):
            try:
                refs = list(_entry_recipes(entry, layout))
            except InputError as exc:
                result.errors.append(str(exc))
                continue
            for path, line, source in refs:
                if path in changed:
                    kind = "recipe-changed"
                    result.add(entry.key, AffectedReason(kind, path, line, f"{source} {changed[path]}"))

    # 2. shared blocks and the scripts they run
    shared_dir = ctx.bundle.path("srt_shared_dir")
    lane_of_block: dict[str, set[tuple[str, str]]] = {}
    for scenario in (FIXED, AGENTIC):
        for lane_name, rel in policy["shared-blocks"][scenario].items():
            lane_of_block.setdefault(repo_relative(str(rel), layout), set()).add((scenario, lane_name))
    script_lanes: dict[str, set[tuple[str, str]]] = {}
    for block, lanes in lane_of_block.items():
        raw = ctx.bundle.head.read(block) or ctx.bundle.base.read(block)
        for match in _WORKSPACE_PATH.finditer(raw.decode("utf-8", "replace") if raw else ""):
            script_lanes.setdefault(repo_relative(match.group(1), layout), set()).update(lanes)
    touched_lanes: dict[tuple[str, str], list[AffectedReason]] = {}
    for path, status in changed.items():
        if path.startswith(shared_dir) and path.endswith((".yaml", ".yml")):
            lanes = lane_of_block.get(path)
            reason = AffectedReason("shared-block-changed", path, None, status)
            for lane in lanes if lanes else {(s, ln) for s in (FIXED, AGENTIC) for ln in ("single", "multi")}:
                touched_lanes.setdefault(lane, []).append(reason)
        for lane in script_lanes.get(path, ()):
            touched_lanes.setdefault(lane, []).append(AffectedReason("benchmark-script-changed", path, None, status))
    if touched_lanes:
        for entry in head.values():
            try:
                lanes = _lanes(entry)
            except InputError:
                continue
            for lane in lanes & touched_lanes.keys():
                for reason in touched_lanes[lane]:
                    result.add(entry.key, reason)

    # 3. files a recipe refers to through /infmax-workspace/... (scripts, chat templates) and
    #    legacy per-config benchmark scripts
    bench_dir = ctx.bundle.path("benchmarks_dir")
    scripts = {p: s for p, s in changed.items() if p.startswith(bench_dir) and not p.endswith((".yaml", ".yml"))
               and p not in script_lanes}
    if not scripts:
        return
    from verifier.launch.recipes import recipe_doc

    legacy_conf = policy.get("legacy-script") or {}
    # Only the entries that may be affected are parsed: those that can name a file running a changed
    # script (a row names its recipe by a path ending in the file's name), and those whose model
    # prefix and precision can start a changed script's name (`<model-prefix>_<precision>_<sku>...`:
    # two consecutive `_`-separated runs of the name).
    runners_of = {posixpath.basename(path) for path, raw in ctx.bundle.head.files.items()
                  if b"/infmax-workspace/" in raw and any(
                      repo_relative(m.group(1), layout) in scripts
                      for m in _WORKSPACE_PATH.finditer(raw.decode("utf-8", "replace")))}
    maybe = {e.key for e in candidate_entries(ctx, "head", runners_of)} if runners_of else set()
    names = [(s[:i], s[i + 1:j]) for p in scripts if p.endswith(".sh")
             for s in [posixpath.basename(p).removesuffix(".sh")]
             for i in _underscores(s) for j in _underscores(s) if j > i]
    maybe |= {e.key for e in candidate_entries(ctx, "head", names)} if names else set()

    chosen_cache: dict[tuple[str, str], tuple[bool, frozenset[str]]] = {}
    # the changed scripts by folder and name (every entry without recipes asks which are its own)
    legacy_candidates = [(path, status) for path, status in scripts.items() if path.endswith(".sh")]
    by_folder: dict[str, dict[str, str]] = {}
    for path, _ in legacy_candidates:
        folder, name = posixpath.split(path)
        by_folder.setdefault(folder, {})[name.removesuffix(".sh")] = path
    for entry in head.values():
        if entry.key not in maybe:
            continue  # names no file that runs a changed script and matches no changed script's name
        try:
            refs = {path for path, _, _ in _entry_recipes(entry, layout)}
        except InputError:
            continue
        for recipe in refs:
            raw = ctx.bundle.head.read(recipe)
            text = raw.decode("utf-8", "replace") if raw else ""
            for match in _WORKSPACE_PATH.finditer(text):
                target = repo_relative(match.group(1), layout)
                if target in scripts:
                    doc = recipe_doc(ctx, "head", recipe) if recipe.endswith((".yaml", ".yml")) else None
                    line = next((ln for p, ln in doc.lines.items() if match.group(0) in str(doc.get(*p))), None) \
                        if doc else None
                    result.add(entry.key, AffectedReason("recipe-script-changed", target, line,
                                                         f"used by {short_path(recipe)}"))
        if not refs:
            own = _legacy_scripts_of(ctx, entry, by_folder, legacy_conf, chosen_cache)
            for path, status in legacy_candidates if own else ():
                if path in own:
                    result.add(entry.key, AffectedReason("launcher-script-changed", path, None,
                                                         f"legacy launcher script ({status})"))


# A PR that changes hundreds of files is asked, for every master entry of both sides, whether the
# entry's text names any of them: one search of a pattern per needle set, kept across the PR's
# contexts (the recording's and the verdict's ask with the same needles).
_NEEDLES: processcache.ByText[frozenset[str], Callable[[str], object]] = \
    processcache.ByText("launch.affected-needles", 16)


def _any_needle(needles: frozenset[str]) -> Callable[[str], object]:
    """A test of whether a text contains any of `needles` (truthy exactly when
    `any(n in text for n in needles)`).

    The needles are laid out as a trie (a needle that another one starts with ends its branch: a
    text holding the longer one holds the shorter one too), so the regular expression looks at
    each position of the text once per character the needles share there, not once per needle."""
    got = _NEEDLES.get(needles)
    if got is None:
        trie: dict[str, Any] = {}
        for needle in needles:
            node = trie
            for char in needle:
                node = node.setdefault(char, {})
            node[""] = {}
        try:
            # no needle: nothing is named (the empty pattern would match every text)
            got = re.compile(_trie_pattern(trie)).search if trie else _never
        except (RecursionError, re.error, OverflowError):  # needles that branch too deep for a pattern
            got = _in_any(tuple(needles))
        got = _NEEDLES.put(needles, got)
    return got


def _trie_pattern(node: dict[str, Any]) -> str:
    """The pattern of a needle trie: a node where a needle ends matches the empty text (runs of
    single characters are written as one literal; only branches nest)."""
    out: list[str] = []
    while "" not in node:
        if len(node) > 1:
            alternatives = [re.escape(char) + _trie_pattern(child) for char, child in sorted(node.items())]
            out.append("(?:" + "|".join(alternatives) + ")")
            break
        ((char, node),) = node.items()
        out.append(re.escape(char))
    return "".join(out)


def _in_any(needles: tuple[str, ...]) -> Callable[[str], object]:
    return lambda text: any(needle in text for needle in needles)


def _never(text: str) -> object:
    return None


def _underscores(text: str) -> list[int]:
    return [i for i, c in enumerate(text) if c == "_"]


def _changelog(ctx: CheckContext, result: AffectedConfigs, head: dict[str, ConfigEntry]) -> None:
    from verifier.configs.changelog import appended_entries, match_config_keys

    try:
        appended = appended_entries(ctx)
    except InputError as exc:
        result.errors.append(str(exc))
        return
    keys = list(head)
    for entry in appended:
        for pattern in entry.config_keys:
            result.changelog.append(ChangelogKeys(pattern, entry.field_line("config-keys"),
                                                  tuple(match_config_keys(pattern, keys))))


def affected_keys(ctx: CheckContext) -> AffectedConfigs:
    """The PR's affected config keys with reasons (memoized per verdict)."""
    return ctx.memo("configs.affected", lambda: compute_affected(ctx))


def submitted_entries(ctx: CheckContext) -> dict[str, ConfigEntry]:
    """The submitted configs: each affected key present on the head, in `affected_keys` order.

    Maps the key to its head `ConfigEntry`; removed keys (absent on the head) are left out, and so
    are keys set aside as only indirectly affected (`AffectedConfigs.indirect`). Raises
    `InputError` when the head master configs are unreadable (as `master_entries` does).
    """
    affected = affected_keys(ctx)
    head = master_entries(ctx, "head")
    return {key: head[key] for key in affected.keys if key in head}
