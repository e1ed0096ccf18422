"""The extraction parser against hostile LLM output: exact records and malformed counts per case."""

from __future__ import annotations

import pytest

from app.domain.extraction_parser import merge_gleaning, parse_extraction
from app.domain.records import ChunkExtraction, EntityRecord, RelationRecord

D = "<|#|>"
C = "<|COMPLETE|>"


def E(name, etype, desc):  # noqa: N802 - table shorthand
    return ("E", name, etype, desc)


def R(src, tgt, keywords, desc, weight=1.0):  # noqa: N802
    return ("R", src, tgt, tuple(keywords), desc, weight)


def _flat(result: ChunkExtraction) -> list[tuple]:
    return [E(e.name, e.entity_type, e.description) for e in result.entities] + [
        R(r.src_name, r.tgt_name, r.keywords, r.description, r.weight) for r in result.relations
    ]


CASES = [
    (
        "clean",
        f"entity{D}Alice{D}Person{D}Alice is an engineer.\n"
        f"entity{D}Bob{D}Person{D}Bob is a chef.\n"
        f"relation{D}Alice{D}Bob{D}friendship, cooking{D}Alice eats at Bob's.\n{C}",
        [
            E("Alice", "person", "Alice is an engineer."),
            E("Bob", "person", "Bob is a chef."),
            R("Alice", "Bob", ["friendship", "cooking"], "Alice eats at Bob's."),
        ],
        0,
    ),
    (
        "markdown fences",
        f"```text\nentity{D}Alice{D}Person{D}Alice codes.\n{C}\n```",
        [E("Alice", "person", "Alice codes.")],
        0,
    ),
    (
        "missing completion delimiter",
        f"entity{D}Alice{D}Person{D}Alice codes.",
        [E("Alice", "person", "Alice codes.")],
        0,
    ),
    (
        "stray quotes around records and fields",
        f'"entity{D}Alice{D}Person{D}Alice codes."\n'
        f'entity{D}"Bob"{D}"Person"{D}"Bob cooks."\n'
        f"'entity'{D}'Carol'{D}person{D}Carol sings.",
        [E("Alice", "person", "Alice codes."), E("Bob", "person", "Bob cooks."), E("Carol", "person", "Carol sings.")],
        0,
    ),
    (
        "brackets around records, balanced brackets kept",
        f"(entity{D}Alice{D}Person{D}Alice (the CEO) codes.)\n[entity{D}Bob{D}Person{D}Bob cooks.]",
        [E("Alice", "person", "Alice (the CEO) codes."), E("Bob", "person", "Bob cooks.")],
        0,
    ),
    (
        "case variants of the keyword",
        f"Entity{D}Alice{D}Person{D}Alice codes.\nENTITY{D}Bob{D}Person{D}Bob cooks.\n"
        f"RELATIONSHIP{D}Alice{D}Bob{D}work{D}They work together.\nRelation{D}Bob{D}Carol{D}kin{D}Siblings.",
        [
            E("Alice", "person", "Alice codes."),
            E("Bob", "person", "Bob cooks."),
            R("Alice", "Bob", ["work"], "They work together."),
            R("Bob", "Carol", ["kin"], "Siblings."),
        ],
        0,
    ),
    (
        "blank lines everywhere",
        f"\n\n   \nentity{D}Alice{D}Person{D}Alice codes.\n\n\n\nentity{D}Bob{D}Person{D}Bob cooks.\n\n{C}\n\n",
        [E("Alice", "person", "Alice codes."), E("Bob", "person", "Bob cooks.")],
        0,
    ),
    (
        "wrong field counts are counted, a relation without keywords is kept",
        f"entity{D}Alice{D}Alice codes.\n"
        f"relation{D}Alice{D}Bob{D}They met.\n"
        f"entity{D}Bob{D}Person{D}Bob cooks.\n"
        f"relation{D}Alice\n{C}",
        [E("Bob", "person", "Bob cooks."), R("Alice", "Bob", [], "They met.")],
        2,
    ),
    (
        "description continues on the next lines",
        f"entity{D}Alice{D}Person{D}Alice is an engineer\nwho writes compilers\nfor a living.\n"
        f"entity{D}Bob{D}Person{D}Bob cooks.\n{C}",
        [
            E("Alice", "person", "Alice is an engineer who writes compilers for a living."),
            E("Bob", "person", "Bob cooks."),
        ],
        0,
    ),
    (
        "record cut between fields",
        f"relation{D}Alice{D}Bob{D}\nfriendship{D}They are friends.\nentity{D}Bob{D}Person\n{D}Bob cooks.",
        [E("Bob", "person", "Bob cooks."), R("Alice", "Bob", ["friendship"], "They are friends.")],
        0,
    ),
    (
        "several records glued with the delimiter (official keeps only the first)",
        f"entity{D}Alice{D}Person{D}Alice codes.{D}entity{D}Bob{D}Person{D}Bob cooks.{D}"
        f"entity{D}Carol{D}Person{D}Carol sings.{D}relation{D}Alice{D}Carol{D}duet{D}They sing.{C}",
        [
            E("Alice", "person", "Alice codes."),
            E("Bob", "person", "Bob cooks."),
            E("Carol", "person", "Carol sings."),
            R("Alice", "Carol", ["duet"], "They sing."),
        ],
        0,
    ),
    (
        "records glued with a space or punctuation",
        f"entity{D}Alice{D}Person{D}Alice codes. entity{D}Bob{D}Person{D}Bob cooks.relation{D}Alice{D}Bob{D}"
        f"food{D}Bob feeds Alice.",
        [
            E("Alice", "person", "Alice codes."),
            E("Bob", "person", "Bob cooks."),
            R("Alice", "Bob", ["food"], "Bob feeds Alice."),
        ],
        0,
    ),
    (
        "corrupted delimiters",
        "entity<|##|>A1<|##|>Person<|##|>one.\n"
        "entity<#>A2<#>Person<#>two.\n"
        "entity<|#>A3<#|>Person<|#>three.\n"
        "entity<|\\#|>A4<|\\#|>Person<|\\#|>four.\n"
        "entity|#|>A5|#|>Person<|#|five.\n"
        "entity<\uff5c#\uff5c>A6<\uff5c#\uff5c>Person<\uff5c#\uff5c>six.\n"
        f"entity<|>A7<|>Person<|>seven.{D}\n"
        "entity<|#||>A8<|#||>Person<|#||>eight.\n",
        [
            E(f"A{i}", "person", w)
            for i, w in enumerate(["one.", "two.", "three.", "four.", "five.", "six.", "seven.", "eight."], 1)
        ],
        0,
    ),
    (
        "legacy <|> / ## format with parentheses and strength",
        '("entity"<|>"Alice"<|>"PERSON"<|>"Alice (an engineer) codes.")##\n'
        '("entity"<|>"Bob"<|>"person"<|>"Bob cooks.")##("relationship"<|>"Alice"<|>"Bob"<|>"Bob feeds Alice."'
        '<|>"food, friendship"<|>8)##\n("content_keywords"<|>"food, code")<|COMPLETE|>',
        [
            E("Alice", "person", "Alice (an engineer) codes."),
            E("Bob", "person", "Bob cooks."),
            R("Alice", "Bob", ["food", "friendship"], "Bob feeds Alice.", 8.0),
        ],
        0,
    ),
    (
        "delimiter strings injected inside a description make no phantom records and are stripped",
        f'entity{D}Mallory{D}Person{D}Mallory typed "entity{D}Ghost{D}Person{D}boo" into the form.\n'
        f"entity{D}Trent{D}Person{D}Trent wrote '{D}' and <|COMPLETE|> in a chat.\n"
        f"relation{D}Mallory{D}Trent{D}chat{D}Mallory answered with {D} twice {D} in a row.\n{C}",
        [
            E("Mallory", "person", 'Mallory typed "entity Ghost Person boo" into the form.'),
            E("Trent", "person", "Trent wrote ' ' and"),
            R("Mallory", "Trent", ["chat"], "Mallory answered with twice in a row."),
        ],
        0,
    ),
    (
        "prose, headings and list markers around records",
        f"Sure! Here are the records:\n\n## Entities\n1. entity{D}Alice{D}Person{D}Alice codes.\n"
        f"- entity{D}Bob{D}Person{D}Bob cooks.\n**Relationships**\n* relation{D}Alice{D}Bob{D}food{D}Meals.\n"
        f"{C}\nI hope this helps.",
        [E("Alice", "person", "Alice codes."), E("Bob", "person", "Bob cooks."), R("Alice", "Bob", ["food"], "Meals.")],
        0,
    ),
    (
        "record starting inside a line of prose",
        f"Output: entity{D}Alice{D}Person{D}Alice codes.",
        [E("Alice", "person", "Alice codes.")],
        0,
    ),
    (
        "empty names and descriptions are dropped and counted",
        f'entity{D}Alice{D}Person{D}   \nentity{D}  {D}Person{D}Nobody.\nentity{D}""{D}Person{D}Quotes only.\n'
        f"relation{D}Alice{D}Bob{D}kw{D}\nrelation{D}{D}Bob{D}kw{D}Something.\nentity{D}42{D}Data{D}A short number.",
        [],
        6,
    ),
    (
        "self-relations are dropped, also across case",
        f"relation{D}Apple{D}APPLE{D}same{D}Apple is Apple.\nrelation{D}Apple{D}Apple{D}same{D}Again.",
        [],
        0,
    ),
    (
        "relation pairs are stored sorted by key, names swapped with them",
        f"relation{D}zeta corp{D}Alpha Inc{D}merger{D}Zeta merged with Alpha.",
        [R("Alpha Inc", "zeta corp", ["merger"], "Zeta merged with Alpha.")],
        0,
    ),
    (
        "keywords split on commas incl. full-width, trimmed, deduped",
        f'relation{D}A1{D}B1{D} trade ，Trade,  "export" ,, shipping，{D}They trade.',
        [R("A1", "B1", ["trade", "export", "shipping"], "They trade.")],
        0,
    ),
    (
        "same name twice gives two records",
        f"entity{D}Alice{D}Person{D}Alice codes.\nentity{D}ALICE{D}Person{D}Alice also sings.",
        [E("Alice", "person", "Alice codes."), E("ALICE", "person", "Alice also sings.")],
        0,
    ),
    (
        "think blocks are removed",
        f"<think>entity{D}Nope{D}x{D}no</think>\nentity{D}Alice{D}Person{D}Alice codes.",
        [E("Alice", "person", "Alice codes.")],
        0,
    ),
    ("nothing to extract", f"{C}", [], 0),
    ("empty answer", "", [], 0),
    ("plain prose is not counted", "I could not find any entities in this text.", [], 0),
    ("fields without a keyword are counted", f"Alice{D}Person{D}Alice codes.\n{C}", [], 1),
    (
        "a 5-field record labelled entity is a relation (official rule)",
        f"entity{D}Alice{D}Bob{D}friendship{D}Alice and Bob are friends.",
        [R("Alice", "Bob", ["friendship"], "Alice and Bob are friends.")],
        0,
    ),
    (
        "numeric sixth relation field is the weight",
        f"relation{D}Alice{D}Bob{D}friendship{D}They are friends.{D}3.5\n"
        f"relation{D}Alice{D}Carol{D}work{D}They work.{D}-1",
        [R("Alice", "Bob", ["friendship"], "They are friends.", 3.5), R("Alice", "Carol", ["work"], "They work.", 1.0)],
        0,
    ),
    (
        "keywords as names and descriptions ending in a keyword stay intact",
        f"entity{D}Entity{D}Concept{D}An entity is a thing.\nentity{D}Acme{D}Organization{D}Acme is a legal entity",
        [E("Entity", "concept", "An entity is a thing."), E("Acme", "organization", "Acme is a legal entity")],
        0,
    ),
    (
        "unusable entity type becomes unknown",
        f"entity{D}Alice{D}<b>{D}Alice codes.",
        [E("Alice", "unknown", "Alice codes.")],
        0,
    ),
    (
        "full-width name forms are normalised",
        f"entity{D}\uff21\uff43\uff4d\uff45\u3000Corp{D}Org{D}A company.",
        [E("Acme Corp", "org", "A company.")],
        0,
    ),
]


