"""Short forms across documents (pure): a dotted acronym's node absorbed by its full name, initials written glued
or beside a name without its middle initial, a short surname after a title, a product line alone, numbered kinds
and e- prefixes, hyphenated words under an acronym; and the look-alikes that stay apart."""

from __future__ import annotations

import re

import pytest

from app.domain.absorption import absorptions
from app.domain.cross_document import initialled_candidates, nearby_ranges
from app.domain.document_names import DocumentNames
from app.domain.name_index import NameIndex
from app.domain.name_matching import acronym_definitions, defined_acronyms, initials_pattern, match_key, titled
from app.domain.name_variants import abbreviated_tail, lone_word
from app.domain.resolution import Known, index_lookups, resolve


def doc_of(*names: tuple[str, str]) -> DocumentNames:
    doc = DocumentNames()
    for name, etype in names:
        doc.add(name.casefold(), name, etype)
    return doc


def target(name: str, etype: str, nearby: dict[str, tuple[str, str]]) -> str:
    types = {k: t for k, (_, t) in nearby.items()}
    return resolve(doc_of((name, etype)), Known(entity_types=types, nearby=nearby), {}, "auto").target(name.casefold())


def test_a_dotted_acronym_node_is_read_and_absorbed_by_the_one_full_name_it_abbreviates():
    full = {"harbour safety authority": ("Harbour Safety Authority", "organization")}
    assert "h.s.a." in nearby_ranges([("Harbour Safety Authority", "organization")]).exact
    dotted = {"h.s.a.": ("H.S.A.", "organization")}
    (absorbed,) = absorptions(full, dotted, set())
    assert (absorbed.key, absorbed.target, absorbed.rule) == ("h.s.a.", "harbour safety authority", "acronym")
    two = full | {"health standards agency": ("Health Standards Agency", "organization")}
    assert absorptions(two, dotted, set()) == []  # two full names fit: ambiguous
    other = {"h.s.b.": ("H.S.B.", "organization")}
    assert absorptions(full, other, set()) == []


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("Y.S. Okonkwo", "Yetunde Okonkwo"),  # glued initials, the full name without the middle one
        ("F. R. Østergaard", "Friederike R. Østergaard"),
        ("K.L. Ndungu", "Kamau L. Ndungu"),
    ],
)
def test_initials_fit_the_one_person_of_that_surname_whose_given_names_they_start(short, full):
    assert target(short, "person", {full.casefold(): (full, "person")}) == full.casefold()


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("Y.S. Okonkwo", "Tunde Okonkwo"),  # another first initial
        ("Y. Okonkwo", "Yetunde S. Okonkwo"),  # the full name has a middle name the short form does not say
        ("Y.S. Okonkwo", "Yetunde A. Okonkwo"),  # another middle initial
    ],
)
def test_initials_that_contradict_a_name_stay_apart(short, full):
    index = NameIndex({full.casefold(): (full, "person")})
    assert initialled_candidates(short, "person", index) == set()


def test_two_people_the_initials_fit_are_ambiguous():
    nearby = {
        "yetunde okonkwo": ("Yetunde Okonkwo", "person"),
        "yusuf okonkwo": ("Yusuf Okonkwo", "person"),
    }
    assert target("Y.S. Okonkwo", "person", nearby) == "y.s. okonkwo"


def test_a_surname_with_letters_folding_changes_is_read_as_the_keys_hold_it():
    ranges = nearby_ranges([("F. R. Østergaard", "person")])
    assert " østergaard"[::-1] in ranges.reversed_prefixes and " ostergaard"[::-1] in ranges.reversed_prefixes


def test_a_title_lets_a_short_surname_stand_alone():
    assert titled("Prof. Rao") and titled("Mrs. Ma") and not titled("Rao") and not titled("Doctor")
    assert lone_word("Prof. Rao", "person") == "rao" and lone_word("Mrs. Ma", "person") == "ma"
    assert lone_word("Rao", "unknown") is None  # three letters of no type, without a title, say too little
    assert lone_word("Rao", "person") == "rao" and lone_word("Hu", "person") == "hu"  # a person's type says it
    assert target("Mrs. Ma", "person", {"zhiwei ma": ("Zhiwei Ma", "person")}) == "zhiwei ma"
    assert target("Prof. Rao", "person", {"arjun rao": ("Arjun Rao", "person")}) == "arjun rao"
    two = {"zhiwei ma": ("Zhiwei Ma", "person"), "lin ma": ("Lin Ma", "person")}
    assert target("Mrs. Ma", "person", two) == "mrs. ma"  # two people of that surname
    assert target("Mrs. Ma", "person", {"ma (place)": ("Ma", "location")}) == "mrs. ma"


def test_a_product_line_alone_goes_to_the_one_product_with_its_maker_and_the_alias_holds_project_wide():
    doc = doc_of(("Halvorsen Brightline Pro 5", "artifact"), ("Brightline", "artifact"))
    nearby = {"brightline pro 5": ("Brightline Pro 5", "artifact")}  # the model without its maker, an earlier node
    result = resolve(doc, Known(entity_types={"brightline pro 5": "artifact"}, nearby=nearby), {}, "auto")
    decision = result.decisions["brightline"]
    assert decision.target == "halvorsen brightline pro 5" and decision.rule == "maker" and not decision.scoped
    # the earlier node is absorbed by the full name although this document's line name could have joined it
    assert [(a.key, a.target) for a in result.absorptions] == [("brightline pro 5", "halvorsen brightline pro 5")]


