"""Live GitHub: collect a PR into a bundle with PyGithub, write bundles, and the GitHub Action.

* `verifier.record.github.collect.collect_bundle(repo, number, ...) -> (Bundle, CollectStats)`
* `verifier.record.github.record.write_bundle(bundle, directory)`
* `verifier.app.action.main(argv) -> int` (`verify-pr action`)

Nothing is imported here, so judging an offline bundle never loads PyGithub.
"""
