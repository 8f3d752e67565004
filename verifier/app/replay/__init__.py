"""Replay merged InferenceX PRs from a local clone: one verdict per PR, a per-check table, policy flips."""
