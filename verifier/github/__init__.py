"""Live GitHub: collect a PR into a bundle with PyGithub, write bundles, and the GitHub Action.

* `verifier.github.collect.collect_bundle(repo, number, ...) -> (Bundle, CollectStats)`
* `verifier.github.record.write_bundle(bundle, directory)`
* `verifier.github.action.main(argv) -> int` (`verify-pr action`)

Imports are lazy so that judging an offline bundle never loads PyGithub.
"""

from __future__ import annotations

from typing import Any

__all__ = ["collect_bundle", "write_bundle", "CollectStats"]


def __getattr__(name: str) -> Any:
    if name == "collect_bundle":
        from verifier.github.collect import collect_bundle

        return collect_bundle
    if name == "write_bundle":
        from verifier.github.record import write_bundle

        return write_bundle
    if name == "CollectStats":
        from verifier.github.client import CollectStats

        return CollectStats
    raise AttributeError(name)
