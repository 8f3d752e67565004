"""Safe extraction of workflow artifact archives (zip), into memory only.

Artifacts are uploaded by PR-controlled workflows, so an archive is hostile: member names may try to
escape the folder (zip-slip: absolute paths, `..`, drive letters, backslashes), be symbolic links,
lie about their size, or expand enormously (zip bombs). Nothing is written to disk here; a member
is kept only when its base name matches the keep patterns, its normalised path is plain, and it
stays inside every size and ratio cap, counted on the bytes actually decompressed.
"""

from __future__ import annotations

import fnmatch
import io
import posixpath
import stat
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps for one archive."""

    file_bytes: int = 16 * 1024 * 1024
    archive_bytes: int = 128 * 1024 * 1024
    members: int = 5000
    compression_ratio: int = 200


@dataclass
class Extracted:
    """Kept files (relative path -> bytes) and why anything else was dropped."""

    files: dict[str, bytes] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    error: str | None = None


def safe_member_path(name: str) -> str | None:
    """The normalised relative path of a member, or None when it is not a plain relative path."""
    if not name or "\x00" in name or "\\" in name:
        return None
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = name.split("/")
    if any(p in ("..",) for p in parts):
        return None
    norm = posixpath.normpath(name)
    if norm in (".", "") or norm.startswith("../") or norm.startswith("/"):
        return None
    if any(p.startswith(".") and p not in (".",) and p.strip(".") == "" for p in norm.split("/")):
        return None
    return norm


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    mode = info.external_attr >> 16
    return stat.S_ISLNK(mode)


def extract_zip(data: bytes, keep: Sequence[str], limits: ArchiveLimits = ArchiveLimits()) -> Extracted:
    """Extract the members of a zip archive whose base names match `keep`, within the limits."""
    out = Extracted()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        out.error = f"not a zip archive: {exc}"
        return out
    with archive:
        infos = archive.infolist()
        if len(infos) > limits.members:
            out.error = f"archive has {len(infos)} members, over the {limits.members}-member limit"
            return out
        total = 0
        for info in infos:
            if info.is_dir():
                continue
            rel = safe_member_path(info.filename)
            if rel is None:
                out.refused.append(f"{info.filename!r}: path escapes the artifact folder")
                continue
            if _is_symlink(info):
                out.refused.append(f"{rel}: symbolic link")
                continue
            base = posixpath.basename(rel)
            if not any(fnmatch.fnmatchcase(base, pattern) for pattern in keep):
                continue
            if rel in out.files:
                out.refused.append(f"{rel}: duplicate member")
                continue
            if info.file_size > limits.file_bytes:
                out.refused.append(f"{rel}: {info.file_size} bytes, over the file limit")
                continue
            budget = min(limits.file_bytes, limits.archive_bytes - total)
            ratio_cap = max(info.compress_size, 1) * limits.compression_ratio
            try:
                with archive.open(info) as member:
                    body = member.read(budget + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, ValueError, NotImplementedError) as exc:
                out.refused.append(f"{rel}: unreadable ({type(exc).__name__})")
                continue
            if len(body) > budget:
                out.refused.append(f"{rel}: expands past the size limit")
                if total + len(body) > limits.archive_bytes:
                    out.error = "archive expands past the total size limit"
                    return out
                continue
            if len(body) > ratio_cap and len(body) > 1024 * 1024:
                out.refused.append(f"{rel}: compression ratio over {limits.compression_ratio}")
                continue
            total += len(body)
            out.files[rel] = body
    return out
