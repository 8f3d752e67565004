"""Parse an srt-slurm + SGLang `server.log` (hostile text) into facts with 1-based line numbers.

A server.log has two parts (cases README, "server.log has two parts"):

1. the srtctl preamble: `[YYYY-MM-DD HH:MM:SS] srtctl: …` lines; after `srtctl: <worker>
   environment:` one `KEY=VALUE` line per variable; after `srtctl: <worker> command:` the launch
   command on one line;
2. SGLang's output, `[YYYY-MM-DD HH:MM:SS( TPn …)?] message`, with one
   `server_args=ServerArgs(name=value, …)` (or `server_args={…}`) line, `Load weight end. …
   type=X, quant=Y` lines and `KV Cache is allocated. dtype: torch.X` lines (target first, then
   the draft), and the acceptance lengths the engine measured (`accept len: 3.61` on `Decode
   batch` lines).

Nothing here evaluates the text: values of the server_args line go through `ast.literal_eval`
one by one (a value that is not a literal is kept as its source text). Oversized input is cut
at MAX_LOG_BYTES (`truncated`), overlong lines and malformed lines are skipped (`skipped`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from verifier.core import shellwords

MAX_LOG_BYTES = 32 * 1024 * 1024
MAX_LINE = 256 * 1024
MAX_SERVER_ARGS_LINE = 4 * 1024 * 1024
MAX_SERVER_ARGS_FIELDS = 5000
MAX_ACCEPT_LENS = 5000

_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?: ([^\]]{1,80}))?\] ?(.*)$")
_SRTCTL = re.compile(r"^srtctl: (.*)$")
_WORKER_BLOCK = re.compile(r"^srtctl: ([A-Za-z0-9_.-]+) (environment|command):\s*$")
_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_RANK = re.compile(r"\bTP(\d+)\b")
_KV_DTYPE = re.compile(r"\bdtype: (torch\.[A-Za-z0-9_]+)")
_KV_TOKENS = re.compile(r"#tokens: (\d+)")
_KV_SIZE = re.compile(r"\b(K|V|KV) size: ([0-9.]+) GB")
_ENV_MENTION = re.compile(r"\b((?:SGLANG|SGL|TLLM|VLLM|NCCL|CUDA|TORCH)_[A-Z0-9_]+)=([^\s,;:]*)")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# SGLang's `Decode batch, … accept len: 3.61, …` and vLLM's `Mean acceptance length: 2.31`.
_ACCEPT_LEN = re.compile(r"\b(?:accept len|[Mm]ean acceptance length):\s*([0-9]+(?:\.[0-9]+)?)")


@dataclass(frozen=True, eq=False, repr=False)
class WeightLoad:
    """A `Load weight end. …` line: its `key=value` fields (type, quant, quant_algo, …)."""

    line: int
    rank: str | None
    fields: dict[str, str]
    text: str

    @property
    def type(self) -> str | None:
        """The model class (`type=`)."""
        return self.fields.get("type")

    @property
    def quant(self) -> str | None:
        """The quantization method (`quant=`)."""
        return self.fields.get("quant")

    @property
    def quant_algo(self) -> str | None:
        """The quantization algorithm (`quant_algo=`), when printed."""
        return self.fields.get("quant_algo")


@dataclass(frozen=True, eq=False, repr=False)
class KvAllocation:
    """A `KV Cache is allocated. dtype: torch.X, #tokens: N, …` line."""

    line: int
    rank: str | None
    dtype: str  # as printed, e.g. "torch.bfloat16"
    tokens: int | None
    sizes_gb: dict[str, float]
    text: str


@dataclass(frozen=True, eq=False, repr=False)
class EnvMention:
    """An `NAME=value` that SGLang's own output mentions (e.g. `SGLANG_GLM_NEXTN_MOE_PTPC=1: …`)."""

    name: str
    value: str
    line: int
    text: str


@dataclass(frozen=True, eq=False, repr=False)
class AcceptLen:
    """An acceptance length the engine measured and printed (`accept len: 3.61`)."""

    line: int
    value: float


