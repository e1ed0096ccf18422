"""Which document summarises an entity that documents in several worker processes merge at once: the one
whose merge took it over FORCE_LLM_SUMMARY_ON_MERGE. The others only append their fragments, which the
summary keeps after it (and summarises once more when they take it over the threshold again).

Two apps on one database stand for two worker processes: each has its own pipeline, so nothing in one
process's memory tells the other that a summary is in flight."""

from __future__ import annotations

from types import SimpleNamespace

from sqlalchemy import func, select

from app.db.tables import entity_sources
from app.domain.texts import SEP, fragments
from app.providers.tokenizer import get_tokenizer
from app.services.graph.summaries import Summarizer
from app.services.ingest.finalise import summary_owner
from app.services.ingest.intake import IngestionService
from tests.ingest.test_pipeline import entity, ingest, scalar
from tests.support.curation import Parked


async def _second_process(start_app, make_settings, first) -> object:
    """A second worker process: the first one stops claiming, so every new document goes to the second."""
    first.container.worker._has_room = lambda: False
    return await start_app(make_settings(force_llm_summary_on_merge=3, max_parallel_insert=1))


async def _post(app, text: str) -> str:
    response = await app.http.post("/documents", json={"documents": [{"text": text}]})
    assert response.status_code == 202, response.text
    return response.json()["documents"][0]["id"]


async def _until_done(app, ids: list[str]) -> None:
    done, _ = await IngestionService(app.container).wait_until_done("default", ids, limit=60)
    assert done


async def test_documents_of_another_process_append_while_the_summary_is_made(make_settings, start_app, fake_llm):
    first = await start_app(make_settings(force_llm_summary_on_merge=3, max_parallel_insert=1))
    await ingest(first, ["Uma paints."])
    await ingest(first, ["Uma sings."])
    parked = Parked("Uma is a painter and singer who dances.")
    fake_llm.handlers["summary"] = parked
    crossing = await _post(first, "Uma dances.")  # 3 fragments: this document summarises
    await parked.wait_arrived(1)

    second = await _second_process(start_app, make_settings, first)
    [appended] = await ingest(second, ["Uma swims."])  # merged while the summary is in flight
    assert appended["status"] == "processed"
    assert parked.arrived == 1  # the second process left Uma to the document that took her over
    parked.release()
    await _until_done(first, [crossing])

    uma = await entity(first, "uma")
    assert uma["description"] == f"Uma is a painter and singer who dances.{SEP}Uma swims."  # nothing lost
    assert len(fake_llm.calls_of("summary")) == 1
    assert await scalar(first, select(func.count()).select_from(entity_sources)) == 4


async def test_fragments_merged_during_the_call_over_the_threshold_are_summarised_once_more(
    make_settings, start_app, fake_llm
):
    first = await start_app(make_settings(force_llm_summary_on_merge=3, max_parallel_insert=1))
    await ingest(first, ["Uma paints."])
    await ingest(first, ["Uma sings."])
    parked = Parked(None)  # the fake's default summary
    fake_llm.handlers["summary"] = parked
    crossing = await _post(first, "Uma dances.")
    await parked.wait_arrived(1)

    second = await _second_process(start_app, make_settings, first)
    await ingest(second, ["Uma swims."])
    await ingest(second, ["Uma rows."])  # [summary, swims, rows] once folded: over the threshold again
    assert parked.arrived == 1
    parked.release()
    await _until_done(first, [crossing])

    summaries = fake_llm.calls_of("summary")
    assert len(summaries) == 2  # documents touching Uma: 5; summary calls: 2, both by the crossing document
    last_prompt = summaries[-1].messages[-1]["content"]
    assert "Uma swims." in last_prompt and "Uma rows." in last_prompt
    uma = await entity(first, "uma")
    assert len(fragments(uma["description"])) == 1
    assert await scalar(first, select(func.count()).select_from(entity_sources)) == 5


def test_owner_rule(make_settings):
    s = Summarizer(SimpleNamespace(llm=None), get_tokenizer(), make_settings(force_llm_summary_on_merge=3))
    three, two = SEP.join("abc"), SEP.join("ab")
    assert summary_owner(s, {"k": two}, "k", three)  # this merge crossed
    assert summary_owner(s, {"k": ""}, "k", three)  # a new entity
    assert not summary_owner(s, {"k": three}, "k", SEP.join("abcd"))  # already over: its summary is in flight
    assert summary_owner(s, {"k": SEP.join("abcdef")}, "k", SEP.join("abcdefg"))  # stranded: 2 x the threshold
    assert not summary_owner(s, {"k": ""}, "k", two)  # under the threshold
    assert summary_owner(s, None, "k", three)  # a retry: every item over the threshold
