"""The deployment recipes (Dockerfile, .dockerignore, compose.yaml, deploy/Caddyfile,
deploy/chatmem.service) are consistent with each other and with the code.

No image registry is reachable where the tests run, so the image itself is not built here
(``CHATMEM_TEST_DOCKER_BUILD=1`` builds it where a Docker daemon and the registry are). What
runs everywhere: the Dockerfile is linted (multi-stage, the web app built in a stage and copied
in, a non-root final user, every COPY source present in the build context), the build context
is assembled exactly as ``docker build`` would (the .dockerignore applied) and tarred, compose's
services and the proxy's upstreams agree, and systemd checks the unit when systemd-analyze exists.
"""

from __future__ import annotations

import fnmatch
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text()
    logical: list[str] = []
    buf = ""
    for line in text.splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        buf += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            logical.append(buf.strip())
            buf = ""
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1]) for ln in logical]


def context_files() -> list[str]:
    """The files ``docker build .`` sends: the repository's files minus .dockerignore."""
    patterns = [
        p.strip()
        for p in (ROOT / ".dockerignore").read_text().splitlines()
        if p.strip() and not p.startswith("#")
    ]
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip

    def ignored(path: str) -> bool:
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        for pat in patterns:
            pat = pat.removeprefix("**/")
            if any(
                fnmatch.fnmatch(p, pat) or fnmatch.fnmatch(p.split("/")[-1], pat) for p in prefixes
            ):
                return True
        return False

    return [p for p in listed if (ROOT / p).is_file() and not ignored(p)]


def test_dockerfile_is_multi_stage_non_root_with_the_web_app_built_inside():
    ins = instructions()
    stages = [args for op, args in ins if op == "FROM"]
    assert len(stages) >= 3 and " AS web" in stages[0] and " AS build" in stages[1]
    final = ins[max(i for i, (op, _) in enumerate(ins) if op == "FROM") :]
    users = [args for op, args in final if op == "USER"]
    assert users and users[-1] not in ("root", "0"), "the final stage must not run as root"
    runs = " ".join(args for op, args in ins if op == "RUN")
    assert "npm ci" in runs and "npm run build" in runs
    copies = [args for op, args in ins if op == "COPY"]
    assert any("--from=web" in c and "web/dist" in c for c in copies)
    assert any("--from=build" in args for op, args in final if op == "COPY")
    assert "npm" not in " ".join(args for op, args in final if op == "RUN")
    ops = {op for op, _ in final}
    assert {"HEALTHCHECK", "EXPOSE", "ENTRYPOINT", "USER"} <= ops
    assert any("/api/health" in args for op, args in final if op == "HEALTHCHECK")


def test_the_build_context_holds_every_copy_source_and_nothing_heavy():
    files = context_files()
    names = set(files)
    for op, args in instructions():
        if op != "COPY" or "--from=" in args:
            continue
        *sources, _dest = args.split()
        for src in sources:
            src = src.rstrip("/")
            assert src in names or any(f.startswith(src + "/") for f in names), src
    assert not any(
        f.startswith((".venv/", "tests/", ".git/")) or "node_modules/" in f for f in files
    )
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for f in files:
            tar.add(ROOT / f, arcname=f)
    assert buf.tell() < 15 * 1024 * 1024, f"context of {buf.tell():,} bytes"
    assert "frontend/package-lock.json" in names and "requirements.txt" in names


def test_compose_runs_postgres_two_api_replicas_a_worker_and_a_proxy():
    doc = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = doc["services"]
    api = [n for n, s in services.items() if s.get("command") == ["serve", "--no-worker"]]
    workers = [n for n, s in services.items() if s.get("command") == ["worker"]]
    assert len(api) == 2 and len(workers) == 1
    assert services["db"]["image"].startswith("postgres:")
    for name in api + workers:
        s = services[name]
        assert s["environment"]["CHATMEM_DATABASE_URL"].startswith("postgresql://")
        assert "@db:5432/" in s["environment"]["CHATMEM_DATABASE_URL"]
        assert s["depends_on"]["db"]["condition"] == "service_healthy"
        assert s["build"] == "."
    proxy = services["proxy"]
    caddyfile = ROOT / "deploy" / "Caddyfile"
    mounted = [v.split(":")[0] for v in proxy["volumes"]]
    assert "./deploy/Caddyfile" in mounted and caddyfile.is_file()
    upstreams = next(
        ln.split()[1:-1] for ln in caddyfile.read_text().splitlines() if "reverse_proxy" in ln
    )
    assert sorted(u.split(":")[0] for u in upstreams) == sorted(api)
    assert all(u.endswith(":8000") for u in upstreams)
    assert "flush_interval -1" in caddyfile.read_text()  # SSE is not buffered


def test_systemd_unit():
    unit = ROOT / "deploy" / "chatmem.service"
    text = unit.read_text()
    assert "ExecStart=/opt/chatmem/bin/chatmem serve" in text and "User=chatmem" in text
    assert "RestartPreventExitStatus=2" in text  # a bad setting (exit 2) is not restart-looped
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze not installed")
    r = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, check=False
    )
    problems = [
        ln
        for ln in (r.stdout + r.stderr).splitlines()
        if ln.strip() and "is not executable" not in ln  # /opt/chatmem is not installed here
    ]
    assert problems == [], problems


@pytest.mark.skipif(
    not os.environ.get("CHATMEM_TEST_DOCKER_BUILD"),
    reason="no registry for base images here: set CHATMEM_TEST_DOCKER_BUILD=1 to build the image",
)
def test_the_image_builds():  # pragma: no cover - needs a Docker daemon and the registry
    r = subprocess.run(
        ["docker", "build", "-t", "chatmem:test", str(ROOT)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-4000:]
