"""Bundles from a local git clone: the real diff and the files the checks read, never whole trees.

`record_revisions(repo, base, head)` (verifier.gitrecord.record) returns an in-memory Bundle;
`verify-pr record-git` writes it with verifier.github.record.write_bundle. Only git's own plumbing
runs (verifier.gitrecord.git); nothing from the repository is executed.
"""
