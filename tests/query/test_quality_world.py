"""The quality benchmark's world, its world-aware fake model and its metrics, on a tiny world."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from app.domain.extraction_parser import parse_extraction
from app.prompts.extraction import extraction_messages
from app.prompts.keywords import keyword_messages
from app.prompts.summary import summary_messages
from bench.quality_metrics import EntityMatcher, resolution, score
from bench.quality_world import THEMES, build_world
from tests.support.fakes.world_model import WorldModel


@pytest.fixture(scope="module")
def world():
    return build_world(seed=3, n_entities=40, n_docs=8, aliases=True)


def test_world_is_deterministic_and_tells_every_relation(world):
    again = build_world(seed=3, n_entities=40, n_docs=8, aliases=True)
    assert [d.text for d in again.documents] == [d.text for d in world.documents]
    told = {t.relation for d in world.documents for t in d.told}
    assert told == set(world.relations)
    for r in world.relations.values():
        assert 2 <= len(r.themes) <= 3 and set(r.themes) <= set(THEMES)
    for doc in world.documents:
        for t in doc.told:
            assert t.sentence in doc.text and t.a in t.sentence and t.b in t.sentence
    assert {q.kind for q in world.questions} == {"entity", "alias", "thematic", "multihop"}
    assert build_world(seed=4, n_entities=40, n_docs=8).documents[0].text != world.documents[0].text


def test_aliases_and_confusables_are_written(world):
    forms = world.forms_used()
    assert any(len(f) > 1 for f in forms.values())  # some entity is written in several ways
    kinds = {kind for _, _, kind in world.confusables}
    assert kinds == {"similar name", "shared surname", "same name, other type"}
    for a, b, _ in world.confusables:  # twins never meet in one document
        assert not any({a, b} <= set(d.mentions.values()) for d in world.documents)
    plain = build_world(seed=3, n_entities=40, n_docs=8, aliases=False)
    assert all(set(d.mentions) <= {e.name for e in plain.entities.values()} for d in plain.documents)


def test_fake_extracts_the_gold_forms_and_sentences_in_the_records_format(world):
    model = WorldModel(world)
    doc = min(world.documents, key=lambda d: len(d.text))
    answer = model.extract(extraction_messages(doc.text, ["Person", "Organization"], "English"))
    parsed = parse_extraction(answer, "chunk-1", "doc.txt")
    assert {e.name for e in parsed.entities} == set(doc.mentions)
    assert {r.description for r in parsed.relations} == {t.sentence for t in doc.told}
    for e in parsed.entities:
        assert world.entities[doc.mentions[e.name]].tail in e.description
    assert model.extract(extraction_messages("Nothing from the world here.", [], "English")) == "<|COMPLETE|>"


def test_fake_answers_planned_keywords_and_keeps_summary_facts(world):
    model = WorldModel(world)
    question = next(q for q in world.questions if q.kind == "multihop")
    answer = json.loads(model.keywords(keyword_messages(question.text, [], "English")))
    assert answer == {"high_level_keywords": question.hl, "low_level_keywords": question.ll}
    other = json.loads(model.keywords(keyword_messages("Who is Zed Unknown?", [], "English")))
    assert other["low_level_keywords"] == ["Zed Unknown"]
    summary = model.summary(
        summary_messages("entity", "X", ["X is a pilot.", "X is a pilot.", "X flies."], "English", 100)
    )
    assert summary == "X is a pilot. X flies."


def test_metrics_score_contexts_and_resolution(world):
    matcher, renderings = EntityMatcher(world), world.renderings()
    q = next(q for q in world.questions if q.kind == "entity")
    gold = world.entities[q.entities[0]]
    sentence = next(iter(renderings[q.relations[0]]))
    context = {
        "entities": [{"name": gold.name, "type": gold.type, "description": gold.description(gold.name)}],
        "relations": [],
        "chunks": [{"content": f"Intro. {sentence} Outro."}],
    }
    s = score(q, context, renderings, matcher, lambda text: len(text.split()))
    assert s.relation_recall == pytest.approx(1 / len(q.relations))
    assert s.entity_recall == pytest.approx(1 / len(q.entities))
    assert s.tokens > 0
    naive = score(q, {"chunks": []}, renderings, matcher, len)
    assert naive.entity_recall is None and naive.relation_recall == 0

    used = world.forms_used()
    one_node_each = [(e.name, e.description(e.name)) for e in world.entities.values() if used.get(e.id)]
    good = resolution(world, one_node_each)
    assert good.aliased_split == 0 and not good.over_merged and good.nodes_per_entity == 1 and good.missing == 0
    a, b, _ = world.confusables[0]
    merged = [(world.entities[a].name, world.entities[a].description("x") + " " + world.entities[b].description("y"))]
    split = [(f, world.entities[eid].description(f)) for eid in used for f in used[eid]]
    assert resolution(world, merged + one_node_each).over_merged == [tuple(sorted((a, b)))]
    assert resolution(world, split).split_share == 1.0


async def test_world_ingested_through_the_app_is_measurable(world, app_client, fake_llm):
    WorldModel(world).install(fake_llm)
    docs = [{"text": d.text, "id": d.id} for d in world.documents]
    response = await app_client.http.post("/documents", json={"documents": docs, "wait": True})
    assert {d["status"] for d in response.json()["documents"]} == {"processed"}
    async with app_client.container.db.transaction() as conn:
        nodes = (await conn.execute(text("SELECT name, description FROM entities"))).all()
    graph = resolution(world, [(n[0], n[1]) for n in nodes])
    assert graph.missing == 0 and graph.unmapped_nodes == 0 and graph.nodes >= graph.real_entities - 3

    question = next(q for q in world.questions if q.kind == "entity")
    answer = await app_client.http.post(
        "/query", json={"query": question.text, "mode": "local", "only_need_context": True}
    )
    assert answer.json()["keywords"]["low_level"] == question.ll
    s = score(question, answer.json()["context"], world.renderings(), EntityMatcher(world), len)
    assert s.relation_recall == 1.0 and s.entity_recall and s.entity_recall > 0
