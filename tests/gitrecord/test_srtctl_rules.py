"""Draft-precision rules on srtctl recipes (`backend.sglang_config.<role>`) as `verify-pr local` runs them."""

from __future__ import annotations

from verifier.app.hook import hook_policy
from verifier.app.local.srtctl import srtctl_issues

RECIPE = """base:
  name: demo
  backend:
    type: sglang
    sglang_config:
      prefill:
        kv-cache-dtype: fp8_e4m3
        speculative-algorithm: EAGLE
        speculative-num-steps: 3
        speculative-draft-kv-cache-dtype: fp8_e5m2
      decode:
        kv-cache-dtype: fp8_e4m3
        speculative-algorithm: EAGLE
        speculative-num-steps: 3
"""


def test_draft_only_kv_dtype_named_by_line_and_role() -> None:
    found = srtctl_issues("r.yaml", RECIPE, hook_policy())
    assert [(i.kind, i.line, role) for i, role in found] == [("draft-kv-below-target", 10, "prefill")]


def test_same_dtype_other_backends_and_garbage_are_clean() -> None:
    policy = hook_policy()
    assert srtctl_issues("r.yaml", RECIPE.replace("fp8_e5m2", "fp8_e4m3"), policy) == []
    assert srtctl_issues("r.yaml", RECIPE.replace("type: sglang", "type: trtllm"), policy) == []
    assert srtctl_issues("r.yaml", "base: [unclosed", policy) == []
    assert srtctl_issues("r.yaml", "- a\n- b\n", policy) == []
