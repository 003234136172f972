"""The test-server helper itself: a server that does not come up in time is killed with its
process group, never left running behind a failed test (it held a port and a database)."""

from __future__ import annotations

import pytest

from .servers import Server


def test_a_server_that_does_not_become_healthy_is_killed(tmp_path):
    server = Server(f"sqlite:///{tmp_path}/never.db")
    with pytest.raises(TimeoutError):
        server.start(timeout=0.01)
    assert server.proc is not None and server.proc.poll() is not None
