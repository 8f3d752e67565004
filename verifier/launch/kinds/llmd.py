"""llm-d multi-node launch (new layout): `benchmarks/multi_node/llm-d/` scripts driven by an llm-d recipe.

An `llmd-vllm` row keeps `CONFIG_FILE=<recipe>` (configs/CONFIGS.md: "Only llmd-vllm keeps
CONFIG_FILE"): the name of a file under `benchmarks/multi_node/llm-d-recipes/`. The runner starts the
wrapper `benchmarks/multi_node/<prefix>_<precision>_<sku>_llmd-vllm-disagg.sh`, which runs
`llm-d/submit.sh` (sbatch `llm-d/job.slurm`); the job runs `llm-d/server.sh` on every node, and
server.sh reads the role's section of the recipe through `llm-d/recipe.py` (`eval "$(python3 ...)"`,
which the shell reader cannot follow, so this kind reads the recipe as data the way recipe.py does):

* `<role>.tp` -> `--tensor-parallel-size`; `<role>.enable-expert-parallel` (default true) ->
  `--enable-expert-parallel --data-parallel-size <DP>` and `--api-server-count`;
* `<role>.extra-args` (one string, split like the shell splits `$ROLE_EXTRA_ARGS`) is appended to
  the `vllm serve` command verbatim;
* `<role>.env` is exported before `vllm serve` (names must be shell identifiers);
* server.sh's own flags (`--port`, `--served-model-name`, `--trust-remote-code`, the NIXL
  `--kv_transfer_config` with the role's `kv_producer` / `kv_consumer`) come first; they are policy
  data (`llm-d` in policies/launch.yaml), each checked against server.sh's text, so a server.sh that
  no longer writes one, or starts the server another way, leaves the point unresolved naming the file.

Values the job computes at run time (DP size, api-server count, leader addresses) are kept as their
variable names and listed in `Launch.opaque`. `Launch.files`: the recipe, the scripts of the chain and
recipe.py (Check 10 scans them). The recipe's top-level keys are modelled or refused by name: an
unknown key (or role key) leaves the point unresolved, naming the key and line.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Any

from verifier.configs.points import Point
from verifier.core.layout import repo_relative
from verifier.launch.job import KeyJob
from verifier.launch.model import Launch
from verifier.launch.recipes import recipe_doc
from verifier.launch.recipes.spec import spec_parameters
from verifier.launch.recipes.variants import Origin, RecipeError

NAME = "llm-d"
ROLES = ("prefill", "decode")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _conf(job: KeyJob) -> Mapping[str, Any]:
    return job.policy["llm-d"]


def claims(job: KeyJob, point: Point) -> bool:
    """A new-layout multi-node row of an llm-d framework (policy `llm-d.frameworks`)."""
    return (point.multinode and job.ctx.bundle.layout != "old"
            and (point.framework or "") in _conf(job)["frameworks"])


def recipe_path(job: KeyJob, point: Point) -> tuple[str, str]:
    """(repository path of the llm-d recipe, the name the row wrote); RecipeError without CONFIG_FILE.
    The point's reference is already resolved under the llm-d recipe folder (verifier.configs.points)."""
    ref = point.srt_recipe
    if ref is None:
        raise RecipeError("an llm-d row names its recipe with CONFIG_FILE=<file under "
                          f"{_conf(job)['recipe-dir']}>; this row names none", point.file, point.line)
    return ref.path, ref.written.partition(":")[0].strip()


def _line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return None


def _split(extra: str) -> list[str]:
    """`$ROLE_EXTRA_ARGS` unquoted in `vllm serve ... $ROLE_EXTRA_ARGS`: split on whitespace only
    (no quote removal, no globbing of the JSON values the recipes write)."""
    return extra.split()


