"""A country's short name and its designation (pure): "<form of government> of X" / "X", and the look-alikes that
stay apart. Invented states (Ruritania, Freedonia, ...): none is in the holdout world's data."""

from __future__ import annotations

import pytest

from app.domain.absorption import absorptions
from app.domain.cross_document import nearby_ranges, variant_rows
from app.domain.document_names import DocumentNames
from app.domain.name_designations import designated_core
from app.domain.resolution import Known, resolve

PLACE = "location"


@pytest.mark.parametrize(
    ("name", "core"),
    [
        ("Republic of Ruritania", "ruritania"),
        ("Grand Duchy of Freedonia", "freedonia"),
        ("Federal Republic of Latveria", "latveria"),
        ("Kingdom of the Lower Marches", "lower marches"),
        ("Republic of the Union of Elbonia", "elbonia"),  # a designation inside a designation
        ("Principality of Genovia", "genovia"),
        ("the State of Genovia", "genovia"),  # the article a writer keeps mid-sentence is not the name's
        ("the Kingdom of the Lower Marches", "lower marches"),
    ],
)
def test_a_place_written_with_its_form_of_government_has_a_core(name, core):
    assert designated_core(name, PLACE) == core


@pytest.mark.parametrize(
    ("name", "etype"),
    [
        ("City of Ruritania", PLACE),  # a city, a port, an island group: another place than the one after "of"
        ("Port of Freedonia", PLACE),
        ("Islands of the Latveria Sea", PLACE),
        ("University of Ruritania", PLACE),
        ("Republic of Ruritania", "organization"),  # only places
        ("Ruritania", PLACE),
        ("republic of ruritania", PLACE),  # a common-noun phrase, not a name
        ("the republic of ruritania", PLACE),
        ("Republic of Bo", PLACE),  # too short to be a state's name
        ("Democratic Republic of Elbonia", PLACE),  # one of two states of that name, maybe
        ("People's Republic of Elbonia", PLACE),
    ],
)
def test_other_names_with_of_have_no_core(name, etype):
    assert designated_core(name, etype) is None


def doc_of(*names: tuple[str, str]) -> DocumentNames:
    doc = DocumentNames()
    for name, etype in names:
        doc.add(name.casefold(), name, etype)
    return doc


def target(name: str, nearby: dict[str, tuple[str, str]]) -> str:
    known = Known(entity_types={k: t for k, (_, t) in nearby.items()}, nearby=nearby)
    return resolve(doc_of((name, PLACE)), known, {}, "auto").target(name.casefold())


def test_the_short_name_reaches_the_one_designated_place():
    assert "ruritania" in nearby_ranges([("Republic of Ruritania", PLACE)]).exact  # the other order reads it
    held = {"republic of ruritania": ("Republic of Ruritania", PLACE)}
    assert target("Ruritania", held) == "republic of ruritania"
    held["grand duchy of the west marches"] = ("Grand Duchy of the West Marches", PLACE)
    assert target("West Marches", held) == "grand duchy of the west marches"


def test_look_alikes_stay_apart():
    held = {
        "republic of the elbonia": ("Republic of the Elbonia", PLACE),
        "kingdom of elbonia": ("Kingdom of Elbonia", PLACE),
        "republic of lower freedonia": ("Republic of Lower Freedonia", PLACE),
        "kingdom of freedonian": ("Kingdom of Freedonian", PLACE),
    }
    assert target("Elbonia", held) == "elbonia"  # two states of that core: ambiguous
    assert target("Freedonia", held) == "freedonia"  # "Lower Freedonia", "Freedonian": other names
    first = {k: held[k] for k in list(held)[:1]}
    assert target("Kingdom of Elbonia", first) == "kingdom of elbonia"  # two designations of one core: two states
    divided = {"democratic republic of elbonia": ("Democratic Republic of Elbonia", PLACE)}
    assert target("Elbonia", divided) == "elbonia"  # the other state of that name, maybe


def test_an_earlier_short_node_is_absorbed_by_the_designated_place():
    full = {"republic of ruritania": ("Republic of Ruritania", PLACE)}
    (absorbed,) = absorptions(full, {"ruritania": ("Ruritania", PLACE)}, set())
    assert (absorbed.key, absorbed.target, absorbed.rule) == ("ruritania", "republic of ruritania", "designation")
    two = {**full, "kingdom of ruritania": ("Kingdom of Ruritania", PLACE)}
    assert absorptions(two, {"ruritania": ("Ruritania", PLACE)}, set()) == []


