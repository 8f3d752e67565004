"""verifier.core.quickschema accepts valid documents without jsonschema, and never a document jsonschema refuses."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.kit import FIXTURES
from verifier.core.bundle import _jsonable, _schema
from verifier.core.policy import json_keys
from verifier.core.quickschema import accepts
from verifier.core.resources import POLICY_DIR
from verifier.core.yamlio import decode_text, load_yaml_data

DEFINITIONS = {"bundle.yaml": "bundle", "pr.yaml": "pr", "signoff.yaml": "signoff", "comments.yaml": "comments",
               "checks.yaml": "checks", "github.yaml": "github", "run.yaml": "run"}


def _load(path: Path) -> Any:
    return load_yaml_data(decode_text(path.read_bytes(), str(path)), str(path))


def _documents() -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    """(root schema, schema, document) for every fixture bundle document and shipped policy."""
    out = []
    root = _schema()
    for path in sorted(FIXTURES.rglob("*.yaml")):
        name = DEFINITIONS.get(path.name)
        if name is None or "tree" in path.relative_to(FIXTURES).parts or (name == "run" and "runs" not in path.parts):
            continue
        out.append((root, {"$ref": f"#/$defs/{name}"}, _jsonable(_load(path))))
    for path in sorted(POLICY_DIR.glob("*.yaml")):
        schema = json.loads((POLICY_DIR / "schema" / f"{path.stem}.schema.json").read_text(encoding="utf-8"))
        out.append((schema, schema, json_keys(_load(path))))
    return out


def _valid(root: dict[str, Any], schema: dict[str, Any], doc: Any) -> bool:
    return not list(jsonschema.Draft202012Validator({**root, **schema}).iter_errors(doc))


def test_every_shipped_document_is_accepted_without_jsonschema() -> None:
    docs = _documents()
    assert len(docs) > 100
    for root, schema, doc in docs:
        assert _valid(root, schema, doc)
        assert accepts(root, schema, doc), schema


VALUES = [None, True, False, 0, -1, 1.5, 1.0, 10**9, "", "x", "auto", "A b", [], {}, ["a"], ["a", "a"], {"a": 1}]


def _mutate(rng: random.Random, value: Any) -> Any:
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        roll = rng.random()
        if roll < 0.15:
            del value[key]
        elif roll < 0.25:
            value[rng.choice(["zz", "", "x"])] = copy.deepcopy(rng.choice(VALUES))
        else:
            value[key] = _mutate(rng, value[key]) if rng.random() < 0.7 else copy.deepcopy(rng.choice(VALUES))
        return value
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        roll = rng.random()
        if roll < 0.2:
            value.append(copy.deepcopy(value[i]))
        elif roll < 0.3:
            del value[i]
        else:
            value[i] = _mutate(rng, value[i]) if rng.random() < 0.7 else copy.deepcopy(rng.choice(VALUES))
        return value
    return copy.deepcopy(rng.choice(VALUES))


@pytest.mark.parametrize("seed", range(4))
def test_no_document_jsonschema_refuses_is_accepted(seed: int) -> None:
    rng = random.Random(seed)
    docs = _documents()
    accepted = 0
    for _ in range(600):
        root, schema, doc = rng.choice(docs)
        mutant = _mutate(rng, copy.deepcopy(doc))
        if accepts(root, schema, mutant):
            accepted += 1
            assert _valid(root, schema, mutant), json.dumps(mutant)[:300]
    assert accepted > 20  # the subset still accepts the valid mutants
