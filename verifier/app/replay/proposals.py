"""The proposed rules of a policy replay: our policies/*.yaml from a folder, or the repository's
own policy documents (MODELS.md, the checklist, CODEOWNERS, thresholds) at another revision.

Repository documents are substituted into each PR's base tree (the trusted side every check reads
rules from), and into the head tree where the PR leaves the document unchanged, so the PR's own
diff stays what it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from verifier.core.errors import UsageError
from verifier.core.layout import policy_path
from verifier.core.model import Bundle, Tree
from verifier.core.policy import load_policies, load_policy_file
from verifier.core.resources import POLICY_DIR
from verifier.record.git.repo import GitRepo
from verifier.record.github.selection import detect_layout

# logical names (verifier.core.layout) of the repository documents a policy replay may propose
REPO_DOCUMENTS = ("models_md", "checklist", "checklist_zh", "codeowners", "thresholds")


def load_proposed_policies(directory: Path) -> Mapping[str, Mapping[str, Any]]:
    """policies/*.yaml from a folder, validated by our schemas; topics it lacks stay as they are."""
    if not directory.is_dir():
        raise UsageError(f"usage error: --policies {directory} is not a directory")
    topics = dict(load_policies())
    found = sorted(directory.glob("*.yaml"))
    if not found:
        raise UsageError(f"usage error: --policies {directory} holds no <topic>.yaml file")
    for path in found:
        topics[path.stem] = load_policy_file(path, schema_dir=POLICY_DIR / "schema")
    return MappingProxyType(topics)


@dataclass(frozen=True)
class RepoDocuments:
    """Repository policy documents at one revision: logical name -> bytes (absent when the revision lacks it)."""

    rev: str
    files: dict[str, bytes] = field(default_factory=dict)

    def apply(self, bundle: Bundle) -> Bundle:
        """The bundle with these documents in place of the base's (and the head's, where the PR leaves them)."""
        layout = bundle.layout
        base, head = dict(bundle.base.files), dict(bundle.head.files)
        changed = {f.path for f in bundle.pr.files} | {f.previous_path for f in bundle.pr.files if f.previous_path}
        for name, data in self.files.items():
            path = policy_path(name, layout)
            base[path] = data
            if path not in changed:
                head[path] = data
        return bundle.model_copy(update={"base": Tree(sha=bundle.base.sha, files=base, listing=bundle.base.listing),
                                         "head": Tree(sha=bundle.head.sha, files=head, listing=bundle.head.listing)})


def repo_documents(repo: GitRepo, rev: str) -> RepoDocuments:
    """The policy documents of the repository at a revision."""
    sha = repo.resolve(rev)
    listing = repo.ls_tree(sha)
    layout = detect_layout(listing)
    names = {name: policy_path(name, layout) for name in REPO_DOCUMENTS}
    blobs = repo.blobs([listing[p].oid for p in names.values() if p in listing])
    files = {name: blobs[listing[p].oid] for name, p in names.items() if p in listing and listing[p].oid in blobs}
    if not files:
        raise UsageError(f"usage error: {rev} holds none of the policy documents ({', '.join(names.values())})")
    return RepoDocuments(rev=rev, files=files)
