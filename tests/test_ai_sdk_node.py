"""The Vercel AI SDK (Node, ``tests/node``) drives ``/rpc/chat/inbox`` against a live server:
three turns with useChat-shaped histories and a resumed reload (see tests/node/ai_sdk.test.mjs).
``make test`` installs the Node project with ``npm ci`` from its lockfile first."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from .servers import Server, create_user

pytestmark = pytest.mark.slow

NODE_DIR = Path(__file__).parent / "node"


def test_ai_sdk_text_stream_transport(db_url):
    node = shutil.which("node")
    assert node, "node is required (Node 20+)"
    assert (NODE_DIR / "node_modules" / "ai").is_dir(), (
        "run `npm ci` in tests/node (make test does)"
    )
    key = create_user(db_url, "node@example.com")
    env = {"CHATMEM_DEMO_DELAY_MS": "25", "CHATMEM_DEMO_MIN_TOKENS": "60"}
    server = Server(db_url, env_extra=env).start()
    try:
        with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {key}"}) as c:
            agent = c.post("/api/agents", json={"name": "Lin", "handle": "lin"}).json()["id"]
        r = subprocess.run(
            [node, "--test", "ai_sdk.test.mjs"],
            cwd=NODE_DIR,
            env={
                **os.environ,
                "CHATMEM_URL": server.base,
                "CHATMEM_KEY": key,
                "CHATMEM_AGENT": agent,
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
        assert "# pass 1" in r.stdout and "# fail 0" in r.stdout, r.stdout[-3000:]
    finally:
        server.stop()
