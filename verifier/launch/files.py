"""Reading the files a launch runs (`Launch.files`): tree paths, and files fetched from other repositories.

A launch names a file a runner fetches from another repository as `owner/name@ref:path`
(verifier.launch.kinds.srt_fetched); every other entry is a path of the side's tree. `launch_file`
returns the bytes either way (None when the bundle holds neither), so a scanner such as Check 10
reads exactly what the launches run.
"""

from __future__ import annotations

import re

from verifier.core.context import CheckContext

_FETCHED = re.compile(r"^([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)@([^:]+):(.+)$")


def fetched_parts(name: str) -> tuple[str, str, str] | None:
    """(repo, ref, path) of a fetched-file name, None for a tree path."""
    m = _FETCHED.match(name)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def launch_file(ctx: CheckContext, side: str, name: str) -> bytes | None:
    """The bytes of one `Launch.files` entry (a tree path or `owner/name@ref:path`)."""
    parts = fetched_parts(name)
    if parts is not None:
        hit = ctx.bundle.upstream_file(*parts)
        return hit.data if hit.status == "content" else None
    return getattr(ctx.bundle, side).read(name)
