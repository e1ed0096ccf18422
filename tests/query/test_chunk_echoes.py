"""Graph descriptions leave out the sentences the shown chunks already hold (domain/chunk_echoes.py), so graph
lines whose chunks are not shown take the room; in the context of a stored graph too."""

from __future__ import annotations

from app.domain.chunk_echoes import ShownText, sentences, unsaid, without_echoes
from app.domain.hits import ChunkHit, EntityHit
from app.domain.texts import SEP
from tests.support.graph_factory import GraphFactory

SHOWN = "Influenza is a viral infection of the airways.  It spreads by droplets. Fever is its first sign."
HIDDEN = "Oseltamivir shortens the illness when taken within two days."


def chunks(*texts: str) -> list[ChunkHit]:
    return [ChunkHit(f"c{i}", "doc", t, None, "vector") for i, t in enumerate(texts)]


def shown(*texts: str) -> list[str]:
    """The texts of these chunks as the shown ones (normalised)."""
    return ShownText(chunks(*texts)).of([f"c{i}" for i in range(len(texts))])


def entity(name: str, description: str, chunk_ids: list[str]) -> EntityHit:
    return EntityHit(name.lower(), name, "disease", description, 1, [], chunk_ids)


def test_sentences_said_word_for_word_are_left_out_whatever_the_spacing():
    said = shown(SHOWN)
    description = "Influenza is a viral  infection\nof the airways. Its season peaks in winter."
    assert unsaid(description, said) == "Its season peaks in winter."
    assert unsaid("It spreads by droplets.", said) == ""
    assert (
        unsaid("Influenza spreads through droplets in the air.", said)
        == "Influenza spreads through droplets in the air."
    )
    assert (
        unsaid("INFLUENZA IS A VIRAL INFECTION OF THE AIRWAYS.", said)
        == "INFLUENZA IS A VIRAL INFECTION OF THE AIRWAYS."
    )
    assert unsaid("", said) == ""


def test_a_piece_split_off_by_an_abbreviation_is_never_matched_alone():
    assert sentences("Dr. Ames treated St. Mary. The ward was full that winter.") == [
        "Dr. Ames treated St. Mary.",
        "The ward was full that winter.",
    ]
    said = shown("Call Dr. Ames now. Visit St. Mary. The ward was full that winter.")
    assert unsaid("Dr. Ames treated St. Mary. The ward was full that winter.", said) == "Dr. Ames treated St. Mary."


def test_fragments_stay_apart_and_a_fragment_said_whole_goes():
    description = SEP.join(
        [
            "It spreads by droplets.",
            "Vaccines exist for every season. Fever is its first sign.",
            "A new one comes each year.",
        ]
    )
    assert unsaid(description, shown(SHOWN)) == SEP.join(
        ["Vaccines exist for every season.", "A new one comes each year."]
    )


def test_an_item_said_entirely_by_the_chunks_keeps_its_line_without_a_description():
    items = [
        entity("Influenza", SHOWN, ["c0"]),
        entity("Fever", "Fever is its first sign. It lasts about three days.", ["c9", "c0"]),
        entity("Cure", HIDDEN, ["c0"]),
        entity("Cough", "It spreads by droplets.", ["c1"]),  # its own chunk is not shown: never searched
    ]
    kept = without_echoes(items, ShownText(chunks(SHOWN)))
    assert [(e.name, e.description) for e in kept] == [
        ("Influenza", ""),
        ("Fever", "It lasts about three days."),
        ("Cure", HIDDEN),
        ("Cough", "It spreads by droplets."),
    ]
    assert kept[2] is items[2]  # untouched items are not copied
    assert items[1].description == "Fever is its first sign. It lasts about three days."  # found items unchanged
    assert without_echoes(items, ShownText([])) == items


async def test_the_context_shows_what_the_chunks_do_not_say(start_app, make_settings):
    g = GraphFactory("default")
    c = g.document("doc-flu", "flu.txt", [SHOWN])
    g.entity("Influenza", "disease", "Influenza is a viral infection of the airways. Its season peaks in winter.", c)
    g.entity("Fever", "symptom", "Fever is its first sign.", c)
    g.relation("Influenza", "Fever", "causes", "Fever is its first sign.", c)
    app = await start_app(make_settings(cosine_threshold=0.0))
    async with app.container.db.transaction() as conn:
        await g.insert(conn)
    body = {"query": "What is influenza?", "mode": "local", "ll_keywords": ["Influenza", "Fever"]}
    response = await app.http.post("/query", json=body | {"only_need_context": True})
    assert response.status_code == 200, response.text
    context = response.json()["context"]
    assert [ch["content"] for ch in context["chunks"]] == [SHOWN]
    described = {e["name"]: e["description"] for e in context["entities"]}
    assert described == {"Influenza": "Its season peaks in winter.", "Fever": ""}
    assert [(r["source"], r["target"], r["description"]) for r in context["relations"]] == [("Fever", "Influenza", "")]


async def test_global_fills_the_room_its_echoes_leave_with_chunks(start_app, make_settings):
    """Global keeps the graph ahead of the chunks: once its relation's sentences are left out (chunk A says them),
    the room they took lets chunk B in as well."""
    said = " ".join(f"Widget {i} is linked to gadget {i} by a long steel rod." for i in range(60))
    other = " ".join(f"Gadget {i} is stored in warehouse {i} near the harbour." for i in range(60))
    g = GraphFactory("default")
    a, b = g.document("doc-w", "w.txt", [said, other])
    g.relation("Widget", "Gadget", "widget linkage", said, [a, b])
    app = await start_app(make_settings(cosine_threshold=0.0))
    async with app.container.db.transaction() as conn:
        await g.insert(conn)
    body = {"query": "How are widgets linked?", "mode": "global", "hl_keywords": ["widget linkage"], "chunk_top_k": 2}
    wide = (await app.http.post("/query", json=body | {"only_need_prompt": True})).json()
    assert [r["description"] for r in wide["context"]["relations"]] == [""] and len(wide["context"]["chunks"]) == 2
    assert [e["description"] for e in wide["context"]["entities"]] == [said, said]  # the ends keep theirs
    needed = app.container.tokenizer.count(wide["prompt"])
    response = await app.http.post("/query", json=body | {"only_need_context": True, "max_total_tokens": needed + 300})
    assert response.status_code == 200, response.text
    assert [ch["content"] for ch in response.json()["context"]["chunks"]] == [said, other]
