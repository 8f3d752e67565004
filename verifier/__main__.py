"""`python -m verifier ...` is `verify-pr ...` (verifier.app.cli)."""

from verifier.app.cli import console

console()
