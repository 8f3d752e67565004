"""The live-GitHub fixtures (stand-in server, loopback only, no real tokens) for ported tests."""

from tests.github.conftest import _loopback_only, _no_real_github, standin  # noqa: F401
