"""Real ``chatmem serve`` processes for tests that need one (browser, crash, replica tests)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

CHATMEM = str(Path(sys.executable).with_name("chatmem"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def chatmem_env(db_url: str, **extra: str) -> dict:
    env = dict(os.environ)
    env["CHATMEM_DATABASE_URL"] = db_url
    env.update({k: str(v) for k, v in extra.items()})
    return env


def create_user(db_url: str, email: str, password: str | None = None, admin: bool = False) -> str:
    args = [CHATMEM, "users", "create", "--email", email]
    if password:
        args += ["--password", password]
    if admin:
        args.append("--admin")
    r = subprocess.run(args, env=chatmem_env(db_url), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip().splitlines()[-1]


@dataclass
class Server:
    db_url: str
    env_extra: dict = field(default_factory=dict)
    args: tuple = ("--no-worker",)
    port: int = 0
    proc: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180) -> Server:  # a loaded CI box can take a minute
        self.port = self.port or free_port()
        env = chatmem_env(self.db_url, **self.env_extra)
        # CHATMEM_TEST_SERVER_LOG=path keeps the server's output (for debugging a test)
        log_path = os.environ.get("CHATMEM_TEST_SERVER_LOG")
        out = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
        # one process unless the test asks for more (PostgreSQL's default is every core): the
        # crash and replica tests kill and count exactly one server process
        workers = () if "--workers" in self.args else ("--workers", "1")
        self.proc = subprocess.Popen(
            [CHATMEM, "serve", "--port", str(self.port), *self.args, *workers],
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,  # its own process group: a failed start kills all of it
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.kill_group()
                raise RuntimeError(f"chatmem serve exited with {self.proc.returncode}")
            try:
                if httpx.get(f"{self.base}/api/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill_group()  # never leak a server that did not come up
        raise TimeoutError(f"chatmem serve did not become healthy in {timeout:.0f} s")

    def kill_group(self) -> None:
        """SIGKILL the server and anything it started (its own session), then reap it."""
        if not self.proc:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            for child in _children(self.proc.pid):  # `serve --workers N`: its worker processes
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
            self.proc.kill()
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
