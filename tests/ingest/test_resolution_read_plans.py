"""The decision reading and the entities near a document's names read the same rows whichever plan the server
runs them with: a prepared statement gets a generic plan after five runs, where the arrays of keys are parameters
and not constants, and the statements match them as sets (IN (SELECT unnest(...))) so that such a plan stays
cheap (repositories/resolution_reads.py)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.domain.cross_document import nearby_ranges
from app.domain.name_index import Nearby
from app.domain.name_matching import initials_pattern
from app.repositories.resolution_ledger import entities_near
from app.repositories.resolution_reads import Initials, Reading, decision_reading
from tests.ingest.test_final_pass_reads import RECORDS, TEXTS
from tests.ingest.test_pipeline import ingest
from tests.ingest.test_resolution_ingest import install

_NAMES = [("Ngozi Okafor", "person"), ("Dr. Okafor", "person"), ("Kessara Research Institute", "organization")]


async def _read(conn: AsyncConnection, plan: str) -> tuple[Reading, Nearby]:
    await conn.execute(text(f"SET LOCAL plan_cache_mode = {plan}"))
    pattern, first = initials_pattern("KRI")
    reading = await decision_reading(
        conn,
        "default",
        "doc",
        ["ngozi okafor", "dr. okafor", "kri", "nobody"],
        ["ngozi okafor", "kessara research institute", "kri", "nobody"],
        ["ngozi okafor", "dr. okafor", "kri"],
        nearby_ranges(_NAMES),
        [Initials(pattern, first.lower())],
        ["kri"],
    )
    return reading, await entities_near(conn, "default", nearby_ranges(_NAMES))


async def test_generic_and_custom_plans_read_the_same_rows(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="auto"))
    install(fake_llm, RECORDS)
    for text_ in TEXTS:
        await ingest(app, [text_])
    async with app.container.db.transaction() as conn:
        custom = await _read(conn, "force_custom_plan")
        generic = await _read(conn, "force_generic_plan")
        for _ in range(5):  # the plan the server picks on its own once the statement has run five times
            chosen = await _read(conn, "auto")
    reading, near = custom
    assert reading.types and reading.nearby and near
    assert "kessara research institute" in reading.types
    assert generic == custom
    assert chosen == custom
