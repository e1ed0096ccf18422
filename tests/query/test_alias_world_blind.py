"""The blind alias world (bench/alias_world_blind.py): deterministic per seed, its gold consistent with its text
(what the world-aware fake extracts from each document is exactly the gold), and the bench's measures."""

from __future__ import annotations

import re

import pytest

from bench.alias_blind_bench import measure, partition
from bench.alias_world_blind import HABITS, NEGATIVES, build_blind_world
from tests.support.fakes.world_model import WorldModel

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module", params=SEEDS)
def world(request):
    return build_blind_world(request.param, per_habit=1)


def test_same_seed_same_world_and_other_seeds_differ():
    one, again, other = build_blind_world(5, 1), build_blind_world(5, 1), build_blind_world(6, 1)
    assert [(d.id, d.text, d.mentions) for d in one.documents] == [(d.id, d.text, d.mentions) for d in again.documents]
    assert {e.name for e in one.entities.values()} != {e.name for e in other.entities.values()}


def test_every_habit_and_negative_is_present(world):
    assert set(world.aliased().values()) >= set(HABITS)
    assert {kind for _, _, kind in world.negatives} == set(NEGATIVES)
    for a, b, _ in world.negatives:
        assert world.entities[a].name != world.entities[b].name


def test_gold_forms_and_relations_are_written_in_their_documents(world):
    tails = [e.tail for e in world.entities.values()]
    assert len(set(tails)) == len(tails)
    assert not any(a != b and a in b for a in tails for b in tails)
    assert len({d.text[:120] for d in world.documents}) == len(world.documents)
    for d in world.documents:
        for form in d.mentions:
            assert re.search(rf"(?<!\w){re.escape(form)}(?!\w)", d.text), (d.id, form)
        for t in d.told:
            assert t.sentence in d.text and t.a in t.sentence and t.b in t.sentence
            relation = world.relations[t.relation]
            assert {d.mentions[t.a], d.mentions[t.b]} == {relation.a, relation.b}


def test_the_fake_extracts_exactly_the_gold(world):
    model = WorldModel(world)
    for d in world.documents:
        entities, relations = model.records(d.text)
        assert {name for name, _, _ in entities} == set(d.mentions), d.id
        for name, kind, description in entities:
            entity = world.entities[d.mentions[name]]
            assert kind == entity.type and entity.tail in description
        assert {(a, b) for a, b, _, _ in relations} == {(t.a, t.b) for t in d.told}


def test_measures_count_splits_and_over_merges(world):
    one_node_each = [(e.name, e.description(e.name)) for e in world.entities.values()]
    measured = measure(world, partition(world, one_node_each))
    assert sum(h["split"] for h in measured["habits"].values()) == 0
    assert not any(n["over"] for n in measured["negatives"].values()) and not measured["other_over"]

    a, b, kind = world.negatives[0]
    eid = next(iter(world.aliased()))
    ea, eb, ealias = world.entities[a], world.entities[b], world.entities[eid]
    nodes = [(e.name, e.description(e.name)) for e in world.entities.values() if e.id not in (a, b)]
    nodes += [(ea.name, ea.description(ea.name) + " " + eb.description(eb.name)), ("x", ealias.description("x"))]
    measured = measure(world, partition(world, nodes))
    assert len(measured["negatives"][kind]["over"]) == 1
    assert measured["habits"][ealias.habit]["split"] == 1
