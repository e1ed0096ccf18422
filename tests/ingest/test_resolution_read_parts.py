"""Resolution's reads ask only for what they use: the decision reading leaves out the undefined acronyms' parts
when the document has none (the rows read are the same), and the final pass's ambiguity check reads the
entities near a standing short-form merge only when one was made across documents, the only ones it asks about."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain.cross_document import nearby_ranges
from app.domain.name_matching import initials_pattern
from app.repositories import resolution_reads
from app.repositories.resolution_ledger import ShortFormMerge, near_params, packed
from app.repositories.resolution_reads import Initials, decision_reading
from app.services.ingest.absorb import Absorber
from tests.ingest.test_final_pass_reads import RECORDS, TEXTS
from tests.ingest.test_pipeline import ingest
from tests.ingest.test_resolution_ingest import install


async def test_a_reading_without_acronyms_reads_what_the_whole_statement_does(make_settings, start_app, fake_llm):
    app = await start_app(make_settings(entity_resolution="auto"))
    install(fake_llm, RECORDS)
    for text in TEXTS:
        await ingest(app, [text])
    names = [("Ngozi Okafor", "person"), ("Dr. Okafor", "person"), ("Kessara Research Institute", "organization")]
    params: dict[str, Any] = {
        "project_id": "default",
        "stored": packed(["ngozi okafor", "dr. okafor", "kri"]),
        "keys": packed(["ngozi okafor", "kessara research institute"]),
        "names": packed(["ngozi okafor", "dr. okafor"]),
        **near_params(nearby_ranges(names)),
    }
    empty = {"patterns": [], "firsts": [], "uppers": [], "acronyms": []}
    async with app.container.db.connect() as conn:
        lean = (await conn.execute(resolution_reads._reading(False, False, False), params)).all()
        whole = (await conn.execute(resolution_reads._reading(True, True, False), params | empty)).all()
        assert lean and sorted(lean) == sorted(whole)

        # a document with an undefined acronym asks for both parts
        pattern, first = initials_pattern("KRI")
        reading = await decision_reading(
            conn,
            "default",
            "doc",
            ["kri"],
            ["kri"],
            ["kri"],
            nearby_ranges([]),
            [Initials(pattern, first.lower())],
            ["kri"],
        )
    assert "kessara research institute" in {k for k, _ in reading.by_initials[0]}
    assert reading.defined_as["kri"]


class _Reads:
    """A connection that records its statements and reads nothing."""

    def __init__(self) -> None:
        self.statements = 0

    async def execute(self, *_: Any) -> Any:
        self.statements += 1
        return self

    def all(self) -> list[Any]:
        return []


async def test_the_ambiguity_check_reads_only_for_merges_made_across_documents() -> None:
    targets = {"ngozi okafor": ("Ngozi Okafor", "person")}
    inside = ShortFormMerge(1, "ngozi okafor", "okafor", "Okafor", "partial", "the document names Ngozi Okafor", False)
    across = ShortFormMerge(2, "ngozi okafor", "okafor", "Okafor", "partial", "'Okafor' alone (partial)", False)
    absorber = Absorber.__new__(Absorber)  # the check uses no service of its own
    conn = _Reads()
    assert await absorber._ambiguous(conn, "p", {}, [inside], targets) == []  # type: ignore[arg-type]
    assert conn.statements == 0
    assert await absorber._ambiguous(conn, "p", {}, [inside, across], targets) == []  # type: ignore[arg-type]
    assert conn.statements == 1


async def test_packed_keys_reach_the_server_as_the_list_they_were(database_url: str) -> None:
    """Resolution's key lists go as one text each (resolution_ledger.packed), split by the server: the app's own
    alias keys (index prefixes, the scope separator) and any name's key come back as sent, in order; an empty list
    is the empty array; a key that cannot be packed is refused, never split in two."""
    from sqlalchemy import text

    from app.db.engine import Database, async_url
    from app.domain.aliases import scoped_key
    from app.repositories.resolution_ledger import KEY_SEPARATOR, keys_sql

    keys = ["ngozi okafor", "\x1e\x1dcut f.b.#0", scoped_key("kri", "doc-1"), "fíataevgis", "s. val.", "% okafor"]
    db = Database(async_url(database_url), pool_size=1)
    try:
        async with db.connect() as conn:
            statement = text(f"SELECT {keys_sql('k')}")
            assert (await conn.execute(statement, {"k": packed(keys)})).scalar_one() == keys
            assert (await conn.execute(statement, {"k": packed([])})).scalar_one() == []
            assert (await conn.execute(statement, {"k": packed(["one"])})).scalar_one() == ["one"]
    finally:
        await db.close()
    for bad in (["a", f"b{KEY_SEPARATOR}c"], ["a", ""], [""]):
        with pytest.raises(ValueError):
            packed(bad)
