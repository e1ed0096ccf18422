"""The judge's candidates beyond the rules, pure part (app/domain/judge_candidates.py): which neighbours are
shown, and how a "same" becomes a decision — never for a pair the confusable guard keeps apart, never onto an
entity that is gone, and a name resolved into the moved one follows it."""

from __future__ import annotations

import pytest

from app.domain.document_names import DocumentNames
from app.domain.judge_candidates import (
    CODE_FIT,
    CODE_MARGIN,
    Neighbour,
    Proposal,
    choose,
    code_pattern,
    document_neighbours,
    floor_of,
    lone_names,
    may_be_one_person,
    with_proposals,
)
from app.domain.resolution import Decision, Resolution


def doc_of(*names: tuple[str, str]) -> DocumentNames:
    doc = DocumentNames()
    for name, etype in names:
        doc.add(name.lower(), name, etype)
    return doc


def near(name_key: str, name: str, etype: str, similarity: float) -> Neighbour:
    return Neighbour(name_key, name.lower(), name, etype, f"{name} is somewhere.", similarity, "embedding")


def test_choose_keeps_compatible_unguarded_unrejected_neighbours_in_key_order():
    doc = doc_of(("Chennai", "location"), ("Imran Khan", "person"), ("Harbour", "location"))
    found = [
        near("chennai", "Madras", "location", 0.7),
        near("chennai", "Madras", "location", 0.6),  # the same pair found twice: once, at its best
        near("chennai", "Tamil Nadu Board", "organization", 0.9),  # another type
        near("chennai", "Chennai", "location", 0.99),  # the name itself
        near("imran khan", "Naseem Khan", "person", 0.95),  # the confusable guard keeps them apart
        near("harbour", "Dock", "location", 0.8),
        near("harbour", "Quay", "location", 0.5),
    ]
    chosen = choose(found, doc, rejected={("dock", "harbour")})
    assert [(n.name_key, n.key, n.similarity) for n in chosen] == [("chennai", "madras", 0.7), ("harbour", "quay", 0.5)]


def test_choose_takes_a_pair_on_its_own_not_by_its_rank_among_a_names_neighbours():
    doc = doc_of(("Vanuatu", "location"))
    found = [near("vanuatu", n, "location", s) for n, s in (("Fiji", 0.84), ("Tonga", 0.83), ("New Hebrides", 0.75))]
    assert {n.key for n in choose(found, doc, set())} == {"fiji", "tonga", "new hebrides"}


def test_an_embedding_neighbour_is_asked_from_the_floor_a_bare_codes_a_little_lower():
    doc = doc_of(("UGX", "concept"), ("Kwacha", "concept"))
    found = [
        near("ugx", "Uganda Shilling", "concept", 0.42),  # a code: asked from 0.45 - CODE_MARGIN
        near("kwacha", "Zambian Pound", "concept", 0.42),  # two names: not asked under 0.45
        near("kwacha", "Malawi Pound", "concept", 0.46),
        Neighbour("ugx", "ugandan cent", "Ugandan Cent", "concept", "", CODE_FIT, "letters"),  # letters: any floor
    ]
    chosen = choose(found, doc, set(), floor=0.45)
    assert {(n.name_key, n.key) for n in chosen} == {
        ("ugx", "uganda shilling"),
        ("kwacha", "malawi pound"),
        ("ugx", "ugandan cent"),
    }
    assert floor_of("UGX", "Uganda Shilling", 0.45) == pytest.approx(0.45 - CODE_MARGIN)
    assert floor_of("Uganda", "Uganda Shilling", 0.45) == 0.45


