"""Gate: the lockfiles still cover pyproject.toml (run by ``make lint``).

Why it exists: installs come from ``requirements.txt`` / ``requirements-test.txt`` (pip-tools), so
a dependency added to pyproject.toml without ``make lock`` would be missing from a fresh clone.
This check is offline and fast: every requirement of ``[project].dependencies`` (and of the
``test``, ``local`` and ``otel`` extras) must be pinned in the matching lockfile at a version its specifier accepts.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def pins(lockfile: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in lockfile.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if "==" in line and not line.startswith("-"):
            name, _, version = line.partition("==")
            out[canonicalize_name(name.split("[", 1)[0])] = version.split(";", 1)[0].strip()
    return out


def problems(requirements: list[str], lockfile: Path) -> list[str]:
    locked = pins(lockfile)
    out = []
    for raw in requirements:
        req = Requirement(raw)
        if req.marker is not None and not req.marker.evaluate():
            continue
        version = locked.get(canonicalize_name(req.name))
        if version is None:
            out.append(f"{lockfile.name}: {req.name} is not pinned (run `make lock`)")
        elif not req.specifier.contains(version, prereleases=True):
            out.append(f"{lockfile.name}: {req.name}=={version} does not satisfy {req}")
    return out


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = project.get("dependencies", [])
    extras = project.get("optional-dependencies", {})
    test = extras.get("test", []) + extras.get("local", []) + extras.get("otel", [])
    found = problems(runtime, ROOT / "requirements.txt")
    found += problems(runtime + test, ROOT / "requirements-test.txt")
    for p in found:
        print(p, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
