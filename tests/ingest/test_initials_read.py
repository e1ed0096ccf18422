"""The initials read (aliases.keys_by_prefix) returns the same rows however the table's rows lie on disk: with
more matches than its cap, the first by key, so a resolution decision taken on it cannot change with updates."""

from __future__ import annotations

import asyncpg

from app.db.engine import Database, async_url
from app.domain.name_matching import initials_pattern
from app.repositories.aliases import keys_by_prefix


async def test_more_matches_than_the_cap_give_the_first_by_key(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("INSERT INTO projects (id, name) VALUES ('p', 'p')")
        # 30 names with the initials K R I, inserted in reverse, the early ones then updated (rows move on disk)
        await conn.execute(
            "INSERT INTO entities (project_id, key, name) SELECT 'p', 'kessara' || i || ' research institute',"
            " 'Kessara' || i || ' Research Institute' FROM generate_series(30, 1, -1) i"
        )
        await conn.execute("UPDATE entities SET description = 'moved' WHERE key LIKE 'kessara1_ %'")
    finally:
        await conn.close()
    pattern, first = initials_pattern("KRI")
    db = Database(async_url(database_url), pool_size=1)
    try:
        async with db.connect() as c:
            found = [k for k, _ in await keys_by_prefix(c, "p", pattern, first.lower())]
    finally:
        await db.close()
    assert found == sorted(f"kessara{i} research institute" for i in range(1, 31))[:20]
