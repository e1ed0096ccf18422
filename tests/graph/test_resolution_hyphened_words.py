"""A name's one word joined by hyphens, written alone (pure): a hyphenated surname after a title ("Dr. Smith-Jones")
or a hyphenated root ("Rolls-Royce") fits the one full name of the project that ends or starts with all its parts,
in either order of the documents; the part alone or another full name of those parts stays apart. And a
company's "Company" spelt out is its "Co."."""

from __future__ import annotations

import pytest

from app.domain.absorption import absorptions
from app.domain.cross_document import lone_word_candidates, nearby_ranges
from app.domain.name_index import NameIndex
from app.domain.name_matching import match_key
from app.domain.name_variants import hyphened_word, lone_word, written_ends
from tests.graph.test_resolution_short_forms import target


def node(name: str, etype: str) -> dict[str, tuple[str, str]]:
    return {name.casefold(): (name, etype)}


@pytest.mark.parametrize(
    ("short", "full", "etype"),
    [
        ("Dr. Lloyd-Pryce", "Bethan Lloyd-Pryce", "person"),
        ("Prof. Ben-Haim", "Yael Ben-Haim", "person"),
        ("Okoro-Idogu", "Chinwe Okoro-Idogu", "person"),
        ("Hapsburg-Lorraine", "Hapsburg-Lorraine Estates Ltd", "organization"),
        ("Lindqvist-Berg", "Lindqvist-Berg Maritime AB", "organization"),
    ],
)
def test_a_hyphenated_word_alone_goes_to_the_one_full_name_with_all_its_parts(short, full, etype):
    assert target(short, etype, node(full, etype)) == full.casefold()


def test_an_earlier_hyphenated_node_is_read_and_absorbed_by_the_full_name_that_comes_later():
    for short, full, etype in [
        ("Dr. Lloyd-Pryce", "Bethan Lloyd-Pryce", "person"),
        ("Lindqvist-Berg", "Lindqvist-Berg Maritime AB", "organization"),
    ]:
        ranges = nearby_ranges([(full, etype)])
        key = short.casefold()
        assert key in ranges.exact or any(key[::-1].startswith(p) for p in ranges.reversed_prefixes), short
        (absorbed,) = absorptions(node(full, etype), node(short, etype), set())
        assert (absorbed.key, absorbed.target) == (key, full.casefold())


@pytest.mark.parametrize(
    ("short", "fulls", "etype"),
    [
        # the last part alone is another surname, as before: "Dr. Pryce" is not read as "Lloyd-Pryce"'s parts
        ("Dr. Lloyd-Pryce", ["Bethan Pryce"], "person"),
        ("Dr. Lloyd-Pryce", ["Bethan Lloyd Pryce-Evans"], "person"),
        # two people of that surname: ambiguous
        ("Dr. Lloyd-Pryce", ["Bethan Lloyd-Pryce", "Owain Lloyd-Pryce"], "person"),
        # a root of other parts, or two companies of those parts (parent and subsidiary)
        ("Lindqvist-Berg", ["Lindqvist Shipping AB"], "organization"),
        ("Lindqvist-Berg", ["Lindqvist-Berg Maritime AB", "Lindqvist-Berg Holdings"], "organization"),
        # a place is not the things named after it, hyphens or not
        ("Baden-Lohr", ["Baden-Lohr Airport"], "location"),
    ],
)
def test_a_hyphenated_word_stays_apart_from_names_without_all_its_parts_or_fitting_twice(short, fulls, etype):
    nearby = {k: v for f in fulls for k, v in node(f, etype).items()}
    assert target(short, etype, nearby) == short.casefold()
    assert absorptions(nearby, node(short, etype), set()) == []


def test_the_confusable_pairs_stay_apart():
    assert target("Imran Khan", "person", node("Naseem Khan", "person")) == "imran khan"
    nearby = node("Acme Holdings", "organization")
    assert target("Acme Holding Group", "organization", nearby) == "acme holding group"
    index = NameIndex(node("Acme Holdings", "organization"))
    assert lone_word_candidates("Acme-Tel", "organization", index) == (set(), "root")  # "Acme" is not "Acme-Tel"


def test_the_word_joined_by_hyphens():
    assert hyphened_word("Dr. Smith-Jones") == "smith jones"
    assert hyphened_word("Rolls-Royce") == "rolls royce"
    assert hyphened_word("Mary Smith-Jones") is None  # two words
    assert hyphened_word("X-Ray") is None  # a part of one letter
    assert hyphened_word("F-16") is None
    assert lone_word("Dr. Smith-Jones", "person") == "smith jones"
    assert lone_word("North-West", "organization") is None  # a generic first part
    assert written_ends("Mary Smith-Jones", "person") == ["smith-jones"]
    assert written_ends("Rolls-Royce Holdings plc", "organization") == ["rolls-royce"]
    assert written_ends("Jean-Luc Picard", "person") == []  # a hyphenated given name is no surname


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Tarrant Shipping Company", "Tarrant Shipping Co.", True),
        ("Tarrant Shipping Company", "TARRANT SHIPPING", True),
        ("Tarrant Shipping Company", "Tarrant Shipping Group", False),
        ("Tarrant Shipping Company", "Tarrant Shipping Holdings", False),
    ],
)
def test_company_spelt_out_is_its_legal_form(a, b, same):
    assert (match_key(a, "organization") == match_key(b, "organization")) is same
