"""The soak benchmark (bench/soak.py) keeps working: two API replicas and two workers on one
PostgreSQL under its mixed load, briefly.

Why it exists: the soak is the project's evidence that "N replicas on one PostgreSQL" holds for
minutes; it is run by hand for 10 minutes, so nothing else notices when a CLI change breaks it
(``serve --workers`` did once: the admin listener refuses more than one worker per process). This
runs it for 20 s and checks its verdict: no failed request, every process alive, jobs claimed.
The figures themselves are not asserted (the machine is shared; see the README's soak section).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_soak_runs_two_replicas_and_two_workers_without_errors(pg_url):
    if pg_url is None:
        pytest.skip("CHATMEM_TEST_POSTGRES_URL not set (PostgreSQL tests run in CI)")
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak.py"), "--duration", "20", "--clients", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    report = out.stdout + out.stderr
    assert out.returncode == 0, report
    assert "errors 0" in report and "verdict: ok" in report, report
    for op in ("turn", "page", "search", "memory"):
        assert f"\n{op} " in report, report
