"""Write a Bundle to a directory in the format of shared/BUNDLE.md (the inverse of verifier.core.bundle).

`write_bundle(bundle, directory)` produces a directory that `read_bundle` turns back into an equal
Bundle (every field the checks read), so `verify-pr --bundle DIR` on a recorded bundle gives the
same verdict as the live run that recorded it. Multi-line strings are written as YAML literal
blocks when YAML can hold them exactly, quoted otherwise; every path is checked to stay inside the
directory.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ruamel.yaml import YAML

from verifier.core.errors import BundleError, UsageError
from verifier.core.model import Bundle, Run

# characters a YAML literal block cannot carry exactly (line breaks other than \n are normalised)
_NOT_LITERAL = re.compile("[\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x85\u2028\u2029\ufeff]")


def _literal(representer: Any, value: str) -> Any:
    style = None
    if _NOT_LITERAL.search(value):
        style = '"'
    elif "\n" in value:
        style = "|"
    return representer.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _yaml() -> YAML:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.allow_unicode = True
    yaml.width = 4096
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.representer.add_representer(str, _literal)
    return yaml


def _time(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def dump_yaml(data: Any) -> bytes:
    """YAML text (UTF-8) of plain data."""
    buffer = io.StringIO()
    _yaml().dump(data, buffer)
    return buffer.getvalue().encode("utf-8")


def _drop_none(mapping: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if v is not None}


def _safe(rel: str) -> str:
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or any(p in ("..", "") for p in rel.split("/")) or "\\" in rel or "\x00" in rel:
        raise BundleError(rel, None, "path would escape the bundle directory")
    return rel


def bundle_files(bundle: Bundle) -> dict[str, bytes]:
    """Every file of the bundle directory: relative path -> bytes."""
    pr = bundle.pr
    out: dict[str, bytes] = {}
    meta: dict[str, Any] = {
        "format": 1,
        "repo": pr.repo,
        "pr": pr.number,
        "review_date": bundle.review_date.isoformat(),
        "recorded_at": _time(bundle.recorded_at),
        "layout": bundle.layout,
    }
    out["bundle.yaml"] = dump_yaml(_drop_none(meta))
    out["pr.yaml"] = dump_yaml(_drop_none({
        "number": pr.number,
        "title": pr.title,
        "body": pr.body,
        "author": pr.author,
        "state": pr.state,
        "draft": pr.draft,
        "labels": list(pr.labels),
        "created_at": _time(pr.created_at),
        "base_ref": pr.base_ref,
        "base_sha": pr.base_sha,
        "head_ref": pr.head_ref,
        "head_sha": pr.head_sha,
        "head_ref_oid": pr.head_ref_oid,
        "commits": list(pr.commits),
        "files": [_drop_none({"path": f.path, "status": f.status, "previous_path": f.previous_path}) for f in pr.files],
    }))
    so = bundle.signoff
    out["signoff.yaml"] = dump_yaml(_drop_none({
        "kind": so.kind,
        "id": so.id,
        "url": so.url,
        "author": so.author,
        "author_association": so.author_association,
        "created_at": _time(so.created_at),
        "updated_at": _time(so.updated_at),
        "body": so.body,
    }))
    out["comments.yaml"] = dump_yaml([
        _drop_none({
            "id": c.id,
            "author": c.author,
            "author_association": c.author_association,
            "created_at": _time(c.created_at),
            "updated_at": _time(c.updated_at),
            "body": c.body,
            "is_bot": True if c.is_bot else None,
        })
        for c in bundle.comments
    ])
    out["checks.yaml"] = dump_yaml([
        _drop_none({"sha": r.sha, "name": r.name, "conclusion": r.conclusion, "run_id": r.run_id,
                    "run_attempt": r.run_attempt})
        | ({"conclusion": None} if r.conclusion is None else {})
        for r in bundle.check_runs
    ])
    gh = bundle.github
    github: dict[str, Any] = {
        "teams": {k: list(v) for k, v in gh.teams.items()},
        "permissions": {k: _drop_none({"permission": v.permission, "role_name": v.role_name})
                        for k, v in gh.permissions.items()},
        "upstream_prs": {
            k: _drop_none({"state": v.state, "merged_at": _time(v.merged_at), "url": v.url, "title": v.title,
                           "base_ref": v.base_ref, "files": list(v.files)})
            for k, v in gh.upstream_prs.items()
        },
        "pages": dict(gh.pages),
        "baseline_runs": dict(gh.baseline_runs),
    }
    if gh.upstream_files:
        github["upstream_files"] = [u.model_dump(mode="json", exclude_none=True) for u in gh.upstream_files]
    out["github.yaml"] = dump_yaml(github)
    for run in bundle.runs.values():
        out.update(_run_files(run))
    for rel, data in bundle.pages.items():
        out[_safe(rel if rel.startswith("pages/") else f"pages/{rel}")] = data
    for rel, data in bundle.checkpoints.items():
        out[_safe(f"checkpoints/{rel}")] = data
    for rel, data in bundle.upstream.items():
        out[_safe(f"upstream/{rel}")] = data
    for side, tree in (("base", bundle.base), ("head", bundle.head)):
        for rel, data in tree.files.items():
            out[_safe(f"tree/{side}/{rel}")] = data
        if tree.listing is not None:
            out[f"tree/{side}.listing"] = "".join(f"{p}\n" for p in sorted(tree.listing)).encode()
    return out


def _run_files(run: Run) -> dict[str, bytes]:
    folder = f"runs/{run.id}"
    doc = _drop_none({
        "id": run.id,
        "attempt": run.attempt,
        "workflow": run.workflow,
        "path": run.path,
        "event": run.event,
        "status": run.status,
        "head_sha": run.head_sha or None,
        "head_branch": run.head_branch,
        "pull_requests": list(run.pull_requests),
        "conclusion": run.conclusion,
        "created_at": _time(run.created_at),
        "updated_at": _time(run.updated_at),
        "url": run.url,
        "artifacts": [{"name": a.name, "expired": a.expired} for a in run.artifacts],
    })
    out = {f"{folder}/run.yaml": dump_yaml(doc)}
    for artifact in run.artifacts:
        if artifact.expired:
            continue
        name = _safe(artifact.name)
        if "/" in name:
            raise BundleError(f"{folder}/run.yaml", "artifacts.name", f"artifact name {name!r} is not a folder name")
        for rel, data in artifact.files.items():
            out[_safe(f"{folder}/{name}/{rel}")] = data
    return out


def write_bundle(bundle: Bundle, directory: str | Path) -> Path:
    """Write the bundle into `directory` (created; it must not exist or be empty). Returns the path."""
    root = Path(directory)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(f"usage error: record directory {root} exists and is not empty")
    files = bundle_files(bundle)
    root.mkdir(parents=True, exist_ok=True)
    resolved = root.resolve()
    for rel, data in sorted(files.items()):
        target = (root / rel).resolve()
        if resolved not in target.parents:
            raise BundleError(rel, None, "path would escape the bundle directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root
