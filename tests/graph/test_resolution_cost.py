"""What makes resolution cheaper must not change what it decides (pure): the name caches hold only what a name
alone determines, so nothing of one project reaches another's decisions, and a final pass's shared name index
finds what an index per call found."""

from __future__ import annotations

from app.domain.absorption import absorbs, absorptions, lone_fit
from app.domain.cross_document import term_initials
from app.domain.document_names import DocumentNames
from app.domain.name_index import NameIndex
from app.domain.name_matching import acronym_definitions, defined_acronyms, fold, tokens
from app.domain.resolution import Known, resolve
from app.repositories.resolution_ledger import ShortFormMerge
from app.services.ingest.absorb import ambiguous_now

Nearby = dict[str, tuple[str, str]]


def _doc(name: str, etype: str) -> DocumentNames:
    doc = DocumentNames()
    doc.add(name.casefold(), name, etype)
    return doc


def _target(name: str, etype: str, nearby: Nearby) -> str:
    types = {k: t for k, (_, t) in nearby.items()}
    return resolve(_doc(name, etype), Known(entity_types=types, nearby=nearby), {}, "auto").target(name.casefold())


def test_a_cached_token_list_handed_out_is_the_callers_own():
    words = tokens("Dr. Amara Velasquez-Obi", "person")
    words.append("changed")
    words[0] = "x"
    assert tokens("Dr. Amara Velasquez-Obi", "person") == ["amara", "velasquez", "obi"]
    assert fold("Ærøskøbing Ferry Co.") == fold("Ærøskøbing Ferry Co.") == "aeroskobing ferry co"
    assert isinstance(term_initials("Magnetic Resonance Imaging", "technology"), frozenset)


def test_what_one_project_holds_never_reaches_another_projects_decision():
    one: Nearby = {"teodora vasquez": ("Teodora Vasquez", "person")}
    two: Nearby = one | {"ramon vasquez": ("Ramon Vasquez", "person")}
    # the same short form, asked in turn of a project with one bearer and of one with two: each answer is the one
    # a fresh process gives (the caches are warm with the other project's names by the second ask)
    assert _target("Dr. Vasquez", "person", one) == "teodora vasquez"
    assert _target("Dr. Vasquez", "person", two) == "dr. vasquez"
    assert _target("Dr. Vasquez", "person", one) == "teodora vasquez"
    assert _target("Dr. Vasquez", "person", {}) == "dr. vasquez"


def _mixed() -> tuple[Nearby, Nearby]:
    mine: Nearby = {
        "kellerman dredging works": ("Kellerman Dredging Works", "organization"),
        "north atlantic salvage board": ("North Atlantic Salvage Board", "organization"),
        "ilse brandauer": ("Ilse Brandauer", "person"),
        "nasb": ("NASB", "organization"),
        "tarvik 3": ("Tarvik 3", "product"),
    }
    others: Nearby = {
        "kellerman": ("Kellerman", "organization"),
        "brandauer": ("Brandauer", "person"),
        "n.a.s.b.": ("N.A.S.B.", "organization"),
        "oskar brandauer": ("Oskar Brandauer", "person"),
        "halden tarvik 3": ("Halden Tarvik 3", "product"),
        "quorra systems": ("Quorra Systems", "organization"),
    }
    return mine, others


def test_a_final_pass_index_shared_by_its_calls_finds_what_one_index_per_call_finds():
    mine, others = _mixed()
    index = NameIndex(others | mine)
    assert absorptions(mine, others, set(), index) == absorptions(mine, others, set())
    assert absorptions(others, mine, set(), index) == absorptions(others, mine, set())
    found = absorptions(mine, others, set())
    assert {(a.key, a.rule) for a in found} == {("kellerman", "root"), ("n.a.s.b.", "acronym")}
    assert [(a.key, a.rule) for a in absorptions(others, mine, set(), index)] == [("tarvik 3", "maker")]
    assert "brandauer" not in {a.key for a in found}  # two Brandauers: ambiguous either way
    for key in sorted(mine):
        rest = {k: v for k, v in mine.items() if k != key} | others
        assert absorptions(rest, {key: mine[key]}, set(), index) == absorptions(rest, {key: mine[key]}, set())


