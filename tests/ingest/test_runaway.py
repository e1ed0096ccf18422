"""Runaway answers, context windows and structured outputs, against the fake LLM like a real provider:
completion caps per call type, answers cut by their cap or looping, a provider refusing a call for its length
or refusing JSON-schema output."""

from __future__ import annotations

import json

import pytest
from prometheus_client import REGISTRY

from app.domain.runaway import loop_start, trim_loop
from app.providers.llm import context_window_from_error, forget_provider_knowledge
from app.repositories import llm_cache as cache_repo
from app.services.cached_llm import ChatRequest
from app.services.ingest.extraction import Extractor, extraction_from_cached
from app.services.query.keywords import KeywordExtractor

D = "<|#|>"
C = "<|COMPLETE|>"
TEXT = "Alice Walker founded Acme Robotics in Oslo. Bob Stone joined Acme Robotics later."
TYPES = ["Person", "Organization", "Location"]
GOOD = (
    f"entity{D}Alice Walker{D}Person{D}Alice Walker founded Acme Robotics.\n"
    f"entity{D}Acme Robotics{D}Organization{D}Acme Robotics is a company in Oslo.\n"
    f"relation{D}Alice Walker{D}Acme Robotics{D}founding{D}Alice Walker founded Acme Robotics.\n"
)
LOOP_LINE = f"entity{D}Oslo{D}Location{D}Oslo is a city where Acme Robotics was founded.\n"


@pytest.fixture(autouse=True)
def _fresh_provider_knowledge():
    forget_provider_knowledge()
    yield
    forget_provider_knowledge()


