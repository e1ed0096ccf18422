"""Entity resolution rules (pure): match keys, acronyms, partial names, and the pairs that must stay apart."""

from __future__ import annotations

import pytest

from app.domain.absorption import absorptions
from app.domain.document_names import DocumentNames, document_names, remap
from app.domain.extraction_parser import parse_extraction
from app.domain.name_matching import acronym_definitions, initials_match, match_key
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord
from app.domain.resolution import Known, index_key, resolve


def doc_of(*names: tuple[str, str]) -> DocumentNames:
    doc = DocumentNames()
    for name, etype in names:
        doc.add(name.casefold(), name, etype)
    return doc


@pytest.mark.parametrize(
    ("a", "b", "etype"),
    [
        ("Acme Holdings Ltd.", "ACME HOLDINGS", "organization"),
        ("Acme Holdings, Inc.", "acme holdings", "organization"),
        ("Dr. Mira Tolven", "Mira Tolven", "person"),
        ("Prof. Zoë Ardent", "Zoe Ardent", "person"),
        ("The Kessara Research Institute (KRI)", "Kessara Research Institute", "organization"),
        ("“Halvorsen Bridge”", "Halvorsen  Bridge", "location"),
        ("Procter & Gamble Co.", "Procter and Gamble", "organization"),
    ],
)
def test_forms_of_one_name_share_a_match_key(a, b, etype):
    assert match_key(a, etype) == match_key(b, etype)


@pytest.mark.parametrize(
    ("a", "b", "etype"),
    [
        ("Draqua Energy", "Draqua Energies Group", "organization"),
        ("Acme", "Acme Holdings", "organization"),
        ("Acme Group", "Acme", "organization"),
        ("Mercury (planet)", "Mercury (element)", "concept"),
        ("John Smith Jr.", "John Smith", "person"),
        ("General Dynamics Land Systems", "Dynamics Land Systems", "organization"),
        ("GPT-3.5", "GPT-35", "concept"),
    ],
)
def test_distinct_names_keep_distinct_match_keys(a, b, etype):
    assert match_key(a, etype) != match_key(b, etype)


def test_acronym_definitions_and_initials():
    found = acronym_definitions(
        [
            "Work at the Kessara Research Institute (KRI) began. The WHO (World Health Organization) agreed.",
            "Costs (USD) rose.",
        ]
    )
    assert found == {"KRI": "Kessara Research Institute", "WHO": "World Health Organization"}
    assert initials_match("Bank of America", "BA") and initials_match("Bank of America", "BOA")
    assert not initials_match("Kessara Institute", "KRI")
    # an acronym defined two different ways in one document is not trusted
    assert acronym_definitions(["Kessara Research Institute (KRI)", "Kelp Reef Initiative (KRI)"]) == {}


def test_a_companys_legal_form_may_be_left_out_of_its_acronym():
    """ "Pethliar Textiles Holdings Ltd. (PTH)": the quality world's seed 17 left three such companies split."""
    assert initials_match("Pethliar Textiles Holdings Ltd.", "PTH") and initials_match("Pethliar Textiles Ltd", "PT")
    assert initials_match("Pethliar Textiles Holdings Ltd.", "PTHL")  # or kept
    assert not initials_match("Acme Ltd.", "A")  # one word left: no initials
    found = acronym_definitions(["Records show that Pethliar Textiles Holdings Ltd. (PTH) led a contract breach."])
    assert found == {"PTH": "Pethliar Textiles Holdings Ltd."}
    doc = doc_of(("Pethliar Textiles Holdings Ltd.", "organization"), ("PTH", "organization"))
    result = resolve(doc, Known(), found, "auto")
    assert result.decisions["pth"].target == "pethliar textiles holdings ltd."


