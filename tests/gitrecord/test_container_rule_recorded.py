"""AGENTS.md's container rule as a user meets it: `verify-pr record-git` records the base's AGENTS.md
with the policy files, and `verify-pr bundle` holds a recipe's `model.container` to the row's image
only when that copy states the rule (verifier.documents.statements), both through the console script."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrecord.gitkit import CONSOLE, recorded_verdict
from tests.launch.helpers import LAUNCH
from tests.launch.test_complete_recipe import AGENTS, BUMPED, MASTER, RECIPE, RECIPE_TEXT

ROW_IMAGE = "lmsysorg/sglang:v0.5.9-cu130"

pytestmark = pytest.mark.skipif(not CONSOLE.exists(), reason="needs the installed console script")


@pytest.mark.parametrize(("agents", "binds"), [(AGENTS, True), (AGENTS.replace("must equal", "follows"), False)])
def test_an_image_bump_that_leaves_the_recipes_container_is_judged_by_the_base_agents_md(
        tmp_path: Path, agents: str, binds: bool) -> None:
    base = {"configs/nvidia-master.yaml": MASTER.encode(), "AGENTS.md": agents.encode(),
            "configs/runners.yaml": (LAUNCH / "old-runners.yaml").read_bytes(),
            RECIPE: RECIPE_TEXT.replace("lmsysorg/sglang:v0.5.9-cu130-own", ROW_IMAGE).encode()}
    head = base | {"configs/nvidia-master.yaml": MASTER.replace(ROW_IMAGE, BUMPED).encode()}
    out, rows = recorded_verdict(tmp_path, base, head, "Bump the SGLang image (#4524)")
    assert (out / "tree" / "base" / "AGENTS.md").read_text() == agents  # recorded with the policy files
    row = rows[18]
    en, zh = row["summary"]["en"], row["summary"]["zh"]
    assert "model.container" in zh
    assert ("was not in force for this PR" in en) is not binds
    if binds:
        assert row["status"] == "FAIL"
        assert f"runs the container `{ROW_IMAGE}` (`disagg-1p1d.yaml:4`)" in en
        assert f"publishes the image `{BUMPED}`" in en
        assert any(e.get("path") == RECIPE and e.get("line") == 4 for e in row["evidence"])
    else:  # a note naming where the rule would have been broken, and the guide that does not state it
        assert "broken at `disagg-1p1d.yaml:4`" in en and "`AGENTS.md` does not state it" in en and "不生效" in zh
