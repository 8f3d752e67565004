"""Recipe files of a bundle's trees: parsed (memoized per context) and the lanes' shared blocks."""

from __future__ import annotations

from verifier.configs.points import launch_policy
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.layout import repo_relative
from verifier.core.yaml11 import Doc, parse_yaml11
from verifier.core.yamlio import decode_text

_DOCS: dict[tuple[str, str], Doc | InputError] = {}
_DOCS_MAX = 256
_DOCS_TEXT_MAX = 1 << 20


def parsed_doc(text: str, path: str) -> Doc:
    """`parse_yaml11(text, path)`, parsed once per (text, path) in this process.

    The record and the verdict of a PR read the same recipes in both trees and (a fetched recipe)
    for every point; a parsed document is never changed (every consumer already shares one per
    context), so one parse serves them all. Raises InputError (the same one every time)."""
    key = (path, text)
    got = _DOCS.get(key)
    if got is None:
        try:
            got = parse_yaml11(text, path)
        except InputError as exc:
            got = exc
        if len(text) <= _DOCS_TEXT_MAX:  # a huge (hostile) text is not kept
            if len(_DOCS) >= _DOCS_MAX:
                _DOCS.pop(next(iter(_DOCS)))
            _DOCS[key] = got
    if isinstance(got, InputError):
        raise got
    return got


def recipe_doc(ctx: CheckContext, side: str, path: str) -> Doc | None:
    """A recipe (or any YAML) file of one side's tree, parsed YAML 1.1; None when absent. Memoized.

    Raises InputError (cached) when the file is not valid YAML.
    """

    def compute() -> Doc | None:
        tree = ctx.bundle.base if side == "base" else ctx.bundle.head
        raw = tree.read(path)
        if raw is None:
            return None
        return parsed_doc(decode_text(raw, path), path)

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
