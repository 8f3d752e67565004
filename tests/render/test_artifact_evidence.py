"""A file inside a CI artifact is evidence of the run (run, artifact, path, line), never a repository blob."""

from __future__ import annotations

from tests.kit import CASES
from verifier.core.bundle import read_bundle
from verifier.core.results import RunEvidence
from verifier.render.evidence import evidence_markdown, evidence_url

BUNDLE = read_bundle(CASES / "pr4524-approved")
RUN = 40739166138


def _item() -> RunEvidence:
    return RunEvidence(run_id=RUN, url=f"https://github.com/{BUNDLE.pr.repo}/actions/runs/{RUN}",
                       artifact="bmk_agentic_tp4_c1", path="server.log", line=12, text="accept len: 3.1")


def test_artifact_file_links_to_its_run() -> None:
    url = evidence_url(_item(), BUNDLE)
    assert url == f"https://github.com/{BUNDLE.pr.repo}/actions/runs/{RUN}"
    assert "/blob/" not in str(url)


def test_artifact_file_label_names_run_artifact_path_and_line() -> None:
    text = evidence_markdown(_item(), BUNDLE)
    assert f"run {RUN}" in text and "bmk_agentic_tp4_c1/server.log:12" in text and "accept len: 3.1" in text


def test_json_carries_the_artifact_path_and_line() -> None:
    from verifier.render.json import _evidence  # the one evidence serializer of the JSON output

    class _Report:
        bundle = BUNDLE

    out = _evidence(_item(), _Report())  # type: ignore[arg-type]
    assert out["kind"] == "run" and out["artifact"] == "bmk_agentic_tp4_c1"
    assert (out["path"], out["line"]) == ("server.log", 12)


def test_a_file_the_commit_does_not_have_links_the_nearest_folder_it_has() -> None:
    """A row may name a file the commit lacks (the runner script a runner label would need): its blob
    link would not exist, so the link is the deepest folder the commit's recorded listing has."""
    from verifier.core.results import FileEvidence

    listed = BUNDLE.model_copy(update={"base": BUNDLE.base.model_copy(update={
        "listing": frozenset({"runners/launch_h200-dgxc-slurm.sh", "configs/runners.yaml"})})})
    base = f"https://github.com/{BUNDLE.pr.repo}/tree/{BUNDLE.pr.base_sha}"
    missing = FileEvidence(path="runners/launch_h200-multinode-slurm.sh", line=3, side="base")
    assert evidence_url(missing, listed) == f"{base}/runners"
    assert evidence_url(FileEvidence(path="nowhere/deep/x.sh", side="base"), listed) == base
    held = FileEvidence(path="runners/launch_h200-dgxc-slurm.sh", line=3, side="base")
    assert evidence_url(held, listed) == \
        f"https://github.com/{BUNDLE.pr.repo}/blob/{BUNDLE.pr.base_sha}/runners/launch_h200-dgxc-slurm.sh#L3"
    # without a listing the commit's files are not known: the blob link stands
    assert "/blob/" in str(evidence_url(missing, BUNDLE))
