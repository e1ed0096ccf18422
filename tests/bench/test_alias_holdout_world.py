"""The holdout alias world (bench/alias_world_holdout.py): its committed real data unchanged, deterministic per
seed, its gold consistent with its text (the world-aware fake extracts exactly the gold), the look-alike rule
finding the pairs the data holds. No network, no database."""

from __future__ import annotations

import hashlib
import re

import pytest

from bench.alias_blind_bench import measure, partition
from bench.alias_world_holdout import (
    DATA,
    KINDS,
    NEGATIVES,
    build_holdout_world,
    currency_pairs,
    load_aliases,
    one_word_apart,
    place_pairs,
    places,
    spelled_alike,
)
from tests.support.fakes.world_model import WorldModel

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module", params=SEEDS)
def world(request):
    return build_holdout_world(request.param, per_kind=3)


def test_the_data_file_is_the_one_its_source_note_describes():
    note = (DATA.parent / "SOURCE.md").read_text()
    recorded = re.search(r"`aliases\.json` \| `([0-9a-f]{64})`", note)
    assert recorded, "SOURCE.md lists the checksum of aliases.json"
    assert hashlib.sha256(DATA.read_bytes()).hexdigest() == recorded.group(1)


def test_same_seed_same_world_and_other_seeds_differ():
    one, again, other = build_holdout_world(5, 2), build_holdout_world(5, 2), build_holdout_world(6, 2)
    assert [(d.id, d.text, d.mentions) for d in one.documents] == [(d.id, d.text, d.mentions) for d in again.documents]
    assert one.negatives == again.negatives
    assert {e.name for e in one.entities.values()} != {e.name for e in other.entities.values()}


def test_every_kind_and_negative_is_present_and_names_are_not_shared(world):
    assert set(world.aliased().values()) >= set(KINDS)
    assert {kind for _, _, kind in world.negatives} == set(NEGATIVES)
    names = [e.name for e in world.entities.values()]
    assert len(set(names)) == len(names)
    for a, b, _ in world.negatives:
        assert not world.forms_of(a) & world.forms_of(b)


def test_gold_forms_and_relations_are_written_in_their_documents(world):
    tails = [e.tail for e in world.entities.values()]
    assert len(set(tails)) == len(tails)
    assert not any(a != b and a in b for a in tails for b in tails)
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


def test_codes_are_iso_codes_of_countries_and_currencies(world):
    data = load_aliases()
    iso = {c["alpha_3"] for c in data["countries"]} | {c["alpha_3"] for c in data["currencies"]}
    for eid, kind in world.aliased().items():
        if kind.startswith("code_"):
            assert {f for f in world.forms_of(eid) if f.isupper() and len(f) == 3} <= iso
            assert len(world.forms_of(eid) & iso) == 1, world.forms_of(eid)


def test_one_node_per_entity_scores_nothing_split_or_merged(world):
    measured = measure(world, partition(world, [(e.name, e.description(e.name)) for e in world.entities.values()]))
    assert sum(h["split"] for h in measured["habits"].values()) == 0
    assert not any(n["over"] for n in measured["negatives"].values()) and not measured["other_over"]


def test_the_look_alike_rules_find_the_confusable_names_of_the_data():
    short = dict(places())
    alike = {frozenset((short[a]["short"], short[b]["short"])) for a, b in place_pairs(spelled_alike)}
    for pair in (
        ("Niger", "Nigeria"),
        ("Sudan", "South Sudan"),
        ("Dominica", "Dominican Republic"),
        ("Austria", "Australia"),
        ("Guinea", "Guinea-Bissau"),
        ("Mexico", "New Mexico"),
    ):
        assert frozenset(pair) in alike, pair
    apart = {frozenset((short[a]["short"], short[b]["short"])) for a, b in place_pairs(one_word_apart)}
    assert frozenset(("North Dakota", "South Dakota")) in apart
    assert ("AUD", "CAD") in currency_pairs()
    assert not spelled_alike("Norway", "Sweden") and not one_word_apart("Norway", "Kingdom of Norway")
