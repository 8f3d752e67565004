"""srtctl recipe the runner fetches from an srt-slurm repository (old layout, multi-node and agg rows).

An old-layout row names `CONFIG_FILE=recipes/<...>.yaml[:<selector>]`. Its runner
(`runners/launch_<machine>.sh`, read statically by verifier.launch.runner) clones NVIDIA/srt-slurm or
a fork, checks out a branch, tag or commit that depends on FRAMEWORK / MODEL_PREFIX / PRECISION /
IS_AGENTIC, may copy InferenceX recipe folders over the clone (`cp -rT "$GITHUB_WORKSPACE/..."
recipes/...`), and runs `srtctl apply -f "$CONFIG_FILE"` inside it. So the recipe path names a file of
the clone: copied from the InferenceX tree when an overlay covers it, else served by the cloned
repository at that ref. A fetched file is read from the bundle (github.yaml `upstream_files`, bytes
under `upstream/`); the recipe is then a complete srtctl recipe (verifier.launch.recipes.complete), and
its `setup_script` (srtctl reads it from the clone's `configs/`) is one of the files the launch runs.

This kind claims such a row when the InferenceX copy the other kinds read
(`benchmarks/multi_node/srt-slurm-recipes/<...>`) is not in the tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from verifier.configs.points import Point, RecipeRef
from verifier.core.errors import InputError
from verifier.core.yaml11 import Doc
from verifier.core.yamlio import decode_text
from verifier.launch.job import KeyJob
from verifier.launch.kinds.srt_complete import materialize_complete
from verifier.launch.recipes.complete import is_complete
from verifier.launch.recipes.files import parsed_doc

if TYPE_CHECKING:  # the runner reader is imported when a recipe is fetched, not by every verdict
    from verifier.launch.runner import FetchPlan

NAME = "srt-fetched"


def clone_path(ref: RecipeRef) -> str:
    """The recipe path in the clone, as the row wrote it (without the selector)."""
    head, sep, _tail = ref.written.rpartition(":")
    path = head if sep and head.endswith((".yaml", ".yml")) else ref.written
    return path.strip().lstrip("./")


def fetched_name(plan: FetchPlan, path: str) -> str:
    """How a fetched file is named in launches and findings: `owner/name@ref:path`."""
    return f"{plan.repo}@{plan.ref}:{path}"


def fetched_at_run_time(ref: RecipeRef | None, layout: str, tree: Any) -> bool:
    """An old-layout `CONFIG_FILE` recipe whose InferenceX copy is not in the tree: the runner
    fetches it from an srt-slurm clone."""
    return (ref is not None and ref.source in ("CONFIG_FILE", "EVAL_CONFIG_FILE") and layout == "old"
            and not tree.has(ref.path))


def claims(job: KeyJob, point: Point) -> bool:
    """An old-layout CONFIG_FILE row whose InferenceX recipe copy is not in the tree."""
    return fetched_at_run_time(point.srt_recipe, job.ctx.bundle.layout, job.tree)


def _doc(job: KeyJob, point: Point, plan: FetchPlan, path: str) -> tuple[Doc | None, str]:
    """The recipe document (None after reporting why not) and the name it goes by."""
    source = plan.tree_source(path)
    if source is not None:
        data = job.read(source)
        if data is None:
            overlay = plan.overlay(path)
            job.error(point, plan.runner, overlay.line if overlay else plan.clone_line,
                      f"the runner copies {path} from {source}, which is not in the tree", "recipe")
            return None, source
        return parsed_doc(job.ctx, decode_text(data, source), source), source
    name = fetched_name(plan, path)
    hit = job.upstream(plan.repo, plan.ref, path, plan.runner, "recipe")
    where = f"{plan.repo}@{plan.ref}" + (f" (commit {hit.commit[:12]})" if hit.commit else "")
    if hit.status == "absent":
        job.error(point, plan.runner, plan.ref_line,
                  f"{path} does not exist in {where}, so `srtctl apply -f` has no recipe", "upstream")
        return None, name
    if hit.status == "facts-only":
        job.error(point, plan.runner, plan.ref_line,
                  f"{path} is fetched from {where}; the bundle records it as facts only, not its content",
                  "upstream")
        return None, name
    if hit.status != "content" or hit.data is None:
        job.error(point, plan.runner, plan.ref_line,
                  f"{path} is fetched from {plan.repo}@{plan.ref}, not recorded in the bundle", "upstream")
        return None, name
    return parsed_doc(job.ctx, decode_text(hit.data, name), name), name


def _setup_scripts(job: KeyJob, plan: FetchPlan, data: Any, recipe: str) -> list[str]:
    """The launch files of a recipe's setup_script (srtctl: `<clone>/configs/<name>`, mounted at /configs)."""
    block = data.get("base") if isinstance(data, Mapping) and isinstance(data.get("base"), Mapping) else data
    names = []
    for candidate in (block, data):
        if isinstance(candidate, Mapping) and isinstance(candidate.get("setup_script"), str):
            names.append(candidate["setup_script"].strip())
    out: list[str] = []
    folder = str(job.ctx.policy("multinode")["srt-slurm"]["setup-dir"])
    for name in dict.fromkeys(n for n in names if n):
        path = folder + name.removeprefix("/configs/").lstrip("/")
        source = plan.tree_source(path)
        if source is not None:
            out.append(source)
            job.read(source)
            continue
        job.upstream(plan.repo, plan.ref, path, recipe, "setup-script")
        out.append(fetched_name(plan, path))
    return out


def resolve(job: KeyJob, point: Point) -> None:
    """Follow the runner to the clone, read the recipe it runs, resolve it as a complete srtctl recipe."""
    ref = point.srt_recipe
    assert ref is not None
    from verifier.launch.runner import fetch_plan

    plan, problem = fetch_plan(job, point)
    if problem is not None or plan is None:
        assert problem is not None
        job.error(point, problem.file, problem.line,
                  f"recipe {clone_path(ref)} is not in the tree and its runner cannot be followed: {problem.message}",
                  "runner")
        return
    path = clone_path(ref)
    try:
        doc, name = _doc(job, point, plan, path)
    except InputError as exc:
        job.error(point, exc.path, None, exc.reason, "input")
        return
    if doc is None:
        return
    if not is_complete(doc.data, "old"):
        job.error(point, name, 1, "the fetched recipe names no model (model.path / model.container): not a "
                                  "complete srtctl recipe", "recipe")
        return
    files = (name, *_setup_scripts(job, plan, doc.data, name))
    materialize_complete(job, point, doc, ref.selector, NAME, files)
