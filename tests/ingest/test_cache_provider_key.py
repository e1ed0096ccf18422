"""The LLM cache key includes the provider's base URL: one model name served by two endpoints does not
share answers, while a deletion rebuild still finds the extractions cached under the keys its chunks list."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from app.db.tables import llm_cache
from app.providers.llm import LLMClient
from app.providers.tokenizer import get_tokenizer
from app.services.cached_llm import CachedLLM, ChatRequest, cache_key, provider_identity
from tests.graph.test_deletion import DOC_A, DOC_B, ingest
from tests.support.database import TEST_DIM
from tests.support.fakes.openai_server import FakeOpenAI


@pytest.fixture
def other_provider() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(dim=TEST_DIM).start()
    yield server
    server.stop()


def test_provider_identity():
    assert provider_identity("m", None) == provider_identity("m", "") == provider_identity("m", "  ") == "m"
    assert provider_identity("m", "http://a:1/v1") == "m@http://a:1/v1"
    assert provider_identity("m", "HTTP://A:1/v1/") == provider_identity("m", "http://a:1/v1")
    assert provider_identity("m", "http://a:1/V1") != provider_identity("m", "http://a:1/v1")  # paths keep case
    assert provider_identity("m", "http://a:1/v1") != provider_identity("m", "http://b:1/v1")
    # without a base URL the key is the one written before the base URL counted: old entries stay readable
    assert cache_key("extract", provider_identity("m", None), "x") == cache_key("extract", "m", "x")


async def _rows(db) -> int:
    async with db.connect() as conn:
        return int(
            await conn.scalar(
                select(func.count())
                .select_from(llm_cache)
                .where(llm_cache.c.project_id == "default", llm_cache.c.cache_type == "query")
            )
        )


async def test_two_base_urls_make_two_entries_and_two_calls(app_client, fake_llm, other_provider, make_settings):
    db = app_client.container.db
    tokenizer = get_tokenizer(app_client.container.settings.tokenizer_encoding)
    first = CachedLLM(db, LLMClient(make_settings(), tokenizer))
    second = CachedLLM(db, LLMClient(make_settings(llm_base_url=other_provider.url), tokenizer))
    request = ChatRequest("query", [{"role": "user", "content": "Who met Bob in Paris?"}], "query")
    assert first.key(request) != second.key(request)

    a = await first.chat("default", request)
    b = await second.chat("default", request)
    assert not a.hit and not b.hit
    assert len(fake_llm.calls_of("query")) == 1 and len(other_provider.calls_of("query")) == 1
    assert await _rows(db) == 2
    # each provider's answer is now cached under its own key
    assert (await first.chat("default", request)).hit and (await second.chat("default", request)).hit
    assert len(fake_llm.calls_of("query")) == 1 and len(other_provider.calls_of("query")) == 1


async def test_deletion_through_another_base_url_reuses_cached_extractions(
    app_client, fake_llm, other_provider, start_app, make_settings
):
    doc_a = await ingest(app_client, DOC_A)
    await ingest(app_client, DOC_B)
    other = await start_app(make_settings(llm_base_url=other_provider.url, worker_enabled=False))
    fake_llm.calls.clear()
    response = await other.http.delete(f"/documents/{doc_a}")
    assert response.status_code == 200, response.text
    assert response.json()["llm_calls"]["extract"] == 0
    for server in (fake_llm, other_provider):
        assert not server.calls_of("extract") and not server.calls_of("glean")
