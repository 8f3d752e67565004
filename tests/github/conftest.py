"""Fixtures for the live-GitHub tests: a stand-in server per test and fast retries."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.github.standin import TOKEN, StandIn
from tests.kit import CASES
from verifier.record.github.client import RetryPolicy

FAST = RetryPolicy(attempts=5, base_delay=0.001, max_delay=0.01, secondary_delay=0.001)
REPO = "SemiAnalysisAI/InferenceX"


@pytest.fixture
def fast_retry() -> RetryPolicy:
    return FAST


@pytest.fixture
def standin() -> Iterator[Callable[..., StandIn]]:
    """Factory: standin(bundle_dir=CASES/'pr4524', **options) -> a started StandIn (stopped after the test)."""
    started: list[StandIn] = []

    def make(bundle: Path | Any = CASES / "pr4524", **options: Any) -> StandIn:
        server = StandIn(bundle, **options)
        server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture(autouse=True)
def _no_real_github(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never talk to real GitHub or Hugging Face, whatever the environment holds."""
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "HF_ENDPOINT", "HF_TOKEN", "GITHUB_STEP_SUMMARY",
                 "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY"):
        monkeypatch.delenv(name, raising=False)


def collect(server: StandIn, number: int = 4524, **kwargs: Any) -> Any:
    """collect_bundle against a stand-in, with tiny backoff."""
    from verifier.record.github.collect import collect_bundle

    kwargs.setdefault("token", TOKEN)
    kwargs.setdefault("retry", FAST)
    return collect_bundle(REPO, number, api_url=server.api_url, docs_proxy=server.docs_proxy,
                          hf_endpoint=server.hf_endpoint, **kwargs)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every HTTP request a test makes must go to this machine (the stand-in)."""
    import urllib.parse

    from verifier.record.github import client as client_module

    def check(url: str) -> None:
        host = urllib.parse.urlsplit(url).hostname
        assert host in ("127.0.0.1", "localhost"), f"test tried to reach {url}"

    original_perform = client_module.Transport.perform
    original_stream = client_module.Client._stream

    def perform(self: Any, verb: str, url: str, call: Any) -> Any:
        check(url)
        return original_perform(self, verb, url, call)

    def stream(self: Any, url: str, *args: Any, **kwargs: Any) -> Any:
        check(url)
        return original_stream(self, url, *args, **kwargs)

    monkeypatch.setattr(client_module.Transport, "perform", perform)
    monkeypatch.setattr(client_module.Client, "_stream", stream)
