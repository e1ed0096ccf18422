"""The LLM judge's answers read leniently (app/domain/judge.py), and its verdicts applied only where the rules
left a name open and the confusable guard lets the pair through (app/domain/resolution.py)."""

from __future__ import annotations

import pytest

from app.domain.document_names import DocumentNames
from app.domain.judge import JudgePair, Verdict, one_line, parse_verdicts, read_verdict, verdict_text
from app.domain.resolution import Known, resolve
from app.prompts.judge import judge_messages
from app.services.ingest.resolution_judge import pair_key, same_targets
from tests.support.fakes.judge_prompt import judge_pairs as read_judge_pairs

CLEAN = '{"verdicts": [{"pair": 1, "same": true, "reason": "short form"}, {"pair": 2, "same": false, "reason": "x"}]}'


@pytest.mark.parametrize(
    "answer",
    [
        CLEAN,
        f"```json\n{CLEAN}\n```",
        f"Here are my verdicts:\n{CLEAN}\nI hope this helps. Let me know {{if}} you need more.",
        f"<think>pair 1 looks like a short form</think>{CLEAN}",
        '[{"pair": "1", "same": "same", "reason": "short form"}, {"index": 2, "verdict": "different"}]',
        '{"verdicts": [{"pair": 1, "same": true, "reason": "short form"}, {"pair": 2, "same": false',  # cut off
    ],
    ids=["clean", "fenced", "trailing prose", "think", "bare list, words", "broken"],
)
def test_messy_answers_give_the_same_verdicts(answer):
    verdicts = parse_verdicts(answer, 2)
    assert verdicts[1].same is True and verdicts[2].same is False


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "I cannot tell.",
        '{"verdicts": [{"same": true, "reason": "no pair number"}]}',
        '{"verdicts": [{"pair": 1, "reason": "no verdict"}]}',
        '{"verdicts": [{"pair": 7, "same": true}, {"pair": 0, "same": true}, {"pair": true, "same": true}]}',
        '{"verdicts": [{"pair": 1, "same": true}, {"pair": 1, "same": false}]}',  # contradicts itself
        '{"verdicts": [{"pair": 1, "same": "maybe"}]}',
        '{"verdicts": "same"}',
    ],
    ids=["empty", "prose", "no index", "no verdict", "wrong indices", "conflicting", "unclear word", "not a list"],
)
def test_unusable_verdicts_are_no_verdicts(answer):
    assert parse_verdicts(answer, 2) == {}


def test_a_missing_reason_is_empty_and_a_long_one_cut():
    verdicts = parse_verdicts(
        '[{"pair": 1, "same": true}, {"pair": 2, "same": true, "reason": "' + "x" * 900 + '"}]', 2
    )
    assert verdicts[1] == Verdict(True, "")
    assert len(verdicts[2].reason) == 200


def _pair(key: str, other: str) -> JudgePair:
    return JudgePair(key, key.title(), "organization", "", other, other.title(), "organization", "")


def test_a_name_joins_only_the_one_candidate_judged_the_same():
    pairs = [_pair("siemens", "siemens energy ag"), _pair("siemens", "siemens healthineers ag"), _pair("bis", "b")]
    answer = '[{"pair": 1, "same": false}, {"pair": 2, "same": true, "reason": "scanners"}, {"pair": 3, "same": true}]'
    assert same_targets(pairs, answer) == {
        "siemens": ("siemens healthineers ag", "scanners"),
        "bis": ("b", "the judge found them the same"),
    }
    both = '[{"pair": 1, "same": true}, {"pair": 2, "same": true}]'
    assert same_targets(pairs, both) == {}  # still ambiguous: nothing joins


def test_one_line_descriptions():
    assert one_line("  Siemens\nmakes   scanners. ") == "Siemens makes scanners."
    assert len(one_line("word " * 100)) == 120
    # the first sentence only, unless it is too short to be one ("Dr. Okafor")
    assert one_line("Siemens makes scanners for hospitals. It was founded in 1847.") == (
        "Siemens makes scanners for hospitals."
    )
    assert one_line("Dr. Okafor leads the cardiology unit in Lagos. She trained abroad.") == (
        "Dr. Okafor leads the cardiology unit in Lagos."
    )


def test_the_judge_prompt_lists_each_name_once_and_the_pairs_by_id():
    siemens = ("siemens", "Siemens", "organization", "Makes scanners.")
    pairs = [
        JudgePair(*siemens, "siemens healthineers", "Siemens Healthineers", "organization", "Sells scanners."),
        JudgePair(*siemens, "siemens energy", "Siemens Energy", "organization", "Builds | turbines."),
    ]
    system, user = judge_messages(pairs)
    assert "Pairs" in system["content"]
    assert user["content"].splitlines() == [
        "Names:",
        "n1 Siemens | organization | Makes scanners.",
        "n2 Siemens Healthineers | organization | Sells scanners.",
        "n3 Siemens Energy | organization | Builds | turbines.",
        "Pairs:",
        "1. n1 n2",
        "2. n1 n3",
    ]
    read = read_judge_pairs(user["content"])  # as the tests' fake judge reads it back
    assert [(p["pair"], p["a"]["name"], p["b"]["description"]) for p in read] == [
        (1, "Siemens", "Sells scanners."),
        (2, "Siemens", "Builds | turbines."),
    ]


