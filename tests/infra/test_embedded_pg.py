"""The embedded PostgreSQL (DATA_DIR, no DATABASE_URL) across real processes: one SIGKILLed while using the
server must not keep a later clean shutdown from stopping it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from app.db.engine import EmbeddedPostgres

ROOT = Path(__file__).resolve().parents[2]
# starts the embedded server in DATA_DIR (argv[1]), prints the postmaster's PID, then either waits on stdin
# ("hold", to be killed) or stops it cleanly ("stop")
USER = """
import sys
from pathlib import Path
from app.db.engine import EmbeddedPostgres
pg = EmbeddedPostgres(Path(sys.argv[1]))
pg.start()
print(pg._server.get_pid(), flush=True)
if sys.argv[2] == "hold":
    sys.stdin.read()
pg.stop()
"""


def _user(data_dir: Path, mode: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", USER, str(data_dir), mode],
        cwd=ROOT,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # exited, not yet reaped by its parent
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _gone(pid)


@pytest.mark.slow  # processes starting the embedded server
def test_clean_stop_after_a_killed_user_stops_the_server(tmp_path: Path) -> None:
    killed = _user(tmp_path, "hold")
    postmaster = None
    try:
        postmaster = int(killed.stdout.readline())
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait(10)
        assert not _gone(postmaster)  # the killed user never stopped it
        record = tmp_path / "pgdata" / ".handle_pids.json"
        assert json.loads(record.read_text()) == [killed.pid]

        later = _user(tmp_path, "stop")
        out, err = later.communicate(timeout=60)
        assert later.returncode == 0, err
        assert int(out) == postmaster  # it used the server left running, then stopped cleanly
        assert _wait_gone(postmaster), "the last live user's clean stop left PostgreSQL running"
        assert json.loads(record.read_text()) == []
    finally:
        killed.kill()
        if postmaster is not None and not _gone(postmaster):
            os.kill(postmaster, signal.SIGINT)  # fast shutdown, so a failed test leaves no server behind
            _wait_gone(postmaster)


def test_only_processes_that_are_gone_are_forgotten(tmp_path: Path) -> None:
    exited = subprocess.Popen([sys.executable, "-c", "pass"])
    exited.wait()
    record = tmp_path / ".handle_pids.json"
    record.write_text(json.dumps([os.getpid(), exited.pid]))
    assert EmbeddedPostgres.forget_dead_users(tmp_path) == [exited.pid]
    assert json.loads(record.read_text()) == [os.getpid()]
    assert EmbeddedPostgres.forget_dead_users(tmp_path) == []
    assert EmbeddedPostgres.forget_dead_users(tmp_path / "missing") == []
