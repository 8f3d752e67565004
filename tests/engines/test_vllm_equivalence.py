"""The committed vLLM arg specs parse exactly like vLLM's real parser.

Two proofs:

* **Recorded, every committed version.** tests/engines/data/vllm-recorded/vllm-<version>.json holds
  what the real parser of that version (installed in a throwaway venv, `verify-pr engine-spec dump
  vllm --record`) made of every command line of the corpus (tests/engines/vllm_corpus.py: the
  InferenceX vLLM launches of the replayed PRs and hand-written edge cases). The spec parser must
  read each the same way (tests/engines/vllm_compare.py says what "the same" tolerates).
* **Live, one version.** With the real vLLM installed by `.ci/install-vllm.sh .venv-vllm`, the
  dumper runs in that venv: its spec must equal the committed one byte for byte, and its fresh
  outcomes must equal the recorded ones. Skipped when the venv is missing, except under CI=true.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.engines.vllm_compare import differences
from tests.engines.vllm_corpus import RECORDED, corpus
from verifier.engines.vllm import available_versions
from verifier.engines.vllm.argspec import spec_path

PROJECT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("INFX_VLLM_VENV", PROJECT / ".venv-vllm"))
VERSIONS = available_versions()


def _recorded(version: str) -> dict:
    return json.loads((RECORDED / f"vllm-{version}.json").read_text(encoding="utf-8"))


def test_every_committed_version_has_recorded_outcomes_of_the_current_corpus() -> None:
    assert VERSIONS, "no vLLM arg spec is committed"
    want = [(item["label"], list(item["argv"])) for item in corpus()]
    for version in VERSIONS:
        data = _recorded(version)
        assert data["vllm_version"] == version
        assert [(o["label"], o["argv"]) for o in data["outcomes"]] == want, f"re-record {version}"


@pytest.mark.parametrize("version", VERSIONS)
def test_spec_parser_matches_the_recorded_real_parser(version: str) -> None:
    bad = {}
    for item in _recorded(version)["outcomes"]:
        real = {k: item[k] for k in ("ok", "error") if k in item}
        found = differences(item["argv"], version, real)
        if found:
            bad[item["label"]] = found[:3]
    assert not bad, bad


def _live_version() -> str:
    marker = VENV / "infx-vllm-version.txt"
    reason = None
    if not (VENV / "bin" / "python").is_file() or not marker.is_file():
        reason = f"no real vLLM venv at {VENV} (bash .ci/install-vllm.sh .venv-vllm)"
        why = VENV / "infx-vllm-unavailable.txt"
        if why.is_file():
            reason += f": {why.read_text(encoding='utf-8', errors='replace').strip()[:300]}"
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI must install it")
        pytest.skip(reason)
    return marker.read_text(encoding="utf-8").strip()


def test_live_real_parser_equals_committed_spec_and_recordings(tmp_path: Path) -> None:
    version = _live_version()
    assert version in VERSIONS, f"the installed vLLM {version} has no committed spec"
    corpus_file = tmp_path / "corpus.json"
    corpus_file.write_text(json.dumps(corpus()), encoding="utf-8")
    spec_out, rec_out = tmp_path / "spec.json", tmp_path / "recorded.json"
    env = {**os.environ, "PYTHONHASHSEED": "0", "VLLM_LOGGING_LEVEL": "ERROR"}
    done = subprocess.run([str(VENV / "bin" / "python"), str(PROJECT / "verifier" / "engines" / "vllm" / "dump.py"),
                           "--out", str(spec_out), "--record", str(corpus_file), "--record-out", str(rec_out)],
                          capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert spec_out.read_text(encoding="utf-8") == spec_path(version).read_text(encoding="utf-8")
    fresh = json.loads(rec_out.read_text(encoding="utf-8"))
    assert fresh["outcomes"] == _recorded(version)["outcomes"]
