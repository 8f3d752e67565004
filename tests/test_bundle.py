"""The bundle reader (verifier/core/bundle.py, verifier/core/yamlio.py) on valid, malformed and hostile bundles.

A bundle is untrusted input (BUNDLE.md): the reader must read every bundle that follows the format
and refuse, with a BundleError naming the file and the field, every one that does not, quickly and
without following links out of the bundle.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.kit import CASES, FIXTURES, clone_bundle, replace_text
from verifier.core.bundle import MAX_FILE_BYTES, read_bundle
from verifier.core.errors import BundleError, InputError
from verifier.core.yamlio import MAX_TEXT_BYTES, decode_text, line_of, load_yaml

PR4524 = FIXTURES / "pr4524"
HEAD = "51bb400fde2167c9a265ec9d7e19f61a61d7b7ee"
SHA_A = "a" * 40
SHA_B = "b" * 40


# ------------------------------------------------------------------------------------------ helpers


def minimal_bundle(root: Path, *, layout: str = "new", extra: dict[str, str] | None = None) -> Path:
    """A tiny valid bundle: the three required files and a two-file tree in the given layout."""
    root.mkdir(parents=True, exist_ok=True)
    prefix = "inferencex-e2e/" if layout == "new" else ""
    models = "inferencex-e2e/docs/MODELS.md" if layout == "new" else "MODELS.md"
    files = {
        "bundle.yaml": "format: 1\nrepo: SemiAnalysisAI/InferenceX\npr: 7\nreview_date: 2026-10-29\n",
        "pr.yaml": (
            f"number: 7\ntitle: t\nbase_sha: {SHA_A}\nhead_sha: {SHA_B}\ncommits: [{SHA_B}]\n"
            f"files:\n  - {{path: {prefix}perf-changelog.yaml, status: modified}}\n"
        ),
        "signoff.yaml": (
            "kind: conversation comment\nid: 11\nauthor: someone\ncreated_at: 2026-10-29T10:00:00Z\n"
            "body: |\n  As a PR reviewer and CODEOWNER, I have reviewed this and have:\n"
        ),
        "tree/base/.github/CODEOWNERS": "* @InferenceX/core\n",
        f"tree/base/{models}": "# Models\n",
        f"tree/base/{prefix}perf-changelog.yaml": "- config-keys: [a]\n",
        f"tree/head/{prefix}perf-changelog.yaml": "- config-keys: [a]\n\n- config-keys: [b]\n",
    }
    files.update(extra or {})
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def refused(root: Path) -> BundleError:
    """Read a bundle that must be refused; return the error."""
    with pytest.raises(BundleError) as info:
        read_bundle(root)
    return info.value


@pytest.fixture
def pr4524(tmp_path: Path) -> Path:
    """An editable copy of the shipped default bundle."""
    return clone_bundle(PR4524, tmp_path)


# ------------------------------------------------------------------------------------- valid input


def test_shipped_default_bundle_reads() -> None:
    b = read_bundle(PR4524)
    assert (b.pr.repo, b.pr.number, b.pr.head_sha, b.pr.head_moved) == (
        "SemiAnalysisAI/InferenceX",
        4524,
        HEAD,
        False,
    )
    assert b.pr.commits[-1] == HEAD and b.pr.labels == ("full-sweep-fail-fast",)
    assert b.layout == "new" and b.path("models_md") == "inferencex-e2e/docs/MODELS.md"
    assert b.signoff.key.startswith("issuecomment-") and b.signoff.author == "nvpohanh"
    assert b.signoff.author_association == "COLLABORATOR"
    assert sorted(b.runs) == [40178345296, 40543116004, 40739166138]
    pinned = b.runs[40739166138]
    assert pinned.head_sha == HEAD and len(pinned.artifacts) == 17
    assert all(a.files for a in pinned.artifacts), "every unexpired artifact holds its files"
    assert b.github.baseline_runs == {"minimaxm31flash-fp4-b300-sglang-agentic-dspark": 40178345296}
    for rel in b.github.pages.values():
        assert rel in b.pages
    assert "MiniMaxAI/MiniMax-M3.1-Flash/dspark/config.json" in b.checkpoints
    assert b.review_date.isoformat() == "2026-10-29"


def test_shipped_bundle_is_self_consistent() -> None:
    """pr.yaml files agree with the tree diff; the sign-off is also the last conversation comment."""
    b = read_bundle(PR4524)
    changed = {}
    for path in set(b.base.files) | set(b.head.files):
        if path not in b.base.files:
            changed[path] = "added"
        elif path not in b.head.files:
            changed[path] = "removed"
        elif b.base.files[path] != b.head.files[path]:
            changed[path] = "modified"
    assert {f.path: f.status for f in b.pr.files} == changed
    assert b.comments[-1].id == b.signoff.id and b.comments[-1].body == b.signoff.body
    times = [c.created_at for c in b.comments]
    assert times == sorted(times)
    assert {c.sha for c in b.check_runs} <= set(b.pr.commits)


def test_shipped_bundle_matches_its_generator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fixtures/pr4524 is exactly what fixtures/build_pr4524 writes (no hand edits drift in)."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    from build_pr4524.__main__ import build

    fresh = build(tmp_path / "pr4524")
    committed = {p.relative_to(PR4524).as_posix(): p.read_bytes() for p in PR4524.rglob("*") if p.is_file()}
    built = {p.relative_to(fresh).as_posix(): p.read_bytes() for p in fresh.rglob("*") if p.is_file()}
    assert sorted(committed) == sorted(built)
    assert [k for k in built if built[k] != committed[k]] == []


def test_shipped_bundle_reads_twice_identically() -> None:
    """Reading is deterministic (its speed is measured by benchmarks/bench.py, not asserted here)."""
    assert read_bundle(PR4524).model_dump(exclude={"source"}) == read_bundle(PR4524).model_dump(exclude={"source"})


def test_minimal_bundle_reads_with_defaults(tmp_path: Path) -> None:
    b = read_bundle(minimal_bundle(tmp_path / "b"))
    assert b.comments == () and b.check_runs == () and b.runs == {} and b.pages == {}
    assert b.github.teams == {} and b.github.permissions == {}
    assert b.pr.head_ref_oid == SHA_B and b.pr.body == ""
    assert b.signoff.url.endswith("/pull/7#issuecomment-11")


def test_unknown_keys_are_ignored(tmp_path: Path) -> None:
    root = minimal_bundle(tmp_path / "b")
    with (root / "pr.yaml").open("a", encoding="utf-8") as fh:
        fh.write("some_future_field: {nested: [1, 2]}\n")
    with (root / "bundle.yaml").open("a", encoding="utf-8") as fh:
        fh.write("recorder: verify-pr 9.9\n")
    assert read_bundle(root).pr.number == 7


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_acceptance_cases_read(case: str) -> None:
    if not (CASES / case).is_dir():
        pytest.skip("shared cases not available")
    b = read_bundle(CASES / case)
    assert b.pr.number == 4524 and b.layout == "new"


# ------------------------------------------------------------------------------- layout detection


def test_layout_old(tmp_path: Path) -> None:
    b = read_bundle(minimal_bundle(tmp_path / "old", layout="old"))
    assert b.layout == "old"
    assert b.path("models_md") == "MODELS.md"
    assert b.path("changelog") == "perf-changelog.yaml"
    assert b.path("nvidia_master") == "configs/nvidia-master.yaml"
    assert b.path("thresholds") == "utils/evals/thresholds.yaml"


def test_layout_new(tmp_path: Path) -> None:
    b = read_bundle(minimal_bundle(tmp_path / "new", layout="new"))
    assert b.layout == "new"
    assert b.path("models_md") == "inferencex-e2e/docs/MODELS.md"
    assert b.path("codeowners") == ".github/CODEOWNERS"
    assert b.path("golden_al_dir") == "inferencex-e2e/infx/golden_al_distribution/"


def test_layout_comes_from_the_trusted_base(tmp_path: Path) -> None:
    """A head that moves files under inferencex-e2e/ does not switch an old-layout base."""
    root = minimal_bundle(
        tmp_path / "b", layout="old", extra={"tree/head/inferencex-e2e/docs/MODELS.md": "x\n"}
    )
    b = read_bundle(root)
    assert b.head.layout == "new" and b.base.layout == "old" and b.layout == "old"


def test_layout_falls_back_to_head_without_base(tmp_path: Path) -> None:
    root = minimal_bundle(tmp_path / "b", layout="new")
    for path in sorted((root / "tree" / "base").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    assert read_bundle(root).layout == "new"


# ---------------------------------------------------------------------------------- malformed input


def test_missing_pr_yaml(pr4524: Path) -> None:
    (pr4524 / "pr.yaml").unlink()
    err = refused(pr4524)
    assert err.path == "pr.yaml" and "missing" in err.reason


def test_missing_bundle_yaml(tmp_path: Path) -> None:
    root = minimal_bundle(tmp_path / "b")
    (root / "bundle.yaml").unlink()
    assert refused(root).path == "bundle.yaml"


def test_not_a_directory(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("x", encoding="utf-8")
    assert "not a directory" in refused(path).reason


@pytest.mark.parametrize(
    ("file", "old", "new", "field"),
    [
        ("pr.yaml", f"head_sha: {HEAD}", "head_sha: 51bb400f", "head_sha"),
        ("pr.yaml", f"head_sha: {HEAD}", f"head_sha: {HEAD.upper()}", "head_sha"),
        ("pr.yaml", f"  - {HEAD}", "  - not-a-sha", "commits.5"),
        ("pr.yaml", "number: 4524", "number: four", "number"),
        ("pr.yaml", "draft: false", "draft: [false]", "draft"),
        ("pr.yaml", "labels: [full-sweep-fail-fast]", "labels: full-sweep-fail-fast", "labels"),
        ("pr.yaml", "state: open", "state: reopened", "state"),
        ("signoff.yaml", "kind: conversation comment", "kind: email", "kind"),
        ("signoff.yaml", "id: 4712093418", "id: '4712093418x'", "id"),
        ("signoff.yaml", "author: nvpohanh", "author: ''", "author"),
        ("bundle.yaml", "format: 1", "format: 2", "format"),
        ("bundle.yaml", "pr: 4524", "pr: -1", "pr"),
        ("checks.yaml", "run_id: 40409731552,", "run_id: soon,", "0.run_id"),
        (
            "github.yaml",
            "nvpohanh: {permission: write, role_name: maintain}",
            "nvpohanh: write",
            "permissions.nvpohanh",
        ),
        ("runs/40543116004/run.yaml", "id: 40543116004", "id: '40543116004'", "id"),
    ],
)
def test_field_errors_name_file_and_field(pr4524: Path, file: str, old: str, new: str, field: str) -> None:
    replace_text(pr4524 / file, old, new, count=1)
    err = refused(pr4524)
    assert err.path == file
    assert err.field == field
    assert file in str(err) and field in str(err)


def test_top_level_must_be_a_mapping(pr4524: Path) -> None:
    (pr4524 / "pr.yaml").write_text("- number: 4524\n", encoding="utf-8")
    err = refused(pr4524)
    assert (err.path, err.field) == ("pr.yaml", "(top level)")


def test_empty_required_file(pr4524: Path) -> None:
    (pr4524 / "signoff.yaml").write_text("", encoding="utf-8")
    assert refused(pr4524).path == "signoff.yaml"


def test_pr_number_must_match_bundle(pr4524: Path) -> None:
    replace_text(pr4524 / "bundle.yaml", "pr: 4524", "pr: 4525")
    err = refused(pr4524)
    assert (err.path, err.field) == ("pr.yaml", "number")


def test_run_id_must_match_folder(pr4524: Path) -> None:
    (pr4524 / "runs" / "40543116004").rename(pr4524 / "runs" / "40543116005")
    err = refused(pr4524)
    assert err.path == "runs/40543116005/run.yaml" and err.field == "id"


def test_run_folder_without_run_yaml(pr4524: Path) -> None:
    (pr4524 / "runs" / "123").mkdir()
    err = refused(pr4524)
    assert err.path == "runs/123/run.yaml" and "missing" in err.reason


@pytest.mark.parametrize("name", ["..", "../../etc", "a/b"])
def test_artifact_name_is_a_plain_folder(pr4524: Path, name: str) -> None:
    replace_text(pr4524 / "runs/40543116004/run.yaml", "name: eval_results_all", f"name: {name!r}")
    err = refused(pr4524)
    assert err.field == "artifacts.name"


def test_expired_artifact_has_no_files(pr4524: Path) -> None:
    replace_text(pr4524 / "runs/40543116004/run.yaml", "expired: false", "expired: true")
    art = read_bundle(pr4524).runs[40543116004].artifact("eval_results_all")
    assert art is not None and art.expired and art.files == {}


@pytest.mark.parametrize("target", ["../../etc/passwd", "/etc/passwd"])
def test_page_path_cannot_escape(pr4524: Path, target: str) -> None:
    replace_text(pr4524 / "github.yaml", "pages/vllm-recipes.md", target)
    err = refused(pr4524)
    assert err.path == "github.yaml" and err.field is not None and err.field.startswith("pages.")


def test_invalid_review_date(pr4524: Path) -> None:
    replace_text(pr4524 / "bundle.yaml", "review_date: 2026-10-29", "review_date: '2026-13-45'")
    err = refused(pr4524)
    assert (err.path, err.field) == ("bundle.yaml", "review_date")


def test_invalid_recorded_at(pr4524: Path) -> None:
    replace_text(
        pr4524 / "bundle.yaml", "recorded_at: 2026-10-29T18:20:44Z", "recorded_at: 'the day after the sweep'"
    )
    err = refused(pr4524)
    assert (err.path, err.field) == ("bundle.yaml", "recorded_at")


def test_invalid_timestamp_in_comment(pr4524: Path) -> None:
    replace_text(
        pr4524 / "comments.yaml", "created_at: 2026-10-24T06:09:14Z", "created_at: 'last Tuesday, noon'"
    )
    err = refused(pr4524)
    assert err.path == "comments.yaml" and err.field == "created_at"


def test_yaml_syntax_error_names_line(pr4524: Path) -> None:
    replace_text(pr4524 / "github.yaml", "teams:", "teams: [unclosed")
    err = refused(pr4524)
    assert err.path == "github.yaml" and "line" in err.reason


def test_duplicate_keys(pr4524: Path) -> None:
    replace_text(pr4524 / "pr.yaml", "draft: false", "draft: false\ndraft: true")
    err = refused(pr4524)
    assert err.path == "pr.yaml" and "duplicate" in err.reason.lower()


def test_duplicate_keys_nested(pr4524: Path) -> None:
    replace_text(
        pr4524 / "github.yaml",
        "  cquil11: {permission: admin, role_name: admin}",
        "  cquil11: {permission: admin, role_name: admin, permission: read}",
    )
    assert "duplicate" in refused(pr4524).reason.lower()


# ---------------------------------------------------------------------------------- hostile input


def test_non_utf8_file(pr4524: Path) -> None:
    data = (pr4524 / "pr.yaml").read_bytes().replace(b"title:", b"title: \xff\xfe", 1)
    (pr4524 / "pr.yaml").write_bytes(data)
    err = refused(pr4524)
    assert err.path == "pr.yaml" and "UTF-8" in err.reason


def test_latin1_signoff(pr4524: Path) -> None:
    text = (pr4524 / "signoff.yaml").read_text(encoding="utf-8")
    (pr4524 / "signoff.yaml").write_bytes(text.replace("Signed", "Signé").encode("latin-1", errors="replace"))
    assert refused(pr4524).path == "signoff.yaml"


def test_nul_byte(pr4524: Path) -> None:
    data = (pr4524 / "comments.yaml").read_bytes().replace(b"Thanks", b"Tha\x00nks", 1)
    (pr4524 / "comments.yaml").write_bytes(data)
    err = refused(pr4524)
    assert err.path == "comments.yaml" and "NUL" in err.reason


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    root = minimal_bundle(tmp_path / "b")
    (root / "pr.yaml").write_bytes(b"\xef\xbb\xbf" + (root / "pr.yaml").read_bytes())
    assert read_bundle(root).pr.number == 7


BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


@pytest.mark.parametrize("file", ["github.yaml", "comments.yaml", "runs/40543116004/run.yaml"])
def test_billion_laughs_refused_quickly(pr4524: Path, file: str) -> None:
    (pr4524 / file).write_text(BILLION_LAUGHS, encoding="utf-8")
    err = refused(pr4524)
    assert err.path == file and "alias" in err.reason


def test_many_aliases_refused_before_parsing(pr4524: Path) -> None:
    body = "x: &x 1\n" + "".join(f"k{i}: *x\n" for i in range(20_000))
    (pr4524 / "github.yaml").write_text(body, encoding="utf-8")
    err = refused(pr4524)
    assert "alias" in err.reason


@pytest.mark.parametrize(
    "text",
    [
        "teams: &t\n  InferenceX/core: *t\n",
        "teams:\n  InferenceX/core: &l [a, *l]\n",
    ],
)
def test_recursive_alias_refused(pr4524: Path, text: str) -> None:
    (pr4524 / "github.yaml").write_text(text, encoding="utf-8")
    err = refused(pr4524)
    assert err.path == "github.yaml" and "recursive" in err.reason


def test_deep_nesting_refused_quickly(pr4524: Path) -> None:
    depth = 20_000
    (pr4524 / "github.yaml").write_text("teams: " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    err = refused(pr4524)
    assert err.path == "github.yaml" and "nest" in err.reason


def test_moderate_nesting_still_reads(pr4524: Path) -> None:
    replace_text(pr4524 / "pr.yaml", "draft: false", "extra: " + "[" * 50 + "]" * 50 + "\ndraft: false")
    assert read_bundle(pr4524).pr.number == 4524


def test_oversized_file_in_tree(pr4524: Path) -> None:
    big = pr4524 / "tree/head/inferencex-e2e/big.bin"
    with big.open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: the reader must refuse it from its size alone
    err = refused(pr4524)
    assert err.path == "tree/head/inferencex-e2e/big.bin" and "limit" in err.reason


def test_oversized_yaml(pr4524: Path) -> None:
    with (pr4524 / "comments.yaml").open("wb") as fh:
        fh.truncate(MAX_TEXT_BYTES + 1)
    err = refused(pr4524)
    assert err.path == "comments.yaml" and "limit" in err.reason


def test_oversized_artifact(pr4524: Path) -> None:
    path = pr4524 / "runs/40543116004/eval_results_all/results.json"
    with path.open("r+b") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    assert refused(pr4524).path == "runs/40543116004/eval_results_all/results.json"


def test_bundle_file_count_limit(pr4524: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import verifier.core.bundle as bundle_module

    monkeypatch.setattr(bundle_module, "MAX_BUNDLE_FILES", 20)
    assert "limit" in refused(pr4524).reason


def _outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    (out / "inferencex-e2e/docs").mkdir(parents=True)
    (out / "inferencex-e2e/docs/MODELS.md").write_text("secret\n", encoding="utf-8")
    return out


def test_symlink_file_in_tree_refused(pr4524: Path, tmp_path: Path) -> None:
    link = pr4524 / "tree/head/inferencex-e2e/docs/secret.md"
    os.symlink(_outside(tmp_path) / "inferencex-e2e/docs/MODELS.md", link)
    err = refused(pr4524)
    assert err.path == "tree/head/inferencex-e2e/docs/secret.md" and "symbolic link" in err.reason


@pytest.mark.parametrize(
    "rel",
    [
        "tree/base",
        "tree/head/inferencex-e2e/docs",
        "pages",
        "checkpoints",
        "runs/40543116004/eval_results_all",
        "runs",
    ],
)
def test_symlinked_folder_refused(pr4524: Path, tmp_path: Path, rel: str) -> None:
    """A folder that is a link would make outside files look like bundle files."""
    outside = _outside(tmp_path)
    target = pr4524 / rel
    moved = tmp_path / "moved"
    target.rename(moved)
    os.symlink(moved if rel == "runs" else outside, target)
    err = refused(pr4524)
    assert err.path == rel and "symbolic link" in err.reason


def test_symlinked_run_folder_refused(pr4524: Path, tmp_path: Path) -> None:
    (pr4524 / "runs/40543116004").rename(tmp_path / "40543116004")
    os.symlink(tmp_path / "40543116004", pr4524 / "runs/40543116004")
    assert refused(pr4524).path == "runs/40543116004"


@pytest.mark.parametrize("rel", ["pr.yaml", "comments.yaml", "github.yaml"])
def test_symlinked_top_level_file_refused(pr4524: Path, tmp_path: Path, rel: str) -> None:
    real = tmp_path / "real.yaml"
    (pr4524 / rel).rename(real)
    os.symlink(real, pr4524 / rel)
    assert refused(pr4524).path == rel


def test_dangling_symlink_for_optional_file_refused(pr4524: Path) -> None:
    """An optional file that is a broken link is refused, not silently treated as absent."""
    (pr4524 / "checks.yaml").unlink()
    os.symlink(pr4524 / "nowhere.yaml", pr4524 / "checks.yaml")
    assert refused(pr4524).path == "checks.yaml"


def test_yaml_tags_are_never_executed(pr4524: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    replace_text(
        pr4524 / "pr.yaml", "draft: false", f'draft: !!python/object/apply:os.system ["touch {marker}"]'
    )
    err = refused(pr4524)
    assert err.field == "draft" and not marker.exists()


def test_binary_tag_is_not_a_string(pr4524: Path) -> None:
    replace_text(pr4524 / "pr.yaml", "author: ispobock", "author: !!binary aXNwb2JvY2s=")
    assert refused(pr4524).field == "author"


def test_huge_integer_refused(pr4524: Path) -> None:
    replace_text(pr4524 / "pr.yaml", "number: 4524", "number: 4524" + "0" * 5000)
    assert refused(pr4524).path == "pr.yaml"


def test_fifo_is_not_read(pr4524: Path) -> None:
    """A named pipe in the tree is not a regular file: it is skipped, never opened (no hang)."""
    os.mkfifo(pr4524 / "tree/head/inferencex-e2e/pipe")
    b = read_bundle(pr4524)
    assert "inferencex-e2e/pipe" not in b.head.files


# ------------------------------------------------------------------------------------------ yamlio


def test_decode_text_rules() -> None:
    assert decode_text("\ufeffa: 1\n".encode(), "x.yaml") == "a: 1\n"
    with pytest.raises(InputError, match="UTF-8"):
        decode_text(b"\xc3\x28", "x.yaml")
    with pytest.raises(InputError, match="NUL"):
        decode_text(b"a\x00b", "x.yaml")
    with pytest.raises(InputError, match="limit"):
        decode_text(b"x" * 11, "x.yaml", limit=10)


def test_load_yaml_keeps_lines() -> None:
    doc = load_yaml("a: 1\nb:\n  c: [1, 2]\n  d: x\n", "x.yaml")
    assert line_of(doc, "a") == 1 and line_of(doc, "b") == 2 and line_of(doc["b"], "d") == 4
    assert line_of(doc["b"]["c"], 1) == 3


def test_load_yaml_small_anchor_reuse_is_fine() -> None:
    doc = load_yaml("base: &b {x: 1}\nover:\n  <<: *b\n  y: 2\n", "x.yaml")
    assert doc["over"]["x"] == 1 and doc["over"]["y"] == 2


def test_load_yaml_error_names_path() -> None:
    with pytest.raises(InputError) as info:
        load_yaml("a: [\n", "some/file.yaml")
    assert info.value.path == "some/file.yaml" and "line" in info.value.reason
