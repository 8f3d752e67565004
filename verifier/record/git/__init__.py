"""Bundles from a local git clone: the real diff and the files the checks read, never whole trees.

`record_revisions(repo, base, head)` (verifier.record.git.record) returns an in-memory Bundle;
`verify-pr record-git` writes it with verifier.record.github.record.write_bundle. Only git's own plumbing
runs (verifier.record.git.repo); nothing from the repository is executed.
"""
