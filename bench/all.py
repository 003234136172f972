"""``make bench``: run every benchmark and print their figures as one table.

Each script under bench/ runs as its own process (so one's load and memory do not leak into the
next) with the arguments below; every output line that carries a figure — a ratio (``÷``, ``=``),
a target or a percentile — becomes a row ``benchmark | line``, and a script that fails is a row
too. The scripts' own full output goes to ``bench-results/<name>.txt``.

    .venv/bin/python bench/all.py [--only tree,scale] [--full]

``--full`` runs each script with its own defaults (scale.py then goes to 1M rows: tens of
minutes); without it the sizes are cut so that the whole run takes minutes on a quiet machine.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK: dict[str, list[str]] = {
    "tree.py": ["--depth", "2000"],
    "scale.py": ["--sizes", "10000,100000", "--reps", "5"],
    "fork_open.py": ["--reps", "5"],
    "turn_cost.py": ["--turns", "120"],  # fewer turns give a figure dominated by warm-up
    "stream.py": ["--turns", "20", "--tokens", "2000", "--concurrent", "32"],
    "context.py": [],
    "memory.py": [],
    "search.py": [],
    "recall.py": [],
    "embeddings.py": [],
    "imports.py": [],
    "hardening.py": [],
    "append.py": ["--n", "100"],
}
FIGURE = re.compile(r"÷|\btarget\b|\bp50\b|\bp95\b|\bratio\b| = \d|\bMISS\b", re.I)
SECTION = re.compile(r"^(SQLite|PostgreSQL)\b")


def run(name: str, args: list[str], out_dir: Path) -> tuple[int, list[str], float]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(HERE / name), *args], capture_output=True, text=True, check=False
    )
    text = proc.stdout + ("\n" + proc.stderr if proc.returncode else "")
    (out_dir / f"{name[:-3]}.txt").write_text(text)
    rows, section = [], ""
    for ln in proc.stdout.splitlines():
        m = SECTION.match(ln)
        section = m.group(1) if m else section
        if FIGURE.search(ln):
            line = ln.strip()
            rows.append(line if not section or line.startswith(section) else f"[{section}] {line}")
    return proc.returncode, rows, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args()
    names = [n + ".py" for n in args.only.split(",") if n] or list(QUICK)
    out_dir = HERE.parent / "bench-results"
    out_dir.mkdir(exist_ok=True)
    table: list[tuple[str, str]] = []
    failed = 0
    for name in names:
        print(f"running {name} …", flush=True)
        code, rows, secs = run(name, [] if args.full else QUICK.get(name, []), out_dir)
        if code:
            failed += 1
            rows.append(f"exit status {code} (see bench-results/{name[:-3]}.txt)")
        table += [(name[:-3], r) for r in rows] or [(name[:-3], f"no figures ({secs:.0f} s)")]
    width = max(len(n) for n, _ in table)
    print(f"\n{'benchmark':<{width}} | figure")
    print(f"{'-' * width}-+-{'-' * 60}")
    for n, r in table:
        print(f"{n:<{width}} | {r}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
