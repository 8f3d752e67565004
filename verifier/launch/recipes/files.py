"""Recipe files of a bundle's trees: parsed (memoized per context) and the lanes' shared blocks."""

from __future__ import annotations

import hashlib

from verifier.configs.points import launch_policy
from verifier.core.context import CheckContext
from verifier.core.layout import repo_relative
from verifier.core.yaml11 import Doc, parse_yaml11_shared
from verifier.core.yamlio import decode_text


def parsed_doc(ctx: CheckContext, text: str, path: str) -> Doc:
    """`parse_yaml11(text, path)`, parsed once per process for each path and text.

    The points of a key, and a bundle's two trees, read the same recipes (a fetched recipe is read
    for every point), and so do the recording's resolution contexts and the verdict's; a parsed
    document is never changed (every consumer of `recipe_doc` already shares one), so one parse
    serves them all (verifier.core.yaml11.parse_yaml11_shared). Raises InputError (cached, the same
    one every time)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return ctx.memo(f"recipes.parsed.{digest}.{path}", lambda: parse_yaml11_shared(text, path))


def recipe_doc(ctx: CheckContext, side: str, path: str) -> Doc | None:
    """A recipe (or any YAML) file of one side's tree, parsed YAML 1.1; None when absent. Memoized.

    Raises InputError (cached) when the file is not valid YAML.
    """

    def compute() -> Doc | None:
        tree = ctx.bundle.base if side == "base" else ctx.bundle.head
        raw = tree.read(path)
        if raw is None:
            return None
        return parsed_doc(ctx, decode_text(raw, path), path)

    return ctx.memo(f"recipes.doc.{side}.{path}", compute)


def shared_block_path(ctx: CheckContext, scenario: str, lane: str) -> str | None:
    """Repository path of the lane's shared block (configs/srt-recipes/...), per policy."""
    blocks = launch_policy(ctx)["shared-blocks"].get(scenario)
    if not blocks or lane not in blocks:
        return None
    return repo_relative(str(blocks[lane]), ctx.bundle.layout)


def shared_block(ctx: CheckContext, side: str, scenario: str, lane: str) -> Doc | None:
    """The parsed shared block for a lane (None when the tree has none)."""
    path = shared_block_path(ctx, scenario, lane)
    return None if path is None else recipe_doc(ctx, side, path)
