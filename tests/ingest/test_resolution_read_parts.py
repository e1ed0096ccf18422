"""Resolution's reads ask only for what they use: the decision reading leaves out the undefined acronyms' parts
when the document has none (the rows read are the same), and the final pass's ambiguity check reads the
entities near a standing short-form merge only when one was made across documents, the only ones it asks about."""

from __future__ import annotations

from typing import Any

from app.domain.cross_document import nearby_ranges
from app.domain.name_matching import initials_pattern
from app.repositories import resolution_reads
from app.repositories.resolution_ledger import ShortFormMerge, near_params
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
        "stored": ["ngozi okafor", "dr. okafor", "kri"],
        "keys": ["ngozi okafor", "kessara research institute"],
        "names": ["ngozi okafor", "dr. okafor"],
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
