"""Fleet-wide summary marks (Finaliser._marked): while one worker process summarises an item, a document of
another process leaves it to that one; an item whose stored text no longer needs a summary is left alone."""

from __future__ import annotations

from sqlalchemy import update

from app.db.tables import entities
from app.domain.texts import join_fragments
from tests.ingest.test_pipeline import ingest


async def _set_fragments(app, key: str, n: int) -> None:
    async with app.container.db.transaction() as conn:
        text = join_fragments([f"Fragment {i} about {key}." for i in range(n)])
        await conn.execute(update(entities).where(entities.c.key == key).values(description=text))


async def test_an_item_marked_elsewhere_is_left_to_that_process(settings, start_app, fake_llm):
    app = await start_app(settings)
    [doc] = await ingest(app, ["Uma met Vic in Oslo."])
    await _set_fragments(app, "uma", settings.force_llm_summary_on_merge + 1)
    finaliser = app.container.worker.pipeline.finaliser
    first = await finaliser.read_touched("default", doc["id"])
    second = await finaliser.read_touched("default", doc["id"])
    uma = {"uma": first.entities["uma"]}
    async with finaliser._marked("default", uma, {}, first) as (mine, _):
        assert list(mine) == ["uma"]
        async with finaliser._marked("default", uma, {}, second) as (theirs, _):  # another transaction
            assert theirs == {}
    async with finaliser._marked("default", uma, {}, second) as (again, _):  # released with the first
        assert list(again) == ["uma"]


async def test_an_item_summarised_meanwhile_is_not_summarised_again(settings, start_app, fake_llm):
    app = await start_app(settings)
    [doc] = await ingest(app, ["Uma met Vic in Oslo."])
    await _set_fragments(app, "uma", settings.force_llm_summary_on_merge + 1)
    finaliser = app.container.worker.pipeline.finaliser
    touched = await finaliser.read_touched("default", doc["id"])
    await _set_fragments(app, "uma", 1)  # another process folded its summary in
    async with finaliser._marked("default", {"uma": touched.entities["uma"]}, {}, touched) as (mine, _):
        assert mine == {}
    assert touched.entities["uma"].description == "Fragment 0 about uma."  # what embedding must describe
