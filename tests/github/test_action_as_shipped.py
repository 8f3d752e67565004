"""The Action as shipped: `action.yml`'s own `verify` step script, run by bash through the installed
`verify-pr` console script, in a GitHub Actions environment, against the stand-in on 127.0.0.1.

The step script and its `env:` block are read from action.yml (inputs substituted the way the runner
does), so a change to either is what runs here. Nothing is imported from the verifier in the child:
the exit status, `$GITHUB_OUTPUT`, `$GITHUB_STEP_SUMMARY`, the SARIF file under `$RUNNER_TEMP` and the
writes the stand-in recorded are the evidence.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.github.conftest import REPO
from tests.github.standin import TOKEN, StandIn
from tests.kit import CASES, PROJECT

KEY = "issuecomment-4711000001"
PHRASE = "As a PR reviewer and CODEOWNER, I have reviewed this and have:"
CONSOLE = Path(sys.executable).with_name("verify-pr")
INPUT = re.compile(r"^\$\{\{\s*inputs\.([\w-]+)\s*\}\}$")

pytestmark = pytest.mark.skipif(not CONSOLE.exists() or shutil.which("bash") is None,
                                reason="needs the installed verify-pr console script and bash")


def _step() -> tuple[str, dict[str, str], dict[str, Any]]:
    """(run script, env block, inputs) of the `verify` step, read from action.yml."""
    action = yaml.safe_load((PROJECT / "action.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "verify"]
    return step["run"], dict(step.get("env") or {}), action["inputs"]


def _comment(action: str = "created", body: str = PHRASE) -> dict[str, Any]:
    return {
        "action": action,
        "issue": {"number": 4524, "state": "open", "pull_request": {"url": "x"}},
        "comment": {"id": 4711000001, "body": body, "user": {"login": "nvpohanh", "type": "User"},
                    "html_url": f"https://github.com/{REPO}/pull/4524#{KEY}"},
        "sender": {"login": "nvpohanh", "type": "User"},
    }


def _outputs(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    found = {m.group(1): m.group(3) for m in re.finditer(r"^([\w-]+)<<(\S+)\n(.*?)\n\2$", text, re.M | re.S)}
    found.update(m.groups() for m in re.finditer(r"^([\w-]+)=(.*)$", text, re.M) if m.group(1) not in found)
    return found


Runner = Callable[..., tuple[subprocess.CompletedProcess[str], dict[str, Path]]]


@pytest.fixture
def step(tmp_path: Path) -> Runner:
    """Run the step script with inputs and an event, as the Actions runner would."""

    def run(server: StandIn, event: dict[str, Any], name: str = "issue_comment",
            **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Path]]:
        script, env_block, declared = _step()
        values = {key: str(spec.get("default", "")) for key, spec in declared.items()}
        values.update({"github-token": TOKEN, "docs-proxy": server.docs_proxy})
        values.update({k.replace("_", "-"): v for k, v in inputs.items()})
        runner_temp = tmp_path / "runner-temp"
        runner_temp.mkdir(exist_ok=True)
        files = {"event": tmp_path / "event.json", "output": tmp_path / "output.txt",
                 "summary": tmp_path / "summary.md", "sarif": runner_temp / "codeowner-signoff-verify.sarif"}
        for path in files.values():
            path.unlink(missing_ok=True)
        files["event"].write_text(json.dumps(event), encoding="utf-8")
        env = {"PATH": f"{CONSOLE.parent}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path),
               "INFX_VERIFIER_CACHE": "off", "GITHUB_ACTIONS": "true", "CI": "true",
               "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": server.api_url, "GITHUB_SERVER_URL": "https://github.com",
               "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(files["event"]), "GITHUB_RUN_ID": "777",
               "GITHUB_OUTPUT": str(files["output"]), "GITHUB_STEP_SUMMARY": str(files["summary"]),
               "RUNNER_TEMP": str(runner_temp), "HF_ENDPOINT": server.hf_endpoint}
        for key, value in env_block.items():
            m = INPUT.match(str(value).strip())
            env[key] = values.get(m.group(1), "") if m else str(value)
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], env=env, capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)
        return done, files

    return run


def test_dry_run_writes_outputs_summary_and_sarif_and_posts_nothing(standin: Callable[..., StandIn],
                                                                    step: Runner) -> None:
    server = standin()
    done, files = step(server, _comment(), dry_run="true")
    assert done.returncode == 0, done.stdout + done.stderr
    out = _outputs(files["output"])
    assert out["verdict"] == "REJECTED" and out["status"] == "failure" and out["failing-checks"] == "13"
    assert out["comment-url"] == "" and out["sarif-file"] == str(files["sarif"])
    assert "Dry run: nothing was posted" in files["summary"].read_text(encoding="utf-8")
    assert json.loads(files["sarif"].read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert "::error file=inferencex-e2e/" in done.stdout and "Check 13 (Draft precision)" in done.stdout
    assert server.writes() == [] and server.statuses == [] and server.verdict_comments() == []


def test_publish_posts_one_comment_and_the_status(standin: Callable[..., StandIn], step: Runner) -> None:
    server = standin()
    done, files = step(server, _comment())
    assert done.returncode == 0, done.stdout + done.stderr  # a rejection fails the status, not the job
    (ours,) = server.verdict_comments()
    assert "REJECTED" in ours["body"] and "中文" in ours["body"]
    assert server.statuses[-1]["state"] == "failure"
    assert _outputs(files["output"])["comment-url"].endswith(f"#issuecomment-{ours['id']}")
    done, _ = step(server, _comment(), fail_on_reject="true")
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(server.verdict_comments()) == 1, "the verdict comment is updated, never posted twice"


def test_a_comment_that_is_not_a_signoff_is_skipped(standin: Callable[..., StandIn], step: Runner) -> None:
    server = standin()
    done, files = step(server, _comment(body="looks good to me"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert _outputs(files["output"])["status"] == "skipped" and server.writes() == []
    assert "::notice title=codeowner-signoff-verify::skipped" in done.stdout


def test_a_deleted_signoff_is_retracted(standin: Callable[..., StandIn], step: Runner) -> None:
    server = standin(CASES / "pr4524-approved")
    done, _ = step(server, _comment())
    assert done.returncode == 0 and server.statuses[-1]["state"] == "success", done.stdout + done.stderr
    done, files = step(server, _comment(action="deleted"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert _outputs(files["output"])["status"] == "retracted"
    assert server.statuses[-1]["state"] == "failure"


def test_an_unreachable_github_is_exit_2_with_outputs(standin: Callable[..., StandIn], step: Runner) -> None:
    server = standin()
    done, files = step(server, _comment(), github_token="wrong")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.startswith("::error title=codeowner-signoff-verify failed::")
    assert _outputs(files["output"])["status"] == "error"
    assert "not verified" in files["summary"].read_text(encoding="utf-8")