def _both_ways(similarity: dict[tuple[int, int], float], per_document: int) -> tuple[set, set]:
    """The unordered pairs chosen when the "new" names are the document's and the "old" ones stored, and the
    other way round, the same similarities read from either side."""
    new = doc_of(*((f"Newport{i}", "location") for i in range(4)))
    old = doc_of(*((f"Oldport{j}", "location") for j in range(4)))
    forward = [near(f"newport{i}", f"Oldport{j}", "location", s) for (i, j), s in similarity.items()]
    backward = [near(f"oldport{j}", f"Newport{i}", "location", s) for (i, j), s in similarity.items()]
    return tuple(  # type: ignore[return-value]
        {frozenset((n.name_key, n.key)) for n in choose(found, doc, set(), per_document=per_document)}
        for found, doc in ((forward, new), (backward, old))
    )


@pytest.mark.parametrize("per_document", [3, 5, 16])
def test_choose_caps_the_document_by_a_key_the_pair_has_whichever_side_is_the_documents(per_document):
    # ties on similarity included: the cap then goes by the unordered pair of keys
    similarity = {(i, j): round(0.9 - ((i * 7 + j * 3) % 5) / 20, 2) for i in range(4) for j in range(4)}
    forward, backward = _both_ways(similarity, per_document)
    assert len(forward) == min(per_document, 16)
    assert forward == backward


def resolution(doc: DocumentNames, decisions: dict[str, Decision], index: dict[str, str]) -> Resolution:
    full = {k: decisions.get(k, Decision(k)) for k in doc.names}
    return Resolution(full, [], index, {k: doc.names[k] for k in doc.names}, [], {})


def test_a_same_verdict_moves_the_name_and_what_resolved_into_it():
    doc = doc_of(("Chennai", "location"), ("the city", "location"))
    rules = resolution(doc, {"the city": Decision("chennai", "rule", "short form")}, {"\x1echennai": "chennai"})
    assert lone_names(rules, stored=set()) == ["chennai"]
    out = with_proposals(rules, doc, {"chennai": Proposal("madras", "Madras", "location", "renamed")}, {"madras"})
    assert out.decisions["chennai"].target == "madras" and out.decisions["chennai"].rule == "llm_judge"
    assert out.decisions["chennai"].scoped
    assert out.decisions["the city"].target == "madras"
    assert out.index == {} and "chennai" not in out.display


def test_no_verdict_joins_a_confusable_pair_nor_an_entity_that_is_gone():
    doc = doc_of(("Imran Khan", "person"), ("Chennai", "location"))
    rules = resolution(doc, {}, {})
    proposed = {
        "imran khan": Proposal("naseem khan", "Naseem Khan", "person", "the judge said so"),
        "chennai": Proposal("madras", "Madras", "location", "renamed"),
    }
    out = with_proposals(rules, doc, proposed, present={"naseem khan"})  # madras was deleted meanwhile
    assert out.decisions == rules.decisions


def test_a_stored_name_of_the_same_document_is_a_target_through_its_own_decision():
    doc = doc_of(("Ouguiya", "concept"), ("MRU", "concept"), ("Guinea", "location"))
    found = [near("ouguiya", "MRU", "concept", 0.6), near("guinea", "Guinea", "location", 0.9)]
    assert [(n.name_key, n.key) for n in choose(found, doc, set())] == [("ouguiya", "mru")]
    rules = resolution(doc, {"mru": Decision("mauritanian ouguiya", "alias", "stored alias")}, {})
    out = with_proposals(rules, doc, {"ouguiya": Proposal("mru", "MRU", "concept", "its code")}, {"mru"})
    assert out.decisions["ouguiya"].target == "mauritanian ouguiya"  # where the document's MRU goes


def test_a_name_the_rules_resolved_is_left_to_them():
    doc = doc_of(
        ("Chennai", "location"),
    )
    rules = resolution(doc, {"chennai": Decision("chennai city", "rule", "same key")}, {})
    out = with_proposals(rules, doc, {"chennai": Proposal("madras", "Madras", "location", "x")}, {"madras"})
    assert out.decisions["chennai"].target == "chennai city"