def test_a_code_made_of_the_names_letters_in_order_is_defined_by_the_text():
    found = acronym_definitions(
        [
            "Trade with Latveria (LTV) grew. Prices in Freedonian Florin (FFL) rose. Exports of the Duchy of Grand"
            " Fenwick (DGF) fell.",
            "Ruritania (XRU) and Genovia (AFP) reported. Marta Kowalczyk (CEO) spoke.",
        ]
    )
    # the first letter starts the name, the others follow in order; a code that takes letters the name lacks, or a
    # title or a credit after a name, is only a code after a name: the resolver checks its type (below)
    assert found == {
        "LTV": "Latveria",
        "FFL": "Freedonian Florin",
        "DGF": "Duchy of Grand Fenwick",
        "CEO": "Marta Kowalczyk",
    }
    assert acronym_definitions(["Veldorian Crown (VLC) and Veldorian Crown (QRX)"])["VLC"] == "Veldorian Crown"


def test_a_code_after_a_name_it_does_not_spell_is_its_code_only_for_things_of_one_type():
    text = (
        "Trade in the Veldorian Crown (QRX) slowed, and QRX fell. Jane Roe (MIT) spoke. Lyon (FRA) voted. Acme (NYSE)"
        " rose. Ostrava Mark (ZZT) rose."
    )
    names = [("Veldorian Crown", "concept"), ("QRX", "concept"), ("Jane Roe", "person"), ("MIT", "organization")]
    names += [("Lyon", "location"), ("FRA", "location"), ("Acme", "organization"), ("NYSE", "organization")]
    names += [("Ostrava Mark", "concept"), ("ZZT", "product")]
    res = resolve(doc_of(*names), Known(), acronym_definitions([text]), "auto")
    assert res.target("qrx") == "veldorian crown" and res.decisions["qrx"].source == "acronym"
    # after a person, a place or an organisation a parenthesis often names another entity; and two types differ
    assert [res.target(k) for k in ("mit", "fra", "nyse", "zzt")] == ["mit", "fra", "nyse", "zzt"]
    # the name known from an earlier document
    known = Known(entity_types={"veldorian crown": "concept"})
    res = resolve(doc_of(("QRX", "concept")), known, acronym_definitions([text]), "auto")
    assert res.target("qrx") == "veldorian crown"


def test_document_forms_resolve_to_one_canonical_preferring_the_plain_form():
    doc = doc_of(
        ("Acme Holdings Ltd.", "organization"), ("ACME Holdings", "organization"), ("Acme Holdings", "organization")
    )
    res = resolve(doc, Known(), {}, "auto")
    assert {k: d.target for k, d in res.decisions.items()} == {
        "acme holdings ltd.": "acme holdings",
        "acme holdings": "acme holdings",
    }
    assert res.decisions["acme holdings ltd."].source == "rule"


def test_existing_entity_and_index_alias_win_across_documents():
    doc = doc_of(("ACME Holdings Inc", "organization"))
    known = Known(
        entity_types={"acme holdings ltd.": "organization"}, aliases={index_key("acme holdings"): "acme holdings ltd."}
    )
    assert resolve(doc, known, {}, "auto").target("acme holdings inc") == "acme holdings ltd."
    # a different type stays apart
    known.entity_types["acme holdings ltd."] = "location"
    assert resolve(doc, known, {}, "auto").target("acme holdings inc") == "acme holdings inc"


def test_partial_person_name_needs_exactly_one_candidate_in_the_document():
    one = doc_of(("Dr. Mira Tolven", "person"), ("Tolven", "person"), ("Mira", "person"))
    res = resolve(one, Known(), {}, "auto")
    assert res.target("tolven") == "dr. mira tolven" and res.target("mira") == "dr. mira tolven"
    assert res.decisions["tolven"].scoped and res.decisions["tolven"].source == "partial"
    assert not any(k == index_key("tolven") for k in res.index)  # never a project-wide index entry
    two = doc_of(("Mira Tolven", "person"), ("Jon Tolven", "person"), ("Tolven", "person"))
    assert resolve(two, Known(), {}, "auto").target("tolven") == "tolven"
    # a surname alone never reaches a person of another document, and never another type
    alone = doc_of(("Tolven", "person"), ("Tolven Mills", "organization"))
    assert resolve(alone, Known(entity_types={"mira tolven": "person"}), {}, "auto").target("tolven") == "tolven"


