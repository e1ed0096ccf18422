"""The standing merges a document contradicts by relating two writings of one person's name (pure:
app/domain/absorption.py::related_forms, contradicted)."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.absorption import contradicted, related_forms
from app.domain.names import entity_key, sorted_pair
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord


def _doc(people: list[tuple[str, str]], links: list[tuple[str, str]]) -> list[ChunkExtraction]:
    entities = [EntityRecord(n, entity_key(n), t, f"{n}.") for n, t in people]
    relations = []
    for a, b in links:
        (ka, na), (kb, nb) = sorted([(entity_key(a), a), (entity_key(b), b)])
        relations.append(RelationRecord(na, nb, ka, kb, ["comparison"], "compared"))
    return [ChunkExtraction("c1", entities, relations)]


def test_a_relation_between_two_writings_of_one_persons_name_is_found():
    extractions = _doc(
        [("Bob Everly", "person"), ("Robert Everly", "person"), ("Winnie Bellamy", "person")],
        [("Bob Everly", "Robert Everly"), ("Robert Everly", "Winnie Bellamy")],
    )
    assert related_forms(extractions) == {sorted_pair("bob everly", "robert everly")}


def test_a_clipped_given_name_counts_and_other_pairs_do_not():
    extractions = _doc(
        [
            ("Emeka Okoye", "person"),
            ("Chukwuemeka Okoye", "person"),
            ("Bella Harrow", "person"),
            ("Isabella Harrow", "person"),
            ("Acme", "organization"),
            ("ACME", "organization"),
        ],
        [("Emeka Okoye", "Chukwuemeka Okoye"), ("Bella Harrow", "Isabella Harrow"), ("Acme", "ACME")],
    )
    assert related_forms(extractions) == {sorted_pair("emeka okoye", "chukwuemeka okoye")}


@dataclass(frozen=True)
class _Merge:
    id: int
    entity_key: str
    merged_key: str


def test_only_the_merges_joining_the_related_names_are_contradicted():
    related = {("bob everly", "robert everly")}
    into_bob = _Merge(1, "bob everly", "robert everly")
    again = _Merge(2, "bob everly", "robert everly")  # the relating document followed the alias
    elsewhere = _Merge(3, "marta quell", "robert everly")  # another entity: not this pair's join
    assert contradicted(related, [into_bob, again, elsewhere]) == [into_bob]
    # both writings merged into a third: each merge is undone
    third = [_Merge(4, "bobby everly", "bob everly"), _Merge(5, "bobby everly", "robert everly")]
    assert contradicted(related, third) == third
    # apart already: nothing to undo
    assert contradicted(related, [_Merge(6, "bobby everly", "robert everly")]) == []
    assert contradicted(set(), [into_bob]) == []
