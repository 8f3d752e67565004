"""The live-GitHub stand-in's fixtures (tests/github/conftest.py), for the live recorder's test here."""

from __future__ import annotations

from tests.github.conftest import _loopback_only, _no_real_github, standin

__all__ = ["_loopback_only", "_no_real_github", "standin"]