def test_a_product_line_beside_two_generations_stays_apart():
    nearby = {
        "halvorsen brightline 2": ("Halvorsen Brightline 2", "artifact"),
        "halvorsen brightline 3": ("Halvorsen Brightline 3", "artifact"),
    }
    assert target("Brightline", "artifact", nearby) == "brightline"


@pytest.mark.parametrize(
    ("a", "b", "etype"),
    [
        ("type II diabetes", "type 2 diabetes", "concept"),
        ("Phase III trial", "phase 3 trial", "concept"),
        ("e-health record", "electronic health record", "concept"),
        ("X-ray crystallography", "x-ray crystallography", "concept"),
    ],
)
def test_numbered_kinds_and_e_prefixes_share_a_match_key(a, b, etype):
    assert match_key(a, etype) == match_key(b, etype)


@pytest.mark.parametrize(
    ("a", "b", "etype"),
    [
        ("type II diabetes", "type I diabetes", "concept"),
        ("Henry VIII", "Henry 8", "person"),  # only a numbered kind reads a Roman numeral as its number
        ("e-health record", "health record", "concept"),
        ("Jean-Luc E-Valois", "Jean-Luc Electronic Valois", "person"),
    ],
)
def test_numbers_and_prefixes_still_tell_terms_apart(a, b, etype):
    assert match_key(a, etype) != match_key(b, etype)


@pytest.mark.parametrize(
    ("acronym", "key", "fits"),
    [
        ("XRC", "x-ray crystallography", True),  # a hyphen parts two words
        ("APC", "anglo-dutch petroleum company", True),  # or joins them
        ("ADPC", "anglo-dutch petroleum company", True),
        ("T2D", "type 2 diabetes", True),
        ("XRC", "x-ray diffraction", False),
        ("PTH", "pethliar textiles holdings ltd.", True),  # a company's legal form may follow its initials
        ("PTH", "pethliar textiles holdings, inc.", True),
        ("PTHL", "pethliar textiles holdings ltd.", True),  # or be one of them
        ("PT", "pethliar textiles ltd.", False),  # not past two letters
        ("PTH", "pethliar textiles holdings group", False),  # a word that is no legal form
    ],
)
def test_the_initials_pattern_reads_hyphenated_words_both_ways(acronym, key, fits):
    pattern, first = initials_pattern(acronym)
    assert bool(re.match(pattern, key)) is fits and key.startswith(first.lower())


def test_an_undefined_acronym_node_is_absorbed_by_the_one_term_of_any_case_it_abbreviates():
    term = {"type ii diabetes": ("type II diabetes", "concept")}
    assert "t2d" in nearby_ranges([("type II diabetes", "concept")]).exact  # the node an earlier document left
    (absorbed,) = absorptions(term, {"t2d": ("T2D", "concept")}, set())
    assert absorbed.target == "type ii diabetes" and absorbed.rule == "acronym"
    two = term | {"type 2 dermatitis": ("type 2 dermatitis", "concept")}
    assert absorptions(two, {"t2d": ("T2D", "concept")}, set()) == []  # two terms fit
    assert absorptions(term, {"t2d": ("T2D", "organization")}, set()) == []  # another kind of thing
    assert absorptions({"hiv care": ("HIV care", "concept")}, {"hc": ("HC", "concept")}, set()) == []  # too short


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("High-Voltage DC", "high-voltage direct current", True),
        ("high voltage direct current", "High Voltage DC", True),
        ("Low-Voltage DC", "high-voltage direct current", False),  # other words before the acronym
        ("High-Voltage DC", "high-voltage distribution cable network", False),  # more words than letters
        ("High-Voltage dc", "high-voltage direct current", False),  # not written as an acronym
    ],
)
def test_last_words_written_as_their_acronym(a, b, same):
    assert abbreviated_tail(a, b) is same
    assert bool(target(a, "concept", {b.casefold(): (b, "concept")}) == b.casefold()) is same


def test_a_later_plural_reaches_an_entity_no_key_range_finds_through_its_compact_row():
    first = resolve(doc_of(("e-health record", "concept")), Known(), {}, "auto")
    rows = {k: v for k, v in first.index.items() if "compact" in k}
    assert set(rows.values()) == {"e-health record"}
    later = doc_of(("electronic health records", "concept"))
    assert set(rows) <= index_lookups(later, {})
    known = Known(entity_types={"e-health record": "concept"}, aliases=rows)
    assert resolve(later, known, {}, "auto").target("electronic health records") == "e-health record"
    other = Known(entity_types={"e-health record": "organization"}, aliases=rows)  # another kind: apart
    assert resolve(later, other, {}, "auto").target("electronic health records") == "electronic health records"


def test_a_definition_may_have_a_number_among_its_words():
    text = "Clinics now report the type 2 diabetes (T2D) routinely. In 2019 the World Health Organization (WHO) met."
    assert acronym_definitions([text]) == {"T2D": "type 2 diabetes", "WHO": "World Health Organization"}
    assert "T2D" in defined_acronyms([text])


def test_a_root_written_with_diacritics_is_read_as_its_key_holds_it():
    # an earlier "Zürlinger" node has the key "zürlinger": the full name must read it so, not only as "zurlinger"
    full = ("Zürlinger Healthineers AG", "organization")
    ranges = nearby_ranges([full])
    assert {"zürlinger", "zurlinger"} <= ranges.exact and "zürlinger " in ranges.prefixes
    (absorbed,) = absorptions({"zürlinger healthineers ag": full}, {"zürlinger": ("Zürlinger", "organization")}, set())
    assert (absorbed.target, absorbed.rule) == ("zürlinger healthineers ag", "root")
