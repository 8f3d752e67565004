"""Complete srtctl recipe: `srtctl apply -f $CONFIG_FILE` runs the named file as it is.

Before InferenceX moved under `inferencex-e2e/`, and in the new layout until master entries gained
`srt-recipe-dir` (rows written `CONFIG_FILE=recipes/...` or `srt-recipe: recipes/...`), a row named
its recipe and the launcher handed that file to srtctl unchanged: a recipe that names its own model
(`model.path` / `model.container`) is complete, nothing is composed under it or bound into it, so the
fragment rule does not apply (its duplicate keys are still reported). A recipe of the same commit
that names no model is a fragment (verifier.launch.kinds.srt_fragment). The recipe's own model, container,
workers, args and environment are what runs (verifier.launch.recipes.complete).
"""

from __future__ import annotations

from collections.abc import Mapping

from verifier.configs.points import Point, RecipeRef
from verifier.core.yaml11 import Doc
from verifier.launch.job import KeyJob
from verifier.launch.materialize import materialize
from verifier.launch.model import shared_origins
from verifier.launch.recipes import recipe_doc
from verifier.launch.recipes.complete import is_complete, to_roles
from verifier.launch.recipes.variants import RecipeError, Variant, expand

NAME = "srt-complete"


def composes(job: KeyJob, ref: RecipeRef) -> bool:
    """Whether the row's launcher composes and binds its recipe as a fragment: a new-layout row that
    names its recipe from the InferenceX tree (`srt-recipe: benchmarks/...`, or relative to the entry's
    `srt-recipe-dir`). Old-layout rows, and new-layout rows written the way the srt-slurm clone names
    the file (`CONFIG_FILE=recipes/...`, `srt-recipe: recipes/...`), hand the file to srtctl as is."""
    return job.ctx.bundle.layout != "old" and not ref.clone_spelled


def claims(job: KeyJob, point: Point) -> bool:
    """A row whose recipe is a complete recipe (it names its own model) its launcher runs unbound."""
    ref = point.srt_recipe
    if ref is None:
        return False
    doc = recipe_doc(job.ctx, job.side, ref.path)
    return doc is not None and is_complete(doc.data, job.ctx.bundle.layout, composes(job, ref))


def resolve(job: KeyJob, point: Point) -> None:
    """The one variant the row's selector names, rewritten to roles and materialized unbound."""
    ref = point.srt_recipe
    assert ref is not None
    doc = recipe_doc(job.ctx, job.side, ref.path)
    assert doc is not None
    materialize_complete(job, point, doc, ref.selector, NAME, (ref.path,))


def materialize_complete(job: KeyJob, point: Point, doc: Doc, selector: str | None, kind: str,
                         files: tuple[str, ...]) -> None:
    """Resolve a complete srtctl recipe (from the tree or fetched): the selector's one variant, its
    classic `backend:` block rewritten to roles, materialized without binding (srtctl runs it as is)."""
    for line_path, line in doc.duplicates:
        job.problem_once(doc.path, line, f"duplicate key {'.'.join(map(str, line_path))} (the last one wins)",
                         "duplicate-key", fatal=False)
    materialize(job, point, _role_variant(job, doc, selector), {}, complete=True, kind=kind, files=files)


def _role_variant(job: KeyJob, doc: Doc, selector: str | None) -> Variant:
    """The selector's one variant of a complete recipe, in role form: the same for every point that
    runs the recipe (a fetched recipe serves hundreds), so made once per context and parsed recipe
    (nothing changes a variant: materialize copies what it binds)."""

    def compute() -> tuple[Doc, Variant | RecipeError]:
        try:
            return doc, _expanded(doc, selector)
        except RecipeError as exc:
            return doc, exc

    held = job.ctx.memo(f"recipes.complete.{id(doc)}.{selector}", compute)
    if held[0] is not doc:  # another document under a reused id: never its answer
        held = compute()
    if isinstance(held[1], RecipeError):
        raise held[1].with_traceback(None)
    return held[1]


def _expanded(doc: Doc, selector: str | None) -> Variant:
    variants = expand(doc, selector)
    if len(variants) != 1:
        names = ", ".join(v.key for v in variants) or "none"
        raise RecipeError(f"CONFIG_FILE must name exactly one recipe variant (selector {selector!r} "
                          f"gives {names})", doc.path)
    variant = variants[0]
    data, origins = to_roles(variant.data, variant.origins)
    roles = data.get("roles")
    if not isinstance(roles, Mapping) or not roles:
        raise RecipeError("complete recipe defines no prefill / decode / aggregated worker "
                          "(backend.<engine>_config or roles)", doc.path, doc.line("backend") or 1)
    return Variant(key=variant.key, name=variant.name, file=variant.file, data=data, origins=shared_origins(origins))
