"""Writers' habits the resolution rules read (pure): a curly possessive, family name first, common diminutives,
Roman numerals, compounds joined or split and singular/plural, a year or a maker left out; and what stays apart."""

from __future__ import annotations

import pytest

from app.domain.cross_document import nearby_ranges
from app.domain.document_names import DocumentNames
from app.domain.name_matching import match_key
from app.domain.name_variants import compact_key, extension_rule
from app.domain.names import normalize_name
from app.domain.resolution import Known, resolve


def doc_of(*names: tuple[str, str]) -> DocumentNames:
    doc = DocumentNames()
    for name, etype in names:
        doc.add(name.casefold(), name, etype)
    return doc


def target(name: str, etype: str, nearby: dict[str, tuple[str, str]]) -> str:
    """Where `name`, alone in a new document, goes when the project holds `nearby` (key → (name, type))."""
    types = {k: t for k, (_, t) in nearby.items()}
    return resolve(doc_of((name, etype)), Known(entity_types=types, nearby=nearby), {}, "auto").target(name.casefold())


def test_a_curly_possessive_is_an_apostrophe_so_the_match_key_drops_it():
    assert normalize_name("Meilin  Zhou\u2019s") == "Meilin Zhou's"
    assert normalize_name("O\u2019Brien") == "O'Brien"
    assert normalize_name("\u2018Algernon\u2019") == "Algernon"  # outer quotes still go
    assert match_key(normalize_name("Meilin Zhou\u2019s"), "person") == match_key("Meilin Zhou", "person")


@pytest.mark.parametrize(
    ("a", "b", "etype"),
    [
        ("ZHOU Meilin", "Meilin Zhou", "person"),
        ("Okafor, Ngozi", "Ngozi Okafor", "person"),
        ("Bob Hale", "Robert Hale", "person"),
        ("Dr. Liz Marsh", "Elizabeth Marsh", "person"),
        ("Basin Plan II", "Second Basin Plan", "concept"),
        ("World War I", "First World War", "event"),
        ("2nd Grain Reserve Programme", "Grain Reserve Programme II", "concept"),
    ],
)
def test_writing_habits_share_a_match_key(a, b, etype):
    assert match_key(a, etype) == match_key(b, etype)


@pytest.mark.parametrize(
    ("a", "b", "etype"),
    [
        ("Naseem Khan", "Imran Khan", "person"),
        ("Chris Hale", "Christopher Hale", "person"),  # an ambiguous diminutive is not read
        ("Hearth Lite V", "Hearth Lite 5th", "artifact"),  # a product's letters are model names
        ("Model X", "10th Model", "concept"),
        ("Basin Plan II", "Basin Plan III", "concept"),
        ("Meilin Zhou Wei", "Zhou Meilin Wei", "person"),  # only two-word names read in either order
    ],
)
def test_numbers_and_given_names_still_tell_people_and_things_apart(a, b, etype):
    assert match_key(a, etype) != match_key(b, etype)


def test_compact_key_and_extension_rules():
    assert compact_key("solar edge") == compact_key("solaredge") == "solaredge"
    assert compact_key("norwell laboratories") == compact_key("norwell laboratory")
    assert compact_key("acme") is None  # too short to say anything
    assert extension_rule("osogbo summit", "osogbo summit 2004", product=False) == "year"
    assert extension_rule("summit", "summit 2004", product=False) is None  # one generic word and a year
    assert extension_rule("aquasense pro 5", "halvorsen aquasense pro 5", product=True) == "maker"
    assert extension_rule("aquasense pro 5", "halvorsen aquasense pro 5", product=False) is None
    assert extension_rule("pro 5", "halvorsen aquasense pro 5", product=True) is None


@pytest.mark.parametrize(
    ("name", "other", "etype"),
    [
        ("Solar Edge", "SolarEdge", "organization"),
        ("TeleNova", "Tele-Nova", "organization"),
        ("Geospring", "Geo Spring", "organization"),
        ("Norwell Laboratory", "Norwell Laboratories", "organization"),
        ("Osogbo Summit", "2004 Osogbo Summit", "event"),
        ("Data Privacy Act", "Data Privacy Act of 1987", "law"),
        ("AquaSense Pro 5", "Halvorsen AquaSense Pro 5", "artifact"),
    ],
)
def test_a_writing_reaches_the_one_entity_it_fits_across_documents(name, other, etype):
    key = other.casefold()
    assert key in _readable(name, etype, {key: (other, etype)})
    assert target(name, etype, {key: (other, etype)}) == key


def test_a_product_line_alone_joins_its_full_name_in_its_document_for_the_project():
    doc = doc_of(("Halvorsen AquaSense Pro 5", "artifact"), ("AquaSense", "artifact"))
    result = resolve(doc, Known(), {}, "auto")
    decision = result.decisions["aquasense"]
    assert decision.target == "halvorsen aquasense pro 5" and decision.rule == "maker" and not decision.scoped


def _readable(name: str, etype: str, nearby: dict[str, tuple[str, str]]) -> set[str]:
    """The keys of `nearby` the ranges of `name` read (as the repository's statement would)."""
    ranges = nearby_ranges([(name, etype)])
    return {
        k
        for k in nearby
        if k in ranges.exact
        or any(k.startswith(p) for p in ranges.prefixes)
        or any(k[::-1].startswith(p) for p in ranges.reversed_prefixes)
    }


@pytest.mark.parametrize(
    ("name", "etype", "nearby"),
    [
        # two years of one event, two products of a line: the short form fits both
        (
            "Osogbo Summit",
            "event",
            {
                "2001 osogbo summit": ("2001 Osogbo Summit", "event"),
                "osogbo summit 2005": ("Osogbo Summit 2005", "event"),
            },
        ),
        (
            "Hearth",
            "artifact",
            {
                "halvorsen hearth lite 2": ("Halvorsen Hearth Lite 2", "artifact"),
                "halvorsen hearth lite 3": ("Halvorsen Hearth Lite 3", "artifact"),
            },
        ),
        # another type, another head word, another word
        ("Solar Edge", "organization", {"solaredge": ("SolarEdge", "artifact")}),
        (
            "Norwell Laboratory",
            "organization",
            {"norwell laboratories group": ("Norwell Laboratories Group", "organization")},
        ),
        ("Acme Holdings", "organization", {"acme holding group": ("Acme Holding Group", "organization")}),
        ("Varga", "location", {"varga airport": ("Varga Airport", "location")}),
        ("Osogbo Summit 2004", "event", {"osogbo summit 2005": ("Osogbo Summit 2005", "event")}),
    ],
)
def test_look_alikes_stay_apart(name, etype, nearby):
    assert target(name, etype, nearby) == name.casefold()


def test_heads_partners_and_acronyms_with_a_year():
    from app.domain.name_matching import initials_match

    assert match_key("River Nakuru", "location") == match_key("Nakuru River", "location")
    assert match_key("Lake Kivu", "location") == match_key("Kivu Lake", "location")
    assert match_key("Mount Kenya", "location") != match_key("Kenya", "location")
    assert initials_match("Clean Rivers Act 1991", "CRA")
    assert extension_rule("lund and baird", "lund and baird engineering", product=False) == "firm"
    nearby = {"lund & baird engineering": ("Lund & Baird Engineering", "organization")}
    assert target("Lund & Baird", "organization", nearby) == "lund & baird engineering"
    assert "lund & baird engineering" in _readable("Lund & Baird", "organization", nearby)
    two = nearby | {"lund & baird architects": ("Lund & Baird Architects", "organization")}
    assert target("Lund & Baird", "organization", two) == "lund & baird"  # two firms of the partners: apart
