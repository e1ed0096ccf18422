"""Resolution rules on the forms of real text (GraphRAG-Bench Medical, issue 33): common-noun compounds, spans an
extractor typed "person", acronyms defined in lower case or by one word. The wrong merges stay apart; proper
names and defined acronyms still merge."""

from __future__ import annotations

import pytest

from app.domain.absorption import absorptions
from app.domain.cross_document import lone_word_candidates
from app.domain.document_names import DocumentNames
from app.domain.name_index import NameIndex
from app.domain.name_matching import acronym_definitions, defined_acronyms
from app.domain.name_shapes import person_name, proper_root
from app.domain.resolution import Known, resolve


def doc_of(*names: tuple[str, str]) -> DocumentNames:
    doc = DocumentNames()
    for name, etype in names:
        doc.add(name.casefold(), name, etype)
    return doc


@pytest.mark.parametrize(
    ("short", "full", "etype"),
    [
        ("liver", "liver cancer", "concept"),
        ("bile", "bile ducts", "concept"),
        ("test", "test results", "concept"),
        ("Eastern", "Eastern Cooperative Oncology Group", "organization"),
        ("uterus", "uterus, cervix", "concept"),
        ("kidney", "Kidney Cancer", "unknown"),
        ("neck", "neck cancer", "concept"),
        ("Health", "Health Organization", "organization"),
        ("African", "African/North American Black", "organization"),
    ],
)
def test_a_common_word_alone_is_not_the_compound_it_starts(short, full, etype):
    index = NameIndex({full.casefold(): (full, etype)})
    assert lone_word_candidates(short, etype, index)[0] == set()
    assert not proper_root(short, full)
    assert (
        resolve(doc_of((short, etype), (full, etype)), Known(), {}, "auto").target(short.casefold()) == short.casefold()
    )


@pytest.mark.parametrize(
    ("short", "full", "etype"),
    [
        ("Siemens", "Siemens Healthineers AG", "organization"),
        ("Lupron", "Lupron Depot", "organization"),
        ("Ashkenazi", "Ashkenazi Jewish", "organization"),
        ("Fiorano", "Fiorano Reactor", "unknown"),
        ("Skyfold", "Skyfold Lite 4", "product"),
    ],
)
def test_a_proper_name_alone_still_reaches_its_full_name(short, full, etype):
    index = NameIndex({full.casefold(): (full, etype)})
    assert lone_word_candidates(short, etype, index)[0] == {full.casefold()}
    known = Known(nearby={full.casefold(): (full, etype)}, entity_types={full.casefold(): etype})
    assert resolve(doc_of((short, etype)), known, {}, "auto").target(short.casefold()) == full.casefold()


def test_an_earlier_common_word_node_is_not_absorbed_by_a_compound():
    earlier = {"liver": ("liver", "concept"), "health": ("Health", "organization")}
    full = {"liver cancer": ("liver cancer", "concept"), "health organization": ("Health Organization", "organization")}
    assert absorptions(full, earlier, set()) == []
    siemens = absorptions(
        {"siemens healthineers ag": ("Siemens Healthineers AG", "organization")},
        {"siemens": ("Siemens", "organization")},
        set(),
    )
    assert [a.target for a in siemens] == ["siemens healthineers ag"]


@pytest.mark.parametrize(
    ("partial", "full", "partial_type", "full_type"),
    [
        ("Kidney", "Kidney Cancer", "person", "person"),
        ("Carcinomas", "keratinocyte carcinomas", "person", "person"),
        ("Muscularis", "muscularis propria", "person", "person"),
        ("Mouth", "Nausea Vomiting Mouth", "person", "person"),
        ("Nausea", "Nausea Vomiting Mouth", "unknown", "person"),
        ("Lymph", "node Lymph", "person", "person"),
        ("trastuzumab", "Trazimera • Ado-trastuzumab", "person", "person"),
    ],
)
def test_a_person_type_on_a_thing_makes_no_partial_name(partial, full, partial_type, full_type):
    res = resolve(doc_of((full, full_type), (partial, partial_type)), Known(), {}, "auto")
    assert res.target(partial.casefold()) == partial.casefold()


def test_partial_person_names_still_merge_and_shapes_are_read():
    res = resolve(
        doc_of(("Dr. Ngozi Okafor", "person"), ("Okafor", "person"), ("Ngozi", "person")), Known(), {}, "auto"
    )
    assert res.target("okafor") == res.target("ngozi") == "dr. ngozi okafor"
    assert person_name("K. L. Ndungu") and person_name("Imran bin Khalid")
    assert not person_name("Nausea Vomiting Mouth") and not person_name("Kidney") and not person_name("uterus, cervix")


TEXT = (
    "Patients with follicular lymphoma (FL) should see their primary care physician (PCP). Symptoms of the "
    "gastrointestinal (GI) tract are checked. Ultrasound (US) is used, and basal cell carcinoma (BCC) is common."
)


def test_acronyms_defined_in_lower_case_or_by_one_word_are_read():
    found = acronym_definitions([TEXT])
    assert found == {
        "FL": "follicular lymphoma",
        "PCP": "primary care physician",
        "GI": "gastrointestinal",
        "US": "Ultrasound",
        "BCC": "basal cell carcinoma",
    }
    assert {"FL", "PCP", "GI", "US", "BCC"} <= defined_acronyms([TEXT])
    # two definitions of one acronym: neither is used, but the acronym counts as defined
    both = [TEXT, "the United States (US) agreed"]
    assert "US" not in acronym_definitions(both) and "US" in defined_acronyms(both)
    assert acronym_definitions(["cancer (CT) and the (AB) mark"]) == {}


@pytest.mark.parametrize(
    ("acronym", "guess"),
    [("FL", "Fever Loss"), ("GI", "Guide Information"), ("PCP", "PET-CT Physical"), ("US", "United States")],
)
def test_an_acronym_the_text_defines_is_never_guessed_by_initials(acronym, guess):
    doc = doc_of((acronym, "organization"), (guess, "organization"))
    defined = defined_acronyms([TEXT])
    known = Known(defined=defined)
    assert resolve(doc, known, acronym_definitions([TEXT]), "auto").target(acronym.casefold()) == acronym.casefold()
    # without the text's definition the initials guess still applies
    assert resolve(doc, Known(), {}, "auto").target(acronym.casefold()) == guess.casefold()


def test_a_lower_case_definition_still_merges_and_guesses_need_capitalised_names():
    doc = doc_of(("basal cell carcinoma", "concept"), ("BCC", "concept"))
    res = resolve(doc, Known(defined={"BCC"}), acronym_definitions([TEXT]), "auto")
    assert res.target("bcc") == "basal cell carcinoma" and res.decisions["bcc"].source == "acronym"
    marked = doc_of(("National Comprehensive Cancer Network®", "organization"), ("NCCN", "organization"))
    assert resolve(marked, Known(), {}, "auto").target("nccn") == "national comprehensive cancer network®"
    lower = doc_of(("fever loss", "concept"), ("FL", "concept"))
    assert resolve(lower, Known(), {}, "auto").target("fl") == "fl"