@dataclass(eq=False, repr=False)
class Worker:
    """One srtctl worker block (`agg_0`, `prefill_0`, …): its environment and command."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    env_lines: dict[str, int] = field(default_factory=dict)
    command: tuple[str, ...] | None = None
    command_text: str | None = None
    command_line: int | None = None
    command_error: str | None = None


@dataclass(eq=False, repr=False)
class ServerLog:
    """What a server.log says. Line numbers are 1-based."""

    workers: dict[str, Worker] = field(default_factory=dict)
    srtctl: list[tuple[int, str]] = field(default_factory=list)
    container: str | None = None
    container_line: int | None = None
    recipe: str | None = None
    recipe_line: int | None = None
    server_args: dict[str, Any] | None = None
    server_args_line: int | None = None
    server_args_form: str | None = None  # "ServerArgs" | "dict"
    server_args_unparsed: dict[str, str] = field(default_factory=dict)
    weight_loads: list[WeightLoad] = field(default_factory=list)
    kv_caches: list[KvAllocation] = field(default_factory=list)
    env_mentions: list[EnvMention] = field(default_factory=list)
    accept_lens: list[AcceptLen] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    truncated: bool = False

    @property
    def worker(self) -> Worker | None:
        """The first worker block (`agg_0` in single-node logs)."""
        return next(iter(self.workers.values()), None)

    @property
    def generation_worker(self) -> Worker | None:
        """The worker that generates tokens: the first `decode*` block, else `agg*`, else the first."""
        for prefix in ("decode", "agg"):
            found = next((w for name, w in self.workers.items() if name.startswith(prefix)), None)
            if found is not None:
                return found
        return self.worker

    @property
    def env(self) -> dict[str, str]:
        """The first worker's environment."""
        return self.worker.env if self.worker else {}

    @property
    def env_lines(self) -> dict[str, int]:
        """Line of each variable of the first worker's environment."""
        return self.worker.env_lines if self.worker else {}

    @property
    def command(self) -> tuple[str, ...] | None:
        """The first worker's launch argv (shlex-split), or None."""
        return self.worker.command if self.worker else None

    @property
    def command_line(self) -> int | None:
        """Line of the first worker's launch command."""
        return self.worker.command_line if self.worker else None

    def _first_rank_kv(self) -> list[KvAllocation]:
        if not self.kv_caches:
            return []
        rank = self.kv_caches[0].rank
        return [k for k in self.kv_caches if k.rank == rank]

    @property
    def target_kv(self) -> KvAllocation | None:
        """The first KV pool allocated (by the first rank that prints one): the target's."""
        pools = self._first_rank_kv()
        return pools[0] if pools else None

    @property
    def draft_kv(self) -> KvAllocation | None:
        """The second KV pool of the same rank: the draft's (None without speculation)."""
        pools = self._first_rank_kv()
        return pools[1] if len(pools) > 1 else None

    def _first_rank_loads(self) -> list[WeightLoad]:
        if not self.weight_loads:
            return []
        rank = self.weight_loads[0].rank
        return [w for w in self.weight_loads if w.rank == rank]

    @property
    def target_load(self) -> WeightLoad | None:
        """The first `Load weight end` line (the target model)."""
        loads = self._first_rank_loads()
        return loads[0] if loads else None

    @property
    def draft_load(self) -> WeightLoad | None:
        """The second `Load weight end` line of the same rank (the draft model), if any."""
        loads = self._first_rank_loads()
        return loads[1] if len(loads) > 1 else None


# --------------------------------------------------------------------------- server_args