def test_acronyms_defined_in_the_document_or_unique_initials():
    doc = doc_of(("Kessara Research Institute", "organization"), ("KRI", "organization"))
    defined = resolve(doc, Known(), {"KRI": "Kessara Research Institute"}, "auto")
    assert defined.target("kri") == "kessara research institute" and defined.decisions["kri"].source == "acronym"
    assert resolve(doc, Known(), {}, "auto").target("kri") == "kessara research institute"  # initials, in doc
    alone = doc_of(("KRI", "organization"))
    unique = Known(
        entity_types={"kessara research institute": "organization"}, initials={"KRI": ["kessara research institute"]}
    )
    assert resolve(alone, unique, {}, "auto").target("kri") == "kessara research institute"
    ambiguous = Known(
        entity_types={"kessara research institute": "organization", "kelp reef initiative": "organization"},
        initials={"KRI": ["kessara research institute", "kelp reef initiative"]},
    )
    assert resolve(alone, ambiguous, {}, "auto").target("kri") == "kri"


def test_two_bare_letters_join_a_name_of_another_document_only_by_the_judge():
    # "BC" after a century is no "Brunswick County": two letters of another document are left open (a judge may
    # read them by their context), three are read ("BCS"), and so are two cut short with periods ("N.C.")
    known = Known(
        entity_types={"brunswick county": "location", "north carolina": "location", "bank of coastal shipping": "org"},
        initials={"BC": ["brunswick county"], "NC": ["north carolina"], "BCS": ["bank of coastal shipping"]},
    )
    alone = resolve(doc_of(("BC", "location")), known, {}, "auto")
    assert alone.target("bc") == "bc" and alone.open["bc"] == {"brunswick county"}
    assert resolve(doc_of(("N.C.", "location")), known, {}, "auto").target("n.c.") == "north carolina"
    assert resolve(doc_of(("BCS", "org")), known, {}, "auto").target("bcs") == "bank of coastal shipping"
    both = doc_of(("Brunswick County", "location"), ("BC", "location"))  # the document names both
    assert resolve(both, Known(), {}, "auto").target("bc") == "brunswick county"
    later = {"brunswick county": ("Brunswick County", "location")}
    assert absorptions(later, {"bc": ("BC", "location")}, set()) == []
    (absorbed,) = absorptions(later, {"b.c.": ("B.C.", "location")}, set())
    assert absorbed.target == "brunswick county"


def test_suggest_mode_applies_nothing_and_lists_pairs():
    doc = doc_of(("Acme Holdings Ltd.", "organization"), ("Acme Holdings", "organization"))
    res = resolve(doc, Known(), {}, "suggest")
    assert all(d.target == k for k, d in res.decisions.items())
    assert [(a, b) for a, b, _, _ in res.suggestions] == [("acme holdings ltd.", "acme holdings")]


def test_remap_moves_records_and_drops_self_loops():
    x = ChunkExtraction(
        "c1",
        entities=[EntityRecord("Acme Ltd", "acme ltd", "organization", "d", "c1")],
        relations=[
            RelationRecord("Acme", "Acme Ltd", "acme", "acme ltd", ["k"], "same", 1.0, "c1"),
            RelationRecord("Acme Ltd", "Zed", "acme ltd", "zed", ["k"], "rel", 1.0, "c1"),
        ],
    )
    [out] = remap([x], {"acme ltd": "acme"}, {"acme": "Acme"})
    assert [(e.key, e.name) for e in out.entities] == [("acme", "Acme")]
    assert [(r.src_key, r.tgt_key, r.src_name, r.tgt_name) for r in out.relations] == [("acme", "zed", "Acme", "Zed")]