def test_one_fit_per_node_serves_both_ways_the_final_pass_asks():
    """The final pass asks each of its nodes' fit once (`lone_fit`) and reads it against the project's other
    names and against its own: what `absorptions` finds asked once per set of full names."""
    mine, others = _mixed()
    mine |= {"tarvik": ("Tarvik", "product"), "quorra": ("Quorra", "organization")}
    everyone = others | mine
    index = NameIndex(everyone)
    fits = [a for key in sorted(mine) if (a := lone_fit(key, *mine[key], everyone, index)) is not None]
    assert [a for a in fits if absorbs(a, others)] == absorptions(others, mine, set())
    among_mine = [
        a
        for key in sorted(mine)
        for a in absorptions({k: v for k, v in everyone.items() if k != key}, {key: mine[key]}, set())
        if a.target in mine
    ]
    assert [a for a in fits if absorbs(a, mine)] == among_mine
    assert {(a.key, a.target) for a in fits if absorbs(a, others)} == {
        ("quorra", "quorra systems"),
        ("tarvik 3", "halden tarvik 3"),
    }
    assert {(a.key, a.target) for a in fits if absorbs(a, mine)} == {
        ("nasb", "north atlantic salvage board"),
        ("tarvik", "tarvik 3"),
    }


def test_acronym_definitions_read_once_per_text_are_what_the_texts_say():
    texts = [
        "The Kessara Research Institute (KRI) opened.",
        "No parenthesis here, KRI alone.",
        "KRI (Kessara Research Institute)",
    ]
    for _ in range(2):  # the second read comes from the cache
        assert acronym_definitions(texts) == {"KRI": "Kessara Research Institute"}
        assert defined_acronyms(texts) == {"KRI"}
    assert acronym_definitions(["Magnetic resonance imaging, MRI, without brackets"]) == {}


def test_the_ambiguity_check_indexes_each_entity_once_and_still_finds_each_short_form():
    names: Nearby = {
        "ngozi okafor": ("Ngozi Okafor", "person"),
        "chidi okafor": ("Chidi Okafor", "person"),
        "lena marsh": ("Lena Marsh", "person"),
    }
    merges = [
        ShortFormMerge(
            1, "ngozi okafor", "okafor", "Okafor", "partial", "'Okafor' fits only 'Ngozi Okafor' (partial)", False
        ),
        ShortFormMerge(2, "ngozi okafor", "dr. okafor", "Dr. Okafor", "partial", "", True),
        ShortFormMerge(3, "lena marsh", "marsh", "Marsh", "partial", "", True),  # one Marsh: stays
        ShortFormMerge(4, "ngozi okafor", "prof. okafor", "Prof. Okafor", "partial", "alone in a document", False),
    ]
    found = ambiguous_now(names, merges, names)
    assert [m.id for m in found] == [1, 2]  # 4 was joined by its own document's evidence


_PIECES = [
    "Kessara",
    "Research",
    "Institute",
    "of",
    "the",
    "and",
    "&",
    "for",
    "de",
    "lymphoma",
    "type",
    "2",
    "Gold",
    "O'Neil",
    "Sainte-Marie",
    "St.",
    "Dr.",
    "KRI",
    "XAU",
    "T2D",
    "N.A.S.B.",
    "(",
    ")",
    " (",
    ") ",
    "(KRI)",
    "(XAU)",
    ",",
    ";",
    ".",
    ":",
    "!",
    "?",
    " ",
    "  ",
    "\n",
    "\t",
    "\u2019s",
    "\u00a0",
    "\u2003",
    "Zürich",
    "x" * 70,
    " " * 70,
]