# A string literal (a backslash escapes the character after it), a lone quote (one never closed),
# a bracket or a comma: the only pieces that change the state of the split below.
_TOP_LEVEL_PIECE = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|['"]|[()\[\]{},]""", re.S)
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _split_top_level(text: str, limit: int = MAX_SERVER_ARGS_FIELDS) -> list[str] | None:
    """Split at commas outside brackets and string literals; None when quotes/brackets are unbalanced.

    Only string literals, brackets and commas change the state, so the scan jumps from one to the
    next, a whole string literal at a time."""
    parts: list[str] = []
    start = 0
    stack: list[str] = []
    for match in _TOP_LEVEL_PIECE.finditer(text):
        piece = match.group()
        if len(piece) > 1:  # a string literal
            continue
        if piece in "'\"":  # a quote that no later quote closes
            return None
        if piece in "([{":
            stack.append(piece)
        elif piece in ")]}":
            if not stack or stack[-1] != _CLOSERS[piece]:
                return None
            stack.pop()
        elif not stack:  # a comma at the top level
            parts.append(text[start:match.start()])
            start = match.end()
            if len(parts) > limit:
                return None
    if stack:
        return None
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")
_PLAIN_STRING = re.compile(r"'[^'\\\n\r]*'|\"[^\"\\\n\r]*\"")
_CONSTANTS = {"True": True, "False": False, "None": None}


def _literal(text: str) -> tuple[bool, Any]:
    """A Python literal's value (as `ast.literal_eval` reads it), or (False, text) when it is none.
    The common scalars (`True`, `8`, `0.85`, `'fa3'`) are read directly."""
    if text in _CONSTANTS:
        return True, _CONSTANTS[text]
    if _INT.fullmatch(text):
        return True, int(text)
    if _FLOAT.fullmatch(text):
        return True, float(text)
    if _PLAIN_STRING.fullmatch(text):
        return True, text[1:-1]
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, text


def parse_server_args(message: str) -> tuple[str, dict[str, Any], dict[str, str]] | None:
    """Parse `server_args=ServerArgs(a=1, …)` or `server_args={'a': 1, …}`.

    Returns (form, values, unparsed): `unparsed` maps fields whose value is not a Python literal
    to their source text (they are left out of `values`). None when the text is not such a line.
    """
    if not message.startswith("server_args="):
        return None
    body = message[len("server_args="):].strip()
    if len(body) > MAX_SERVER_ARGS_LINE:
        return None
    if body.startswith("{") and body.endswith("}"):
        ok, value = _literal(body)
        if ok and isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return "dict", value, {}
        values: dict[str, Any] = {}
        unparsed: dict[str, str] = {}
        for item in _split_top_level(body[1:-1]) or []:
            key_text, sep, value_text = item.partition(":")
            ok_k, key = _literal(key_text.strip())
            if not sep or not ok_k or not isinstance(key, str):
                continue
            ok_v, val = _literal(value_text.strip())
            if ok_v:
                values[key] = val
            else:
                unparsed[key] = value_text.strip()
        return ("dict", values, unparsed) if values or unparsed else None
    m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\((.*)\)$", body, re.S)
    if not m:
        return None
    values = {}
    unparsed = {}
    for item in _split_top_level(m.group(2)) or []:
        read = _FIELD_READINGS.get(item)
        if read is None:
            read = _read_field(item)
        if read is _NOT_A_FIELD:
            continue
        name, ok, val = read
        if ok:
            values[name] = val
        else:
            unparsed[name] = val
    return (m.group(1), values, unparsed) if values or unparsed else None


# The logs of one sweep print the same few hundred `name=value` fields over and over (a few hundred
# distinct among thousands): each field's reading is kept by its text, unless its value is a
# container a caller could change.
_FIELD_READINGS: dict[str, tuple[str, bool, Any]] = {}
_MAX_FIELD_READINGS = 20_000
_NOT_A_FIELD = ("", False, None)
_SHAREABLE = (str, int, float, bool, type(None))


def _read_field(item: str) -> tuple[str, bool, Any]:
    """(name, True, value) of a `name=literal` field, (name, False, value text) when the value is
    no literal, `_NOT_A_FIELD` when the item is no `name=...`."""
    name, sep, value_text = item.partition("=")
    name = name.strip()
    if not sep or not _IDENT.match(name):
        read = _NOT_A_FIELD
    else:
        ok, val = _literal(value_text.strip())
        read = (name, ok, val if ok else value_text.strip())
    if isinstance(read[2], _SHAREABLE):
        if len(_FIELD_READINGS) >= _MAX_FIELD_READINGS:
            _FIELD_READINGS.clear()
        _FIELD_READINGS[item] = read
    return read


def _fields(message: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.strip().partition("=")
        if sep and _IDENT.match(key.strip()):
            out[key.strip()] = value.strip().rstrip(".")
    return out


# --------------------------------------------------------------------------- the log


def parse_server_log(text: str | bytes) -> ServerLog:
    """Parse a server.log. Never raises on malformed content; oversized input is cut."""
    log = ServerLog()
    if isinstance(text, bytes):
        if len(text) > MAX_LOG_BYTES:
            text, log.truncated = text[:MAX_LOG_BYTES], True
        text = text.decode("utf-8", errors="replace")
    elif len(text) > MAX_LOG_BYTES:
        text, log.truncated = text[:MAX_LOG_BYTES], True
    text = text.replace("\x00", "")

    block: tuple[str, str] | None = None  # (worker, "environment" | "command")
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        long_ok = line.startswith("[") and "server_args=" in line[:200]
        if len(line) > (MAX_SERVER_ARGS_LINE if long_ok else MAX_LINE):
            log.skipped.append(number)
            continue
        m = _STAMP.match(line)
        if m is None:
            if block is None:
                if line.strip():
                    log.skipped.append(number)
                continue
            worker = log.workers.setdefault(block[0], Worker(block[0]))
            if block[1] == "environment":
                env = _ENV_LINE.match(line)
                if env:
                    worker.env[env.group(1)] = env.group(2)
                    worker.env_lines[env.group(1)] = number
                elif line.strip():
                    log.skipped.append(number)
            elif line.strip() and worker.command_text is None:
                worker.command_text = line.strip()
                worker.command_line = number
                try:
                    worker.command = tuple(shellwords.split(line))
                except ValueError as exc:
                    worker.command_error = str(exc)
                block = None
            continue

        block = None
        rank_text = m.group(2) or ""
        rank_m = _RANK.search(rank_text)
        rank = f"TP{rank_m.group(1)}" if rank_m else (rank_text or None)
        message = m.group(3)
        srt = _SRTCTL.match(message)
        if srt:
            log.srtctl.append((number, srt.group(1)))
            wb = _WORKER_BLOCK.match(message)
            if wb:
                block = (wb.group(1), wb.group(2))
                log.workers.setdefault(wb.group(1), Worker(wb.group(1)))
            elif srt.group(1).startswith("container ") and log.container is None:
                log.container, log.container_line = srt.group(1)[len("container "):].strip(), number
            elif srt.group(1).startswith("recipe ") and log.recipe is None:
                log.recipe, log.recipe_line = srt.group(1)[len("recipe "):].strip(), number
            continue

        if message.startswith("server_args=") and log.server_args is None:
            parsed = parse_server_args(message)
            if parsed is None:
                log.skipped.append(number)
            else:
                log.server_args_form, log.server_args, log.server_args_unparsed = parsed
                log.server_args_line = number
            continue
        if message.startswith("Load weight end"):
            log.weight_loads.append(WeightLoad(number, rank, _fields(message), message))
            continue
        if message.startswith("KV Cache is allocated"):
            dm = _KV_DTYPE.search(message)
            if dm is None:
                log.skipped.append(number)
                continue
            tm = _KV_TOKENS.search(message)
            sizes = {k: float(v) for k, v in _KV_SIZE.findall(message)}
            log.kv_caches.append(
                KvAllocation(number, rank, dm.group(1), int(tm.group(1)) if tm else None, sizes, message)
            )
            continue
        accept = _ACCEPT_LEN.search(message)
        if accept is not None and len(log.accept_lens) < MAX_ACCEPT_LENS:
            log.accept_lens.append(AcceptLen(number, float(accept.group(1))))
        for name, value in _ENV_MENTION.findall(message):
            log.env_mentions.append(EnvMention(name, value, number, message[:500]))
    return log
