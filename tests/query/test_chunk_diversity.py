"""Near-duplicate chunks give way to the next ranked ones (domain/chunk_diversity.py), in the context of a
stored graph too."""

from __future__ import annotations

from app.domain.chunk_diversity import distinct_first, similarity, word_set
from app.domain.hits import ChunkHit
from tests.support.graph_factory import GraphFactory

GUIDANCE = "Rest, drink water and take paracetamol for the fever; call a doctor if the {} lasts three days."
OTHER = "Vaccination in autumn prevents most severe cases among older adults."


def hit(i: int, content: str) -> ChunkHit:
    return ChunkHit(f"c{i}", "doc", content, None, "entity")


def test_word_sets_compare_by_jaccard_similarity():
    assert similarity(word_set("The cat sat"), word_set("the CAT sat!")) == 1.0
    assert similarity(word_set("a b"), word_set("b c")) == 1 / 3
    assert similarity(word_set(""), word_set("")) == 0.0


def test_a_near_duplicate_gives_way_to_the_next_chunk_and_the_order_stays():
    chunks = [hit(0, GUIDANCE.format("cough")), hit(1, GUIDANCE.format("rash")), hit(2, OTHER), hit(3, "spare")]
    assert [c.id for c in distinct_first(chunks, 2)] == ["c0", "c2"]
    assert [c.id for c in distinct_first(chunks, 3)] == ["c0", "c2", "c3"]


def test_near_duplicates_fill_up_when_nothing_else_is_left():
    chunks = [hit(0, GUIDANCE.format("cough")), hit(1, GUIDANCE.format("rash")), hit(2, OTHER)]
    assert [c.id for c in distinct_first(chunks, 3)] == ["c0", "c1", "c2"]
    assert [c.id for c in distinct_first(chunks, 5)] == ["c0", "c1", "c2"]
    assert distinct_first([], 3) == []


async def test_the_context_takes_a_distinct_chunk_instead_of_a_near_duplicate(start_app, make_settings):
    g = GraphFactory("default")
    texts = [GUIDANCE.format("cough"), GUIDANCE.format("rash"), OTHER]
    c = g.document("doc-flu", "flu.txt", texts)
    g.entity("Influenza", "disease", "A viral infection.", c)  # cites the three chunks, in this order
    app = await start_app(make_settings(cosine_threshold=0.2))
    async with app.container.db.transaction() as conn:
        await g.insert(conn)
    body = {"query": "How is influenza treated?", "mode": "local", "ll_keywords": ["Influenza"]}
    body |= {"chunk_top_k": 2, "chunk_selection": "weight", "only_need_context": True}
    response = await app.http.post("/query", json=body)
    assert response.status_code == 200, response.text
    assert [ch["content"] for ch in response.json()["context"]["chunks"]] == [texts[0], texts[2]]
