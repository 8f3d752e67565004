"""The scope rule (CONTRIBUTING.md / signoff_scope, FORMATS §1): when a PR needs a CODEOWNER sign-off at all."""

from __future__ import annotations

import pytest

from verifier.record.github.scope import decide_scope

CORE = ("@SemiAnalysisAI/core", "@InferenceX/core")
CODEOWNERS = """\
* @InferenceX/core
/inferencex-e2e/configs/nvidia-master.yaml @InferenceX/core @nvpohanh
/inferencex-e2e/configs/amd-master.yaml @boss
/inferencex-e2e/configs/runners.yaml @half-admin
/inferencex-e2e/docs/ @InferenceX/docs-team
/inferencex-e2e/utils/ ops@example.com
/inferencex-e2e/experimental/
/inferencex-e2e/tools/ @ghost
"""
ADMINS = {"boss": True, "nvpohanh": False, "half-admin": False}  # half-admin: permission admin, role maintain


def _is_admin(login: str) -> bool | None:
    return ADMINS.get(login)  # None: the permission could not be read


@pytest.mark.parametrize(
    ("paths", "needed"),
    [
        (["inferencex-e2e/perf-changelog.yaml"], False),                          # catch-all core only
        (["inferencex-e2e/configs/amd-master.yaml"], False),                      # an individual admin
        (["inferencex-e2e/configs/nvidia-master.yaml"], True),                    # core does not exempt another owner
        (["inferencex-e2e/configs/runners.yaml"], True),                          # admin permission without admin role
        (["inferencex-e2e/docs/MODELS.md"], True),                                # another team
        (["inferencex-e2e/utils/x.py"], True),                                    # an e-mail owner
        (["inferencex-e2e/experimental/a.py"], False),                            # an owner-less line wins: unowned
        (["inferencex-e2e/tools/a.py"], True),                                    # permission unreadable: no exemption
        (["inferencex-e2e/configs/amd-master.yaml", "inferencex-e2e/configs/nvidia-master.yaml"], True),
    ],
    ids=["core", "admin", "core-plus-writer", "admin-permission-maintain-role", "team", "email", "ownerless",
         "unreadable", "mixed"],
)
def test_scope_cases(paths: list[str], needed: bool) -> None:
    decision = decide_scope(CODEOWNERS, paths, _is_admin, CORE)
    assert decision.needed is needed, decision.reason


def test_a_rename_is_judged_on_both_paths() -> None:
    # the new path is core-owned, the old one is not: both count
    paths = ["inferencex-e2e/perf-changelog-new.yaml", "inferencex-e2e/configs/nvidia-master.yaml"]
    decision = decide_scope(CODEOWNERS, paths, _is_admin, CORE)
    assert decision.needed and "inferencex-e2e/configs/nvidia-master.yaml" in decision.qualifying


def test_missing_data_never_exempts() -> None:
    assert decide_scope(None, ["inferencex-e2e/perf-changelog.yaml"], _is_admin, CORE).needed
    assert decide_scope(CODEOWNERS, ["inferencex-e2e/perf-changelog.yaml"], _is_admin, CORE, complete=False).needed


def test_the_reason_names_the_path_and_owner() -> None:
    decision = decide_scope(CODEOWNERS, ["inferencex-e2e/docs/MODELS.md"], _is_admin, CORE)
    assert decision.reason == "inferencex-e2e/docs/MODELS.md is owned by @InferenceX/docs-team"
