"""Rules in force: a rule binds a PR only when the base's checklist template states it."""

from __future__ import annotations

import pytest

from tests.kit import FIXTURES
from tests.launch.helpers import make_ctx
from verifier.core.policy import load_policies
from verifier.core.results import Status
from verifier.documents.in_force import check_gate, part_skipped, rule_in_force, stated_items
from verifier.render.text import render_summary

CHECKLIST = "docs/PR_REVIEW_CHECKLIST.md"
NEWEST = (FIXTURES / "pr4524/tree/base/inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md").read_text(encoding="utf-8")

# The shape of InferenceX's template on 2026-07-10 (after PR 2160): the engine-patch and golden-AL
# items exist; MODELS.md deprecations, append-only, draft precision, integer all-reduce, Dynamo
# metrics, default-branch images and Pareto do not.
JULY_10 = """# PR Review Checklist

## Template
```
As a PR reviewer and CODEOWNER, I have reviewed this and have:
- [ ] Verified that as of the moment of typing this, this is the latest version of [PR_REVIEW_CHECKLIST.md](https://example.invalid/PR_REVIEW_CHECKLIST.md)
- [ ] Verified that the general code quality meets the InferenceX standard and does not make the code quality any worse.
- [ ] Verified that this PR has passed PR validation. Please link to GitHub Action workflow that shows this.
- [ ] Verified that this PR passes evals.  Please link to GitHub Action workflow that shows this.
- [ ] Verified that speculative decoding PRs uses chat templates to align the AL distribution to real world
- [ ] For agentic workloads: verified that speculative-decoding configs (EAGLE / MTP / draft models) run with simulated synthetic acceptance, with the acceptance-length value taken from the committed golden AL curve in [golden_al_distribution/](https://example.invalid/golden) for that model, thinking mode, and draft length. A submission may choose any supported draft length, but it may not substitute a different acceptance target.
- [ ] Verified that the model architecture isn't changed with benchmark hacks like using --hf-overrides to skipping indexer for every x layers on models that don't natively support this. As a general rule, we won't accept optimizations that reduces the number of model architecture FLOPs. Anything that makes that same computation run faster is fair game; FLOPs at lower precisions is fine, given that the config passes private evals.
- [ ] If an company claims that they support vLLM/SGLang as first class LLM inference engines on their hardware, I have verified that the respective vLLM submission made using upstream https://hub.docker.com/u/vllm docker repo, upstream SGLang https://hub.docker.com/u/lmsysorg docker repo. The only exceptions are for new hardware, such as MI455X UALoE72, Vera Rubin NVL72, Rubin NVL8, etc., and for new model architectures where there is an actual reason why vLLM/SGLang does not fundamentally support them yet as supported by vLLM/SGLang community maintainers
- [ ] If an company claims that they support vLLM/SGLang as first class upstream in-tree LLM inference engines on their hardware, I have have verified that the respective vLLM/SGLang submission has been made before additional frameworks (TRT-LLM, ATOM, etc.). The only exceptions are for new hardware and for new model architectures where there is an actual reason why vLLM/SGLang does not fundamentally support them yet.
- [ ] Verified that the single-node recipes are similar to the official [vLLM recipes](https://recipes.vllm.ai/) and/or the[SGLang cookbook](https://docs.sglang.io/cookbook/intro):
  - [ ] If they are not, I have verified that a PR has been opened in [vLLM recipe repo](https://github.com/vllm-project/recipes) and linked it below in the additional detail section:
- [ ] Verified that this PR does not patch the inference engine or serving stack — the pinned image must run as shipped. This covers .patch files / git apply / patch, inline patches embedded in benchmark scripts, in-place edits of site-packages, monkey-patching, overwriting container files, and installing forked/rebuilt engine wheels on top of the pinned image. The only exception is a patch covered by a filled-out waiver at docs/waiver/`<PR_NUMBER>.md`.
- [ ] If any of the above criteria cannot reasonably be satisfied, I have provided additional reasoning below.

### Additional detail section:
- insert any additional info here
```
"""


def _ctx(base_template: str | None, head_template: str | None = None):  # type: ignore[no-untyped-def]
    base = {} if base_template is None else {CHECKLIST: base_template.encode()}
    head = base if head_template is None else {CHECKLIST: head_template.encode()}
    return make_ctx(head, base)


def _in_force(ctx) -> set[str]:  # type: ignore[no-untyped-def]
    return {r for r in load_policies()["rules"]["rules"] if rule_in_force(ctx, r).in_force}


def test_newest_template_states_every_rule() -> None:
    ctx = _ctx(NEWEST.replace("inferencex-e2e/", ""))
    assert stated_items(ctx).readable
    assert _in_force(ctx) == set(load_policies()["rules"]["rules"])


