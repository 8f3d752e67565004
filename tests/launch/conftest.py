"""Fixtures shared by the launch tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from verifier.shell import trace


@pytest.fixture
def readings(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The scripts `Reader.run` read, in order."""
    seen: list[str] = []
    run = trace.Reader.run

    def counted(self, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(path)
        return run(self, path, *args, **kwargs)

    monkeypatch.setattr(trace.Reader, "run", counted)
    yield seen
