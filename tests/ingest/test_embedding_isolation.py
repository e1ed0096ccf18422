"""One input the embedding endpoint refuses (HTTP 400 for the whole request, as providers answer) costs the other
inputs of its batch nothing: the batch is split until the bad input stands alone, the others are embedded, and
the bad one is reported on the document instead of failing it."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.core.errors import ProviderError
from app.db.tables import chunks, entities, relations
from app.providers.embeddings import InputRefused
from tests.ingest.test_progress_cancel import make_app

BAD = "Zorblax"
STORY = "\n\n".join([*(f"Person{i} met Helper{i} in Town{i}." for i in range(8)), f"{BAD} glows brightly."])


async def test_a_refused_input_is_isolated_and_the_rest_of_its_batch_embedded(start_app, make_settings, fake_llm):
    app = await start_app(make_settings(worker_enabled=False, embedding_batch_size=16))
    embedder = app.container.embedder
    fake_llm.refused_embedding_words = {BAD}
    texts = [f"text number {i}" for i in range(16)]
    texts[9] = f"text about {BAD}"
    each = await embedder.embed_each(texts)
    assert [i for i, v in enumerate(each.vectors) if v is None] == [9]
    assert list(each.refused) == [9] and "content refused" in each.refused[9] and each.refused[9].startswith("400")
    assert all(len(v) == embedder.dim for v in each.vectors if v is not None)
    assert fake_llm.embedding_requests <= 1 + 2 * 4  # halved four times down to the bad input alone

    with pytest.raises(ProviderError):  # `embed` still fails as a whole
        await embedder.embed(texts)
    with pytest.raises(InputRefused):  # every input refused: the request itself is wrong, not an input
        await embedder.embed_each([f"{BAD} one", f"{BAD} two"])


async def test_a_document_with_one_refused_input_is_processed_with_the_others_embedded(
    start_app, make_settings, fake_llm
):
    app = await make_app(start_app, make_settings)
    fake_llm.refused_embedding_words = {BAD}
    response = await app.http.post("/documents", json={"project_id": "p", "documents": [{"text": STORY}], "wait": True})
    doc_id = response.json()["documents"][0]["id"]
    doc = (await app.http.get(f"/documents/{doc_id}", params={"project_id": "p"})).json()
    assert doc["status"] == "processed", doc["error"]
    report = doc["extraction_report"]
    assert report["unembedded_items"] == 2, report  # its chunk and its entity
    assert f"chunk 9 ({doc_id}-chunk-008)" in report["embedding_warning"]
    assert f"entity '{BAD}'" in report["embedding_warning"] and "content refused" in report["embedding_warning"]

    async with app.container.db.connect() as conn:
        chunk_vectors = dict((await conn.execute(select(chunks.c.content, chunks.c.embedding.is_not(None)))).all())
        entity_vectors = dict((await conn.execute(select(entities.c.name, entities.c.embedding.is_not(None)))).all())
        relation_vectors = (await conn.execute(select(relations.c.embedding.is_not(None)))).scalars().all()
    assert chunk_vectors.pop(f"{BAD} glows brightly.") is False and all(chunk_vectors.values())
    assert entity_vectors.pop(BAD) is False and len(entity_vectors) == 24 and all(entity_vectors.values())
    assert len(relation_vectors) == 16 and all(relation_vectors)
