"""Reads on a real streaming replica (DATABASE_READ_URL): a base backup of a dedicated embedded PostgreSQL started
as a standby. Reads a replica may serve go to it; a client's reads see what it wrote or was told is processed
(the replica is waited for, or the primary reads when it is behind); a stopped replica sends its reads to the
primary and shows in /health without making the service unready."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import text

from app.domain.wal_positions import format_lsn, parse_lsn
from tests.support.database import pg_folder, private_server
from tests.support.replica import Standby, server_binaries, streaming_replica

pytestmark = [
    pytest.mark.slow,  # two PostgreSQL servers of the module's own
    pytest.mark.skipif(server_binaries() is None, reason="the embedded PostgreSQL has no pg_basebackup"),
]

DATABASE = "replicated"
KEYS = {"a": "key-a-0123456789", "b": "key-b-0123456789"}
TEXT = "Alice Walker met Bob Stone in Paris. Bob Stone founded Acme Labs with Carol King."


class Servers:
    def __init__(self, primary_url: str, standby: Standby) -> None:
        self.primary_url = primary_url
        self.standby = standby


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with pg_folder("lrs-own-pg-") as root:
        primary = private_server(root)
        try:
            primary.psql(f"CREATE DATABASE {DATABASE}")
            with streaming_replica(primary, root) as standby:
                socket_dir = primary.get_postmaster_info().socket_dir
                yield Servers(f"postgresql://postgres@/{DATABASE}?host={socket_dir}", standby)
        finally:
            primary.cleanup()


@pytest.fixture
def make_app(servers, start_app, make_settings):
    async def _make(**overrides):
        values = {
            "database_url": servers.primary_url,
            "database_read_url": [servers.standby.url(DATABASE)],
            "database_read_max_wait_ms": 30_000,  # generous: a running replica always catches up within it
            "database_read_max_lag_ms": 600_000,
            "api_keys": list(KEYS.values()),
        }
        values.update(overrides)
        return await start_app(make_settings(**values))

    return _make


def auth(client: str, **headers: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[client]}", **headers}


def reads(target: str) -> float:
    return REGISTRY.get_sample_value("db_reads_total", {"target": target}) or 0.0


def fallbacks(reason: str) -> float:
    return REGISTRY.get_sample_value("db_read_fallbacks_total", {"reason": reason}) or 0.0


def test_wal_positions_round_trip():
    assert parse_lsn("16/B374D848") == (0x16 << 32) | 0xB374D848
    assert format_lsn(parse_lsn("0/16B3748")) == "0/16B3748"
    for bad in ("", "16", "x/1", "1/2/3", "123456789/0"):
        with pytest.raises(ValueError):
            parse_lsn(bad)


async def test_reads_go_to_the_replica_and_writes_to_the_primary(make_app):
    app = await make_app()
    db = app.container.db
    async with db.read() as conn:
        assert await conn.scalar(text("SELECT pg_is_in_recovery()")) is True
    async with db.connect() as conn:
        assert await conn.scalar(text("SELECT pg_is_in_recovery()")) is False
    served = reads("replica")
    listing = await app.http.get("/documents", headers=auth("a"))
    assert listing.status_code == 200, listing.text
    assert reads("replica") == served + 1
    health = await app.http.get("/health")
    assert health.status_code == 200
    (replica,) = health.json()["read_replicas"]
    assert (replica["name"], replica["status"], replica["error"]) == ("replica-1", "ok", None)


async def test_a_processed_document_is_in_the_same_clients_next_query_through_the_replica(make_app):
    app = await make_app()
    created = await app.http.post("/projects", json={"id": "ryw"}, headers=auth("a"))
    assert created.status_code == 201, created.text
    ingest = await app.http.post(
        "/documents", json={"project_id": "ryw", "documents": [{"text": TEXT}], "wait": True}, headers=auth("a")
    )
    assert [d["status"] for d in ingest.json()["documents"]] == ["processed"]
    assert parse_lsn(ingest.headers["x-read-after-lsn"]) > 0
    served, behind = reads("replica"), fallbacks("behind_client")
    for mode in ("naive", "mix"):  # mix: two sides on two replica connections sharing one snapshot
        body = {
            "project_id": "ryw",
            "query": "Who founded Acme Labs?",
            "mode": mode,
            "only_need_context": True,
            "ll_keywords": ["Bob Stone"],
            "hl_keywords": ["founding"],
        }
        answer = await app.http.post("/query", json=body, headers=auth("a"))
        assert answer.status_code == 200, answer.text
        assert any(TEXT in chunk["content"] for chunk in answer.json()["context"]["chunks"]), mode
    assert reads("replica") > served
    assert fallbacks("behind_client") == behind


async def test_a_replica_behind_the_client_is_passed_over_for_the_primary(make_app, servers):
    app = await make_app(database_read_max_wait_ms=20)
    standby = await servers.standby.admin(DATABASE)
    try:
        await standby.execute("SELECT pg_wal_replay_pause()")
        created = await app.http.post("/projects", json={"id": "paused"}, headers=auth("a"))
        assert created.status_code == 201, created.text
        behind = fallbacks("behind_client")
        # the writer reads its write: the paused replica cannot reach its position, the primary answers
        listing = await app.http.get("/documents", params={"project_id": "paused"}, headers=auth("a"))
        assert listing.status_code == 200, listing.text
        assert fallbacks("behind_client") == behind + 1
        # another client, who saw nothing yet, reads the replica as it is (the project is not there)
        other = await app.http.get("/documents", params={"project_id": "paused"}, headers=auth("b"))
        assert other.status_code == 404
        assert other.json()["code"] == "project_not_found"
        # ... unless it echoes the position it was given (another API process would know nothing else)
        echoed = auth("b", **{"X-Read-After-LSN": created.headers["x-read-after-lsn"]})
        told = await app.http.get("/documents", params={"project_id": "paused"}, headers=echoed)
        assert told.status_code == 200, told.text
    finally:
        await standby.execute("SELECT pg_wal_replay_resume()")
        await standby.close()


async def test_a_bad_read_after_header_is_refused(make_app):
    app = await make_app()
    refused = await app.http.get("/documents", headers=auth("a", **{"X-Read-After-LSN": "yesterday"}))
    assert refused.status_code == 400
    assert refused.json()["code"] == "bad_request"


async def test_a_stopped_replica_sends_reads_to_the_primary_and_leaves_the_service_ready(make_app, servers):
    app = await make_app()
    assert (await app.http.get("/documents", headers=auth("a"))).status_code == 200
    servers.standby.stop()
    try:
        down = fallbacks("down")
        listing = await app.http.get("/documents", headers=auth("a"))
        assert listing.status_code == 200, listing.text
        assert fallbacks("down") == down + 1
        # the circuit is open: the next read does not try the replica again
        assert (await app.http.get("/documents", headers=auth("a"))).status_code == 200
        assert fallbacks("down") == down + 2
        health = await app.http.get("/health")
        assert health.status_code == 200
        assert health.json()["status"] == "ok"
        (replica,) = health.json()["read_replicas"]
        assert replica["status"] == "down"
    finally:
        servers.standby.start()


async def test_a_lagging_replica_is_skipped(make_app, servers):
    app = await make_app(database_read_max_lag_ms=0)
    standby = await servers.standby.admin(DATABASE)
    try:
        await standby.execute("SELECT pg_wal_replay_pause()")
        async with app.container.db.transaction() as conn:  # WAL the paused replica receives but does not replay
            await conn.execute(text("INSERT INTO projects (id, name) VALUES ('lag', 'lag')"))
            written = await conn.scalar(text("SELECT pg_current_wal_insert_lsn()::text"))
        await until_true(lambda: standby.fetchval("SELECT pg_last_wal_receive_lsn() >= $1::text::pg_lsn", written))
        lagging = fallbacks("lagging")
        listing = await app.http.get("/documents", headers=auth("b"))
        assert listing.status_code == 200, listing.text
        assert fallbacks("lagging") == lagging + 1
        (replica,) = (await app.http.get("/health")).json()["read_replicas"]
        assert replica["status"] == "lagging" and replica["lag_ms"] > 0
    finally:
        await standby.execute("SELECT pg_wal_replay_resume()")
        await standby.close()


async def test_a_replica_serves_reads_only_once_it_holds_what_the_start_wrote(make_app, servers):
    """A replica that has not replayed the migrations (or the default project) the process's start left on the
    primary would answer "relation does not exist": until it has, the primary reads."""
    standby = await servers.standby.admin(DATABASE)
    try:
        await standby.execute("SELECT pg_wal_replay_pause()")
        first = await make_app()
        async with first.container.db.transaction() as conn:  # WAL the paused replica does not replay
            await conn.execute(text("INSERT INTO projects (id, name) VALUES ('schema', 'schema')"))
        app = await make_app(database_read_max_wait_ms=50)  # its start reads the primary's position after that
        behind = fallbacks("behind_client")
        listing = await app.http.get("/documents", headers=auth("a"))
        assert listing.status_code == 200, listing.text
        assert fallbacks("behind_client") == behind + 1
    finally:
        await standby.execute("SELECT pg_wal_replay_resume()")
        await standby.close()


async def test_a_replica_url_naming_a_primary_is_not_used(make_app, servers):
    app = await make_app(database_read_url=[servers.primary_url])
    refused = fallbacks("not_a_standby")
    assert (await app.http.get("/documents", headers=auth("a"))).status_code == 200
    assert fallbacks("not_a_standby") == refused + 1
    (replica,) = (await app.http.get("/health")).json()["read_replicas"]
    assert replica["status"] == "not_a_standby"


async def until_true(check, attempts: int = 600) -> None:
    """Poll `check` (a coroutine function) until it is true; a condition, not a duration, is awaited."""
    for _ in range(attempts):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never held")
