"""infx-verifier: deterministic re-verification of CODEOWNER sign-offs on InferenceX pull requests."""

__version__ = "0.2.0"
