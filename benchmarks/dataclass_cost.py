"""What the verifier's dataclasses cost a cold verdict, and which generated methods verdicts use.

Run:  python benchmarks/dataclass_cost.py [BUNDLE ...]   (default: every bundle of ../shared/cases, the
      full-size bundle and every fixture bundle)

On Python 3.11 `@dataclass` compiles each generated method (`__init__`, `__repr__`, `__eq__`, and for
`frozen=True` also `__setattr__`, `__delattr__` and `__hash__`) with `exec` when the class is defined, so
every class a verdict imports costs its process that much. This prints, for the first bundle judged
in this fresh process, the CPU seconds spent creating the dataclasses of verifier/ and checks/ (per
module), then for every bundle judged (JSON, Markdown and table) which generated `__eq__`,
`__hash__` and `__repr__` of those classes were called and from where. A class whose methods no
verdict calls can be declared `eq=False, repr=False` (see tests/core/test_cold_path.py); one a test
compares keeps them: run the tests that touch it with this module's `record()` installed first.
Figures are printed, never asserted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
SHARED = PROJECT.parent / "shared"
OURS = ("verifier", "checks")

CREATED: dict[str, float] = {}  # module.Class -> seconds spent in dataclasses._process_class
USED: Counter[tuple[str, str]] = Counter()  # (module.Class, method) -> calls
CALLERS: defaultdict[tuple[str, str], set[str]] = defaultdict(set)


def record() -> None:
    """Wrap dataclass creation: time each class of verifier/ and checks/, and count calls of its
    generated __eq__, __hash__ and __repr__ (install before the verifier is imported)."""
    original = dataclasses._process_class  # type: ignore[attr-defined]

    def process(cls: type, *args: Any) -> type:
        start = time.process_time()
        made: type = original(cls, *args)
        name = f"{made.__module__}.{made.__qualname__}"
        if not made.__module__.startswith(OURS):
            return made
        CREATED[name] = time.process_time() - start  # CPU: a loaded machine does not bend it
        for method in ("__eq__", "__hash__", "__repr__"):
            generated = made.__dict__.get(method)
            if generated is None:
                continue

            def counted(*a: Any, _fn: Any = generated, _key: tuple[str, str] = (name, method), **k: Any) -> Any:
                USED[_key] += 1
                caller = sys._getframe(1)
                CALLERS[_key].add(f"{caller.f_code.co_filename.removeprefix(str(PROJECT) + '/')}:{caller.f_lineno}")
                return _fn(*a, **k)

            setattr(made, method, counted)
        return made

    dataclasses._process_class = process  # type: ignore[attr-defined]


def default_bundles() -> list[Path]:
    """The shared cases, the full-size bundle and every fixture bundle."""
    shared = [p for p in sorted((SHARED / "cases").glob("*")) if (p / "bundle.yaml").is_file()]
    full = [SHARED / "perf" / "pr4524-fullsize"] if (SHARED / "perf" / "pr4524-fullsize").is_dir() else []
    return [*shared, *full, *sorted(p.parent for p in (PROJECT / "fixtures").rglob("bundle.yaml"))]


def main(argv: list[str]) -> int:
    """Judge the bundles and print the figures."""
    record()
    from verifier.app.cli import main as cli  # noqa: PLC0415 - imported after record(), so its classes are wrapped

    bundles = [Path(a) for a in argv] or default_bundles()
    for i, bundle in enumerate(bundles):
        for fmt in ("json", "markdown", "table"):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
                cli(["--bundle", str(bundle), "--format", fmt])
        if i == 0:
            per_module: defaultdict[str, list[float]] = defaultdict(list)
            for name, seconds in CREATED.items():
                per_module[name.rsplit(".", 1)[0]].append(seconds)
            print(f"dataclasses of verifier/ and checks/ a verdict of {bundle.name} creates: {len(CREATED)}, "
                  f"{sum(CREATED.values()) * 1000:.1f} ms")
            for module, times in sorted(per_module.items(), key=lambda kv: -sum(kv[1]))[:15]:
                print(f"  {sum(times) * 1000:6.1f} ms  {len(times):3d} classes  {module}")
    print(f"generated methods called while judging {len(bundles)} bundles (3 formats each):")
    for (name, method), calls in sorted(USED.items()):
        print(f"  {calls:7d}  {name}.{method}  from {', '.join(sorted(CALLERS[(name, method)])[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
