"""`verify-pr replay` on small repositories: selection of merged PRs, JSON lines, resume, policy flips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrecord.gitkit import commit, fixture_tree, git, init, with_distractors
from verifier.app.cli import main
from verifier.app.replay.merged import merged_prs
from verifier.record.git.repo import GitRepo

DEPRECATION = "quill2flash"


def _history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """main: base, a docs-only PR (#10), a recipe PR (#11, new layout fixture), a merge commit, a recipe PR (#12)."""
    repo = init(tmp_path / "ix")
    master = "inferencex-e2e/configs/nvidia-master.yaml"
    base = with_distractors(fixture_tree("c13/fail-draft-kv-fp8", "base"), "new")
    head = with_distractors(fixture_tree("c13/fail-draft-kv-fp8", "head"), "new")
    shas = {"base": commit(repo, base, "Initial tree", when="2026-06-20T10:00:00+00:00")}
    docs = {**base, "inferencex-e2e/README.md": b"# changed\n"}
    shas["10"] = commit(repo, docs, "Docs only (#10)", when="2026-07-02T10:00:00+00:00")
    head[master] += b"# retuned\n"
    shas["11"] = commit(repo, {**docs, **{k: v for k, v in head.items() if k != "inferencex-e2e/README.md"}},
                        "Retune Quill DSpark (#11)", when="2026-07-03T10:00:00+00:00")
    # a true merge on the first-parent line is not a squash merge of a PR
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, {**docs, **head, "inferencex-e2e/notes.md": b"x\n"}, "side work", when="2026-07-04T10:00:00+00:00")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch side", "side", when="2026-07-05T10:00:00+00:00")
    tree = fixture_tree("c13/pass-as-shipped", "head")
    tree[master] += b"# shipped\n"
    current = {**docs, **head, "inferencex-e2e/notes.md": b"x\n"}
    shas["12"] = commit(repo, {**current, **tree}, "Ship Quill as shipped (#12)", when="2026-07-06T10:00:00+00:00")
    return repo, shas


def test_selects_squash_merges_that_change_a_master_config(tmp_path: Path) -> None:
    repo_dir, shas = _history(tmp_path)
    with GitRepo(repo_dir) as repo:
        prs = merged_prs(repo, since="2026-07-01")
        assert [p.number for p in prs] == [11, 12]
        every = merged_prs(repo, since="2026-07-01", all_prs=True)
        assert 10 in [p.number for p in every]
        one = merged_prs(repo, numbers={11})
        assert [(p.number, p.head, p.base) for p in one] == [(11, shas["11"], shas["10"])]
        assert merged_prs(repo, since="2026-07-04", until="2026-07-05") == []


def test_selects_master_configs_of_every_era(tmp_path: Path) -> None:
    """`.github/configs/` (until 2026-07-02), `configs/`, then `inferencex-e2e/configs/`: all are master configs."""
    repo_dir = init(tmp_path / "era")
    tree = {"README.md": b"x\n"}
    commit(repo_dir, tree, "Initial tree", when="2025-11-01T10:00:00+00:00")
    for number, path in ((1, ".github/configs/nvidia-master.yaml"), (2, "configs/amd-master.yaml"),
                         (3, "inferencex-e2e/configs/nvidia-master.yaml")):
        tree = {**tree, path: f"# {number}\n".encode()}
        commit(repo_dir, tree, f"Retune (#{number})", when=f"2025-11-0{number + 1}T10:00:00+00:00")
    with GitRepo(repo_dir) as repo:
        assert [p.number for p in merged_prs(repo, since="2025-11-01")] == [1, 2, 3]


def test_replay_writes_json_lines_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo_dir, _ = _history(tmp_path)
    out = tmp_path / "replay.jsonl"
    assert main(["replay", "--repo-dir", str(repo_dir), "--pr", "11", "--jobs", "1", "--out", str(out), "-q"]) == 0
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["number"] for r in first] == [11]
    rows = {r["id"]: r for r in first[0]["rows"]}
    assert rows[13]["status"] == "FAIL" and "quill2flash" in rows[13]["summary"]
    assert first[0]["verdict"] == "REJECTED" and first[0]["kind"] == "squash"
    printed = capsys.readouterr().out
    assert "Draft precision" in printed and "PASS" in printed
    # resumable: #11 is not judged again, #12 is added
    assert main(["replay", "--repo-dir", str(repo_dir), "--pr", "11,12", "--jobs", "2", "--out", str(out),
                 "-q"]) == 0
    again = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["number"] for r in again] == [11, 12] and again[0] == first[0]


NOTICE = """
## Deprecation Notice

### Saturday, July 4, 2026

**Saturday, July 4, 2026** is the last day for the **Agentic coding** scenario on **Quill-2-Flash** (`quill2flash`).
"""


def test_policy_replay_lists_the_prs_a_deprecation_flips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo_dir, _ = _history(tmp_path)
    git(repo_dir, "checkout", "-q", "-b", "proposal")
    models = repo_dir / "inferencex-e2e/docs/MODELS.md"
    models.write_text(models.read_text(encoding="utf-8").replace("# Models\n", "# Models\n" + NOTICE, 1),
                      encoding="utf-8")
    git(repo_dir, "commit", "-q", "-am", "Propose: deprecate Quill-2-Flash agentic after July 4")
    git(repo_dir, "checkout", "-q", "main")
    out = tmp_path / "flips.jsonl"
    capsys.readouterr()
    assert main(["replay", "--repo-dir", str(repo_dir), "--since", "2026-07-01", "--policies-from", "proposal",
                 "--jobs", "1", "--out", str(out), "-q"]) == 0
    records = {r["number"]: r for r in map(json.loads, out.read_text().splitlines())}
    # merged before the deprecation takes effect: nothing flips; merged after it: Check 7 flips
    assert records[11]["flips"] == []
    flipped = records[12]["flips"]
    assert [f["id"] for f in flipped] == [7] and flipped[0]["from"] == "PASS" and flipped[0]["to"] == "FAIL"
    printed = capsys.readouterr().out
    assert "1 of 2 PRs change" in printed and "#12" in printed and "check  7 PASS -> FAIL" in printed
    assert "#11 " not in printed.split("PRs change")[1]


def test_policies_folder_replay_and_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo_dir, _ = _history(tmp_path)
    assert main(["replay", "--repo-dir", str(repo_dir), "--until", "2026-07-09", "--pr", "11"]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["replay", "--repo-dir", str(repo_dir), "--pr", "11", "--policies", str(empty)]) == 2
    assert "no <topic>.yaml" in capsys.readouterr().err
