"""Recognising the commands the evaluator looks for in expanded command words.

* A *server start* (`match_server`): `python3 -m <server module> ...` (any `python*`, with
  interpreter flags before `-m`), `sglang serve`, `vllm serve`, `trtllm-serve [serve]`, directly or
  behind wrappers (`exec`, `nohup`, `env [-u X] [X=Y]`, `numactl`, `taskset`, `timeout`, `stdbuf`,
  `setsid`, `nice`, `mpirun`/`mpiexec`, `srun`, `trtllm-llmapi-launch`, `sudo -E`). Environment
  assignments the wrappers pass (`env X=Y`, `mpirun -x X=Y`) belong to the server.
* A *benchmark script start* (`match_child`): `bash [opts] FILE.sh` (or `sh`, or a `.sh` path run
  directly), behind `exec`, `env`, `timeout`, `srun [--export=...]` or `docker run [-e ...] IMAGE`;
  it says which environment reaches the child (`srun --export`, docker's `-e`/`--env` list) and
  its working directory (`--container-workdir`, `-w`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifier.shell.values import Opaque, Val

# launcher head -> (engine, module name recorded in the launch)
SERVE_COMMANDS = {
    "sglang": ("sglang", "sglang.launch_server"),
    "vllm": ("vllm", "vllm.entrypoints.openai.api_server"),
}
TRTLLM_SERVE = "trtllm-serve"
DEFAULT_MODULES = {
    "sglang.launch_server": "sglang",
    "sglang.launch_server_grpc": "sglang",
    "vllm.entrypoints.openai.api_server": "vllm",
    "atom.entrypoints.openai_server": "atom",
    "tensorrt_llm.serve": "trtllm",
    "tensorrt_llm.commands.serve": "trtllm",
}
_WRAPPERS = frozenset({"exec", "nohup", "setsid", "stdbuf", "nice", "ionice", "time", "command", "builtin", "env",
                       "numactl", "taskset", "timeout", "mpirun", "mpiexec", "srun", "trtllm-llmapi-launch", "sudo",
                       "chrt", "unbuffer"})
_SCAN_WRAPPERS = frozenset({"mpirun", "mpiexec", "srun", "numactl", "taskset", "timeout", "stdbuf", "nice", "ionice",
                            "sudo", "chrt", "setsid"})
_CHILD_WRAPPERS = frozenset({"srun", "docker", "podman", "nerdctl", "exec", "env", "timeout", "nohup", "sudo",
                             "setsid", "stdbuf", "time", "command", "numactl", "taskset"})
_PYTHON = re.compile(r"(?:.*/)?python(?:3(?:\.\d+)?)?")
_ENV_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)
MAX_WRAPPER_WORDS = 64


@dataclass(frozen=True)
class ServerMatch:
    """Where the server command starts in the words and what it is."""

    start: int  # index of the launcher head (python3 / sglang / vllm / trtllm-serve)
    argv_start: int  # index of the first server argument
    engine: str
    module: str
    env: tuple[tuple[str, int], ...]  # (name, index of the word) for wrapper env assignments


def _text(v: Val) -> str | None:
    return v if isinstance(v, str) else None


def _head(words: list[Val], i: int, modules: dict[str, str]) -> ServerMatch | None:
    w = _text(words[i]) if i < len(words) else None
    if w is None:
        # an interpreter found at run time ("$(command -v python3)" -m sglang.launch_server ...)
        if i + 2 < len(words) and isinstance(words[i], Opaque) and words[i + 1] == "-m" and \
                _text(words[i + 2]) in modules:
            module = str(words[i + 2])
            return ServerMatch(i, i + 3, modules[module], module, ())
        return None
    base = w.rsplit("/", 1)[-1]
    if base in SERVE_COMMANDS and i + 1 < len(words) and words[i + 1] == "serve":
        engine, module = SERVE_COMMANDS[base]
        return ServerMatch(i, i + 2, engine, module, ())
    if base == TRTLLM_SERVE:
        start = i + 2 if i + 1 < len(words) and words[i + 1] == "serve" else i + 1
        return ServerMatch(i, start, "trtllm", TRTLLM_SERVE, ())
    if _PYTHON.fullmatch(w):
        j = i + 1
        while j < len(words) and isinstance(words[j], str) and str(words[j]).startswith("-") and words[j] != "-m":
            j += 2 if words[j] in ("-X", "-W") else 1
        if j + 1 < len(words) and words[j] == "-m" and _text(words[j + 1]) in modules:
            module = str(words[j + 1])
            return ServerMatch(i, j + 2, modules[module], module, ())
    return None


def match_server(words: list[Val], modules: dict[str, str] | None = None) -> ServerMatch | None:
    """The server start in a command's words, or None."""
    modules = DEFAULT_MODULES if modules is None else modules
    env: list[tuple[str, int]] = []
    i = 0
    n = len(words)
    while i < n:
        found = _head(words, i, modules)
        if found is not None:
            return ServerMatch(found.start, found.argv_start, found.engine, found.module, tuple(env))
        w = _text(words[i])
        if w is None or w.rsplit("/", 1)[-1] not in _WRAPPERS:
            return None
        name = w.rsplit("/", 1)[-1]
        i += 1
        if name == "env":
            while i < n and isinstance(words[i], str):
                t = str(words[i])
                if t in ("-u", "--unset"):
                    i += 2
                elif t.startswith("-"):
                    i += 1
                elif _ENV_ASSIGN.fullmatch(t):
                    env.append((_ENV_ASSIGN.fullmatch(t).group(1), i))  # type: ignore[union-attr]
                    i += 1
                else:
                    break
            continue
        if name in _SCAN_WRAPPERS:
            # options of unknown arity: scan ahead for the launcher (mpirun -x NAME=VALUE is env)
            limit = min(n, i + MAX_WRAPPER_WORDS)
            j = i
            while j < limit:
                if _head(words, j, modules) is not None or (
                        _text(words[j]) in _WRAPPERS and j > i and not str(words[j - 1]).startswith("-")):
                    break
                t = _text(words[j])
                if t == "-x" and j + 1 < n and isinstance(words[j + 1], str) and _ENV_ASSIGN.fullmatch(words[j + 1]):
                    env.append((_ENV_ASSIGN.fullmatch(words[j + 1]).group(1), j + 1))  # type: ignore[union-attr]
                j += 1
            if j >= limit:
                return None
            i = j
    return None