def _texts(seed: int, count: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return [
        "".join(rng.choice(_PIECES) + rng.choice(["", " "]) for _ in range(rng.randint(0, 40))) for _ in range(count)
    ]


def test_definitions_read_only_before_each_parenthesis_are_what_the_pattern_finds_in_the_whole_text():
    from app.domain import name_matching

    texts = _texts(33, 3000) + [
        "The Kessara Research Institute (KRI) opened beside the North Atlantic Salvage Board (N.A.S.B.).",
        "follicular lymphoma (FL) and type 2 diabetes (T2D) (a note (XAU) inside)",
        "Prices of Gold (XAU) rose; Swiss Franc (CHF), Comorian Franc (KMF) fell",
    ]
    for pattern in (name_matching._LONG_THEN_SHORT, name_matching._ANY_THEN_SHORT):
        for text in texts:
            assert name_matching._found.__wrapped__(pattern, text) == tuple(pattern.findall(text)), text


def test_the_word_before_a_code_is_read_back_from_the_code_as_over_the_whole_text():
    from app.domain import name_codes

    longer_than_the_window = ["Gold" * 50 + " (XAU)", "Gold" + " " * 200 + "(XAU)", "x) " + "Gold-" * 30 + "  (XAU)"]
    for text in _texts(34, 600) + longer_than_the_window:
        for end in range(len(text) + 1):
            whole = name_codes._WORD_BEFORE.search(text[:end])
            found = name_codes._word_before(text, end)
            assert (whole and (whole.group(1), whole.start())) == (found and (found.group(1), found.start()))
            assert name_codes._last_visible(text, end) == text[:end].rstrip()[-1:]


def test_names_extending_a_name_are_those_a_scan_of_every_name_of_its_type_finds():
    from app.domain.cross_document import PRODUCT_TYPES, extension_candidates
    from app.domain.name_matching import is_acronym, match_key, specific_type
    from app.domain.name_variants import extension_rule

    names: Nearby = {
        f"{n} {t}".casefold(): (n, t)
        for n in [
            "Osogbo Summit",
            "Osogbo Summit 2004",
            "Osogbo Summit 2011",
            "Osogbo 2004",
            "Lund and Baird",
            "Lund and Baird Engineering",
            "Lund & Baird Surveyors",
            "Aquasense Pro 5",
            "Halvorsen Aquasense Pro 5",
            "Aquasense",
            "Halvorsen Aquasense",
            "Pellucid Terralink X7",
            "Terralink X7",
            "Terralink",
            "OSB",
            "Summit 2004",
            "Osogbo Summit 2004 Final",
            "Ngozi Okafor",
        ]
        for t in ["event", "organization", "product", "device", "person", "unknown"]
    }
    index = NameIndex(names)
    for key, (name, etype) in names.items():
        kind = specific_type(etype)
        scanned: dict[str, str] = {}
        if kind is not None and etype != "person" and not is_acronym(name):
            for other, (other_name, other_type) in names.items():
                if other != key and specific_type(other_type) == kind and not is_acronym(other_name):
                    mine, theirs = match_key(name, etype), match_key(other_name, other_type)
                    if (rule := extension_rule(mine, theirs, kind in PRODUCT_TYPES)) is not None:
                        scanned[other] = rule
        expected = (set(scanned), ",".join(sorted(set(scanned.values()))))
        assert extension_candidates(name, etype, index, exclude=key) == expected, name
    found, rule = extension_candidates("Osogbo Summit", "event", index, "osogbo summit event")
    assert found == {"osogbo summit 2004 event", "osogbo summit 2011 event"} and rule == "year"


def test_earlier_nodes_a_document_absorbs_are_worked_out_once_when_read_and_are_what_they_were(monkeypatch):
    from app.domain import resolution

    doc = DocumentNames()
    doc.add("halvorsen brightline pro 5", "Halvorsen Brightline Pro 5", "artifact")
    nearby: Nearby = {"brightline pro 5": ("Brightline Pro 5", "artifact")}
    known = Known(entity_types={"brightline pro 5": "artifact"}, nearby=nearby)
    asked: list[int] = []

    def counted(*args, **kwargs):
        asked.append(1)
        return absorptions(*args, **kwargs)

    monkeypatch.setattr(resolution, "absorptions", counted)
    result = resolve(doc, known, {}, "auto")
    assert not asked  # the ingest never reads them: its final pass finds them on the committed graph
    expected = [("brightline pro 5", "halvorsen brightline pro 5")]
    assert [(a.key, a.target) for a in result.absorptions] == expected and len(asked) == 1
    assert result.absorptions == absorptions({"halvorsen brightline pro 5": doc_entry(doc)}, nearby, set(doc.names))
    assert len(result.absorptions) == 1 and result.absorptions[0].rule == "maker" and len(asked) == 1
    suggested = resolve(doc, known, {}, "suggest")  # suggested at once, not merged
    assert len(asked) == 2 and not suggested.absorptions
    assert ("brightline pro 5", "halvorsen brightline pro 5", 1.0) in [s[:3] for s in suggested.suggestions]


def doc_entry(doc: DocumentNames) -> tuple[str, str]:
    return doc.names["halvorsen brightline pro 5"], doc.types["halvorsen brightline pro 5"]
