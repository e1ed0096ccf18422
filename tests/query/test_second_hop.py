"""The second hop of a two-hop question (`graph_chunks.with_second_hop`): among a side's leading chunks, the one
sharing a specific entity (few chunks cite it) with the first chunk and holding most of the question's words the
first chunk lacks moves up to second place, so a tight chunk_top_k keeps both passages of a bridge question."""

from __future__ import annotations

from app.services.query.graph_chunks import BRIDGE_CHUNKS, SECOND_HOP_WINDOW, with_second_hop
from tests.support.graph_factory import GraphFactory

# the question "Where was the designer of the Velm lighthouse born?" searched for: velm, lighthouse, designer, born
WORDS = {
    "lighthouse": {"velm", "lighthouse", "designer"},
    "keeper": {"velm", "lighthouse"},
    "harbour": {"velm"},
    "fenn": {"designer", "born"},
    "stranger": {"born"},
}
CITED_BY = {"orla fenn": ["lighthouse", "fenn"], "velm": ["lighthouse", "keeper", "harbour"], "kai": ["stranger"]}


class OwnDocuments(dict):
    """Every chunk in a document of its own, as each passage of a multi-hop corpus is."""

    def get(self, chunk_id: str, default: object = None) -> str:
        return f"doc-{chunk_id}"


APART = OwnDocuments()


def test_the_chunk_sharing_an_entity_with_the_first_and_holding_the_word_it_lacks_comes_second():
    order = ["lighthouse", "keeper", "harbour", "stranger", "fenn"]
    assert with_second_hop(order, WORDS, CITED_BY, APART) == ["lighthouse", "fenn", "keeper", "harbour", "stranger"]


def test_a_chunk_holding_the_lacking_word_but_no_shared_entity_stays_where_it_was():
    order = ["lighthouse", "keeper", "stranger", "harbour"]
    assert with_second_hop(order, WORDS, CITED_BY, APART) == order


def test_nothing_moves_when_the_first_chunk_lacks_no_word_or_the_best_hop_is_already_second():
    assert with_second_hop(["fenn", "lighthouse", "keeper"], {**WORDS, "fenn": {"velm", "born"}}, CITED_BY, APART) == [
        "fenn",
        "lighthouse",
        "keeper",
    ]
    full = {**WORDS, "lighthouse": {"velm", "lighthouse", "designer", "born"}}
    assert with_second_hop(["lighthouse", "keeper", "fenn"], full, CITED_BY, APART) == ["lighthouse", "keeper", "fenn"]
    assert with_second_hop(["lighthouse", "fenn", "keeper"], WORDS, CITED_BY, APART) == ["lighthouse", "fenn", "keeper"]
    assert with_second_hop(["lighthouse", "fenn"], WORDS, CITED_BY, APART) == ["lighthouse", "fenn"]
    assert with_second_hop([], WORDS, CITED_BY, APART) == []


def test_the_earlier_chunk_wins_a_tie_and_one_beyond_the_window_is_never_moved():
    words = {**WORDS, "keeper": {"velm", "born"}}
    order = ["lighthouse", "harbour", "keeper", "fenn"]
    assert with_second_hop(order, words, CITED_BY, APART) == ["lighthouse", "keeper", "harbour", "fenn"]
    deep = ["lighthouse", *(f"filler{i}" for i in range(SECOND_HOP_WINDOW)), "fenn"]
    assert with_second_hop(deep, WORDS, CITED_BY, APART) == deep


def test_an_entity_many_chunks_cite_links_nothing():
    broad = {"orla fenn": ["lighthouse", "fenn", *(f"other{i}" for i in range(BRIDGE_CHUNKS - 1))]}
    order = ["lighthouse", "keeper", "fenn"]
    assert with_second_hop(order, WORDS, broad, APART) == order
    specific = {"orla fenn": ["lighthouse", "fenn", *(f"other{i}" for i in range(BRIDGE_CHUNKS - 2))]}
    assert with_second_hop(order, WORDS, specific, APART) == ["lighthouse", "fenn", "keeper"]


def test_a_chunk_of_the_first_chunks_own_document_is_no_second_hop():
    order = ["lighthouse", "keeper", "harbour", "stranger", "fenn"]
    one_document = dict.fromkeys(order, "doc-velm")
    assert with_second_hop(order, WORDS, CITED_BY, one_document) == order
    assert with_second_hop(order, WORDS, CITED_BY, {**one_document, "fenn": "doc-fenn"})[:2] == ["lighthouse", "fenn"]


def lighthouse_graph() -> GraphFactory:
    """The question names the lighthouse; its designer's birthplace is in another document's passage, which
    names only her."""
    g = GraphFactory("default")
    texts = ["The Velm lighthouse was designed by Orla Fenn.", "The Velm lighthouse keeper lit the Velm lamp nightly."]
    texts += ["Velm lighthouse stamps were sold at the Velm lighthouse shop."]
    c = g.document("doc-velm", "velm.txt", texts)
    c += g.document("doc-fenn", "fenn.txt", ["Orla Fenn was born in Kessa."])
    c += g.document("doc-tides", "tides.txt", [f"Tide gauge {i} logs the water level every hour." for i in range(4)])
    g.entity("Velm Lighthouse", "building", "A lighthouse.", [c[0], c[1], c[2]])
    g.entity("Orla Fenn", "person", "An architect.", [c[0], c[3]])
    g.entity("Kessa", "location", "A town.", [c[3]])
    g.relation("Orla Fenn", "Velm Lighthouse", "design", "Orla Fenn designed the Velm lighthouse.", [c[0]])
    g.relation("Orla Fenn", "Kessa", "origin", "Orla Fenn was born in Kessa.", [c[3]])
    for i in range(4):
        g.entity(f"Tide Gauge {i}", "artifact", f"Gauge number {i}.", [c[4 + i]])
    return g


async def test_local_keeps_both_passages_of_a_bridge_question_within_two_chunks(start_app, make_settings):
    app = await start_app(make_settings(cosine_threshold=0.2))
    async with app.container.db.transaction() as conn:
        await lighthouse_graph().insert(conn)
    body = {"query": "Where was the designer of the Velm lighthouse born?", "mode": "local", "only_need_context": True}
    body |= {"ll_keywords": ["Velm lighthouse"], "hl_keywords": [], "top_k": 5, "chunk_top_k": 2}
    response = await app.http.post("/query", json=body)
    assert response.status_code == 200, response.text
    assert [c["content"] for c in response.json()["context"]["chunks"]] == [
        "The Velm lighthouse was designed by Orla Fenn.",
        "Orla Fenn was born in Kessa.",
    ]
