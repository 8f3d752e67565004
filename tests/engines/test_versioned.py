"""verifier.engines.versioned: run-time values, and reading a command line across candidate versions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from verifier.engines import engine_for
from verifier.engines.argspec.parsing import EngineArgError, OptionUse, UnknownEngineVersion
from verifier.engines.sglang import resolve_sglang
from verifier.engines.sglang.answers import DRAFT_PRECISION_DESTS, same_spec_groups
from verifier.engines.versioned import (
    VersionDependent,
    is_runtime,
    resolve_across,
    split_runtime,
    version_order,
)

RECV = "$( [[ $CONC -gt 4 ]] && echo 30 || echo 10 )"
EAGLE = ("--model-path", "/m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3")


def test_runtime_tokens() -> None:
    assert is_runtime(RECV) and is_runtime("${X:-1}") and is_runtime("$TP") and is_runtime("`date`")
    assert not is_runtime("30") and not is_runtime('{"a": 1}') and not is_runtime("$")
    argv, found = split_runtime(["--a", "1", "--b", RECV, "--c=$X", "--d", "--e", "2"])
    assert argv == ["--a", "1", "--d", "--e", "2"]
    assert found == [("--b", RECV), ("--c", "$X")]


def test_pr2058_runtime_value_no_check_needs() -> None:
    """PR 2058: a shell-computed --scheduler-recv-interval no longer makes the command unverifiable."""
    argv = (*EAGLE, "--scheduler-recv-interval", RECV)
    with pytest.raises(EngineArgError):
        resolve_sglang(argv, version="0.5.14")
    resolved = resolve_sglang(argv, version="0.5.14", runtime=True)
    assert resolved.runtime == {"scheduler_recv_interval": RECV}
    assert resolved.namespace["speculative_algorithm"] == "EAGLE"
    assert "scheduler_recv_interval" not in resolved.given


def test_runtime_value_of_a_needed_dest_is_reported() -> None:
    resolved = engine_for("sglang").resolve((*EAGLE, "--kv-cache-dtype", "$KV_DTYPE"), "lmsysorg/sglang:v0.5.23",
                                            needed=DRAFT_PRECISION_DESTS)
    assert resolved.runtime == {"kv_cache_dtype": "$KV_DTYPE"}


def test_unknown_image_is_read_with_every_spec_that_accepts_it() -> None:
    resolved = engine_for("sglang").resolve(EAGLE, "lmsysorg/sglang:nightly-dev-cu13-20260610-f332e526",
                                            needed=DRAFT_PRECISION_DESTS)
    assert len(resolved.versions) > 10 and resolved.versions == tuple(version_order(resolved.versions))
    assert resolved.version == resolved.versions[-1]
    assert resolved.namespace["speculative_algorithm"] == "EAGLE"
    # a flag only newer releases know: the older specs reject it and drop out
    newer = engine_for("sglang").resolve((*EAGLE, "--speculative-draft-kv-cache-dtype", "bf16"), "rocm/sgl-dev:x",
                                         needed=DRAFT_PRECISION_DESTS)
    assert "0.5.16" not in newer.versions and "0.5.23" in newer.versions


def test_a_known_release_without_a_spec_stays_unknown() -> None:
    with pytest.raises(UnknownEngineVersion):
        engine_for("sglang").resolve(EAGLE, "lmsysorg/sglang:v0.5.99-cu130", needed=DRAFT_PRECISION_DESTS)


def test_every_version_rejecting_raises_the_newest_error() -> None:
    with pytest.raises(EngineArgError) as info:
        engine_for("sglang").resolve((*EAGLE, "--no-such-flag", "1"), "custom/sglang:x", needed=DRAFT_PRECISION_DESTS)
    assert "--no-such-flag" in info.value.message


@dataclass(frozen=True)
class _Fake:
    namespace: dict[str, Any]
    given: frozenset[str] = frozenset()
    runtime: dict[str, str] = field(default_factory=dict)
    versions: tuple[str, ...] = ()
    uses: tuple[OptionUse, ...] = ()

    def use_for(self, dest: str) -> OptionUse | None:
        return None

    def is_given(self, dest: str) -> bool:
        return dest in self.given


def test_disagreeing_versions_raise_version_dependent() -> None:
    readings = {"1": _Fake({"kv": "auto"}), "2": _Fake({"kv": "fp8"}), "3": EngineArgError("unrecognized arguments: --x")}

    def one(version: str) -> Any:
        found = readings[version]
        if isinstance(found, Exception):
            raise found
        return found

    with pytest.raises(VersionDependent) as info:
        resolve_across(one, ["1", "2", "3"], ["kv"], image="img", engine="SGLang")
    assert info.value.dests == ("kv",) and info.value.versions == ("1", "2")
    agreed = resolve_across(one, ["1", "3"], ["kv"], image="img", engine="SGLang")
    assert agreed.versions == ("1",)
    # identical specs are parsed once
    calls: list[str] = []

    def counted(version: str) -> Any:
        calls.append(version)
        return _Fake({"kv": "auto"})

    out = resolve_across(counted, ["1", "1.post1", "2"], ["kv"], image="img", engine="SGLang",
                         groups={"1.post1": "1"})
    assert calls == ["1", "2"] and out.versions == ("1", "1.post1", "2")


def test_post_releases_share_their_base_spec() -> None:
    groups = same_spec_groups()
    assert groups["0.5.8.post1"] == "0.5.8" and groups["0.5.23"] == "0.5.23"


def test_only_shell_launched_commands_have_run_time_values() -> None:
    from verifier.engines.versioned import shell_launched

    class L:
        def __init__(self, path: str) -> None:
            self.recipe_path = path

    assert shell_launched(L("benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_b200_mtp.sh"))
    assert not shell_launched(L("benchmarks/single_node/srt-slurm-recipes/x/agentic.yaml"))
    with pytest.raises(EngineArgError, match="invalid choice"):  # srtctl passes `$KV` verbatim
        engine_for("sglang").resolve((*EAGLE, "--kv-cache-dtype", "$KV"), "lmsysorg/sglang:v0.5.23",
                                     needed=DRAFT_PRECISION_DESTS, runtime=False)
