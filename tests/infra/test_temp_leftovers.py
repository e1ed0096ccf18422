"""A test run leaves nothing in the temp folder: not when it ends, not when it is stopped by SIGTERM, and what
a killed run left (its embedded PostgreSQL still running) is removed by the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from tests.support.tempdirs import remove_tree

pytestmark = pytest.mark.slow  # pytest runs of their own, each starting an embedded PostgreSQL

ROOT = Path(__file__).resolve().parents[2]
PROBE = "tests/infra/leftovers_probe.py"


def _pytest(base: Path, test: str, **env: str) -> subprocess.Popen:
    """A pytest of its own on one probe test, with `base` as its temp folder."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LRS_TESTS_"))}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "-q", f"{PROBE}::{test}"],
        cwd=ROOT,
        env={**inherited, "TMPDIR": str(base), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finished(run: subprocess.Popen) -> str:
    output, _ = run.communicate(timeout=180)
    return output


def _held(base: Path, ready: Path) -> subprocess.Popen:
    """A run stopped inside a test, its embedded PostgreSQL up."""
    run = _pytest(base, "test_waits_to_be_killed", LEFTOVERS_READY=str(ready))
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert run.poll() is None, _finished(run)
        assert time.monotonic() < deadline, "the probe run never got its database"
        time.sleep(0.1)
    return run


def _postgres_of(base: Path) -> list[psutil.Process]:
    return [
        p
        for p in psutil.process_iter(["name", "cmdline"])
        if "postgres" in (p.info["name"] or "") and any(str(base) in part for part in p.info["cmdline"] or ())
    ]


@pytest.fixture
def base():
    """A temp folder for the runs; short, as pytest's tmp_path is not: PostgreSQL's socket path has a limit."""
    folder = Path(tempfile.mkdtemp(prefix="p"))
    yield folder
    remove_tree(folder)  # a failing run's leftovers, its server included: not left to the next test


def test_a_run_leaves_nothing_in_the_temp_folder(base: Path):
    run = _pytest(base, "test_writes_everywhere")
    output = _finished(run)
    assert run.returncode == 0, output
    assert list(base.iterdir()) == []


def test_a_terminated_run_cleans_up_and_a_killed_ones_leftovers_go_with_the_next_run(base: Path, tmp_path: Path):
    terminated = _held(base, tmp_path / "terminated")
    terminated.send_signal(signal.SIGTERM)  # as `timeout` does
    _finished(terminated)
    assert list(base.iterdir()) == [] and _postgres_of(base) == []

    killed = _held(base, tmp_path / "killed")
    killed.kill()
    killed.wait()
    assert _postgres_of(base), "the killed run's server should outlive it: nothing left to test otherwise"

    run = _pytest(base, "test_writes_everywhere")
    output = _finished(run)
    assert run.returncode == 0, output
    assert _postgres_of(base) == []
    assert list(base.iterdir()) == []
