"""BUNDLE.md contract, field by field (issue 11 defect 5): `null` where an optional fact would be
means the fact is absent and the bundle is still read and judged; only a required field that is
missing or malformed refuses the bundle, with one line naming the file and the field.

Real replayed bundles were refused whole for an irrelevant null (pr.yaml `head_ref: null`,
signoff.yaml `author_association: null`, github.yaml `upstream_files[].files[].facts` as a list).
The optional and required fields are enumerated from verifier/schemas/bundle-v1.schema.json, which
follows BUNDLE.md; each mutation is applied to a copy of the public case pr4524-approved.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, clone_bundle, read_yaml, write_yaml
from verifier.app.cli import main
from verifier.core.resources import SCHEMA_DIR

CASE = CASES / "pr4524-approved"
FILES = {"bundle.yaml": "bundle", "pr.yaml": "pr", "signoff.yaml": "signoff", "comments.yaml": "comments",
         "checks.yaml": "checks", "github.yaml": "github", "runs/40739166138/run.yaml": "run"}
Path_ = tuple[Any, ...]
SCHEMA = json.loads((SCHEMA_DIR / "bundle-v1.schema.json").read_text(encoding="utf-8"))


def _resolve(node: Any) -> Any:
    while isinstance(node, dict) and str(node.get("$ref", "")).startswith("#/$defs/"):
        node = SCHEMA["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _walk(data: Any, node: Any, path: Path_, required: bool) -> Iterator[tuple[Path_, bool]]:
    """(path, required) of every property present in the case, one list item or mapping entry each."""
    node = _resolve(node)
    if not isinstance(node, dict):
        return
    if isinstance(data, dict):
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        seen_entry = False
        for key, value in data.items():
            child = props.get(key) if key in props else extra if isinstance(extra, dict) else None
            if child is None or (key not in props and seen_entry):
                continue  # one entry per mapping (teams, permissions, ...) stands for all
            seen_entry = seen_entry or key not in props
            is_required = key in (node.get("required") or ())
            yield (*path, key), is_required
            yield from _walk(value, child, (*path, key), is_required)
    elif isinstance(data, list) and data and isinstance(node.get("items"), dict):
        yield from _walk(data[0], node["items"], (*path, 0), required)


def _fields(required: bool) -> list[tuple[str, Path_]]:
    out = []
    for rel, definition in FILES.items():
        data = json.loads(json.dumps(read_yaml(CASE / rel), default=str))
        for path, is_required in _walk(data, SCHEMA["$defs"][definition], (), True):
            if is_required is required:
                out.append((rel, path))
    return out


OPTIONAL = _fields(required=False)
REQUIRED = _fields(required=True)


def _id(item: tuple[str, Path_]) -> str:
    return f"{item[0]}:{'.'.join(map(str, item[1]))}"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone_bundle(CASE, tmp_path_factory.mktemp("contract"))


def _set(work: Path, rel: str, path: Path_, value: Any, delete: bool = False) -> None:
    data = read_yaml(CASE / rel)
    target = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    write_yaml(work / rel, data)


def _verify(bundle: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--bundle", str(bundle), "--format", "json"])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def _restore(work: Path) -> Iterator[None]:
    yield
    for rel in FILES:
        shutil.copyfile(CASE / rel, work / rel)


def test_the_enumeration_covers_the_fields_of_the_defect() -> None:
    assert ("pr.yaml", ("head_ref",)) in OPTIONAL
    assert ("signoff.yaml", ("author_association",)) in OPTIONAL
    assert ("pr.yaml", ("head_sha",)) in REQUIRED and ("signoff.yaml", ("body",)) in REQUIRED
    assert len(OPTIONAL) >= 25 and len(REQUIRED) >= 15


@pytest.mark.parametrize("item", OPTIONAL, ids=_id)
def test_null_optional_field_is_absent_and_the_bundle_is_judged(work: Path, item: tuple[str, Path_]) -> None:
    rel, path = item
    _set(work, rel, path, None)
    rc, out, err = _verify(work)
    assert rc in (0, 1), err
    verdict = json.loads(out)
    assert isinstance(verdict, dict) and verdict["verdict"] in ("APPROVED", "WARN", "REJECTED")


@pytest.mark.parametrize("facts", [["sets SGLANG_X=1", "installs a wheel"], {"sets_env": ["SGLANG_X"]}, None],
                         ids=["list", "mapping", "null"])
def test_upstream_file_facts_as_list_mapping_or_null(work: Path, facts: Any) -> None:
    data = read_yaml(CASE / "github.yaml")
    data["upstream_files"] = [{"repo": "ishandhanani/srt-slurm", "ref": "main", "commit": None, "used_by": None,
                               "files": [{"path": "setup/x.sh", "blob": None, "facts": facts}]}]
    write_yaml(work / "github.yaml", data)
    rc, out, err = _verify(work)
    assert rc in (0, 1), err
    assert isinstance(json.loads(out), dict)


@pytest.mark.parametrize("item", REQUIRED, ids=_id)
@pytest.mark.parametrize("how", ["missing", "null", "malformed"])
def test_missing_or_malformed_required_field_refuses_with_one_line(
        work: Path, item: tuple[str, Path_], how: str) -> None:
    rel, path = item
    original = read_yaml(CASE / rel)
    for key in path:
        original = original[key]
    malformed: Any = {"not": "this"} if not isinstance(original, dict) else "not a mapping"
    _set(work, rel, path, None if how == "null" else malformed, delete=how == "missing")
    rc, out, err = _verify(work)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert rel in lines[0] and str(path[-1]) in lines[0], lines[0]
