"""The alias benchmark's world (bench/alias_world.py): one parameter per alias kind, deterministic, every
aliased entity written one way in some documents and another way in others, never both in one."""

from __future__ import annotations

import pytest

from bench.alias_bench import per_kind
from bench.alias_world import ALIAS_KINDS, STYLES, build_alias_world


@pytest.mark.parametrize("style", STYLES)
def test_each_kind_is_written_two_ways_in_different_documents(style):
    built = build_alias_world(seed=5, style=style, per_kind=4)
    again = build_alias_world(seed=5, style=style, per_kind=4)
    assert [d.text for d in again.world.documents] == [d.text for d in built.world.documents]
    forms = built.world.forms_used()
    for kind in ALIAS_KINDS:
        aliased = [e for e, k in built.kind_of.items() if k == kind]
        assert len(aliased) == 4
        for eid in aliased:
            assert len(forms[eid]) == 2, (kind, forms[eid])
            for doc in built.world.documents:
                assert len({f for f, e in doc.mentions.items() if e == eid}) <= 1
    first_seen = {}
    for doc in built.world.documents:
        for form, eid in doc.mentions.items():
            first_seen.setdefault(eid, form)
    for eid, kind in built.kind_of.items():  # short forms come first in the "order" kind
        if kind == "order":
            assert first_seen[eid] != built.world.entities[eid].name


def test_only_the_asked_kinds_are_built_and_the_metrics_count_per_kind():
    built = build_alias_world(seed=2, kinds=("root",), per_kind=3)
    assert {k for k in built.kind_of.values()} == {"root", "confusable", "background"}
    entities = built.world.entities
    root = next(e for e, k in built.kind_of.items() if k == "root")
    twins = [(a, b) for a, b, _ in built.world.confusables]
    split_root = [frozenset({e}) for e in entities] + [frozenset({root})]  # the root entity on two nodes
    merged_twins = [frozenset({e}) for e in entities if e not in twins[0]] + [frozenset(twins[0])]
    assert per_kind(built, split_root)["root"]["split"] == 1
    assert per_kind(built, merged_twins)["confusable"]["over"] == [tuple(entities[x].name for x in twins[0])]