def _sample(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _extractor(app) -> Extractor:
    return Extractor(app.container.llm_cache, app.container.settings)


async def _extract(ext, content=TEXT, chunk="doc-1-chunk-000", gleaning=1):
    return await ext.extract_chunk(
        "default", chunk, content, "a.txt", entity_types=TYPES, language="English", max_gleaning=gleaning
    )


def _flat(result):
    return (
        sorted((e.key, e.entity_type, e.description) for e in result.entities),
        sorted((r.src_key, r.tgt_key, tuple(r.keywords), r.description) for r in result.relations),
    )


# ----- the loop detector -----


def test_a_block_written_three_times_in_a_row_is_a_loop_and_one_copy_is_kept():
    text = "intro line here\n" + GOOD * 3 + GOOD[:30]
    kept, looped = trim_loop(text)
    assert looped and kept == "intro line here\n" + GOOD


def test_a_phrase_repeated_inside_one_endless_line_is_a_loop():
    text = "The answer is " + "Acme Robotics builds robots in Oslo and " * 8
    kept, looped = trim_loop(text)
    assert looped and kept.startswith("The answer is Acme Robotics builds robots in Oslo and")
    assert kept.count("Acme Robotics") == 1


@pytest.mark.parametrize(
    "text",
    [
        GOOD + C,
        '{\n "entities": [\n  {\n   "a": {}\n  }\n ]\n}\n}\n}',  # closing brackets are short, not a loop
        "ha ha ha ha ha ha ha ha",
        "one\ntwo\none\ntwo\n",  # twice is not a loop
        "",
    ],
)
def test_ordinary_answers_are_not_loops(text):
    assert loop_start(text) is None


@pytest.mark.parametrize(
    ("message", "window"),
    [
        ("This model's maximum context length is 8192 tokens. However, you requested 9000 tokens", 8192),
        ("Requested tokens (9100) exceed context window of 8192", 8192),
        ("the request exceeds the available context size, try increasing it (n_ctx: 4096)", 4096),
        ("prompt is too long", None),
    ],
)
def test_context_window_read_from_provider_errors(message, window):
    assert context_window_from_error(message) == window


# ----- completion caps -----


async def test_each_call_type_sends_its_completion_cap(app_client, fake_llm):
    c = app_client.container
    await _extract(_extractor(app_client))
    await KeywordExtractor(c.llm_cache, cache_enabled=False).extract("default", "Who is Alice?", [], "English")
    await c.llm.chat([{"role": "user", "content": "fold these"}], operation="summary")
    await c.llm.chat([{"role": "user", "content": "answer me"}], operation="query")
    caps = {call.operation: call.body.get("max_tokens") for call in fake_llm.calls}
    assert caps == {"extract": 4000, "glean": 4000, "keywords": 400, "summary": 1000, "query": 4000}


async def test_a_known_context_window_lowers_the_cap_to_what_fits(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(llm_context_window=5000))
    await _extract(_extractor(app), gleaning=0)
    sent = fake_llm.calls[0].body["max_tokens"]
    prompt = sum(app.container.tokenizer.count(m["content"]) for m in fake_llm.calls[0].messages)
    assert 0 < sent < 5000 - prompt


# ----- runaway answers -----


async def test_a_looping_answer_keeps_the_records_before_the_loop_and_is_counted(app_client, fake_llm):
    fake_llm.handlers["extract"] = lambda messages: GOOD + LOOP_LINE * 200
    before = _sample("llm_runaway_answers_total", {"operation": "extract", "reason": "loop"})
    result, keys = await _extract(_extractor(app_client), gleaning=1)
    assert {e.name for e in result.entities} == {"Alice Walker", "Acme Robotics", "Oslo"}
    assert len(result.relations) == 1 and result.malformed == 0
    assert result.runaway_answers == 1 and not result.no_usable_records
    assert [call.operation for call in fake_llm.calls] == ["extract"]  # no gleaning after a runaway
    assert _sample("llm_runaway_answers_total", {"operation": "extract", "reason": "loop"}) == before + 1
    async with app_client.container.db.connect() as conn:
        rows = await cache_repo.get_many(conn, "default", keys)
    rebuilt = extraction_from_cached(
        [rows[k]["response"] for k in keys], "doc-1-chunk-000", "a.txt", entity_types=TYPES
    )
    assert _flat(rebuilt) == _flat(result) and rebuilt.runaway_answers == 1


async def test_an_answer_cut_by_its_cap_keeps_its_complete_records(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(llm_max_tokens_extract=60))
    fake_llm.honour_max_tokens = True
    fake_llm.handlers["extract"] = lambda messages: (
        GOOD
        + "".join(f"entity{D}Robot {i}{D}Artifact{D}Robot number {i} is built by Acme Robotics.\n" for i in range(500))
    )
    before = _sample("llm_runaway_answers_total", {"operation": "extract", "reason": "length"})
    result, _ = await _extract(_extractor(app), gleaning=1)
    assert fake_llm.calls[0].body["max_tokens"] == 60
    assert {"Alice Walker", "Acme Robotics"} <= {e.name for e in result.entities}
    assert result.runaway_answers == 1 and len(fake_llm.calls) == 1
    assert _sample("llm_runaway_answers_total", {"operation": "extract", "reason": "length"}) == before + 1


# ----- a provider refusing a call for its length -----


async def test_gleaning_refused_for_its_length_keeps_the_first_pass(app_client, fake_llm):
    ext = _extractor(app_client)
    first_words = sum(len(m["content"].split()) for m in ext._first_messages(TEXT, TYPES, "English", False))
    fake_llm.context_window = first_words + 10  # the first pass fits, the gleaning conversation does not
    before = _sample("extraction_gleaning_skipped_total", {"reason": "rejected"})
    result, keys = await _extract(ext, gleaning=2)
    assert [e.name for e in result.entities] == ["Alice Walker", "Acme Robotics", "Oslo", "Bob Stone"]
    assert len(keys) == 1
    assert _sample("extraction_gleaning_skipped_total", {"reason": "rejected"}) == before + 1
    assert app_client.container.llm.context_window == first_words + 10  # learned from the refusal
    # the next chunk knows the window: its gleaning would not fit, so it is not even asked for
    calls = len(fake_llm.calls)
    await _extract(ext, content="Carol Diaz met Bob Stone in Paris.", chunk="doc-1-chunk-001", gleaning=1)
    assert [c.operation for c in fake_llm.calls[calls:]] == ["extract"]


async def test_a_call_refused_for_its_length_is_retried_with_an_answer_that_fits(app_client, fake_llm):
    fake_llm.context_window = 3000
    fake_llm.window_counts_max_tokens = True  # prompt + max_tokens 4000 > 3000: refused, stating the window
    result, _ = await _extract(_extractor(app_client), gleaning=0)
    assert result.entities
    assert [c.operation for c in fake_llm.calls] == ["extract"]  # only accepted calls are recorded
    assert fake_llm.started == ["extract", "extract"]
    assert fake_llm.calls[0].body["max_tokens"] < 3000


# ----- structured outputs -----


async def test_json_format_asks_for_a_schema_and_yields_the_same_records(start_app, make_settings, fake_llm):
    records_app = await start_app(make_settings())
    by_records, _ = await _extract(_extractor(records_app))
    fake_llm.reset()
    app = await start_app(make_settings(extraction_format="json"))
    by_json, keys = await _extract(_extractor(app))
    first, glean = fake_llm.calls
    assert first.body["response_format"]["type"] == "json_schema"
    assert first.body["response_format"]["json_schema"]["schema"]["required"] == ["entities", "relationships"]
    assert json.loads(first.response)["entities"] and "JSON" in first.messages[0]["content"]
    assert _flat(by_json) == _flat(by_records)
    assert not by_json.no_usable_records and not by_json.retried  # empty gleaning lists are a finished answer
    assert len(keys) == 2


async def test_a_provider_refusing_json_schema_falls_back_to_records_once(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(extraction_format="json"))
    fake_llm.structured_outputs = False
    result, _ = await _extract(_extractor(app), gleaning=0)
    assert len(result.entities) == 4
    assert app.container.llm.structured_outputs is False
    await _extract(_extractor(app), content="Carol Diaz met Bob Stone in Paris.", chunk="c2", gleaning=0)
    keywords = await KeywordExtractor(app.container.llm_cache, cache_enabled=False).extract(
        "default", "Who is Carol Diaz?", [], "English"
    )
    assert keywords.low_level == ["Carol Diaz"]
    assert fake_llm.started == ["extract", "extract", "extract", "keywords"]  # one refusal, then records
    assert all(
        "response_format" not in c.body or c.body["response_format"]["type"] != "json_schema" for c in fake_llm.calls
    )


async def test_json_keywords_use_the_keyword_schema(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(extraction_format="json"))
    keywords = await KeywordExtractor(app.container.llm_cache, cache_enabled=False).extract(
        "default", "Who is Carol Diaz?", [], "English"
    )
    assert keywords.low_level == ["Carol Diaz"]
    assert fake_llm.calls[0].body["response_format"]["json_schema"]["name"] == "query_keywords"


async def test_truncated_answers_still_bypass_the_cache(app_client, fake_llm):
    fake_llm.honour_max_tokens = True
    messages = [{"role": "user", "content": "say something long"}]
    fake_llm.handlers["summary"] = lambda m: "word " * 2000
    answer = await app_client.container.llm_cache.chat("default", ChatRequest("summary", messages, "summary"))
    assert answer.truncated and len(answer.text.split()) == 1000
