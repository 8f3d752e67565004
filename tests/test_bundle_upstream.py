"""Files a launcher fetches from another repository: github.yaml upstream_files + upstream/ content.

A recorded bundle carries the index (repo, ref, commit, per file blob and sha256, or absent) and the
bytes under upstream/<owner>/<repo>/<commit>/<path>; the reader checks them against each other, and a
bundle with facts only (no bytes) is still read.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.kit import FIXTURES, clone_bundle, edit_yaml
from verifier.core.bundle import read_bundle
from verifier.core.errors import BundleError
from verifier.core.model import UpstreamFile, UpstreamFiles
from verifier.record.github.record import write_bundle

COMMIT = "c" * 40
PATH = "recipes/trtllm/b200-fp4/1k1k/ctx1_gen2.yaml"
DATA = b"name: ctx1_gen2\n"


def _with_upstream(tmp_path: Path, *, content: bytes | None = DATA, sha: str | None = None) -> Path:
    bundle = clone_bundle(FIXTURES / "pr4524", tmp_path / "b")

    def change(gh: dict) -> dict:  # type: ignore[type-arg]
        gh["upstream_files"] = [{
            "repo": "NVIDIA/srt-slurm", "ref": "sa-submission-q2-2026", "commit": COMMIT,
            "used_by": ["runners/launch_b200-dgxc-slurm.sh"],
            "files": [{"path": PATH, "blob": "d" * 40, "sha256": sha or hashlib.sha256(DATA).hexdigest()},
                      {"path": "recipes/gone.yaml", "absent": True}],
        }]
        return gh

    edit_yaml(bundle / "github.yaml", change)
    if content is not None:
        target = bundle / "upstream" / "NVIDIA" / "srt-slurm" / COMMIT / PATH
        target.parent.mkdir(parents=True)
        target.write_bytes(content)
    return bundle


def test_recorded_content_reads_and_is_looked_up_by_repo_ref_and_path(tmp_path: Path) -> None:
    bundle = read_bundle(_with_upstream(tmp_path))
    hit = bundle.upstream_file("NVIDIA/srt-slurm", "sa-submission-q2-2026", PATH)
    assert hit.status == "content" and hit.data == DATA and hit.commit == COMMIT
    assert bundle.upstream_file("NVIDIA/srt-slurm", "sa-submission-q2-2026", "recipes/gone.yaml").status == "absent"
    assert bundle.upstream_file("NVIDIA/srt-slurm", "sa-submission-q2-2026", "other.yaml").status == \
        "path-not-recorded"
    assert bundle.upstream_file("NVIDIA/srt-slurm", "main", PATH).status == "not-recorded"
    assert bundle.upstream_file("cquil11/srt-slurm-nv", "sa-submission-q2-2026", PATH).status == "not-recorded"


def test_facts_without_content_still_read(tmp_path: Path) -> None:
    bundle = read_bundle(_with_upstream(tmp_path, content=None))
    assert bundle.upstream_file("NVIDIA/srt-slurm", "sa-submission-q2-2026", PATH).status == "facts-only"


def test_content_that_does_not_match_its_sha256_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BundleError) as exc:
        read_bundle(_with_upstream(tmp_path, content=b"name: tampered\n"))
    assert f"upstream/NVIDIA/srt-slurm/{COMMIT}/{PATH}" in str(exc.value) and "sha256" in str(exc.value)


def test_an_escaping_path_is_refused(tmp_path: Path) -> None:
    bundle = _with_upstream(tmp_path)
    edit_yaml(bundle / "github.yaml",
              lambda gh: {**gh, "upstream_files": [{**gh["upstream_files"][0], "files": [{"path": "../x"}]}]})
    with pytest.raises(BundleError) as exc:
        read_bundle(bundle)
    assert "upstream_files.0.files.0.path" in str(exc.value)


def test_write_and_read_round_trip(tmp_path: Path) -> None:
    original = read_bundle(_with_upstream(tmp_path))
    again = read_bundle(write_bundle(original, tmp_path / "out"))
    assert again.upstream == original.upstream
    assert again.github.upstream_files == original.github.upstream_files
    assert isinstance(again.github.upstream_files[0], UpstreamFiles)
    assert again.github.upstream_files[0].files[1] == UpstreamFile(path="recipes/gone.yaml", absent=True)


@pytest.mark.parametrize("facts", ["setup script: installs the NIXL wheel", 3, 2.5, True, None,
                                   ["runs pip install", {"pins": "nixl==0.7"}], {"lines": 12, "what": "setup"}],
                         ids=["text", "int", "float", "bool", "null", "list", "mapping"])
def test_informational_facts_may_be_any_scalar_list_or_mapping(tmp_path: Path, facts: object) -> None:
    """BUNDLE.md: `facts` is informational and free-form; null means absent. None of it is refused."""
    root = _with_upstream(tmp_path, content=None)

    def change(gh: dict) -> dict:  # type: ignore[type-arg]
        gh["upstream_files"][0]["files"][0]["facts"] = facts
        return gh

    edit_yaml(root / "github.yaml", change)
    bundle = read_bundle(root)
    recorded = bundle.github.upstream_files[0].files[0].facts
    expected = {} if facts is None else tuple(facts) if isinstance(facts, list) else facts
    assert recorded == expected
    assert bundle.upstream_file("NVIDIA/srt-slurm", "sa-submission-q2-2026", PATH).status == "facts-only"


def test_free_form_facts_survive_a_write_and_read(tmp_path: Path) -> None:
    root = _with_upstream(tmp_path, content=None)

    def change(gh: dict) -> dict:  # type: ignore[type-arg]
        gh["upstream_files"][0]["files"][0]["facts"] = ["runs pip install", {"pins": "nixl==0.7"}]
        gh["upstream_files"][0]["files"][1]["facts"] = "fetched at run time"
        return gh

    edit_yaml(root / "github.yaml", change)
    bundle = read_bundle(root)
    write_bundle(bundle, tmp_path / "again")
    again = read_bundle(tmp_path / "again")
    assert [f.facts for f in again.github.upstream_files[0].files] == [
        ("runs pip install", {"pins": "nixl==0.7"}), "fetched at run time"]