def _args(tokens: list[str]) -> dict[str, Any]:
    """`--flag value` / `--flag` tokens as a mapping (the last spelling wins, like argparse)."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("--"):
            name, eq, value = token[2:].partition("=")
            if eq:
                out[name] = value
            elif i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                out[name] = tokens[i + 1]
                i += 1
            else:
                out[name] = True
        i += 1
    return out


def _flags(job: KeyJob, server: str, server_path: str, items: Any, what: str) -> list[tuple[str, Any, Origin]]:
    """Policy [flag, value] pairs, each located in server.sh (RecipeError when server.sh lacks one)."""
    out = []
    for item in items:
        flag, value = str(item[0]), item[1]
        line = _line_of(server, flag)
        if line is None:
            raise RecipeError(f"server.sh does not write `{flag}` any more; the llm-d launch is modelled on it "
                              f"(policy llm-d.{what})", server_path)
        out.append((flag, value, Origin(server_path, line)))
    return out


def _spec_is_rewritten(extra: list[str], point: Point) -> bool:
    """recipe.py rewrites an agentic DSpark `--speculative-config` (synthetic acceptance from the golden
    curve) unless it verifies adaptively or with block rejection."""
    if not point.is_agentic or "--speculative-config" not in extra:
        return False
    index = extra.index("--speculative-config")
    try:
        config = json.loads(extra[index + 1]) if index + 1 < len(extra) else None
    except ValueError:
        return True
    if not isinstance(config, Mapping) or config.get("method") != "dspark":
        return False
    return not (config.get("enable_adaptive_verification") or config.get("rejection_sample_method") == "block")


def resolve(job: KeyJob, point: Point) -> None:
    """Read the role sections of the llm-d recipe and write each role's `vllm serve` command."""
    conf = _conf(job)
    layout = job.ctx.bundle.layout
    path, written = recipe_path(job, point)
    doc = recipe_doc(job.ctx, job.side, path)
    if doc is None:
        raise RecipeError(f"llm-d recipe {written} is not in the tree (CONFIG_FILE names a file under "
                          f"{conf['recipe-dir']})", path)
    if not isinstance(doc.data, Mapping):
        raise RecipeError("llm-d recipe is not a mapping", path, 1)
    allowed = set(conf["recipe-keys"])
    for key in doc.data:
        if str(key) not in allowed:
            raise RecipeError(f"llm-d recipe key `{key}` is neither modelled nor known (policy llm-d.recipe-keys)",
                              path, doc.line(key))
    scripts = {name: repo_relative(rel, layout) for name, rel in conf["scripts"].items()}  # type: ignore[arg-type]
    server_path = scripts["server"]
    raw = job.read(server_path)
    if raw is None:
        raise RecipeError("the llm-d server script is not in the tree, so the server command is unknown",
                          server_path)
    server = raw.decode("utf-8", "replace")
    serve_line = _line_of(server, conf["serve-line"])
    if serve_line is None:
        raise RecipeError(f"server.sh no longer starts the server with `{conf['serve-line']}`; the llm-d "
                          "launch is modelled on that line", server_path)
    fixed = _flags(job, server, server_path, conf["fixed-args"], "fixed-args")
    ep_flags = _flags(job, server, server_path, conf["ep-args"], "ep-args")
    kv_line = _line_of(server, conf["kv-transfer-line"])
    reader = scripts.get("recipe-reader", server_path)
    # the benchmark client server.sh's coordinator starts for this scenario (checked in its text)
    client = str(conf["clients"].get(point.scenario) or f"bash {conf['container-root']}{conf['scripts']['server']}")
    if point.scenario in conf["clients"] and _line_of(server, client) is None:
        raise RecipeError(f"server.sh no longer runs `{client}` for {point.scenario} points", server_path)
    files = tuple(dict.fromkeys([path, *(p for p in scripts.values() if job.tree.has(p))]))
    engine = str(conf["engine"])
    module = job.policy["launcher"]["modules"].get(engine)
    mooncake = doc.data.get("mooncake")
    has_store = isinstance(mooncake, Mapping) and bool(mooncake.get("store_config"))
    # server.sh: DECODE_NODES == 0 is aggregated, every node runs the `prefill` section
    roles = [("prefill", "prefill"), ("decode", "decode")] if point.disagg else [("agg", "prefill")]
    for role, section_name in roles:
        raw_section = doc.data.get(section_name)
        section: Mapping[str, Any] = raw_section if isinstance(raw_section, Mapping) else {}
        for key in section:
            if str(key) not in conf["role-keys"]:
                raise RecipeError(f"llm-d recipe key `{section_name}.{key}` is neither modelled nor known "
                                  "(policy llm-d.role-keys)", path, doc.line(section_name, key))
        # `vllm serve "$MODEL"`: the weights job.slurm mounts at /models (MODEL_DIR), positional
        argv: list[str] = ["--model", "$MODEL"]
        arg_origins: dict[str, Origin] = {"model": Origin(server_path, serve_line)}
        opaque: dict[str, Origin] = {"model": Origin(server_path, serve_line)}
        for flag, value, origin in fixed:
            if flag == "--served-model-name":
                value = point.model or "$MODEL_NAME"
            argv += [flag] if value is None else [flag, str(value)]
            arg_origins[flag.removeprefix("--").partition("=")[0]] = origin
        tp = section.get("tp", 1)
        argv += ["--tensor-parallel-size", str(tp)]
        arg_origins["tensor-parallel-size"] = Origin(path, doc.line(section_name, "tp")) if "tp" in section \
            else Origin(server_path, _line_of(server, "TP_SIZE=1"))
        kv_origin = Origin(server_path, kv_line)
        if point.disagg and not has_store:
            value = json.dumps({"kv_connector": "NixlConnector", "kv_role": conf["kv-roles"][role],
                                "kv_load_failure_policy": "fail"}, separators=(",", ":"))
            argv += ["--kv_transfer_config", value]
            arg_origins["kv_transfer_config"] = kv_origin
        elif has_store:  # the MultiConnector / Mooncake JSON server.sh assembles per role
            argv += ["--kv_transfer_config", "$KV_TRANSFER_CONFIG"]
            arg_origins["kv_transfer_config"] = kv_origin
            opaque["kv_transfer_config"] = kv_origin
        if section.get("enable-expert-parallel", True) is not False:
            for flag, value, origin in ep_flags:
                argv += [flag] if value is None else [flag, str(value)]
                arg_origins[flag.removeprefix("--")] = origin
                if isinstance(value, str) and value.startswith("$"):
                    opaque[flag.removeprefix("--")] = origin
        extra = section.get("extra-args")
        extra_tokens = _split(str(extra)) if extra is not None else []
        extra_origin = Origin(path, doc.line(section_name, "extra-args"))
        for token in extra_tokens:
            if token.startswith("--"):
                arg_origins[token[2:].partition("=")[0]] = extra_origin
        if _spec_is_rewritten(extra_tokens, point):
            opaque["speculative-config"] = Origin(reader, None)
        argv += extra_tokens
        env: dict[str, str] = {}
        env_origins: dict[str, Origin] = {}
        raw_env = section.get("env")
        for name, value in (raw_env.items() if isinstance(raw_env, Mapping) else ()):
            if not ENV_NAME.fullmatch(str(name)):
                raise RecipeError(f"llm-d recipe environment variable `{name}` is not a shell name "
                                  "(recipe.py refuses it)", path, doc.line(section_name, "env", name))
            env[str(name)] = "" if value is None else str(value)
            env_origins[str(name)] = Origin(path, doc.line(section_name, "env", name))
        args = _args(argv)
        recipe = dict(doc.data)
        recipe["benchmark"] = {"type": "custom", "command": client}  # what server.sh's coordinator runs
        job.add(Launch(
            key=job.entry.key, side=job.side, point=point, role=role, recipe_path=path,
            selector=None, variant="", variant_name=str(written), recipe=recipe, engine=engine,
            image=point.image, module=module, argv=tuple(shlex.quote(t) if t == "" else t for t in argv),
            env=env, args=args, spec=spec_parameters(role, args, engine), model_path="$MODEL",
            served_model_name=point.model, arg_origins=arg_origins, env_origins=env_origins,
            kind=NAME, files=files, opaque=opaque,
        ))
