"""Reads a PR bundle directory (shared/BUNDLE.md, format 1) into the domain model.

A bundle is untrusted: every file is size-capped, must be UTF-8 where it is text, YAML alias
bombs are refused, symlinks are refused, and nothing in it is ever executed. Anything that does
not follow the format raises BundleError naming the file and the field.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from verifier.core.errors import BundleError, InputError
from verifier.core.model import (
    Artifact,
    Bundle,
    CheckRun,
    Comment,
    GitHubFacts,
    PullRequest,
    Run,
    SignOff,
    Tree,
)
from verifier.core.quickschema import accepts
from verifier.core.resources import SCHEMA_DIR
from verifier.core.yamlio import decode_text, load_yaml_data

# The URL fragment of each sign-off kind (signoff.yaml `url` is optional; this rebuilds it).
_KEY_PREFIX = {"conversation comment": "issuecomment-", "review summary": "pullrequestreview-",
               "inline review comment": "discussion_r"}
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_BUNDLE_BYTES = 1024 * 1024 * 1024
MAX_BUNDLE_FILES = 50_000


def refuse_symlinks(root: Path, path: Path) -> None:
    """Refuse a path below root if it, or any folder between root and it, is a symbolic link.

    Checking only the file itself is not enough: a symlinked folder (tree/base -> /) would make
    every file below it look like a plain file of the bundle.
    """
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            raise BundleError(str(current.relative_to(root)), None, "symbolic links are not allowed in a bundle")


class _Budget:
    """Counts bytes and files read so a hostile bundle cannot exhaust memory."""

    def __init__(self) -> None:
        self.bytes = 0
        self.files = 0

    def read(self, path: Path, root: Path) -> bytes:
        rel = str(path.relative_to(root))
        refuse_symlinks(root, path)
        self._count(rel, path.stat().st_size)
        return path.read_bytes()

    def read_entry(self, entry: os.DirEntry[str], rel: str) -> bytes:
        """A regular file met while scanning a folder (its folders are known not to be links)."""
        self._count(rel, entry.stat(follow_symlinks=False).st_size)
        with open(entry.path, "rb") as handle:
            return handle.read()

    def _count(self, rel: str, size: int) -> None:
        if size > MAX_FILE_BYTES:
            raise BundleError(rel, None, f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit")
        self.bytes += size
        self.files += 1
        if self.bytes > MAX_BUNDLE_BYTES or self.files > MAX_BUNDLE_FILES:
            raise BundleError(rel, None, "bundle exceeds the size or file-count limit")


@cache
def _schema() -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / "bundle-v1.schema.json").read_text(encoding="utf-8"))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _resolve(node: Any) -> Any:
    """A schema node with a local `$ref` replaced by its definition."""
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
        node = _schema()["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def drop_absent(data: Any, node: Any) -> Any:
    """BUNDLE.md: `null` where an optional fact would be means the fact is absent. Removes every
    null value of an optional property (one the schema does not list as required) and every null
    entry of a mapping, at any depth; a null required field stays and is refused by the schema."""
    node = _resolve(node)
    if not isinstance(node, dict):
        return data
    if isinstance(data, dict):
        properties = node.get("properties") or {}
        required = set(node.get("required") or ())
        extra = node.get("additionalProperties")
        out = {}
        for key, value in data.items():
            if value is None and key not in required:
                continue
            if key in properties:
                out[key] = drop_absent(value, properties[key])
            elif isinstance(extra, dict):
                out[key] = drop_absent(value, extra)
            else:
                out[key] = value
        return out
    if isinstance(data, list) and isinstance(node.get("items"), dict):
        return [drop_absent(item, node["items"]) for item in data]
    return data


def _validate(data: Any, definition: str, rel: str) -> None:
    if accepts(_schema(), {"$ref": f"#/$defs/{definition}"}, data):
        return  # certainly valid: jsonschema (slow to import) is only needed to word a refusal
    import jsonschema

    schema = {**_schema(), "$ref": f"#/$defs/{definition}"}
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        err = errors[0]
        path = [str(p) for p in err.absolute_path]
        if err.validator == "required" and isinstance(err.instance, dict):
            # Name the missing field itself, not the object that lacks it.
            missing = [str(k) for k in err.validator_value if k not in err.instance]
            raise BundleError(rel, ".".join([*path, missing[0]]), "required field is missing")
        field = ".".join(path) or "(top level)"
        message = err.message if len(err.message) < 200 else err.message[:197] + "..."
        raise BundleError(rel, field, message)


def _pr_numbers(items: Any, rel: str) -> tuple[int, ...]:
    """PR numbers of a run's `pull_requests` (plain numbers or `{number: N}` objects)."""
    out = []
    for i, item in enumerate(items or []):
        value = item.get("number") if isinstance(item, dict) else item
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise BundleError(rel, f"pull_requests.{i}", f"{value!r} is not a PR number")
        try:
            out.append(int(value))
        except ValueError:
            raise BundleError(rel, f"pull_requests.{i}", f"{value!r} is not a PR number") from None
    return tuple(out)