def test_the_designated_place_reads_its_short_name_as_written_with_diacritics():
    # keys keep the letters folding changes: the node of "Rüritania" is "rüritania", never "ruritania"
    exact = nearby_ranges([("Republic of Rüritania", PLACE)]).exact
    assert {"rüritania", "ruritania"} <= exact
    assert {"são tomé", "são-tomé"} <= nearby_ranges([("Republic of São Tomé", PLACE)]).exact
    assert {"guinea-bissau", "guinea bissau"} <= nearby_ranges([("Republic of Guinea-Bissau", PLACE)]).exact
    (absorbed,) = absorptions(
        {"republic of rüritania": ("Republic of Rüritania", PLACE)}, {"rüritania": ("Rüritania", PLACE)}, set()
    )
    assert (absorbed.key, absorbed.target, absorbed.rule) == ("rüritania", "republic of rüritania", "designation")


def test_a_place_cut_short_reaches_the_one_place_it_starts():
    ranges = nearby_ranges([("Ruritania", PLACE)])
    assert "rurit." in ranges.exact and "ruri" in nearby_ranges([("Ruri.", PLACE)]).prefixes
    held = {"ruritania": ("Ruritania", PLACE), "freedonia": ("Freedonia", PLACE)}
    assert target("Rurit.", held) == "ruritania"
    (absorbed,) = absorptions({"freedonia": held["freedonia"]}, {"freed.": ("Freed.", PLACE)}, set())
    assert (absorbed.key, absorbed.target) == ("freed.", "freedonia")


def test_a_cut_short_name_fitting_two_places_or_too_short_stays_apart():
    held = {"ruritania": ("Ruritania", PLACE), "rurovia": ("Rurovia", PLACE), "mtorva": ("Mtorva", PLACE)}
    assert target("Rur.", held) == "rur."  # Ruritania or Rurovia
    assert target("Rurov.", held) == "rurov."  # two letters cut: another name ("Niger" / "Nigeria")
    assert target("Mt.", held) == "mt."  # "Mt." is a word of its own (Mount)
    assert target("Rurit.", {"ruritania": ("Ruritania", "organization")}) == "rurit."  # only places


def test_a_dotted_initials_node_is_absorbed_by_the_one_place_of_those_initials():
    assert "w.m." in nearby_ranges([("West Marches", PLACE)]).exact
    full = {"west marches": ("West Marches", PLACE)}
    (absorbed,) = absorptions(full, {"w.m.": ("W.M.", PLACE)}, set())
    assert (absorbed.key, absorbed.target) == ("w.m.", "west marches")
    assert absorptions(full, {"w.m.": ("W.M.", PLACE), "wide moor": ("Wide Moor", PLACE)}, set()) == []
    assert absorptions(full, {"wm": ("WM", PLACE)}, set()) == []  # two letters without periods: a word of its own


def test_a_place_contracted_reaches_the_one_place_of_its_first_and_last_letters():
    held = {"quellmart": ("Quellmart", PLACE), "freedonia": ("Freedonia", PLACE)}
    assert target("Qt.", held) == "quellmart"  # Q...t
    assert target("Fra.", held) == "freedonia"  # Fr...a
    assert {"qt.", "qut."} <= nearby_ranges([("Quellmart", PLACE)]).exact
    (absorbed,) = absorptions({"quellmart": held["quellmart"]}, {"qt.": ("Qt.", PLACE)}, set())
    assert (absorbed.key, absorbed.target) == ("qt.", "quellmart")


def test_a_contraction_fitting_two_places_or_a_word_of_its_own_stays_apart():
    held = {"freedonia": ("Freedonia", PLACE), "fennoria": ("Fennoria", PLACE), "saint": ("Sorrent", PLACE)}
    assert target("Fa.", held) == "fa."  # Freedonia or Fennoria
    assert target("St.", held) == "st."  # Saint, not "Sorrent"
    assert target("Qt.", {"quellmart": ("Quellmart", "organization")}) == "qt."  # only places
    assert target("Qt.", {"quellmor": ("Quellmor", PLACE)}) == "qt."  # Q...r


def test_a_place_is_read_by_its_contraction_through_index_rows():
    rows = variant_rows("Quellmart", PLACE)
    assert "\x1dcut qt.#0" in rows and "\x1dcut qut.#2" in rows
    assert [r for r in variant_rows("Qt.", PLACE) if "cut" in r] == [f"\x1dcut qt.#{i}" for i in range(3)]
    assert not [r for r in variant_rows("Quellmart", "organization") if "cut" in r]


