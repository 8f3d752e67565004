"""Where InferenceX keeps its policy files, in the old (root) and new (inferencex-e2e/) layouts.

InferenceX moved its tree under inferencex-e2e/ in autumn 2026. PRs from before the move must
replay, so every file a check reads is named here once by a logical name, and resolved against
the layout detected from the PR's base tree.
"""

from __future__ import annotations

from typing import Literal

Layout = Literal["old", "new"]

# logical name -> (old layout path, new layout path)
POLICY_PATHS: dict[str, tuple[str, str]] = {
    "codeowners": (".github/CODEOWNERS", ".github/CODEOWNERS"),
    "checklist": ("docs/PR_REVIEW_CHECKLIST.md", "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md"),
    "checklist_zh": ("docs/PR_REVIEW_CHECKLIST_zh.md", "inferencex-e2e/docs/PR_REVIEW_CHECKLIST_zh.md"),
    "models_md": ("MODELS.md", "inferencex-e2e/docs/MODELS.md"),
    "golden_al_dir": ("golden_al_distribution/", "inferencex-e2e/infx/golden_al_distribution/"),
    "thresholds": ("utils/evals/thresholds.yaml", "inferencex-e2e/infx/evals/thresholds.yaml"),
    "changelog": ("perf-changelog.yaml", "inferencex-e2e/perf-changelog.yaml"),
    # the PR gate that validates the changelog change (run-sweep.yml runs it on every PR)
    "changelog_gate": ("utils/validate_perf_changelog.py", "inferencex-e2e/utils/validate_perf_changelog.py"),
    # the agents' guide, whose "non-negotiable benchmark invariants" state rules (verifier.documents.statements)
    "agents": ("AGENTS.md", "AGENTS.md"),
    "nvidia_master": ("configs/nvidia-master.yaml", "inferencex-e2e/configs/nvidia-master.yaml"),
    "amd_master": ("configs/amd-master.yaml", "inferencex-e2e/configs/amd-master.yaml"),
    "runners": ("configs/runners.yaml", "inferencex-e2e/configs/runners.yaml"),
    "waiver_dir": ("docs/waiver/", "inferencex-e2e/docs/waiver/"),
    "srt_shared_dir": ("configs/srt-recipes/", "inferencex-e2e/configs/srt-recipes/"),
    "overview_dir": ("docs/overview/", "inferencex-e2e/docs/overview/"),
    "benchmarks_dir": ("benchmarks/", "inferencex-e2e/benchmarks/"),
    "root": ("", "inferencex-e2e/"),
    # InferenceX's overrides of our policy data, one `<topic>.yaml` each, read from the base tree only
    # (verifier.documents.policy_overrides; the topics and keys allowed: policies/overrides.yaml)
    "policy_overrides_dir": (".github/infx-verifier/", ".github/infx-verifier/"),
}


# Where an old-layout file lived before, oldest last: the master configs and runners.yaml sat under
# .github/configs/ until InferenceX PR 1992 moved them to configs/ (2026-07-02). A tree that lacks
# the current path is read at a former one (the base of that PR, and anything older).
FORMER_PATHS: dict[str, tuple[str, ...]] = {
    "nvidia_master": (".github/configs/nvidia-master.yaml",),
    "amd_master": (".github/configs/amd-master.yaml",),
    "runners": (".github/configs/runners.yaml",),
}


def policy_path(name: str, layout: Layout) -> str:
    """The repository path of a logical policy file in the given layout."""
    old, new = POLICY_PATHS[name]
    return new if layout == "new" else old


def repo_relative(path: str, layout: Layout) -> str:
    """Resolve a path written relative to the InferenceX root (as master configs write recipe paths)."""
    if layout == "new" and not path.startswith(("inferencex-e2e/", ".github/")):
        return "inferencex-e2e/" + path.lstrip("/")
    return path.lstrip("/")


def short_path(path: str) -> str:
    """The layout-neutral form of a repository path (the inferencex-e2e/ prefix removed)."""
    return path.removeprefix("inferencex-e2e/")
