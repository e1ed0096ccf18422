"""The apps' `Database` objects kept open from test to test, so each test's app starts on a warm pool.

A new engine per app costs ~30 ms of CPU per app start, the server's half and the client's: two new server
sessions (a process each, with cold catalog caches), asyncpg's type introspection on each, and SQLAlchemy
compiling every statement again (its compiled cache belongs to the engine). The tests start ~600 apps.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.engine import Database, async_url


def database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


class WarmDatabases:
    """One `Database` per test database and pool size, lent to one app at a time.

    A second app on the same database and pool size at the same time gets none and builds its own, as a
    second process would: two apps never share an engine (nor the in-process gates keyed by it). The pool
    resetting a database spares only the sessions idle in a kept pool (`idle_sessions`); any session still
    in use when its app stopped is ended as before.
    """

    def __init__(self) -> None:
        self._idle: dict[tuple[str, int], Database] = {}
        self._lent: dict[int, tuple[tuple[str, int], AsyncEngine]] = {}  # id(Database) → its key, its engine
        self._idle_pids: dict[str, set[int]] = {}  # database name → server pids of connections in a kept pool

    def lend(self, url: str, pool_size: int) -> Database | None:
        key = (url, pool_size)
        if any(lent == key for lent, _ in self._lent.values()):
            return None
        database = self._idle.pop(key, None) or self._open(url, pool_size)
        self._lent[id(database)] = (key, database.engine)
        return database

    async def give_back(self, database: Database) -> None:
        """Keep `database` for the next app, unless a connection of it is still out (a task its app left
        running) or the test replaced its engine: then it is closed, and a session still open is ended by the
        reset like any other."""
        key, engine = self._lent.pop(id(database))
        if database.engine is engine and not engine.pool.checkedout():
            self._idle[key] = database
            return
        if database.engine is not engine:
            await engine.dispose()
        await database.close()

    def idle_sessions(self, name: str) -> list[int]:
        return sorted(self._idle_pids.get(name, ()))

    async def forget(self, name: str) -> None:
        """Close the kept databases of `name` (before it is dropped)."""
        for key in [key for key in self._idle if database_name(key[0]) == name]:
            await self._idle.pop(key).close()
        self._idle_pids.pop(name, None)

    async def close(self) -> None:
        for database in self._idle.values():
            await database.close()
        self._idle.clear()
        self._idle_pids.clear()

    def _open(self, url: str, pool_size: int) -> Database:
        database = Database(async_url(url), pool_size=pool_size)
        pids = self._idle_pids.setdefault(database_name(url), set())

        def server_pid(dbapi_connection: Any) -> int | None:
            driver = getattr(dbapi_connection, "driver_connection", None)
            return None if driver is None else driver.get_server_pid()

        def checked_in(dbapi_connection: Any, record: Any) -> None:
            if (pid := server_pid(dbapi_connection)) is not None:
                pids.add(pid)

        def gone(dbapi_connection: Any, record: Any, *_: Any) -> None:
            pids.discard(server_pid(dbapi_connection))

        pool = database.engine.sync_engine.pool
        event.listen(pool, "checkin", checked_in)
        event.listen(pool, "checkout", gone)
        event.listen(pool, "close", gone)
        event.listen(pool, "invalidate", gone)
        return database