def test_a_place_of_two_words_cut_short_word_by_word_is_it():
    held = {"west marches": ("West Marches", PLACE), "east marches": ("East Marches", PLACE)}
    assert target("W.Mar.", held) == "west marches"  # W. + Mar(ches)
    assert target("W. Ms.", held) == "west marches"  # M...s contracted
    assert target("N.Mar.", held) == "n.mar."  # neither
    assert target("W.Mar.", {**held, "wide marches": ("Wide Marches", PLACE)}) == "w.mar."  # two fit
    assert target("W.Mar.", {"marches": ("Marches", PLACE)}) == "w.mar."  # one word is not two
    assert "w.mar." in nearby_ranges([("West Marches", PLACE)]).exact
    (absorbed,) = absorptions({"west marches": held["west marches"]}, {"w.mar.": ("W.Mar.", PLACE)}, set())
    assert (absorbed.key, absorbed.target) == ("w.mar.", "west marches")
    assert "\x1dcut w.m.#0" in variant_rows("West Marches", PLACE)
    assert [r for r in variant_rows("W.Mar.", PLACE) if "cut" in r] == [f"\x1dcut w.m.#{i}" for i in range(3)]


def test_a_designation_made_of_the_name_s_adjective_is_it():
    assert target("Ruritania", {"r": ("Ruritanian Free Republic", PLACE)}) == "r"
    assert target("Quelmar", {"q": ("Quelmarese Republic", PLACE)}) == "q"
    assert target("Ruritania", {"r": ("Ruritanian Republic", PLACE)}) == "ruritania"  # "Dominican Republic"
    assert target("Ruritania", {"r": ("Ruritanian People's Republic", PLACE)}) == "ruritania"
    assert "ruritania" in nearby_ranges([("Ruritania", PLACE)]).prefixes  # reads "ruritanian ..."
    assert "ruritania" in nearby_ranges([("Ruritanian Free Republic", PLACE)]).exact


@pytest.mark.parametrize(
    ("short", "designation"),
    [
        ("Quelmaron", "Quelmarese Republic"),  # "-ese" in place of the name's last vowel and "n": "Lebanese"
        ("Quelmara", "Quelmarese Republic"),  # or of its last vowel: "Maltese"
        ("Ruritany", "Ruritanian Republic"),  # "-ian" in place of a final "-y": "Italian" / "Italy"
        ("Freedonina", "Freedonine Republic"),  # "-ine" in place of "-ina": "Argentine" / "Argentina"
        ("Elbonkia", "Elbonk Republic"),  # a people's name and a place suffix: "Slovak" / "Slovakia"
        ("Elbonkstan", "Elbonk Republic"),  # "Kyrgyz" / "Kyrgyzstan"
    ],
)
def test_a_designation_made_of_the_name_s_adjective_or_people_is_it_both_ways(short, designation):
    key = designation.casefold()
    assert target(short, {key: (designation, PLACE)}) == key  # the designation stored first
    assert short.casefold() in nearby_ranges([(designation, PLACE)]).exact  # the designation reads the short name
    prefixes = nearby_ranges([(short, PLACE)]).prefixes  # and the short name the designation
    assert any(key.startswith(p) for p in prefixes)
    (absorbed,) = absorptions({key: (designation, PLACE)}, {short.casefold(): (short, PLACE)}, set())
    assert (absorbed.key, absorbed.target) == (short.casefold(), key)


@pytest.mark.parametrize(
    ("short", "designation"),
    [
        ("Ruritania", "Ruritanian Republic"),  # a bare "-n": "Dominica" / "Dominican Republic"
        ("Federalia", "Federal Republic"),  # an everyday word is no people's name
        ("Serbia", "Serb Republic"),  # four letters: "Arab" / "Arabia", "Serb", "Kurd", "Turk"
        ("Elbonkia", "Elbonk People's Republic"),  # one of two states of a name
        ("Elbonkia", "Elbonk Free Republic"),  # a people's name only right before the form
        ("Ruritany", "Ruritanese Republic"),  # "-ese" never in place of "-y"
    ],
)
def test_look_alike_adjective_designations_stay_apart(short, designation):
    assert target(short, {"d": (designation, PLACE)}) == short.casefold()


def test_a_people_s_designation_beside_a_place_of_that_name_is_not_the_suffixed_one():
    held = {"elbonk republic": ("Elbonk Republic", PLACE), "elbonk": ("Elbonk", PLACE)}
    assert target("Elbonkia", held) == "elbonkia"  # "Niger Republic" may be Niger's: not Nigeria's
    assert "elbonk" in nearby_ranges([("Elbonkia", PLACE)]).prefixes  # both read in either order
    assert "elbonk" in nearby_ranges([("Elbonk Republic", PLACE)]).exact