@dataclass(frozen=True)
class ChildMatch:
    """A repository shell script the command runs, and how its environment is passed."""

    script: int  # index of the script path word
    passthrough: bool  # every exported variable reaches the child
    names: tuple[str, ...]  # variables passed by name (docker -e NAME, srun --export=NAME)
    sets: tuple[tuple[str, str], ...]  # variables set by the wrapper (NAME=VALUE)
    cwd: str | None


def match_child(words: list[Val]) -> ChildMatch | None:
    """`bash FILE.sh` (possibly wrapped), or None."""
    n = len(words)
    for k in range(n):
        w = _text(words[k])
        if w is None:
            continue
        base = w.rsplit("/", 1)[-1]
        target: int | None = None
        if k > 0 and not all(isinstance(x, str) for x in words[:1]) or (
                k > 0 and (_text(words[0]) or "").rsplit("/", 1)[-1] not in _CHILD_WRAPPERS):
            continue
        if base in ("bash", "sh"):
            j = k + 1
            while j < n and isinstance(words[j], str) and str(words[j]).startswith("-"):
                if words[j] in ("-c", "--rcfile", "--init-file"):
                    return None
                j += 1
            if j < n and isinstance(words[j], str) and str(words[j]).endswith(".sh"):
                target = j
        elif k == 0 and w.endswith(".sh"):
            target = 0
        elif k > 0 and w.endswith(".sh") and _bash_entrypoint(words[:k]):
            target = k  # docker run --entrypoint=/bin/bash IMAGE script.sh
        if target is None:
            continue
        return _child_env(words, k, target)
    return None


def _bash_entrypoint(prefix: list[Val]) -> bool:
    """`docker run ... --entrypoint=/bin/bash IMAGE`: the first argument after the image is the script."""
    if (_text(prefix[0]) or "").rsplit("/", 1)[-1] not in ("docker", "podman", "nerdctl"):
        return False
    for i, w in enumerate(prefix):
        t = _text(w) or ""
        value = t.split("=", 1)[1] if t.startswith("--entrypoint=") else (
            _text(prefix[i + 1]) if t == "--entrypoint" and i + 1 < len(prefix) else None)
        if value is not None and (value or "").rsplit("/", 1)[-1] in ("bash", "sh"):
            return True
    return False


def _child_env(words: list[Val], k: int, target: int) -> ChildMatch:
    head = _text(words[0]) or ""
    names: list[str] = []
    sets: list[tuple[str, str]] = []
    passthrough = True
    cwd: str | None = None
    prefix = list(words[:k])
    if head == "srun":
        for w in prefix:
            t = _text(w) or ""
            if t.startswith("--export="):
                passthrough = False
                for item in t[len("--export="):].split(","):
                    if item == "ALL":
                        passthrough = True
                    elif item == "NONE":
                        passthrough = False
                    elif "=" in item:
                        name, _, value = item.partition("=")
                        sets.append((name, value))
                    elif item:
                        names.append(item)
            elif t.startswith("--container-workdir="):
                cwd = t.split("=", 1)[1]
    elif head in ("docker", "podman", "nerdctl"):
        passthrough = False
        i = 1
        while i < k:
            t = _text(prefix[i]) or ""
            value: str | None = None
            if t in ("-e", "--env") and i + 1 < k:
                value = _text(prefix[i + 1])
                i += 1
            elif t.startswith("--env="):
                value = t.split("=", 1)[1]
            elif t.startswith("-e") and len(t) > 2:
                value = t[2:]
            elif t in ("--volume", "-v", "--name", "--network", "--gpus", "--shm-size", "--ulimit", "--security-opt",
                       "--cap-add", "--device", "--group-add", "--runtime", "--entrypoint", "--ipc", "--pull",
                       "--mount", "--user", "-u") and i + 1 < k:
                i += 1
            elif t in ("-w", "--workdir") and i + 1 < k:
                cwd = _text(prefix[i + 1])
                i += 1
            elif t.startswith("--workdir="):
                cwd = t.split("=", 1)[1]
            if value is not None:
                if "=" in value:
                    name, _, v = value.partition("=")
                    sets.append((name, v))
                else:
                    names.append(value)
            i += 1
    elif head == "env":
        for w in prefix[1:]:
            t = _text(w) or ""
            m = _ENV_ASSIGN.fullmatch(t)
            if m:
                sets.append((m.group(1), m.group(2)))
    return ChildMatch(target, passthrough, tuple(names), tuple(sets), cwd)
