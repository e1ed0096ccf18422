"""Resolution decided before the merge's key locks (services/ingest/name_resolution.py::anticipate) and only
checked under them: reused when the names' state is as it was read, taken again when another document
changed it in between, with the outcome of a decision taken under the locks either way."""

from __future__ import annotations

from sqlalchemy import select

from app.db.tables import entity_aliases, entity_merge_ledger
from app.services.ingest.name_resolution import NameResolution
from tests.ingest.test_pipeline import ingest, rows
from tests.ingest.test_resolution_ingest import graph, install


class _Watch:
    """Records, per document's resolution, each anticipated target of "ACME HOLDINGS" and whether each
    decision under the locks reused the anticipated one; `between` runs once after the first anticipation."""

    def __init__(self, monkeypatch, between=None) -> None:
        self.between = between
        self.anticipated: list[str] = []
        self.reused: list[bool] = []
        anticipate, decide_locked = NameResolution.anticipate, NameResolution.decide_locked

        async def watched_anticipate(resolution: NameResolution, conn) -> None:
            await anticipate(resolution, conn)
            if "acme holdings" in resolution.doc.names:
                assert resolution.anticipated is not None
                self.anticipated.append(resolution.anticipated.result.target("acme holdings"))
                if self.between is not None:
                    between, self.between = self.between, None
                    await between()

        def watched_decide_locked(resolution: NameResolution, known) -> None:
            try:
                decide_locked(resolution, known)
            finally:
                if "acme holdings" in resolution.doc.names:
                    self.reused.append(resolution.reused)

        monkeypatch.setattr(NameResolution, "anticipate", watched_anticipate)
        monkeypatch.setattr(NameResolution, "decide_locked", watched_decide_locked)


async def _ledger(app) -> list[tuple[str, str, bool]]:
    found = await rows(app, select(entity_merge_ledger))
    return sorted((r["entity_key"], r["merged_name"], r["retroactive"]) for r in found)


async def test_an_unchanged_state_reuses_the_decision_taken_before_the_locks(
    make_settings, start_app, fake_llm, monkeypatch
):
    app = await start_app(make_settings())
    install(fake_llm)
    await ingest(app, ["doc one"])
    watch = _Watch(monkeypatch)
    await ingest(app, ["doc two"])
    assert watch.anticipated == ["acme holdings ltd."]
    assert watch.reused == [True]
    keys, pairs = await graph(app)
    assert keys == {"acme holdings ltd.", "dr. mira tolven"}
    assert pairs == {("acme holdings ltd.", "dr. mira tolven")}


async def test_a_document_merged_between_the_decision_and_the_locks_is_seen(
    make_settings, start_app, fake_llm, monkeypatch
):
    """Doc two decides while the project is empty ("ACME HOLDINGS" stays itself); doc one, merged before doc
    two takes its locks, creates "Acme Holdings Ltd.". Under the locks doc two's decision is taken again, so
    it merges into Acme Holdings Ltd. in its own merge (a ledger row that is not retroactive), as when the
    documents come one after the other."""
    app = await start_app(make_settings())
    install(fake_llm)

    async def doc_one_merges() -> None:
        [doc] = await ingest(app, ["doc one"])
        assert doc["status"] == "processed"

    watch = _Watch(monkeypatch, between=doc_one_merges)
    [two] = await ingest(app, ["doc two"])
    assert two["status"] == "processed"
    assert watch.anticipated[0] == "acme holdings"  # decided before doc one existed
    assert watch.reused[0] is False  # the state it was decided on had changed: decided again
    keys, pairs = await graph(app)
    assert keys == {"acme holdings ltd.", "dr. mira tolven"}
    assert pairs == {("acme holdings ltd.", "dr. mira tolven")}
    ledger = await _ledger(app)
    assert ("acme holdings ltd.", "ACME HOLDINGS", False) in ledger
    aliases = {r["alias_key"]: r["entity_key"] for r in await rows(app, select(entity_aliases))}
    assert aliases["acme holdings"] == "acme holdings ltd."
