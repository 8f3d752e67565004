"""A content-addressed cache for work that depends only on our own shipped files.

What it holds: the validated policies and the compiled message templates, both pure functions of
bytes that ship with the package. Every entry is named by the SHA-256 of the exact bytes it was
derived from (plus the format of the entry), never by a path or a time, so a stale entry can only be
missed, never used: a verdict stays a pure function of its bundle and of the project's files.
Nothing from a bundle is cached here.

Where: `$INFX_VERIFIER_CACHE` if set (`off`, `0` or an empty value disables the cache), else
`$XDG_CACHE_HOME/infx-verifier`, else `~/.cache/infx-verifier`. A cache that cannot be read or written
(read-only home, full disk) is skipped silently: it only ever saves time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

_DISABLED = {"", "0", "off", "false", "no"}


@cache
def cache_dir() -> Path | None:
    """The cache folder, or None when the cache is disabled."""
    configured = os.environ.get("INFX_VERIFIER_CACHE")
    if configured is not None:
        return None if configured.strip().lower() in _DISABLED else Path(configured)
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "infx-verifier"


def content_key(kind: str, blobs: Iterable[bytes]) -> str:
    """SHA-256 over the bytes an entry derives from, the entry kind and the Python version."""
    digest = hashlib.sha256(f"{kind}\0{sys.version_info[:2]}\0".encode())
    for blob in blobs:
        digest.update(len(blob).to_bytes(8, "big"))
        digest.update(blob)
    return digest.hexdigest()


def entry_path(kind: str, key: str, suffix: str) -> Path | None:
    """Where the entry of this kind and key lives (None when caching is off)."""
    root = cache_dir()
    return None if root is None else root / kind / f"{key}{suffix}"


def read_bytes(path: Path | None) -> bytes | None:
    """An entry's bytes, or None when absent or unreadable."""
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def write_bytes(path: Path | None, data: bytes) -> None:
    """Write an entry atomically (a reader never sees half a file); errors are ignored."""
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def read_json(kind: str, key: str) -> Any | None:
    """A JSON entry, or None when absent, unreadable or not valid JSON."""
    data = read_bytes(entry_path(kind, key, ".json"))
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def write_json(kind: str, key: str, value: Any) -> None:
    """Store a JSON entry (values that are not JSON data are not cached)."""
    try:
        data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):
        return
    write_bytes(entry_path(kind, key, ".json"), data)