@pytest.mark.parametrize(("text", "expected", "malformed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_outputs(text, expected, malformed):
    result = parse_extraction(text, "doc-1-chunk-000", "a.txt")
    assert _flat(result) == expected
    assert result.malformed == malformed
    assert all(r.chunk_id == "doc-1-chunk-000" and r.file_path == "a.txt" for r in result.entities + result.relations)


def test_keys_are_case_folded_and_relations_sorted_by_key():
    text = (
        f"entity{D}Apple{D}Org{D}Fruit company.\nrelation{D}apple{D}Zebra{D}kw{D}Odd pair.\n"
        f"relation{D}Zebra{D}APPLE{D}kw{D}Same pair reversed."
    )
    result = parse_extraction(text, "c", None)
    assert result.entities[0].key == "apple"
    assert [(r.src_key, r.tgt_key) for r in result.relations] == [("apple", "zebra"), ("apple", "zebra")]
    assert [r.src_name for r in result.relations] == ["apple", "APPLE"]


def test_long_names_are_truncated_to_the_limit():
    long_name = "N" * 700
    result = parse_extraction(
        f"entity{D}{long_name}{D}Thing{D}Very long.\nrelation{D}{long_name}{D}Short{D}kw{D}Linked.", "c", None
    )
    assert result.entities[0].name == "N" * 500
    assert result.relations[0].src_name == "N" * 500 or result.relations[0].tgt_name == "N" * 500
    assert (
        parse_extraction(f"entity{D}{long_name}{D}Thing{D}x", "c", None, name_max_length=64).entities[0].name
        == "N" * 64
    )


def test_pathological_decoration_parses_in_linear_time():
    import time

    for text in ['"' * 20000, "*" * 20000 + D, "(" * 20000 + D, f"entity{D}A{D}t{D}" + ' "a' * 20000]:
        started = time.perf_counter()
        parse_extraction(text, "c", None)
        assert time.perf_counter() - started < 2  # was 16 s per case with a backtracking record-start pattern


def test_never_raises_on_garbage():
    for text in ["<|#|>" * 50, "entity" + D * 30, "(((((" + D, "\x00\ud800" + D + "entity", "<|>##<|>"]:
        result = parse_extraction(text, "c", None)
        assert isinstance(result, ChunkExtraction)
        assert not result.entities


def _ent(name, desc):
    return EntityRecord(name=name, key=name.casefold(), entity_type="person", description=desc)


def _rel(a, b, desc):
    a, b = sorted([a, b], key=str.casefold)
    return RelationRecord(
        src_name=a, tgt_name=b, src_key=a.casefold(), tgt_key=b.casefold(), keywords=[], description=desc
    )


def test_merge_gleaning_adds_new_keys_and_prefers_longer_descriptions():
    first = ChunkExtraction(
        "c",
        [_ent("Alice", "Short."), _ent("alice", "Second record."), _ent("Bob", "Bob is long.")],
        [_rel("Alice", "Bob", "Met.")],
        malformed=1,
    )
    glean = ChunkExtraction(
        "c",
        [_ent("ALICE", "A much longer description."), _ent("Bob", "Bob."), _ent("Carol", "New.")],
        [_rel("Bob", "Alice", "They met at work."), _rel("Bob", "Carol", "Siblings.")],
        malformed=2,
    )
    merged = merge_gleaning(first, glean)
    assert [(e.name, e.description) for e in merged.entities] == [
        ("ALICE", "A much longer description."),
        ("Bob", "Bob is long."),
        ("Carol", "New."),
    ]
    assert [(r.src_key, r.tgt_key, r.description) for r in merged.relations] == [
        ("alice", "bob", "They met at work."),
        ("bob", "carol", "Siblings."),
    ]
    assert merged.malformed == 3 and merged.chunk_id == "c"


def test_merge_gleaning_with_identical_pass_changes_nothing():
    text = f"entity{D}Alice{D}Person{D}Alice codes.\nrelation{D}Alice{D}Bob{D}kw{D}Pair.\n{C}"
    first = parse_extraction(text, "c", None)
    merged = merge_gleaning(first, parse_extraction(text, "c", None))
    assert _flat(merged) == _flat(first)


@pytest.mark.parametrize(
    ("raw", "kept"),
    [("Rurit.", "Rurit."), ("Freed.", "Freed."), ("Elbonia.", "Elbonia"), ("West Marchland.", "West Marchland")],
)
def test_a_word_cut_short_keeps_its_period_a_sentence_s_end_loses_it(raw, kept):
    result = parse_extraction(f"entity{D}{raw}{D}Location{D}A place.", "c", None)
    assert [e.name for e in result.entities] == [kept]
