"""Live GitHub: collect a PR into a bundle with PyGithub, write bundles, and the GitHub Action.

* `verifier.github.collect.collect_bundle(repo, number, ...) -> (Bundle, CollectStats)`
* `verifier.github.record.write_bundle(bundle, directory)`
* `verifier.github.action.main(argv) -> int` (`verify-pr action`)

Nothing is imported here, so judging an offline bundle never loads PyGithub.
"""