def test_two_people_the_judge_may_see_share_a_surname_or_a_given_name_with_its_initial():
    same_person = [
        ("Bill Hale", "William Hale"),  # a nickname: the surname is shared
        ("Evgeny Kouznetsov", "Yevgeny Kuznetsov"),  # a surname transliterated
        ("Okafor", "Ngozi Okafor"),
        ("H. Zhou", "Haoran Zhou"),
        ("Haoran Z.", "Haoran Zhou"),
        ("Meilin Wang", "Meilin Wang Jr."),  # the son or his father: the judge may tell
    ]
    for a, b in same_person:
        assert may_be_one_person(a, "person", b, "person"), (a, b)
        assert may_be_one_person(b, "person", a, "unknown"), (a, b)
    other_people = [("Haoran Xu", "Haoran Zhou"), ("Inés Castillo", "Tomás Muñoz"), ("Haoran", "Haoran Zhou")]
    other_people += [("Haoran X.", "Haoran Zhou"), ("Muñoz", "Castillo"), ("Meilin Wang Sr.", "Meilin Wang Jr.")]
    for a, b in other_people:
        assert not may_be_one_person(a, "person", b, "person"), (a, b)
    assert may_be_one_person("Madras", "location", "Chennai", "location")  # no person: nothing asked


def test_neither_choose_nor_a_verdict_joins_two_people_without_a_shared_surname():
    doc = doc_of(("Haoran Xu", "person"), ("H. Zhou", "person"))
    found = [near("haoran xu", "Haoran Zhou", "person", 0.95), near("h. zhou", "Haoran Zhou", "person", 0.9)]
    assert [(n.name_key, n.key) for n in choose(found, doc, rejected=set())] == [("h. zhou", "haoran zhou")]
    result = Resolution({k: Decision(k) for k in doc.names}, [], {}, {})
    proposed = {"haoran xu": Proposal("haoran zhou", "Haoran Zhou", "person", "same")}
    assert with_proposals(result, doc, proposed, {"haoran zhou"}).decisions["haoran xu"].target == "haoran xu"


@pytest.mark.parametrize(
    ("name", "pattern"),
    [("LBN", "l%b%n%"), ("U.S.A.", "u%s%a%"), ("XAUUS", "x%a%u%u%s%"), ("EU", None), ("Lebanon", None), ("T2D", None)],
)
def test_a_bare_code_of_three_to_five_letters_is_searched_by_its_letters_in_order(name, pattern):
    assert code_pattern(name) == pattern


def test_two_new_names_of_one_document_near_each_other_are_offered_once():
    doc = doc_of(("Syria", "location"), ("Syrian Arab Republic", "location"), ("Quetzal", "concept"))
    vectors = [("syria", [1.0, 0.1, 0.0]), ("syrian arab republic", [2.0, 0.4, 0.0]), ("quetzal", [0.0, 0.0, 1.0])]
    found = document_neighbours(vectors, doc, {"syria": "Syria is a state."}, min_similarity=0.9)
    assert [(n.name_key, n.key, n.description, n.found_by) for n in found] == [
        ("syrian arab republic", "syria", "Syria is a state.", "document")
    ]
    assert found[0].similarity == pytest.approx(0.995, abs=1e-3)


def test_a_same_verdict_on_two_new_names_of_the_document_joins_them_and_follows_a_moved_target():
    doc = doc_of(("Syria", "location"), ("Syrian Arab Republic", "location"), ("Sham", "location"))
    rules = resolution(doc, {}, {})
    proposed = {
        "syrian arab republic": Proposal("syria", "Syria", "location", "official name"),
        "syria": Proposal("sham", "Sham", "location", "older name"),  # a new name of the document too
    }
    out = with_proposals(rules, doc, proposed, present=set())
    assert out.decisions["syrian arab republic"].target == "sham"
    assert out.decisions["syria"].target == "sham"
    looping = {"syria": Proposal("sham", "Sham", "location", "x"), "sham": Proposal("syria", "Syria", "location", "x")}
    joined = with_proposals(rules, doc, looping, present=set()).decisions  # said both ways: one node, no loop
    assert joined["syria"].target == joined["sham"].target in {"syria", "sham"}
