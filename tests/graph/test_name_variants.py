"""The cross-document name rules and the confusable guard (app/domain/name_variants.py, cross_document.py),
on messy real-world-like names."""

from __future__ import annotations

import pytest

from app.domain.absorption import absorptions
from app.domain.cross_document import initials_key, lone_word_candidates, nearby_ranges
from app.domain.name_index import NameIndex
from app.domain.name_matching import match_key
from app.domain.name_variants import confusable, inverted_forms, lone_word, near_spelling, root_of, surname_of
from app.domain.resolution import DocumentNames, Known, resolve
from app.domain.spelling_candidates import near_spellings


@pytest.mark.parametrize(
    ("name", "kind", "other"),
    [
        ("Treaty of Lisbon", "event", "Lisbon Treaty"),
        ("the Crisis of Suez", "event", "Suez Crisis"),
        ("Valley of Kings", "location", "Kings Valley"),
        ("Port of Rotterdam", "location", "Rotterdam Port"),
        ("University of Bologna", "organization", "Bologna University"),
    ],
)
def test_inversions_reach_both_ways(name, kind, other):
    assert match_key(other, kind) in inverted_forms(match_key(name, kind))
    assert match_key(name, kind) in inverted_forms(match_key(other, kind))


def test_inversions_leave_other_shapes_alone():
    assert inverted_forms("bank of america of the north") == []
    assert inverted_forms("siemens") == []
    assert inverted_forms("apollo 11") == []  # a number is no head word


def test_lone_words_roots_and_surnames():
    assert lone_word("Dr. Okafor", "person") == "okafor"
    assert lone_word("Siemens", "organization") == "siemens"
    assert lone_word("BIS", "organization") is None  # an acronym is read by its initials, not as a root
    assert lone_word("Ace", "organization") is None  # too short to stand for "Ace Logistics"
    assert lone_word("Port", "location") is None  # a kind of thing, not one thing
    assert root_of("Siemens Healthineers AG", "organization") == "siemens"
    assert root_of("Bank of England", "organization") is None
    assert root_of("Ngozi Okafor", "person") is None
    assert surname_of("Prof. Ngozi  Okafor") == "okafor"
    assert initials_key("Bank for International Settlements", "organization") == "bis"
    assert initials_key("Ngozi Okafor", "person") is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("Naseem Khan", "person"), ("Imran Khan", "person")),
        (("Acme Holdings", "organization"), ("Acme Holding Group", "organization")),
        (("Draqua Energy", "organization"), ("Draqua Energies", "organization")),
        (("Port of Varga", "location"), ("Varga Airport", "location")),
        (("Fiorano Reactor", "artifact"), ("Fiorano Reactor Museum", "organization")),
    ],
)
def test_the_guard_keeps_distinguished_names_apart(a, b):
    assert confusable(*a, *b) and confusable(*b, *a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("N. Khan", "person"), ("Naseem Khan", "person")),  # an initial fits its first name
        (("Treaty of Lisbon", "event"), ("Lisbon Treaty", "event")),
        (("Kowalski Freight Lines", "organization"), ("Kowalski Freight Linez", "organization")),
        (("Okafor", "person"), ("Ngozi Okafor", "person")),  # a surname alone distinguishes nothing
    ],
)
def test_the_guard_lets_forms_of_one_name_through(a, b):
    assert not confusable(*a, *b)


def test_near_spellings_need_a_shared_root_and_one_close_word():
    assert near_spelling("kowalski freight linez", "kowalski freight lines")
    assert not near_spelling("kowalski freight", "kowalski shipping")
    assert not near_spelling("acme", "acne")  # one word: the root itself
    nearby = NameIndex({"kowalski freight lines": ("Kowalski Freight Lines", "organization")})
    assert near_spellings("Kowalski Freight Linez", "organization", nearby) == {"kowalski freight lines"}
    assert near_spellings("Kowalski Freight Linez", "location", nearby) == set()  # another type


def test_a_lone_word_fits_people_by_surname_and_things_by_root():
    nearby = NameIndex(
        {
            "ngozi okafor": ("Ngozi Okafor", "person"),
            "okafor reactor": ("Okafor Reactor", "artifact"),
            "siemens healthineers ag": ("Siemens Healthineers AG", "organization"),
        }
    )
    assert lone_word_candidates("Dr. Okafor", "person", nearby) == ({"ngozi okafor"}, "partial")
    assert lone_word_candidates("Okafor", "artifact", nearby)[0] == {"okafor reactor"}
    assert lone_word_candidates("Okafor", "unknown", nearby)[0] == {"ngozi okafor", "okafor reactor"}  # ambiguous
    assert lone_word_candidates("Siemens", "location", nearby)[0] == set()  # a place is not the company
    town = NameIndex({"varga airport": ("Varga Airport", "location")})
    assert lone_word_candidates("Varga", "location", town)[0] == set()  # nor a town its airport


def test_ranges_read_roots_surnames_and_initials():
    ranges = nearby_ranges([("Dr. Okafor", "person"), ("Bank for International Settlements", "organization")])
    assert "okafor " in ranges.prefixes and " okafor"[::-1] in ranges.reversed_prefixes
    assert "bank " not in ranges.prefixes and "bis" in ranges.exact


def _doc(*names: tuple[str, str]) -> DocumentNames:
    doc = DocumentNames()
    for name, etype in names:
        doc.add(name.lower(), name, etype)
    return doc


def test_resolution_joins_across_documents_only_when_one_entity_fits():
    known = Known(
        entity_types={"lisbon treaty": "event", "naseem khan": "person", "imran khan": "person"},
        nearby={
            "naseem khan": ("Naseem Khan", "person"),
            "imran khan": ("Imran Khan", "person"),
            "siemens healthineers ag": ("Siemens Healthineers AG", "organization"),
        },
    )
    doc = _doc(("Treaty of Lisbon", "event"), ("Dr. Khan", "person"), ("Siemens", "organization"))
    result = resolve(doc, known, {}, "auto")
    assert result.target("treaty of lisbon") == "lisbon treaty"
    assert result.target("dr. khan") == "dr. khan"  # two Khans: ambiguous, stays itself
    assert result.target("siemens") == "siemens healthineers ag"
    assert result.decisions["siemens"].scoped  # a root alone holds for this document


def test_an_earlier_short_node_is_absorbed_by_the_only_full_name_it_fits():
    full = {
        "ngozi okafor": ("Ngozi Okafor", "person"),
        "bank for international settlements": ("Bank for International Settlements", "organization"),
    }
    nearby = {
        "dr. okafor": ("Dr. Okafor", "person"),
        "bis": ("BIS", "organization"),
        "khan": ("Khan", "person"),
        "naseem khan": ("Naseem Khan", "person"),
    }
    found = {(a.key, a.target, a.rule) for a in absorptions(full, nearby, set())}
    assert found == {
        ("dr. okafor", "ngozi okafor", "partial"),
        ("bis", "bank for international settlements", "acronym"),
    }
    # a second Okafor in the project: the short node fits two people and stays
    nearby["chidi okafor"] = ("Chidi Okafor", "person")
    assert {a.key for a in absorptions(full, nearby, set())} == {"bis"}