def _doc(*names: tuple[str, str]) -> DocumentNames:
    doc = DocumentNames()
    for name, etype in names:
        doc.add(name.lower(), name, etype)
    return doc


def test_the_rules_leave_an_ambiguous_root_open_and_a_verdict_joins_it():
    doc = _doc(("Siemens", "organization"))
    known = Known(
        nearby={
            "siemens energy ag": ("Siemens Energy AG", "organization"),
            "siemens healthineers ag": ("Siemens Healthineers AG", "organization"),
        },
    )
    plain = resolve(doc, known, {}, "llm")
    assert plain.decisions["siemens"].target == "siemens"
    assert plain.open == {"siemens": {"siemens energy ag", "siemens healthineers ag"}}
    judged = resolve(doc, known, {}, "llm", {"siemens": ("siemens healthineers ag", "makes scanners")})
    decision = judged.decisions["siemens"]
    assert (decision.target, decision.rule, decision.scoped) == ("siemens healthineers ag", "llm_judge", True)
    assert "makes scanners" in decision.evidence
    assert judged.index == {}  # a judged alias holds for its document only


def test_a_verdict_never_joins_a_pair_the_guard_keeps_apart_or_a_name_the_rules_settled():
    doc = _doc(("Acme Holding Group", "organization"), ("Naseem Khan", "person"), ("Acme Holdings Ltd", "organization"))
    known = Known(
        entity_types={"acme holdings": "organization"},
        nearby={"acme holdings": ("Acme Holdings", "organization"), "imran khan": ("Imran Khan", "person")},
    )
    judged = {
        "acme holding group": ("acme holdings", "same group"),
        "naseem khan": ("imran khan", "same family"),
        "acme holdings ltd": ("imran khan", "nonsense"),
    }
    result = resolve(doc, known, {}, "llm", judged)
    assert result.decisions["acme holding group"].target == "acme holding group"
    assert result.decisions["naseem khan"].target == "naseem khan"
    assert result.decisions["acme holdings ltd"].target == "acme holdings"  # the rules' own match, not the judge's
    assert all(d.rule is None for d in result.decisions.values())


@pytest.mark.parametrize(
    ("a", "b", "etype"),
    [
        ("Chiamaka Okonkwo’s", "Chiamaka Okonkwo", "person"),
        ("Tromsø", "Tromso", "location"),
        ("St. Ives", "Saint Ives", "location"),
        ("Mt Pune", "Mount Pune", "location"),
        ("Fourth Clean Cookstove Plan", "4th Clean Cookstove Plan", "concept"),
        ("2004 Guilin Conference", "Guilin Conference 2004", "event"),
        ("Seed Sovereignty Act of 1987", "Seed Sovereignty Act 1987", "concept"),
    ],
)
def test_writing_habits_share_a_match_key(a, b, etype):
    from app.domain.name_matching import match_key

    assert match_key(a, etype) == match_key(b, etype)


@pytest.mark.parametrize(
    ("a", "b", "etype"),
    [
        ("3rd Urban Forest Scheme", "4th Urban Forest Scheme", "concept"),
        ("2004 Guilin Conference", "2008 Guilin Conference", "event"),
        ("Guilin Conference", "Guilin Conference 2004", "event"),
        ("Acme Holdings", "Acme Holding", "organization"),
    ],
)
def test_numbers_and_years_still_tell_things_apart(a, b, etype):
    from app.domain.name_matching import match_key

    assert match_key(a, etype) != match_key(b, etype)


def test_an_initialled_name_joins_the_one_person_it_fits():
    nearby = {
        "kamau l. ndungu": ("Kamau L. Ndungu", "person"),
        "wanjiru ndungu": ("Wanjiru Ndungu", "person"),
    }
    result = resolve(_doc(("K. L. Ndungu", "person"), ("K. Ndungu", "person")), Known(nearby=nearby), {}, "auto")
    assert result.decisions["k. l. ndungu"].target == "kamau l. ndungu"
    assert result.decisions["k. l. ndungu"].scoped
    assert result.decisions["k. ndungu"].target == "k. ndungu"  # no person of one given name starting with K
    two = nearby | {"kofi l. ndungu": ("Kofi L. Ndungu", "person")}
    ambiguous = resolve(_doc(("K. L. Ndungu", "person")), Known(nearby=two), {}, "llm")
    assert ambiguous.decisions["k. l. ndungu"].target == "k. l. ndungu"
    assert ambiguous.open["k. l. ndungu"] == {"kamau l. ndungu", "kofi l. ndungu"}


def test_a_pair_faces_the_judge_the_same_way_whichever_side_is_the_documents():
    pair = _pair("madras", "chennai")
    assert pair.facing() == pair.turned().facing() == _pair("chennai", "madras")
    assert pair.turned().turned() == pair


def test_kept_verdicts_read_back():
    assert read_verdict(verdict_text(Verdict(True, "a former name"))) == Verdict(True, "a former name")
    assert read_verdict(verdict_text(Verdict(False, ""))) == Verdict(False, "")
    assert read_verdict("not json") is None
    assert read_verdict('{"same": "maybe"}') is None


def test_a_verdict_is_kept_under_the_unordered_pair():
    pair = _pair("madras", "chennai")
    assert pair_key("model", pair) == pair_key("model", pair.turned())
    assert pair_key("model", pair) != pair_key("other model", pair)
    assert pair_key("model", pair) != pair_key("model", _pair("madras", "bombay"))