def test_same_name_of_another_specific_type_is_kept_apart_under_its_qualified_name():
    town = Known(entity_types={"orlin": "location"})
    res = resolve(doc_of(("Orlin", "artifact")), town, {}, "auto")
    decision = res.decisions["orlin"]
    assert (decision.target, decision.scoped, decision.apart) == ("orlin (artifact)", True, True)
    assert res.display == {"orlin (artifact)": "Orlin (artifact)"}
    assert [(a, b, e.split(":")[0]) for a, b, _, e in res.suggestions] == [
        ("orlin", "orlin (artifact)", "same name, other type")
    ]
    assert res.index == {}
    # a form of the name in the same document follows, inside the document only
    forms = resolve(doc_of(("Orlin", "artifact"), ("The Orlin", "unknown")), town, {}, "auto")
    assert forms.target("the orlin") == "orlin (artifact)" and forms.decisions["the orlin"].scoped
    # the qualified entity exists: later documents reach it, with or without the bare one
    both = Known(entity_types={"orlin": "location", "orlin (artifact)": "artifact"})
    assert resolve(doc_of(("Orlin", "artifact")), both, {}, "auto").target("orlin") == "orlin (artifact)"
    only = Known(entity_types={"orlin (artifact)": "artifact"})
    assert resolve(doc_of(("Orlin", "artifact")), only, {}, "auto").target("orlin") == "orlin (artifact)"
    assert resolve(doc_of(("Orlin", "location")), only, {}, "auto").target("orlin") == "orlin"
    # suggest mode applies no merge, but keeping apart is not one
    assert resolve(doc_of(("Orlin", "artifact")), town, {}, "suggest").target("orlin") == "orlin (artifact)"


@pytest.mark.parametrize(
    ("names", "stored"),
    [
        ((("Orlin", "artifact"), ("Orlin", "location")), "location"),  # the document gives two types
        ((("Orlin", "artifact"), ("ORLIN", "location")), "location"),
        ((("Orlin", "artifact"), ("The Orlin", "location")), "location"),  # a form of the name, another type
        ((("Orlin", "other"),), "location"),  # generic types say nothing
        ((("Orlin", "unknown"),), "location"),
        ((("Orlin", ""),), "location"),
        ((("Orlin", "artifact"),), "other"),
        ((("Orlin", "artifact"),), "unknown"),
        ((("Orlin", "Location"),), "location"),  # the same type in another case
        ((("Orlin", "artifact"),), "artifact"),
    ],
)
def test_no_split_for_inconsistent_or_generic_types(names, stored):
    res = resolve(doc_of(*names), Known(entity_types={"orlin": stored}), {}, "auto")
    assert res.target("orlin") == "orlin" and res.suggestions == []


def test_a_qualified_entity_merged_into_the_bare_one_by_a_user_is_not_split_again():
    known = Known(entity_types={"orlin": "location"}, aliases={"orlin (artifact)": "orlin"})
    assert resolve(doc_of(("Orlin", "artifact")), known, {}, "auto").target("orlin") == "orlin"


def test_inconsistent_types_from_the_parser_reach_the_document_names():
    answer = "\n".join(
        [
            "entity<|#|>Orlin<|#|>Artifact<|#|>A drone.",
            "entity<|#|>Orlin<|#|>Location<|#|>A port.",
            "entity<|#|>Vessa<|#|>Gadget<|#|>Not a project type.",
            "<|COMPLETE|>",
        ]
    )
    parsed = parse_extraction(answer, "c1", None, 500, ["Artifact", "Location"])
    doc = document_names([parsed])
    assert doc.specific == {"orlin": {"artifact", "location"}}  # "gadget" became the generic "other"
    assert doc.types["vessa"] == "other"
    known = Known(entity_types={"orlin": "location", "vessa": "location"})
    res = resolve(doc, known, {}, "auto")
    assert res.target("orlin") == "orlin" and res.target("vessa") == "vessa"
