"""The launch kinds: one module per way InferenceX starts a server for a master-config point.

Every module exposes `NAME: str`, `claims(job, point) -> bool` and `resolve(job, point) -> None`
(which adds launches or errors through the `verifier.launch.job.KeyJob`, or raises
`verifier.launch.recipes.variants.RecipeError` naming a file and line). Its docstring says which rows it
handles and how the real launcher runs them. For each point the first kind in KINDS that claims it
resolves it, so more specific kinds come first. To add a kind, write its module and add it to
KINDS below -- nothing else changes.
"""

from __future__ import annotations

from types import ModuleType

from verifier.launch.kinds import (
    llmd,
    multinode_script,
    shell_script,
    srt_complete,
    srt_fetched,
    srt_fragment,
)

KINDS: tuple[ModuleType, ...] = (
    llmd,
    srt_complete,
    multinode_script,
    srt_fetched,
    srt_fragment,
    shell_script,
)


def by_name() -> dict[str, ModuleType]:
    """The registry as {NAME: module}, in KINDS order."""
    return {module.NAME: module for module in KINDS}