class BundleReader:
    """Reads one bundle directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.budget = _Budget()

    def _bytes(self, rel: str) -> bytes:
        path = self.root / rel
        refuse_symlinks(self.root, path)
        if not path.is_file():
            raise BundleError(rel, None, "required file is missing")
        return self.budget.read(path, self.root)

    def _yaml(self, rel: str, definition: str, *, required: bool = True, default: Any = None) -> Any:
        path = self.root / rel
        if not required and not path.is_file() and not path.is_symlink():
            return default
        try:
            data = load_yaml_data(decode_text(self._bytes(rel), rel), rel)
        except InputError as exc:
            raise BundleError(rel, None, exc.reason) from None
        data = _jsonable(data)
        if data is None and not required:
            return default
        data = drop_absent(data, {"$ref": f"#/$defs/{definition}"})
        _validate(data, definition, rel)
        return data

    def _build(self, rel: str, factory: Callable[..., Any], data: dict[str, Any]) -> Any:
        try:
            return factory(**data)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise BundleError(rel, ".".join(str(p) for p in err["loc"]), err["msg"]) from None

    def _tree(self, side: str, sha: str) -> Tree:
        files = self._folder(f"tree/{side}")
        return Tree(sha=sha, files=files, listing=self._listing(side, files))

    def _listing(self, side: str, files: dict[str, bytes]) -> frozenset[str] | None:
        """`tree/<side>.listing` (optional): every path of the commit, one per line, as `git ls-tree -r
        --name-only` prints them. It must name every file the bundle holds on that side."""
        rel = f"tree/{side}.listing"
        path = self.root / rel
        if not path.is_file() and not path.is_symlink():
            return None
        text = decode_text(self._bytes(rel), rel)
        listing = frozenset(line for line in text.split("\n") if line)
        unlisted = next((name for name in files if name not in listing), None)
        if unlisted is not None:
            raise BundleError(rel, None, f"does not list {unlisted!r}, which tree/{side}/ holds")
        return listing

    def _folder(self, rel: str) -> dict[str, bytes]:
        """Every regular file below a folder of the bundle, by path relative to it, in path order.

        One directory scan per folder (a whole repository tree has thousands of files): every entry
        is seen once, a symbolic link anywhere below refuses the bundle, and each file counts against
        the budget before it is read, in the same order as a sorted walk of the folder."""
        base = self.root / rel
        out: dict[str, bytes] = {}
        refuse_symlinks(self.root, base)
        if not base.is_dir():
            return out
        entries: list[tuple[list[str], os.DirEntry[str]]] = []
        pending: list[tuple[Path, list[str]]] = [(base, [])]
        while pending:
            folder, parts = pending.pop()
            try:
                listing = os.scandir(folder)
            except PermissionError:
                continue  # as Path.rglob does: an unreadable folder lists nothing
            with listing:
                for entry in listing:
                    here = [*parts, entry.name]
                    entries.append((here, entry))
                    if entry.is_dir(follow_symlinks=False):
                        pending.append((Path(entry.path), here))
        entries.sort(key=lambda item: item[0])  # the order of sorted(Path.rglob("*")): by path parts
        for parts, entry in entries:
            name = "/".join(parts)
            if entry.is_symlink():
                raise BundleError(f"{rel}/{name}", None, "symbolic links are not allowed")
            if entry.is_file(follow_symlinks=False):
                out[name] = self.budget.read_entry(entry, f"{rel}/{name}")
        return out

    def _upstream(self, github: GitHubFacts) -> dict[str, bytes]:
        """upstream/<owner>/<repo>/<commit>/<path>: content of files a launcher fetches, checked against
        the github.yaml upstream_files index (a recorded sha256 must match; unindexed files are ignored)."""
        stored = self._folder("upstream")
        out: dict[str, bytes] = {}
        for i, source in enumerate(github.upstream_files):
            for j, item in enumerate(source.files):
                where = f"upstream_files.{i}.files.{j}.path"
                parts = item.path.split("/")
                if item.path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in item.path:
                    raise BundleError("github.yaml", where, f"{item.path!r} is not a relative path")
                if not source.commit:
                    continue
                key = f"{source.repo}/{source.commit}/{item.path}"
                data = stored.get(key)
                if data is None:
                    continue
                if item.sha256 and hashlib.sha256(data).hexdigest() != item.sha256.lower():
                    raise BundleError(f"upstream/{key}", None,
                                      "content does not match its github.yaml upstream_files sha256")
                out[key] = data
        return out

    def _runs(self) -> dict[int, Run]:
        runs: dict[int, Run] = {}
        runs_dir = self.root / "runs"
        refuse_symlinks(self.root, runs_dir)
        if not runs_dir.is_dir():
            return runs
        for folder in sorted(p for p in runs_dir.iterdir() if p.is_dir() or p.is_symlink()):
            refuse_symlinks(self.root, folder)
            rel = f"runs/{folder.name}/run.yaml"
            data = self._yaml(rel, "run")
            if str(data["id"]) != folder.name:
                raise BundleError(rel, "id", f"run id {data['id']} does not match folder {folder.name}")
            artifacts = []
            for item in data.get("artifacts") or []:
                name = str(item["name"])
                if "/" in name or name in (".", ".."):
                    raise BundleError(rel, "artifacts.name", f"artifact name {name!r} is not a plain folder name")
                expired = bool(item.get("expired", False))
                files = {} if expired else self._folder(f"runs/{folder.name}/{name}")
                artifacts.append(Artifact(name=name, expired=expired, files=files))
            fields = {k: v for k, v in data.items() if k != "artifacts"}
            fields["pull_requests"] = _pr_numbers(data.get("pull_requests"), rel)
            runs[int(data["id"])] = self._build(rel, Run, {**fields, "artifacts": tuple(artifacts)})
        return runs

    def read(self) -> Bundle:
        """Parse and validate the whole bundle."""
        if not self.root.is_dir():
            raise BundleError(str(self.root), None, "not a directory")
        meta = self._yaml("bundle.yaml", "bundle")
        pr_data = self._yaml("pr.yaml", "pr")
        if pr_data["number"] != meta["pr"]:
            raise BundleError("pr.yaml", "number", f"{pr_data['number']} differs from bundle.yaml pr {meta['pr']}")
        pr_data = {**pr_data, "repo": meta["repo"], "body": pr_data.get("body") or ""}
        pr_data.setdefault("head_ref_oid", pr_data["head_sha"])
        pr = self._build("pr.yaml", PullRequest, pr_data)
        signoff_data = self._yaml("signoff.yaml", "signoff")
        signoff_data.setdefault(
            "url", f"https://github.com/{meta['repo']}/pull/{meta['pr']}#{_KEY_PREFIX[signoff_data['kind']]}"
                   f"{signoff_data['id']}"
        )
        signoff = self._build("signoff.yaml", SignOff, signoff_data)
        comments = tuple(
            self._build("comments.yaml", Comment, {**c, "body": c.get("body") or "",
                                                   "url": f"{pr.url}#issuecomment-{c['id']}"})
            for c in self._yaml("comments.yaml", "comments", required=False, default=[])
        )
        check_runs = tuple(
            self._build("checks.yaml", CheckRun, {**c, "run_attempt": c.get("run_attempt") or 1})
            for c in self._yaml("checks.yaml", "checks", required=False, default=[])
        )
        gh = self._yaml("github.yaml", "github", required=False, default={}) or {}
        gh = {k: v for k, v in gh.items() if v is not None}
        if "teams" in gh:
            gh["teams"] = {k: tuple(v) for k, v in gh["teams"].items()}
        github = self._build("github.yaml", GitHubFacts, gh)
        for url, rel in github.pages.items():
            if ".." in Path(rel).parts or Path(rel).is_absolute():
                raise BundleError("github.yaml", f"pages.{url}", "page path escapes the bundle")
        upstream = self._upstream(github)
        try:
            review_date = dt.date.fromisoformat(str(meta["review_date"])[:10])
        except ValueError:
            raise BundleError("bundle.yaml", "review_date", f"{meta['review_date']!r} is not a date") from None
        fields = {
            "source": str(self.root),
            "review_date": review_date,
            "recorded_at": meta.get("recorded_at"),
            "pr": pr,
            "signoff": signoff,
            "comments": comments,
            "check_runs": check_runs,
            "github": github,
            "runs": self._runs(),
            "pages": {f"pages/{k}": v for k, v in self._folder("pages").items()},
            "checkpoints": self._folder("checkpoints"),
            "upstream": upstream,
            "base": self._tree("base", pr.base_sha),
            "head": self._tree("head", pr.head_sha),
        }
        return self._build("bundle.yaml", Bundle, fields)


def read_bundle(root: str | Path) -> Bundle:
    """Read and validate a bundle directory; raises BundleError with a one-line reason."""
    try:
        return BundleReader(Path(root)).read()
    except RecursionError:
        raise BundleError(str(root), None, "input nests too deeply") from None
    except OSError as exc:
        raise BundleError(str(root), None, f"cannot read: {exc.strerror or exc}") from None