def test_july_template_states_only_its_rules() -> None:
    ctx = _ctx(JULY_10)
    assert _in_force(ctx) == {"c03.upstream-recipes", "c06.upstream-images", "c06.engine-order",
                              "c08.architecture", "c09.chat-template", "c10.engine-patches", "c11.golden-al"}
    for check in (7, 12, 13, 14, 17):
        gate = check_gate(ctx, check)
        assert gate is not None and gate.status is Status.NA
        assert gate.findings[0].message_id == "rule-not-in-force"
        assert gate.findings[0].params["file"] == CHECKLIST
    for check in (0, 1, 2, 4, 5, 6, 8, 9, 10, 11, 15, 16, 18):
        assert check_gate(ctx, check) is None
    note = part_skipped(ctx, "c08.integer-allreduce")
    assert note is not None and note.message_id == "rule-part-not-in-force"
    assert part_skipped(ctx, "c08.architecture") is None


def test_the_gate_renders_in_both_languages() -> None:
    gate = check_gate(_ctx(JULY_10), 13)
    assert gate is not None
    en, zh = render_summary(13, gate, "en"), render_summary(13, gate, "zh")
    assert "c13.draft-precision" in en and "not yet in force" in en and "docs/PR_REVIEW_CHECKLIST.md" in en
    assert "c13.draft-precision" in zh and "尚未生效" in zh


def test_unfenced_first_template_is_read() -> None:
    """Until 2026-07-03 the `## Template` section was not fenced; its items are the template."""
    unfenced = JULY_10.replace("## Template\n```\n", "## Template\n\n").replace("here\n```\n", "here\n\n## Example\n")
    ctx = _ctx(unfenced)
    assert stated_items(ctx).readable
    assert "c10.engine-patches" in _in_force(ctx) and "c07.deprecated-models" not in _in_force(ctx)


@pytest.mark.parametrize("template", [None, "# PR review checklist\n\n- [ ] Verified that ...\n",
                                      "## Template\n```\nno items here\n```\n", "\udcff"])
def test_unreadable_template_fails_closed(template: str | None) -> None:
    ctx = _ctx(template if template != "\udcff" else None)
    if template == "\udcff":  # not UTF-8
        ctx = make_ctx({CHECKLIST: b"## Template\n\xff\xfe\n"}, {CHECKLIST: b"## Template\n\xff\xfe\n"})
    assert not stated_items(ctx).readable
    assert _in_force(ctx) == set(load_policies()["rules"]["rules"])
    assert all(check_gate(ctx, c) is None for c in range(19))


def test_a_pr_cannot_edit_the_template_into_or_out_of_force() -> None:
    adds = _ctx(JULY_10, NEWEST.replace("inferencex-e2e/", ""))
    assert "c13.draft-precision" not in _in_force(adds)
    gate = check_gate(adds, 13)
    assert gate is not None and [f.message_id for f in gate.findings][-1] == "rule-changed-by-pr"
    removes = _ctx(NEWEST.replace("inferencex-e2e/", ""), JULY_10)
    assert "c13.draft-precision" in _in_force(removes)


def test_a_rule_inside_a_broader_item_needs_its_words() -> None:
    """A rule with `mentions` is stated only when its item contains those words."""
    from verifier.core.context import CheckContext

    policies = dict(load_policies())
    rules = dict(policies["rules"])
    rules["rules"] = {**rules["rules"], "c13.named-env": {"item": "draft-precision",
                                                            "mentions": ["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"]}}
    policies["rules"] = rules
    rows = policies["checks"]["checks"]  # the rule is Check 13's: its registry row lists it
    policies["checks"] = {"checks": {**rows, "13": {**rows["13"], "rules": [*rows["13"]["rules"], "c13.named-env"]}}}
    newest = NEWEST.replace("inferencex-e2e/", "")
    without = newest.replace(" Explicitly verified that `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE` is not enabled in the "
                             "effective recipe, including inherited settings; enabling it is prohibited going forward, "
                             "and historical runs do not grant an exception.", "")
    assert without != newest
    for text, expected in ((newest, True), (without, False)):
        base = make_ctx({CHECKLIST: text.encode()}, {CHECKLIST: text.encode()})
        ctx = CheckContext(bundle=base.bundle, policies=policies)
        assert rule_in_force(ctx, "c13.named-env").in_force is expected
        assert rule_in_force(ctx, "c13.draft-precision").in_force


def test_the_runner_does_not_run_a_check_whose_rules_are_not_in_force() -> None:
    from checks import c12_append_only, c13_draft_precision, judge

    ctx = _ctx(JULY_10)
    report = judge(ctx.bundle, load_policies(), [c12_append_only, c13_draft_precision])
    assert [(r.id, r.status) for r in report.rows] == [(12, Status.NA), (13, Status.NA)]
    assert report.rows[1].result.findings[0].params["rule"] == "c13.draft-precision"
