"""Gate: no function in src/ grows past 60 lines (run by ``make lint``).

Why it exists: long functions are where the next change hurts (docs/architecture.md). A function
over ``LIMIT`` lines fails the gate unless it is listed in ``tools/long_functions.txt`` with its
current length, and a listed one fails as soon as it grows. Splitting one lowers the list: run
``python tools/check_function_length.py --update`` to rewrite it (it only ever shrinks entries and
drops the ones back under the limit).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "chatmem"
BASELINE = ROOT / "tools" / "long_functions.txt"
LIMIT = 60


def lengths() -> dict[str, int]:
    out: dict[str, int] = {}
    for path in sorted(SRC.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > LIMIT:
                    key = f"{rel}::{node.name}"
                    out[key] = max(n, out.get(key, 0))
    return out


def baseline() -> dict[str, int]:
    out: dict[str, int] = {}
    if BASELINE.exists():
        for raw in BASELINE.read_text(encoding="utf-8").splitlines():
            line = raw.split("#", 1)[0].strip()
            if line:
                name, _, n = line.rpartition(" ")
                out[name] = int(n)
    return out


def main(argv: list[str]) -> int:
    now, allowed = lengths(), baseline()
    if "--update" in argv:
        first = not BASELINE.exists()  # the first run lists today's; later runs never add
        kept = {k: min(n, allowed.get(k, n)) for k, n in now.items() if first or k in allowed}
        header = (
            f"# functions over {LIMIT} lines and their length today: they may shrink, not grow\n"
        )
        body = "".join(f"{k} {n}\n" for k, n in sorted(kept.items()))
        BASELINE.write_text(header + body, encoding="utf-8")
        return 0
    bad = [
        f"{k}: {n} lines (limit {LIMIT}" + (f", listed at {allowed[k]})" if k in allowed else ")")
        for k, n in sorted(now.items())
        if n > allowed.get(k, LIMIT)
    ]
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print("split the function (or see tools/check_function_length.py)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
