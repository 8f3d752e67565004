"""Every policies/*.yaml has a JSON Schema and validates against it (as load_policies does on every run)."""

from __future__ import annotations

from verifier.core.policy import load_policies
from verifier.core.resources import POLICY_DIR


def test_every_policy_file_has_a_schema_and_validates() -> None:
    topics = sorted(p.stem for p in POLICY_DIR.glob("*.yaml"))
    schemas = sorted(p.name.removesuffix(".schema.json") for p in (POLICY_DIR / "schema").glob("*.schema.json"))
    assert topics and topics == schemas
    assert sorted(load_policies()) == topics
