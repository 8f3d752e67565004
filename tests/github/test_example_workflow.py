"""The example workflow and action.yml as InferenceX would run them: fork-safe triggers, pinned actions,
minimal permissions, per-PR concurrency, the sign-off phrase from one source, outputs and dry-run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from verifier.core.policy import load_policies

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "workflows" / "codeowner-signoff-verify.yml"
ACTION = ROOT / "action.yml"
OWN_ACTION = "OWNER/infx-verifier@"


def _load(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)  # keeps the `on` key a string


def _uses(doc: Any) -> list[str]:
    found: list[str] = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "uses":
                found.append(str(value))
            found += _uses(value)
    elif isinstance(doc, list):
        for item in doc:
            found += _uses(item)
    return found


def test_every_third_party_action_is_pinned_by_full_commit_sha() -> None:
    uses = _uses(_load(WORKFLOW)) + _uses(_load(ACTION))
    third_party = [u for u in uses if not u.startswith(OWN_ACTION)]
    assert third_party and all(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u) for u in third_party), third_party
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in third_party)


def test_triggers_work_for_fork_prs_without_running_fork_code() -> None:
    workflow = _load(WORKFLOW)
    triggers = workflow["on"]
    assert "pull_request_target" in triggers and "pull_request" not in triggers
    assert "deleted" in triggers["issue_comment"]["types"] and "dismissed" in triggers["pull_request_review"]["types"]
    assert "pr_number" in triggers["workflow_dispatch"]["inputs"]
    assert not any(u.startswith("actions/checkout@") for u in _uses(workflow))
    assert "github.event.pull_request.head" not in WORKFLOW.read_text(encoding="utf-8").split("steps:", 1)[1]


def test_permissions_are_minimal() -> None:
    workflow = _load(WORKFLOW)
    assert workflow["permissions"] == {}
    job = workflow["jobs"]["verify"]["permissions"]
    writes = {k for k, v in job.items() if v == "write"}
    assert writes == {"pull-requests", "statuses", "security-events"}
    assert set(job) <= {"contents", "actions", "checks", "pull-requests", "statuses", "security-events"}
    assert all(v in ("read", "write") for v in job.values()) and job["contents"] == "read"


def test_event_and_dispatch_runs_serialize_per_pr() -> None:
    concurrency = _load(WORKFLOW)["concurrency"]
    for part in ("github.event.pull_request.number", "github.event.issue.number", "inputs.pr_number"):
        assert part in concurrency["group"]
    assert concurrency["cancel-in-progress"] == "false"


def test_the_signoff_phrase_has_one_source() -> None:
    settings = load_policies()["github"]
    phrase, prefilter = settings["signoff"]["phrase"], settings["publish"]["prefilter"]
    text = WORKFLOW.read_text(encoding="utf-8")
    assert phrase not in text and "As a PR reviewer" not in text
    assert prefilter in phrase and f"'{prefilter}'" in str(_load(WORKFLOW)["jobs"]["verify"]["if"])


def test_action_declares_outputs_and_dry_run() -> None:
    action = _load(ACTION)
    assert {"verdict", "comment-url", "failing-checks", "status"} <= set(action["outputs"])
    assert {"dry-run", "marker-secret", "login", "sarif-file"} <= set(action["inputs"])
    run = next(s for s in action["runs"]["steps"] if s.get("id") == "verify")["run"]
    assert "${{" not in run  # inputs reach the script through the environment only


def test_cli_format_sarif(capsys: Any) -> None:
    import json

    from tests.kit import CASES
    from verifier.app.cli import main

    assert main(["--bundle", str(CASES / "pr4524"), "--format", "sarif"]) in (0, 1)
    doc = json.loads(capsys.readouterr().out)
    assert doc["version"] == "2.1.0" and doc["runs"][0]["results"][0]["ruleId"] == "check-13-draft-precision"


def _schema(name: str) -> Any:
    """A schema check-jsonschema vendors from SchemaStore (the ones GitHub's editors validate with)."""
    import json
    from importlib.resources import files

    path = files("check_jsonschema") / "builtin_schemas" / "vendor" / name
    return json.loads(path.read_text(encoding="utf-8"))


def _load_typed(path: Path) -> Any:
    """YAML as GitHub reads it: typed scalars, and the `on` key (YAML 1.1 reads it as True) a string."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    if isinstance(doc, dict) and True in doc:
        doc["on"] = doc.pop(True)
    return doc


def test_the_example_workflow_and_action_yml_validate_against_githubs_schemas() -> None:
    import jsonschema

    jsonschema.validate(_load_typed(WORKFLOW), _schema("github-workflows.json"))
    jsonschema.validate(_load_typed(ACTION), _schema("github-actions.json"))
